//! Every preset, the overrides its scheme allows, Sonyflake's order written out, and all 64
//! bits on a `u64`.
use typed_snowflake::SnowflakeId;

#[derive(SnowflakeId)]
#[layout(preset = "twitter")]
struct TweetId(i64);

#[derive(SnowflakeId)]
#[layout(preset = "discord")]
struct MessageId(u64);

#[derive(SnowflakeId)]
#[layout(preset = "instagram")]
struct MediaId(u64);

#[derive(SnowflakeId)]
#[layout(preset = "sonyflake", epoch = "2024-01-01")]
struct SonyId(u64);

#[derive(SnowflakeId)]
#[layout(preset = "mastodon")]
struct StatusId(u64);

#[derive(SnowflakeId)]
#[layout(preset = "leaf", epoch = 1577836800000)]
struct LeafId(i64);

#[derive(SnowflakeId)]
#[layout(preset = "baidu", time = 31, worker = 19, epoch = "2025-01-01")]
struct UidId(i64);

#[derive(SnowflakeId)]
#[layout(time = 39, worker = 16, seq = 8, epoch = "2014-09-01", unit = "10ms", order = "time-seq-worker")]
struct SonyWrittenOut(i64);

#[derive(SnowflakeId)]
#[layout(time = 42, worker = 6, seq = 16, epoch = "2021-05-05")]
struct FullId(u64);

fn main() {
    assert_eq!(TweetId::TIME_SHIFT, 22);
    assert_eq!(MessageId::LAYOUT.used_bits(), 64);
    assert_eq!(MediaId::MAX_WORKER, 8191);
    assert_eq!(SonyId::WORKER_SHIFT, 0);
    assert_eq!(StatusId::EPOCH_MS, 0);
    assert_eq!(LeafId::MAX_WORKER, 1023);
    assert_eq!(UidId::TIME_BITS, 31);
    assert_eq!(SonyWrittenOut::LAYOUT, typed_snowflake::Layout::SONYFLAKE);
    assert_eq!(FullId::LAYOUT.used_bits(), 64);
}
