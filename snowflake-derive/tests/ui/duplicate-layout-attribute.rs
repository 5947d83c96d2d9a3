use typed_snowflake::SnowflakeId;

#[derive(SnowflakeId)]
#[layout(time = 41, worker = 10, seq = 12, epoch = "2024-01-01")]
#[layout(time = 42, worker = 5, seq = 16, epoch = "2021-05-05")]
struct EventId(i64);

fn main() {}
