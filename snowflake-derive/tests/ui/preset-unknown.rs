use typed_snowflake::SnowflakeId;

#[derive(SnowflakeId)]
#[layout(preset = "snowflake")]
struct SomeId(u64);

fn main() {}
