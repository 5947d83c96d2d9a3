//! Types derived from the public schemes work end to end: Discord's documented example
//! decodes through a derived type, Sonyflake's field order generates and decodes, 64-bit
//! layouts on `u64` fields and the integrations keep IDs at or above 2^63 exact. (That a
//! preset means the same layout to the derive and the runtime needs no test: both read it
//! from `snowflake-layout`.)

use typed_snowflake::{FieldOrder, LayoutError, ParseIdError, SnowflakeId};

#[derive(SnowflakeId, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
#[layout(preset = "twitter")]
struct TweetId(i64);

#[derive(SnowflakeId, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
#[layout(preset = "discord")]
struct DiscordId(u64);

#[derive(SnowflakeId, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
#[layout(preset = "instagram")]
struct InstagramId(u64);

#[derive(SnowflakeId, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
#[layout(preset = "sonyflake")]
struct SonyId(i64);

#[derive(SnowflakeId, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
#[layout(preset = "mastodon")]
struct TootId(u64);

#[derive(SnowflakeId, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
#[layout(preset = "leaf")]
struct LeafId(i64);

#[derive(SnowflakeId, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
#[layout(preset = "leaf", epoch = "2020-01-01")]
struct OwnLeafId(i64);

#[derive(SnowflakeId, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
#[layout(preset = "baidu", epoch = "2025-01-01")]
struct BaiduId(i64);

#[derive(SnowflakeId, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
#[layout(time = 39, worker = 16, seq = 8, epoch = "2014-09-01", unit = "10ms", order = "time-seq-worker")]
struct SonyWrittenOut(i64);

#[derive(SnowflakeId, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
#[layout(time = 44, worker = 4, seq = 16, epoch = "2024-01-01")]
struct Wide(u64);

#[test]
fn preset_keys_the_scheme_leaves_open_take_effect() {
    // The derive's expansion of `epoch` beside a preset, and of a written-out Sonyflake.
    assert_eq!(OwnLeafId::LAYOUT.epoch_ms(), 1_577_836_800_000);
    assert_eq!(BaiduId::LAYOUT.epoch_ms(), 1_735_689_600_000);
    assert_eq!(SonyWrittenOut::LAYOUT.order(), FieldOrder::SeqAboveWorker);
    assert_eq!(SonyWrittenOut::LAYOUT.to_string(), SonyId::LAYOUT.to_string());
    assert_eq!(TweetId::LAYOUT.to_string(), "time=41,datacenter=5,machine=5,seq=12,epoch=2010-11-04T01:42:54.657Z");
    assert!(InstagramId::LAYOUT.used_bits() == 64 && TootId::LAYOUT.used_bits() == 64 && LeafId::LAYOUT.fits_i64());
}

#[test]
fn discords_documented_example_through_the_derived_type() -> Result<(), Box<dyn std::error::Error>> {
    // https://discord.com/developers/docs/reference#snowflakes
    let id: DiscordId = "175928847299117063".parse()?;
    assert_eq!(id.timestamp_ms(), 1_462_015_105_796);
    assert_eq!((id.datacenter(), id.machine(), id.sequence()), (1, 0, 7));
    assert_eq!(DiscordId::try_from(175_928_847_299_117_063_u64)?, id);
    assert_eq!(DiscordId::from_node_parts(1_462_015_105_796, 1, 0, 7)?, id);
    Ok(())
}

#[test]
fn sonyflake_ordered_type_generates_and_decodes_its_fields() -> Result<(), Box<dyn std::error::Error>> {
    let id = SonyId::from_parts(1_700_000_000_000, 0xABCD, 0x12)?;
    assert_eq!(id.get() & 0xFFFF, 0xABCD, "the machine ID is the low 16 bits");
    assert_eq!((id.get() >> 16) & 0xFF, 0x12, "the sequence sits above it");
    assert_eq!((id.worker(), id.sequence()), (0xABCD, 0x12));
    assert_eq!((id.get() & SonyId::WORKER_MASK) >> SonyId::WORKER_SHIFT, 0xABCD);
    let generated = SonyId::generate_batch(300)?;
    assert!(generated.windows(2).all(|w| w[0] < w[1]));
    for id in &generated {
        assert_eq!(SonyId::try_from(id.get())?, *id);
    }
    Ok(())
}

#[test]
fn a_64_bit_type_carries_ids_above_2_63_exactly() -> Result<(), Box<dyn std::error::Error>> {
    let max = u64::MAX;
    let id = Wide::try_from(max)?;
    assert_eq!(id.to_string(), "18446744073709551615");
    assert_eq!("18446744073709551615".parse::<Wide>()?, id);
    assert_eq!(id.sequence(), 0xFFFF);
    assert_eq!(id.worker(), 0xF);
    assert!("18446744073709551616".parse::<Wide>().is_err());
    // Order follows the u64 value, across 2^63.
    let below = Wide::try_from((1_u64 << 63) - 1)?;
    let above = Wide::try_from(1_u64 << 63)?;
    assert!(below < above);
    assert!(below.redis_score() < above.redis_score());
    assert!(below.redis_member() < above.redis_member());
    // As an i64 a value at or above 2^63 is negative, and no ID.
    assert!(matches!(Wide::try_from(-1_i64), Err(LayoutError::Negative { .. })));
    // JSON: a string of the u64 digits, and back.
    let json = serde_json::to_string(&id)?;
    assert_eq!(json, "\"18446744073709551615\"");
    assert_eq!(serde_json::from_str::<Wide>(&json)?, id);
    assert_eq!(serde_json::from_str::<Wide>("18446744073709551615")?, id);
    // Binary formats: a u64 for a 64-bit layout.
    let bytes = postcard::to_allocvec(&id)?;
    assert_eq!(postcard::from_bytes::<Wide>(&bytes)?, id);
    // Text that no 64-bit ID is: an error, never a panic or a wrapped value.
    for bad in ["", "-1", "+1", "1e3", "184467440737095516150", "０"] {
        assert!(bad.parse::<Wide>().is_err(), "{bad:?}");
    }
    assert_eq!("99999999999999999999".parse::<Wide>(), Err(ParseIdError::OverflowU64));
    Ok(())
}

#[test]
fn the_last_id_of_a_64_bit_tick_bounds_it() -> Result<(), Box<dyn std::error::Error>> {
    let ms = Wide::MAX_TIMESTAMP_MS;
    let (first, last) = (Wide::first_at(ms), Wide::last_at(ms));
    assert_eq!(last, Wide::try_from(u64::MAX)?);
    assert!(first < last);
    assert_eq!(first.timestamp_ms(), ms);
    Ok(())
}
