use typed_snowflake::SnowflakeId;

#[derive(SnowflakeId)]
#[layout(time = 42, worker = 5, seq = 16, epoch = "2021-05-05")]
#[snowflake(accept_decimal)]
pub struct OrderId(i64);

fn main() {}
