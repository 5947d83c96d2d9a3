use typed_snowflake::SnowflakeId;

#[derive(SnowflakeId)]
#[layout(preset = "baidu")]
struct UidId(i64);

fn main() {}
