use typed_snowflake::SnowflakeId;

#[derive(SnowflakeId)]
#[layout(time = 41, worker = 10, seq = 12, epoch = -1)]
struct EventId(i64);

fn main() {}
