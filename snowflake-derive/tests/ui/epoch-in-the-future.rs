use typed_snowflake::SnowflakeId;

#[derive(SnowflakeId)]
#[layout(time = 41, worker = 10, seq = 12, epoch = "2999-01-01")]
pub struct FutureId(i64);

fn main() {}
