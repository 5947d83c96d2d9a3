use typed_snowflake::SnowflakeId;

#[derive(SnowflakeId)]
#[layout = "42/5/16"]
struct EventId(i64);

fn main() {}
