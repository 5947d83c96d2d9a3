use typed_snowflake::SnowflakeId;

#[derive(SnowflakeId)]
struct EventId(i64);

fn main() {}
