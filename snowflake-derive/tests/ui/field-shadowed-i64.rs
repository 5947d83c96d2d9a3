use typed_snowflake::SnowflakeId;

#[allow(non_camel_case_types)]
struct i64;

#[derive(SnowflakeId)]
#[layout(time = 41, worker = 10, seq = 12, epoch = "2024-01-01")]
struct EventId(i64);

fn main() {}
