use typed_snowflake::SnowflakeId;

#[derive(SnowflakeId)]
#[layout("time=42,wroker=5,seq=16,epoch=2021-05-05")]
struct OrderId(i64);

fn main() {}
