use typed_snowflake::SnowflakeId;

#[derive(SnowflakeId)]
#[layout(time = 41, worker = 10, seq = 12, epoch = "2010-11-04T01:42:54.657")]
struct EventId(i64);

fn main() {}
