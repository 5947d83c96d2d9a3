use typed_snowflake::SnowflakeId;

#[derive(SnowflakeId)]
#[layout(time = 28, worker = 22, seq = 13, epoch = "2016-05-20", unit = "1s")]
#[snowflake(decode_only = true)]
pub struct BaiduId(i64);

fn main() {}
