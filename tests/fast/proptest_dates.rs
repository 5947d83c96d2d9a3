//! Dates both ways, for every layout (63- and 64-bit, both field orders) and every date type (`SystemTime`, chrono, time,
//! jiff): the bounds at an ID's own instant contain it, `first_at(timestamp(id)) <= id <=
//! last_at(timestamp(id))`; an instant between two milliseconds picks the tick of the
//! millisecond that holds it; bounds never decrease as the instant grows; and any instant,
//! however far before the epoch or past the layout's end, saturates instead of panicking
//! or wrapping. Date types that end before a layout does (time and jiff at the end of the year 9999,
//! chrono near 262 143) give their own last instant for later IDs.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use proptest::prelude::*;
use typed_snowflake::{IntoUnixMs, SnowflakeId};

#[derive(SnowflakeId, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
#[layout(time = 42, worker = 5, seq = 16, epoch = "2021-05-05")]
struct OrderId(i64);

#[derive(SnowflakeId, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
#[layout(time = 41, datacenter = 5, machine = 5, seq = 12, epoch = 1288834974657)]
struct TweetId(i64);

#[derive(SnowflakeId, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
#[layout(time = 39, worker = 16, seq = 8, epoch = "2014-09-01", unit = "10ms")]
struct SonyId(i64);

#[derive(SnowflakeId, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
#[layout(time = 28, worker = 22, seq = 13, epoch = "2016-05-20", unit = "1s")]
#[snowflake(decode_only)] // ran out in 2024
struct BaiduId(i64);

#[derive(SnowflakeId, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
#[layout(time = 30, worker = 4, seq = 8, epoch = "2024-01-01")]
#[snowflake(decode_only)] // ran out twelve days after its epoch
struct SmallId(i64);

#[derive(SnowflakeId, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
#[layout(time = 41, worker = 10, seq = 12, epoch = "2010-11-04T01:42:54.657Z")]
struct UnsignedId(u64);

#[derive(SnowflakeId, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
#[layout(time = 33, worker = 0, seq = 10, epoch = "2020-02-29", unit = "10ms")]
#[snowflake(decode_only)] // ran out in 2022
struct SingleNodeId(u64);

/// Reaches past every date type: 2^55 ms is over a million years.
#[derive(SnowflakeId, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
#[layout(time = 55, worker = 3, seq = 5, epoch = "2020-01-01")]
struct WideId(i64);

/// Reaches past every date type but `SystemTime`: 62 bits of seconds.
#[derive(SnowflakeId, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
#[layout(time = 62, worker = 0, seq = 1, epoch = 0, unit = "1s")]
struct WidestId(u64);

/// Discord's preset: all 64 bits, on a `u64`.
#[derive(SnowflakeId, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
#[layout(preset = "discord")]
struct DiscordId(u64);

/// Sonyflake's preset: ticks of 10 ms, the sequence above the machine ID.
#[derive(SnowflakeId, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
#[layout(preset = "sonyflake")]
struct SonyflakeId(i64);

/// Mastodon's preset: 48 bits of Unix ms, 64 bits in all.
#[derive(SnowflakeId, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
#[layout(preset = "mastodon")]
struct MastodonId(u64);

fn chrono_max_ms() -> i64 {
    chrono::DateTime::<chrono::Utc>::MAX_UTC.timestamp_millis()
}

fn time_max_ms() -> i64 {
    time::PrimitiveDateTime::MAX.assume_utc().into_unix_ms()
}

fn jiff_max_ms() -> i64 {
    jiff::Timestamp::MAX.as_millisecond()
}

/// The instant `ms` milliseconds and `nanos` nanoseconds after 1970 (`ms` may be negative).
fn total_nanos(ms: i64, nanos: u32) -> i128 {
    i128::from(ms) * 1_000_000 + i128::from(nanos)
}

fn system_time(nanos: i128) -> Option<SystemTime> {
    let by = Duration::new(
        u64::try_from(nanos.unsigned_abs() / 1_000_000_000).ok()?,
        (nanos.unsigned_abs() % 1_000_000_000) as u32,
    );
    if nanos >= 0 { UNIX_EPOCH.checked_add(by) } else { UNIX_EPOCH.checked_sub(by) }
}

fn chrono_at(nanos: i128) -> Option<chrono::DateTime<chrono::Utc>> {
    let secs = i64::try_from(nanos.div_euclid(1_000_000_000)).ok()?;
    chrono::DateTime::from_timestamp(secs, nanos.rem_euclid(1_000_000_000) as u32)
}

fn time_at(nanos: i128) -> Option<time::OffsetDateTime> {
    time::OffsetDateTime::from_unix_timestamp_nanos(nanos).ok()
}

fn jiff_at(nanos: i128) -> Option<jiff::Timestamp> {
    jiff::Timestamp::from_nanosecond(nanos).ok()
}

/// Generates the properties for one layout, in a module named after it.
macro_rules! date_properties {
    ($module:ident, $ty:ident) => {
        mod $module {
            use super::*;

            /// Times in the layout, its first and last millisecond often.
            fn time() -> impl Strategy<Value = i64> {
                prop_oneof![
                    6 => $ty::EPOCH_MS..=$ty::MAX_TIMESTAMP_MS,
                    1 => Just($ty::EPOCH_MS),
                    1 => Just($ty::MAX_TIMESTAMP_MS),
                ]
            }

            fn id() -> impl Strategy<Value = $ty> {
                (time(), 0..=$ty::MAX_WORKER, 0..=$ty::MAX_SEQ)
                    .prop_map(|(t, w, s)| $ty::from_parts(t, w, s).expect("parts in range"))
            }

            /// Any instant at all, as Unix ms and the nanoseconds past it.
            fn instant() -> impl Strategy<Value = (i64, u32)> {
                let ms = prop_oneof![
                    any::<i64>(),
                    $ty::EPOCH_MS - 10_000..=$ty::EPOCH_MS + 10_000,
                    $ty::MAX_TIMESTAMP_MS.saturating_sub(10_000)..=$ty::MAX_TIMESTAMP_MS.saturating_add(10_000),
                    -62_135_596_800_000i64..=253_402_300_799_999,
                ];
                (ms, prop_oneof![Just(0u32), 0..1_000_000u32])
            }

            fn contains(at: impl IntoUnixMs + Copy, id: $ty) -> bool {
                $ty::first_at(at) <= id && id <= $ty::last_at(at)
            }

            proptest! {
                #[test]
                fn bounds_at_an_ids_own_instant_contain_it(id in id()) {
                    let ms = id.timestamp_ms();
                    prop_assert!(contains(ms, id));
                    let generic = <$ty as SnowflakeId>::first_at(ms);
                    prop_assert_eq!(generic, $ty::first_at(ms));

                    let system = id.timestamp();
                    prop_assert_eq!(system.into_unix_ms(), ms);
                    prop_assert_eq!(<$ty as SnowflakeId>::timestamp(&id), system);
                    prop_assert!(contains(system, id));

                    let chrono = id.to_chrono();
                    if ms <= chrono_max_ms() {
                        prop_assert_eq!(chrono.timestamp_millis(), ms);
                        prop_assert!(contains(chrono, id));
                    } else {
                        prop_assert_eq!(chrono, chrono::DateTime::<chrono::Utc>::MAX_UTC);
                        prop_assert!($ty::first_at(chrono) <= id);
                    }

                    let time = id.to_offset_date_time();
                    if ms <= time_max_ms() {
                        prop_assert_eq!(time.unix_timestamp_nanos(), i128::from(ms) * 1_000_000);
                        prop_assert_eq!(time.offset(), time::UtcOffset::UTC);
                        prop_assert!(contains(time, id));
                    } else {
                        prop_assert_eq!(time, time::PrimitiveDateTime::MAX.assume_utc());
                        prop_assert!($ty::first_at(time) <= id);
                    }

                    let jiff = id.to_jiff();
                    if ms <= jiff_max_ms() {
                        prop_assert_eq!(jiff.as_millisecond(), ms);
                        prop_assert_eq!(jiff.subsec_nanosecond() % 1_000_000, 0);
                        prop_assert!(contains(jiff, id));
                        let zoned = jiff.to_zoned(jiff::tz::TimeZone::fixed(jiff::tz::offset(-7)));
                        prop_assert_eq!($ty::first_at(zoned), $ty::first_at(jiff));
                    } else {
                        prop_assert_eq!(jiff, jiff::Timestamp::MAX);
                        prop_assert!($ty::first_at(jiff) <= id);
                    }
                }

                #[test]
                fn every_date_type_picks_the_millisecond_that_holds_the_instant((ms, nanos) in instant()) {
                    let expected = ($ty::first_at(ms), $ty::last_at(ms));
                    let at = total_nanos(ms, nanos);
                    if let Some(t) = system_time(at) {
                        prop_assert_eq!(($ty::first_at(t), $ty::last_at(t)), expected);
                    }
                    if let Some(t) = chrono_at(at) {
                        prop_assert_eq!(($ty::first_at(t), $ty::last_at(t)), expected);
                    }
                    if let Some(t) = time_at(at) {
                        prop_assert_eq!(($ty::first_at(t), $ty::last_at(t)), expected);
                    }
                    if let Some(t) = jiff_at(at) {
                        prop_assert_eq!(($ty::first_at(t), $ty::last_at(t)), expected);
                    }
                }

                #[test]
                fn bounds_saturate_and_never_decrease(a in instant(), b in instant()) {
                    let (early, late) = if total_nanos(a.0, a.1) <= total_nanos(b.0, b.1) { (a, b) } else { (b, a) };
                    prop_assert!($ty::first_at(early.0) <= $ty::first_at(late.0));
                    prop_assert!($ty::last_at(early.0) <= $ty::last_at(late.0));
                    for ms in [early.0, late.0] {
                        let (first, last) = ($ty::first_at(ms), $ty::last_at(ms));
                        // Both bounds are IDs of the layout, in one tick, `first` its smallest.
                        // (`from_u64` of the bits: a 64-bit layout's IDs at or above 2^63 read
                        // as a negative `i64`, which `TryFrom<i64>` refuses.)
                        prop_assert_eq!(<$ty as SnowflakeId>::from_u64(first.get().cast_unsigned())?, first);
                        prop_assert_eq!(<$ty as SnowflakeId>::from_u64(last.get().cast_unsigned())?, last);
                        prop_assert_eq!(first.timestamp_ms(), last.timestamp_ms());
                        prop_assert_eq!((first.worker(), first.sequence()), (0, 0));
                        prop_assert_eq!((last.worker(), last.sequence()), ($ty::MAX_WORKER, $ty::MAX_SEQ));
                        if ms < $ty::EPOCH_MS {
                            prop_assert_eq!(first.get(), 0);
                        } else if ms > $ty::MAX_TIMESTAMP_MS {
                            prop_assert_eq!(last.get().cast_unsigned(), $ty::LAYOUT.max_id_u64());
                        } else {
                            prop_assert!(first.timestamp_ms() <= ms && ms - first.timestamp_ms() < $ty::LAYOUT.unit().as_millis());
                        }
                    }
                }
            }
        }
    };
}

date_properties!(design_card, OrderId);
date_properties!(twitter_split, TweetId);
date_properties!(ten_millis, SonyId);
date_properties!(seconds, BaiduId);
date_properties!(small, SmallId);
date_properties!(unsigned, UnsignedId);
date_properties!(single_node, SingleNodeId);
date_properties!(wide, WideId);
date_properties!(widest, WidestId);
date_properties!(discord_64_bits, DiscordId);
date_properties!(sonyflake_order, SonyflakeId);
date_properties!(mastodon_64_bits, MastodonId);

#[test]
fn date_types_end_where_the_saturation_says() {
    // The edges the properties above rely on, so that a change in a date crate shows here.
    assert_eq!(time_max_ms(), 253_402_300_799_999);
    assert_eq!(jiff_max_ms(), 253_402_207_200_999); // 9999-12-30T22:00:00.999999999Z
    assert!(chrono_max_ms() > 8_000_000_000_000_000);
    let wide = WideId::from_parts(WideId::MAX_TIMESTAMP_MS, 0, 0).expect("in range");
    assert_eq!(wide.to_jiff(), jiff::Timestamp::MAX);
    assert_eq!(wide.to_chrono(), chrono::DateTime::<chrono::Utc>::MAX_UTC);
}
