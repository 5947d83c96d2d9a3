//! `#[snowflake(crate = "...")]` for a user who reaches the crate under another name.

extern crate typed_snowflake as ts;

use ts::SnowflakeId;

#[derive(SnowflakeId, Clone, Copy, PartialEq, Eq, Debug)]
#[snowflake(crate = "ts")]
#[layout(time = 42, worker = 5, seq = 16, epoch = "2021-05-05")]
struct OrderId(i64);

mod facade {
    pub mod ids {
        pub use ::typed_snowflake as runtime;
    }
}

mod inner {
    use ts::SnowflakeId;

    #[derive(SnowflakeId, Clone, Copy, PartialEq, Eq, Debug)]
    #[layout(time = 41, datacenter = 5, machine = 5, seq = 12, epoch = 1288834974657)]
    #[snowflake(crate = "crate::facade::ids::runtime")]
    pub struct TweetId(u64);
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let id = OrderId::from_parts(1_700_000_000_000, 3, 9)?;
    assert_eq!(id.to_string().parse::<OrderId>()?, id);
    assert_eq!(<OrderId as ts::SnowflakeId>::NAME, "OrderId");
    let tweet = inner::TweetId::from_node_parts(1_700_000_000_000, 7, 13, 4095)?;
    assert_eq!(tweet.get(), 1_724_551_110_457_221_119);
    Ok(())
}
