use typed_snowflake::SnowflakeId;

#[derive(SnowflakeId)]
#[layout(time = 44, worker = 5, seq = 16, epoch = "2021-05-05")]
struct EventId(u64);

fn main() {}
