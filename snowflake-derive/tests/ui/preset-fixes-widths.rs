use typed_snowflake::SnowflakeId;

#[derive(SnowflakeId)]
#[layout(preset = "twitter", seq = 10, unit = "10ms")]
struct TweetId(i64);

fn main() {}
