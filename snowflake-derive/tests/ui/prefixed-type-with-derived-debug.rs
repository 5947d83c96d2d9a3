// A prefixed type's `Debug` is written by the derive (the `ord_…` text): deriving it as well
// is a conflict, which the compiler reports at both derives.
use typed_snowflake::SnowflakeId;

#[derive(SnowflakeId, Debug)]
#[layout(time = 42, worker = 5, seq = 16, epoch = "2021-05-05")]
#[snowflake(prefix = "ord")]
pub struct OrderId(i64);

fn main() {}
