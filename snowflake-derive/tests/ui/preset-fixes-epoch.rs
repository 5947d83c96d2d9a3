use typed_snowflake::SnowflakeId;

#[derive(SnowflakeId)]
#[layout(preset = "discord", epoch = "2024-01-01")]
struct MessageId(u64);

fn main() {}
