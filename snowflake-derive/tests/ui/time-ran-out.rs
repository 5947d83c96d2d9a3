use typed_snowflake::SnowflakeId;

// 35 bits of milliseconds last 398 days: from 2021-05-05, until June 2022.
#[derive(SnowflakeId)]
#[layout(time = 35, worker = 5, seq = 16, epoch = "2021-05-05")]
pub struct OrderId(i64);

fn main() {}
