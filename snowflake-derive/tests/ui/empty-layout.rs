use typed_snowflake::SnowflakeId;

#[derive(SnowflakeId)]
#[layout()]
struct EventId(i64);

fn main() {}
