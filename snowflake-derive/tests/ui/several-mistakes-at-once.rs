use typed_snowflake::SnowflakeId;

#[derive(SnowflakeId)]
#[layout(time = 0, worker = 10, seq = 12, epoch = "yesterday", unit = "2ms")]
struct EventId(i64);

fn main() {}
