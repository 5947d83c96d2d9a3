use typed_snowflake::SnowflakeId;

#[derive(SnowflakeId)]
#[layout(preset = twitter)]
struct TweetId(i64);

fn main() {}
