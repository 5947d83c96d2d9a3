use typed_snowflake::SnowflakeId;

// Baidu uid-generator's widths and default epoch: 28 bits of seconds from 2016-05-20.
#[derive(SnowflakeId)]
#[layout(time = 28, worker = 22, seq = 13, epoch = "2016-05-20", unit = "1s")]
pub struct BaiduId(i64);

fn main() {}
