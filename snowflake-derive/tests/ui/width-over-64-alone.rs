use typed_snowflake::SnowflakeId;

#[derive(SnowflakeId)]
#[layout(time = 65, worker = 0, seq = 12, epoch = "2021-05-05")]
struct EventId(i64);

fn main() {}
