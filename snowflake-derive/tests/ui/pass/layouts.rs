//! Every documented way to write a layout compiles, and means what it says.

use typed_snowflake::{SnowflakeId, TickUnit};

/// The design card.
#[derive(SnowflakeId, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
#[layout(time = 42, worker = 5, seq = 16, epoch = "2021-05-05")]
pub struct OrderId(i64);

/// Twitter's 2010 layout, epoch as integer Unix milliseconds.
#[derive(SnowflakeId, Clone, Copy, PartialEq, Eq, Debug)]
#[layout(time = 41, datacenter = 5, machine = 5, seq = 12, epoch = 1288834974657)]
pub struct TweetId(i64);

/// The same layout, epoch as an RFC 3339 instant, keys in another order, over a u64.
#[derive(SnowflakeId, Clone, Copy, PartialEq, Eq, Debug)]
#[layout(epoch = "2010-11-04T01:42:54.657Z", seq = 12, machine = 5, datacenter = 5, time = 41)]
pub struct TweetIdU64(u64);

/// An RFC 3339 instant with an offset, and an i64-suffixed integer epoch.
#[derive(SnowflakeId, Clone, Copy, PartialEq, Eq, Debug)]
#[layout(time = 41, worker = 10, seq = 12, epoch = "2010-11-04T02:42:54.657+01:00")]
pub struct OffsetEpochId(i64);

/// An integer epoch with an explicit suffix.
#[derive(SnowflakeId, Clone, Copy, PartialEq, Eq, Debug)]
#[layout(time = 41, worker = 10, seq = 12, epoch = 1288834974657i64)]
pub struct SuffixedEpochId(i64);

/// Unix milliseconds in quotes, as the text form (`snowflake explain`) reads them too.
#[derive(SnowflakeId, Clone, Copy, PartialEq, Eq, Debug)]
#[layout(time = 41, worker = 10, seq = 12, epoch = "1288834974657")]
pub struct QuotedMillisEpochId(i64);

/// Sonyflake's 10 ms ticks.
#[derive(SnowflakeId, Clone, Copy, PartialEq, Eq, Debug)]
#[layout(time = 39, worker = 16, seq = 8, epoch = "2014-09-01", unit = "10ms")]
pub struct SonyId(i64);

/// Baidu uid-generator's 1 s ticks.
#[derive(SnowflakeId, Clone, Copy, PartialEq, Eq, Debug)]
#[layout(time = 28, worker = 22, seq = 13, epoch = "2016-05-20", unit = "1s")]
#[snowflake(decode_only)] // the time field ran out long ago: a type that decodes only
pub struct BaiduId(u64);

/// A single-node type: no worker bits at all.
#[derive(SnowflakeId, Clone, Copy, PartialEq, Eq, Debug)]
#[layout(time = 50, worker = 0, seq = 13, epoch = "1970-01-01", unit = "1ms")]
pub struct LocalId(i64);

/// The narrowest layout there is.
#[derive(SnowflakeId, Clone, Copy, PartialEq, Eq, Debug)]
#[layout(time = 1, worker = 0, seq = 1, epoch = 0)]
#[snowflake(decode_only)] // the time field ran out long ago: a type that decodes only
pub struct TinyId(i64);

/// The inner integer spelled out by path.
#[derive(SnowflakeId, Clone, Copy, PartialEq, Eq, Debug)]
#[layout(time = 41, worker = 10, seq = 12, epoch = "2024-01-01")]
pub struct SpelledOutId(::core::primitive::u64);

macro_rules! id_type {
    ($name:ident, $time:expr, $epoch:expr) => {
        /// A type declared through macro_rules, whose values arrive in invisible groups.
        #[derive(SnowflakeId, Clone, Copy, PartialEq, Eq, Debug)]
        #[layout(time = $time, worker = 10, seq = 12, epoch = $epoch)]
        pub struct $name(i64);
    };
}
id_type!(MacroId, 41, "2024-01-01");

fn main() -> Result<(), Box<dyn std::error::Error>> {
    assert_eq!((OrderId::TIME_BITS, OrderId::WORKER_BITS, OrderId::SEQ_BITS), (42, 5, 16));
    assert_eq!(OrderId::EPOCH_MS, 1_620_172_800_000);

    let tweet = TweetId::from_node_parts(1_700_000_000_000, 7, 13, 4095)?;
    assert_eq!(tweet.get(), 1_724_551_110_457_221_119);
    assert_eq!((tweet.datacenter(), tweet.machine()), (7, 13));
    assert_eq!((TweetId::DATACENTER_BITS, TweetId::MACHINE_BITS, TweetId::MAX_DATACENTER), (5, 5, 31));
    let tweet_u64 = TweetIdU64::from_node_parts(1_700_000_000_000, 7, 13, 4095)?;
    assert_eq!(u64::from(tweet_u64), 1_724_551_110_457_221_119);
    assert_eq!(TweetIdU64::EPOCH_MS, TweetId::EPOCH_MS);
    assert_eq!(OffsetEpochId::EPOCH_MS, TweetId::EPOCH_MS);
    assert_eq!(SuffixedEpochId::EPOCH_MS, TweetId::EPOCH_MS);
    assert_eq!(QuotedMillisEpochId::EPOCH_MS, TweetId::EPOCH_MS);
    assert_eq!(QuotedMillisEpochId::LAYOUT, "time=41,worker=10,seq=12,epoch=\"1288834974657\"".parse()?);

    assert_eq!(SonyId::LAYOUT.unit(), TickUnit::TenMillis);
    assert_eq!(SonyId::from_parts(1_700_000_000_009, 0, 0)?.timestamp_ms(), 1_700_000_000_000);
    assert_eq!(BaiduId::LAYOUT.unit(), TickUnit::Seconds);
    assert_eq!(BaiduId::from_parts(1_700_000_000_999, 1, 1)?.timestamp_ms(), 1_700_000_000_000);

    assert_eq!((LocalId::WORKER_BITS, LocalId::MAX_WORKER), (0, 0));
    assert!(LocalId::from_parts(5, 1, 0).is_err());
    assert_eq!(LocalId::from_parts(5, 0, 3)?.get(), 5 << 13 | 3);

    assert_eq!(TinyId::LAYOUT.max_id(), 3);
    assert_eq!(TinyId::MAX_TIMESTAMP_MS, 1);
    assert_eq!(MacroId::TIME_BITS, 41);
    assert_eq!(u64::from(SpelledOutId::from_parts(1_704_067_200_000, 1, 2)?), 1 << 12 | 2);
    Ok(())
}
