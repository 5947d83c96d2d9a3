use typed_snowflake::SnowflakeId;

#[derive(SnowflakeId)]
#[layout(time = 41, datacenter = 5, seq = 12, epoch = "2024-01-01")]
struct EventId(i64);

fn main() {}
