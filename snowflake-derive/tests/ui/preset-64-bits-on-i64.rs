use typed_snowflake::SnowflakeId;

#[derive(SnowflakeId)]
#[layout(preset = "discord")]
struct MessageId(i64);

fn main() {}
