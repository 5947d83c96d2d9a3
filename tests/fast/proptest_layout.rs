//! Properties of the layout engine, through derived types of several layouts: parts,
//! integers and text round-trip; IDs order as (tick, worker, seq); and no input, however
//! hostile, decodes to a wrong ID or panics.

use proptest::prelude::*;
use typed_snowflake::{LayoutError, ParseIdError, SnowflakeId};

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
#[snowflake(decode_only)] // the time field ran out long ago: a type that decodes only
struct BaiduId(i64);

#[derive(SnowflakeId, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
#[layout(time = 30, worker = 4, seq = 8, epoch = "2024-01-01")]
#[snowflake(decode_only)] // the time field ran out long ago: a type that decodes only
struct SmallId(i64);

#[derive(SnowflakeId, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
#[layout(time = 41, worker = 10, seq = 12, epoch = "2010-11-04T01:42:54.657Z")]
struct UnsignedId(u64);

#[derive(SnowflakeId, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
#[layout(time = 33, worker = 0, seq = 10, epoch = "2020-02-29", unit = "10ms")]
#[snowflake(decode_only)] // the time field ran out long ago: a type that decodes only
struct SingleNodeId(u64);

/// Text that is almost, or not at all, a decimal ID.
fn hostile_text() -> impl Strategy<Value = String> {
    prop_oneof![
        any::<String>(),
        "[0-9]{0,25}",
        "[0-9]{20,300}",
        "[+-][0-9]{1,20}",
        "[0-9]{1,19}[^0-9][0-9]{0,4}",
        "[ \t\n]?[0-9]{1,19}[ \t\n]?",
        "0{0,30}[0-9]{1,19}",
        "[0-9٠-٩０-９]{1,20}",
        any::<i64>().prop_map(|v| v.to_string()),
        any::<u64>().prop_map(|v| v.to_string()),
        any::<i128>().prop_map(|v| v.to_string()),
    ]
}

/// Generates the properties every layout must have, in a module named after the type.
macro_rules! layout_properties {
    ($module:ident, $ty:ident, $inner:ty) => {
        mod $module {
            use super::*;

            fn unit_ms() -> i64 {
                $ty::LAYOUT.unit().as_millis()
            }

            fn tick_of(unix_ms: i64) -> i64 {
                (unix_ms - $ty::EPOCH_MS) / unit_ms()
            }

            fn time() -> impl Strategy<Value = i64> {
                $ty::EPOCH_MS..=$ty::MAX_TIMESTAMP_MS
            }

            fn parts() -> impl Strategy<Value = (i64, u64, u64)> {
                (time(), 0..=$ty::MAX_WORKER, 0..=$ty::MAX_SEQ)
            }

            fn max_id() -> i64 {
                $ty::LAYOUT.max_id()
            }

            /// Decimal text of values on both sides of the layout's largest ID.
            fn text_near_the_edge() -> impl Strategy<Value = String> {
                (0..=max_id().saturating_mul(2)).prop_map(|v| v.to_string())
            }

            proptest! {
                #[test]
                fn parts_round_trip((t, w, s) in parts()) {
                    let id = $ty::from_parts(t, w, s)?;
                    prop_assert_eq!(id.timestamp_ms(), $ty::EPOCH_MS + tick_of(t) * unit_ms());
                    prop_assert!(id.timestamp_ms() <= t && t - id.timestamp_ms() < unit_ms());
                    prop_assert_eq!((id.worker(), id.sequence()), (w, s));
                    let parts = id.parts();
                    prop_assert_eq!((parts.timestamp_ms, parts.worker, parts.sequence), (id.timestamp_ms(), w, s));
                    prop_assert_eq!(parts.ticks, tick_of(t).cast_unsigned());
                    // The masks select each field in place.
                    prop_assert_eq!(((id.get() & $ty::WORKER_MASK) >> $ty::WORKER_SHIFT).cast_unsigned(), w);
                    prop_assert_eq!((id.get() & $ty::SEQ_MASK).cast_unsigned(), s);
                    prop_assert_eq!((id.get() & $ty::TIME_MASK) >> $ty::TIME_SHIFT, tick_of(t));
                    // Re-encoding the decoded parts gives the same ID.
                    prop_assert_eq!($ty::from_parts(id.timestamp_ms(), id.worker(), id.sequence())?, id);
                }

                #[test]
                fn integers_and_text_round_trip((t, w, s) in parts()) {
                    let id = $ty::from_parts(t, w, s)?;
                    prop_assert!(id.get() >= 0 && id.get() <= max_id());
                    prop_assert_eq!($ty::try_from(id.get())?, id);
                    prop_assert_eq!($ty::try_from(i64::from(id))?, id);
                    prop_assert_eq!(u64::from(id), id.get().cast_unsigned());
                    prop_assert_eq!(<$ty as SnowflakeId>::from_u64(u64::from(id))?, id);
                    prop_assert_eq!(<$ty as SnowflakeId>::from_raw(id.get())?, id);
                    let text = id.to_string();
                    prop_assert_eq!(&text, &id.get().to_string());
                    prop_assert_eq!(text.parse::<$ty>()?, id);
                    prop_assert_eq!(<$ty as SnowflakeId>::parse_str(&text)?, id);
                    // Leading zeros are accepted, and the value prints back without them.
                    let padded = format!("{:0>19}", text);
                    prop_assert_eq!(padded.parse::<$ty>()?, id);
                    prop_assert_eq!(id.redis_member(), padded);
                }

                #[test]
                fn order_follows_tick_then_worker_then_seq(a in parts(), b in parts()) {
                    let (x, y) = ($ty::from_parts(a.0, a.1, a.2)?, $ty::from_parts(b.0, b.1, b.2)?);
                    let key = |(t, w, s): (i64, u64, u64)| (tick_of(t), w, s);
                    prop_assert_eq!(x.cmp(&y), key(a).cmp(&key(b)));
                    prop_assert_eq!(x.get().cmp(&y.get()), key(a).cmp(&key(b)));
                    prop_assert_eq!(x.to_string() == y.to_string(), key(a) == key(b));
                    if x <= y {
                        prop_assert!(x.redis_score() <= y.redis_score());
                        prop_assert!(x.redis_member() <= y.redis_member());
                    }
                }

                #[test]
                fn any_i64_decodes_to_the_same_value_or_an_error(raw in any::<i64>()) {
                    match $ty::try_from(raw) {
                        Ok(id) => {
                            prop_assert!((0..=max_id()).contains(&raw));
                            prop_assert_eq!(id.get(), raw);
                            prop_assert_eq!(id.to_string(), raw.to_string());
                            prop_assert_eq!($ty::from_parts(id.timestamp_ms(), id.worker(), id.sequence())?, id);
                        }
                        Err(LayoutError::Negative { value }) => prop_assert!(raw < 0 && value == raw),
                        Err(LayoutError::OutOfLayout { value, used_bits }) => {
                            prop_assert!(raw > max_id());
                            prop_assert_eq!(value, raw.cast_unsigned());
                            prop_assert_eq!(used_bits, $ty::LAYOUT.used_bits());
                        }
                        Err(other) => prop_assert!(false, "unexpected error {other:?} for {raw}"),
                    }
                }

                #[test]
                fn any_u64_decodes_to_the_same_value_or_an_error(raw in any::<u64>()) {
                    match <$ty as SnowflakeId>::from_u64(raw) {
                        Ok(id) => {
                            prop_assert!(raw <= max_id().cast_unsigned());
                            prop_assert_eq!(u64::from(id), raw);
                            prop_assert_eq!(id.to_string(), raw.to_string());
                        }
                        Err(LayoutError::OutOfLayout { value, .. }) => {
                            prop_assert!(raw > max_id().cast_unsigned());
                            prop_assert_eq!(value, raw);
                        }
                        Err(other) => prop_assert!(false, "unexpected error {other:?} for {raw}"),
                    }
                }

                #[test]
                fn any_text_decodes_to_its_value_or_an_error(text in prop_oneof![hostile_text(), text_near_the_edge()]) {
                    let ours = text.parse::<$ty>();
                    // The reference: std's parser, minus the signs it accepts and IDs refuse
                    // (even "-0" and "+7": an ID is written in digits only).
                    let reference = text.parse::<i64>().ok().filter(|_| !text.starts_with(['+', '-']));
                    match (&ours, reference) {
                        (Ok(id), Some(value)) => {
                            prop_assert!((0..=max_id()).contains(&value), "{text:?} is outside the layout");
                            prop_assert_eq!(id.get(), value);
                            prop_assert_eq!(id.to_string(), value.to_string());
                            prop_assert_eq!(id.to_string().parse::<$ty>()?, *id);
                        }
                        (Ok(id), None) => prop_assert!(false, "{text:?} decoded to {id:?}, std refuses it"),
                        (Err(ParseIdError::Layout(LayoutError::Negative { .. })), _) => {
                            prop_assert!(false, "a sign is refused before the layout sees the value")
                        }
                        (Err(ParseIdError::Layout(LayoutError::OutOfLayout { value, .. })), Some(reference)) => {
                            prop_assert!(reference > max_id());
                            prop_assert_eq!(*value, reference.cast_unsigned());
                        }
                        (Err(e), Some(value)) => prop_assert!(false, "{text:?} is the ID {value}, refused with {e}"),
                        (Err(e), None) => prop_assert!(!e.to_string().is_empty()),
                    }
                }

                #[test]
                fn bits_above_the_layout_are_refused(
                    bit in $ty::LAYOUT.used_bits()..64,
                    high in any::<u64>(),
                    low in any::<u64>(),
                ) {
                    let used = $ty::LAYOUT.used_bits();
                    // One bit at or above `used` for sure, maybe more, any bits below it; the
                    // sign bit included, so some of these are negative as an i64.
                    let value = (1u64 << bit) | (high << used) | (low & max_id().cast_unsigned());
                    let refused = matches!(<$ty as SnowflakeId>::from_u64(value), Err(LayoutError::OutOfLayout { .. }));
                    prop_assert!(refused, "{value} was accepted");
                    let refused = match i64::try_from(value) {
                        Ok(raw) => matches!($ty::try_from(raw), Err(LayoutError::OutOfLayout { .. })),
                        Err(_) => true,
                    };
                    prop_assert!(refused, "{value} was accepted as an i64");
                    let refused = matches!(
                        value.to_string().parse::<$ty>(),
                        Err(ParseIdError::Layout(LayoutError::OutOfLayout { .. }) | ParseIdError::Overflow)
                    );
                    prop_assert!(refused, "{value} was accepted as text");
                }

                #[test]
                fn negative_values_are_refused(raw in i64::MIN..0) {
                    prop_assert_eq!($ty::try_from(raw), Err(LayoutError::Negative { value: raw }));
                    prop_assert_eq!(raw.to_string().parse::<$ty>(), Err(ParseIdError::Sign { sign: '-' }));
                    // The same bits read as an unsigned column value set the sign bit: never an ID.
                    let refused = matches!(<$ty as SnowflakeId>::from_u64(raw.cast_unsigned()), Err(LayoutError::OutOfLayout { .. }));
                    prop_assert!(refused);
                }

                #[test]
                fn first_and_last_at_bound_every_id_of_their_tick((t, w, s) in parts()) {
                    let id = $ty::from_parts(t, w, s)?;
                    let (first, last) = ($ty::first_at(t), $ty::last_at(t));
                    prop_assert!(first <= id && id <= last);
                    prop_assert_eq!(first, $ty::from_parts(t, 0, 0)?);
                    prop_assert_eq!(last, $ty::from_parts(t, $ty::MAX_WORKER, $ty::MAX_SEQ)?);
                    prop_assert_eq!(first.timestamp_ms(), id.timestamp_ms());
                    prop_assert_eq!(last.timestamp_ms(), id.timestamp_ms());
                    if tick_of(t) > 0 {
                        let previous_tick = t - unit_ms();
                        prop_assert_eq!($ty::last_at(previous_tick).get() + 1, first.get());
                    }
                }

                #[test]
                fn first_and_last_at_saturate_for_any_time(t in any::<i64>()) {
                    let (first, last) = ($ty::first_at(t), $ty::last_at(t));
                    prop_assert!(first <= last);
                    prop_assert_eq!(first.timestamp_ms(), last.timestamp_ms());
                    prop_assert_eq!((first.worker(), first.sequence()), (0, 0));
                    prop_assert_eq!((last.worker(), last.sequence()), ($ty::MAX_WORKER, $ty::MAX_SEQ));
                    if t < $ty::EPOCH_MS {
                        prop_assert_eq!(first.get(), 0);
                    } else if t > $ty::MAX_TIMESTAMP_MS {
                        prop_assert_eq!(last.get(), max_id());
                    } else {
                        prop_assert_eq!(first, $ty::from_parts(t, 0, 0)?);
                    }
                }

                #[test]
                fn out_of_range_parts_are_refused(
                    t in prop_oneof![time(), any::<i64>()],
                    w in prop_oneof![0..=$ty::MAX_WORKER, any::<u64>()],
                    s in prop_oneof![0..=$ty::MAX_SEQ, any::<u64>()],
                ) {
                    let time_ok = ($ty::EPOCH_MS..=$ty::MAX_TIMESTAMP_MS).contains(&t);
                    let (worker_ok, seq_ok) = (w <= $ty::MAX_WORKER, s <= $ty::MAX_SEQ);
                    match $ty::from_parts(t, w, s) {
                        Ok(id) => {
                            prop_assert!(time_ok && worker_ok && seq_ok);
                            prop_assert_eq!((id.worker(), id.sequence()), (w, s));
                        }
                        Err(LayoutError::BeforeEpoch { .. }) => prop_assert!(t < $ty::EPOCH_MS),
                        Err(LayoutError::TimeOverflow { .. }) => prop_assert!(t > $ty::MAX_TIMESTAMP_MS),
                        Err(LayoutError::WorkerOutOfRange { .. }) => prop_assert!(time_ok && !worker_ok),
                        Err(LayoutError::SequenceOutOfRange { .. }) => {
                            prop_assert!(time_ok && worker_ok && !seq_ok)
                        }
                        Err(other) => prop_assert!(false, "unexpected error {other:?}"),
                    }
                }
            }

            #[test]
            fn inner_type_is_the_declared_one() {
                let id = $ty::first_at($ty::EPOCH_MS);
                let _: $inner = id.0;
            }
        }
    };
}

layout_properties!(design_card, OrderId, i64);
layout_properties!(twitter_split, TweetId, i64);
layout_properties!(ten_millis, SonyId, i64);
layout_properties!(seconds, BaiduId, i64);
layout_properties!(small, SmallId, i64);
layout_properties!(unsigned, UnsignedId, u64);
layout_properties!(single_node, SingleNodeId, u64);

proptest! {
    #[test]
    fn split_node_parts_round_trip(
        t in TweetId::EPOCH_MS..=TweetId::MAX_TIMESTAMP_MS,
        dc in 0..=TweetId::MAX_DATACENTER,
        m in 0..=TweetId::MAX_MACHINE,
        s in 0..=TweetId::MAX_SEQ,
    ) {
        let id = TweetId::from_node_parts(t, dc, m, s)?;
        prop_assert_eq!((id.datacenter(), id.machine(), id.sequence()), (dc, m, s));
        prop_assert_eq!(id.worker(), dc << TweetId::MACHINE_BITS | m);
        prop_assert_eq!(id, TweetId::from_parts(t, id.worker(), s)?);
        let parts = id.parts();
        prop_assert_eq!((parts.datacenter, parts.machine), (Some(dc), Some(m)));
        prop_assert_eq!(TweetId::try_from(id.get())?.datacenter(), dc);
    }

    #[test]
    fn split_node_parts_refuse_wide_halves(dc in any::<u64>(), m in any::<u64>()) {
        let result = TweetId::from_node_parts(1_700_000_000_000, dc, m, 0);
        match result {
            Ok(id) => prop_assert_eq!((id.datacenter(), id.machine()), (dc, m)),
            Err(LayoutError::DatacenterOutOfRange { datacenter, max }) => {
                prop_assert!(datacenter == dc && dc > max && max == TweetId::MAX_DATACENTER)
            }
            Err(LayoutError::MachineOutOfRange { machine, max }) => {
                prop_assert!(machine == m && dc <= TweetId::MAX_DATACENTER && m > max)
            }
            Err(other) => prop_assert!(false, "unexpected error {other:?}"),
        }
    }

    #[test]
    fn the_same_raw_value_is_the_same_instant_only_within_one_layout(raw in 0..=SmallId::LAYOUT.max_id()) {
        // A value valid in two layouts decodes to each layout's own parts: the type decides.
        let small = SmallId::try_from(raw)?;
        let order = OrderId::try_from(raw)?;
        prop_assert_eq!(small.get(), order.get());
        prop_assert_eq!(small.sequence(), (raw & 0xFF).cast_unsigned());
        prop_assert_eq!(order.sequence(), (raw & 0xFFFF).cast_unsigned());
    }
}
