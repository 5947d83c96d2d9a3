//! The properties of `tests/proptest_layout.rs`, for derived types of all 64 bits (on `u64`)
//! and of Sonyflake's field order: parts, integers and text round-trip; IDs order as
//! (tick, high field, low field) across 2^63; and hostile input is an error, never a
//! panic or a wrong ID.

use proptest::prelude::*;
use typed_snowflake::{LayoutError, ParseIdError, SnowflakeId};

#[derive(SnowflakeId, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
#[layout(preset = "discord")]
struct DiscordId(u64);

#[derive(SnowflakeId, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
#[layout(preset = "instagram")]
struct InstagramId(u64);

#[derive(SnowflakeId, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
#[layout(preset = "mastodon")]
struct StatusId(u64);

#[derive(SnowflakeId, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
#[layout(time = 40, worker = 8, seq = 16, epoch = "2020-01-01", order = "time-seq-worker")]
struct SeqFirstId(u64);

#[derive(SnowflakeId, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
#[layout(preset = "sonyflake")]
struct SonyId(i64);

macro_rules! properties {
    ($module:ident, $ty:ident) => {
        mod $module {
            use super::*;

            fn unit_ms() -> i64 {
                $ty::LAYOUT.unit().as_millis()
            }

            fn parts() -> impl Strategy<Value = (i64, u64, u64)> {
                ($ty::EPOCH_MS..=$ty::MAX_TIMESTAMP_MS, 0..=$ty::MAX_WORKER, 0..=$ty::MAX_SEQ)
            }

            /// (tick, the higher of node and sequence, the lower): the order of IDs.
            fn key((t, w, s): (i64, u64, u64)) -> (i64, u64, u64) {
                let tick = (t - $ty::EPOCH_MS) / unit_ms();
                if $ty::LAYOUT.seq_shift() == 0 { (tick, w, s) } else { (tick, s, w) }
            }

            proptest! {
                #[test]
                fn parts_round_trip((t, w, s) in parts()) {
                    let id = $ty::from_parts(t, w, s)?;
                    prop_assert!(id.timestamp_ms() <= t && t - id.timestamp_ms() < unit_ms());
                    prop_assert_eq!((id.worker(), id.sequence()), (w, s));
                    let raw = id.get().cast_unsigned();
                    prop_assert_eq!((raw & $ty::WORKER_MASK.cast_unsigned()) >> $ty::WORKER_SHIFT, w);
                    prop_assert_eq!((raw & $ty::SEQ_MASK.cast_unsigned()) >> $ty::LAYOUT.seq_shift(), s);
                    prop_assert_eq!($ty::from_parts(id.timestamp_ms(), id.worker(), id.sequence())?, id);
                }

                #[test]
                fn integers_and_text_round_trip((t, w, s) in parts()) {
                    let id = $ty::from_parts(t, w, s)?;
                    let value = id.get().cast_unsigned();
                    prop_assert_eq!(<$ty as SnowflakeId>::from_u64(value)?, id);
                    let text = id.to_string();
                    prop_assert_eq!(&text, &value.to_string());
                    prop_assert_eq!(text.parse::<$ty>()?, id);
                    prop_assert_eq!(format!("{text:0>20}").parse::<$ty>()?, id);
                    let json = serde_json::to_string(&id).map_err(|e| TestCaseError::fail(e.to_string()))?;
                    prop_assert_eq!(&json, &format!("\"{text}\""));
                    prop_assert_eq!(serde_json::from_str::<$ty>(&json).map_err(|e| TestCaseError::fail(e.to_string()))?, id);
                    let bytes = postcard::to_allocvec(&id).map_err(|e| TestCaseError::fail(e.to_string()))?;
                    prop_assert_eq!(postcard::from_bytes::<$ty>(&bytes).map_err(|e| TestCaseError::fail(e.to_string()))?, id);
                    // The i64 door: the same value when it is one, refused when negative.
                    match <$ty as SnowflakeId>::from_raw(id.get()) {
                        Ok(back) => prop_assert_eq!(back, id),
                        Err(LayoutError::Negative { .. }) => prop_assert!(value >= 1 << 63),
                        Err(other) => prop_assert!(false, "{other}"),
                    }
                }

                #[test]
                fn order_follows_tick_then_the_higher_field(a in parts(), b in parts()) {
                    let (x, y) = ($ty::from_parts(a.0, a.1, a.2)?, $ty::from_parts(b.0, b.1, b.2)?);
                    prop_assert_eq!(x.cmp(&y), key(a).cmp(&key(b)));
                    prop_assert_eq!(x.get().cast_unsigned().cmp(&y.get().cast_unsigned()), key(a).cmp(&key(b)));
                    if x <= y {
                        prop_assert!(x.redis_score() <= y.redis_score());
                        prop_assert!(x.redis_member() <= y.redis_member() || x.redis_score() < y.redis_score());
                    }
                }

                #[test]
                fn any_u64_is_an_id_or_out_of_layout(value in any::<u64>()) {
                    match <$ty as SnowflakeId>::from_u64(value) {
                        Ok(id) => {
                            prop_assert!(value <= $ty::LAYOUT.max_id_u64());
                            prop_assert_eq!(id.get().cast_unsigned(), value);
                            prop_assert_eq!(id.to_string(), value.to_string());
                        }
                        Err(LayoutError::OutOfLayout { .. }) => prop_assert!(value > $ty::LAYOUT.max_id_u64()),
                        Err(other) => prop_assert!(false, "{other}"),
                    }
                }

                #[test]
                fn hostile_text_is_refused_or_exact(text in prop_oneof![
                    any::<String>(),
                    "[0-9]{0,25}",
                    "[+-][0-9]{1,20}",
                    "[0-9]{1,20}[^0-9][0-9]{0,4}",
                    "[0-9٠-٩０-９]{1,21}",
                    any::<u64>().prop_map(|v| v.to_string()),
                    any::<u128>().prop_map(|v| v.to_string()),
                ]) {
                    let reference = if !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit()) {
                        let trimmed = text.trim_start_matches('0');
                        if trimmed.is_empty() { Some(0) } else { trimmed.parse::<u64>().ok() }
                    } else {
                        None
                    }
                    .filter(|&v| v <= $ty::LAYOUT.max_id_u64());
                    match text.parse::<$ty>() {
                        Ok(id) => prop_assert_eq!(Some(id.get().cast_unsigned()), reference, "{:?}", text),
                        Err(e) => {
                            prop_assert!(!e.to_string().is_empty());
                            prop_assert_eq!(reference, None, "{:?}: {}", text, e);
                            if let ParseIdError::Layout(LayoutError::OutOfLayout { value, .. }) = e {
                                prop_assert!(value > $ty::LAYOUT.max_id_u64());
                            }
                        }
                    }
                }
            }
        }
    };
}

properties!(discord, DiscordId);
properties!(instagram, InstagramId);
properties!(mastodon, StatusId);
properties!(seq_first, SeqFirstId);
properties!(sonyflake, SonyId);
