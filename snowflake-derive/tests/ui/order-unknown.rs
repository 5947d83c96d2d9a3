use typed_snowflake::SnowflakeId;

#[derive(SnowflakeId)]
#[layout(time = 39, worker = 16, seq = 8, epoch = "2014-09-01", order = "seq-time-worker")]
struct SonyId(i64);

fn main() {}
