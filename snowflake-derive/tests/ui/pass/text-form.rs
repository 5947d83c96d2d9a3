//! The layout in the text form, as `--layout` takes it and as `T::LAYOUT.to_string()`,
//! `snowflake layouts` and the service's `GET /v1/types` print it: pasted into the derive as
//! a string, it gives the same layout as the attribute's own spelling.

use typed_snowflake::{Layout, SnowflakeId};

#[derive(SnowflakeId, Clone, Copy, PartialEq, Eq, Debug)]
#[layout(time = 42, worker = 5, seq = 16, epoch = "2021-05-05")]
struct OrderId(i64);

#[derive(SnowflakeId, Clone, Copy, PartialEq, Eq, Debug)]
#[layout("time=42,worker=5,seq=16,epoch=2021-05-05")]
struct PastedOrderId(i64);

/// `/v1/types` for `--id order=preset=leaf,epoch=2020-01-01`: the layout's text.
#[derive(SnowflakeId, Clone, Copy, PartialEq, Eq, Debug)]
#[layout("time=41,worker=10,seq=12,epoch=2020-01-01")]
struct LeafId(i64);

/// A preset with its epoch, and every other key: unit, order, a split node field, an instant.
#[derive(SnowflakeId, Clone, Copy, PartialEq, Eq, Debug)]
#[layout("preset=sonyflake,epoch=2024-01-01")]
struct SonyId(i64);

#[derive(SnowflakeId, Clone, Copy, PartialEq, Eq, Debug)]
#[layout("time=39,worker=16,seq=8,epoch=2024-01-01,unit=10ms,order=time-seq-worker")]
struct SonyTextId(i64);

#[derive(SnowflakeId, Clone, Copy, PartialEq, Eq, Debug)]
#[layout("time=41,datacenter=5,machine=5,seq=12,epoch=2010-11-04T01:42:54.657Z")]
struct TweetId(i64);

/// All 64 bits: a `u64` field, as with the attribute.
#[derive(SnowflakeId, Clone, Copy, PartialEq, Eq, Debug)]
#[layout("preset=discord")]
struct MessageId(u64);

fn main() -> Result<(), Box<dyn std::error::Error>> {
    assert_eq!(PastedOrderId::LAYOUT, OrderId::LAYOUT);
    assert_eq!(OrderId::LAYOUT.to_string(), "time=42,worker=5,seq=16,epoch=2021-05-05");
    assert_eq!(LeafId::LAYOUT, "preset=leaf,epoch=2020-01-01".parse::<Layout>()?);
    assert_eq!(SonyId::LAYOUT, SonyTextId::LAYOUT);
    assert_eq!(TweetId::LAYOUT, Layout::TWITTER);
    assert_eq!(MessageId::LAYOUT, Layout::DISCORD);
    let tweet = TweetId::from_node_parts(1_700_000_000_000, 7, 13, 4095)?;
    assert_eq!(tweet.get(), 1_724_551_110_457_221_119);
    assert_eq!((tweet.datacenter(), tweet.machine()), (7, 13));
    Ok(())
}
