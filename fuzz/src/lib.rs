//! ID types and checks shared by the fuzz targets.
//!
//! Four layouts cover what a decoder can get wrong: a 63-bit `i64` type, a `u64` field, a
//! split node field with 10 ms ticks, and a narrow 42-bit type (where most 64-bit values
//! are out of layout).

use std::fmt::Debug;
use std::str::FromStr;

use typed_snowflake::SnowflakeId;

/// 42/5/16 bits of milliseconds, an `i64` field.
#[derive(SnowflakeId, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
#[layout(time = 42, worker = 5, seq = 16, epoch = "2021-05-05")]
pub struct OrderId(i64);

/// Twitter's flat 41/10/12 layout on a `u64` field.
#[derive(SnowflakeId, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
#[layout(time = 41, worker = 10, seq = 12, epoch = 1288834974657)]
pub struct TweetId(u64);

/// A split node field and 10 ms ticks (Sonyflake-like).
#[derive(SnowflakeId, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
#[layout(time = 39, datacenter = 8, machine = 8, seq = 8, unit = "10ms", epoch = "2014-09-01")]
pub struct SonyId(i64);

/// 42 bits in all: most 64-bit values are out of this layout.
#[derive(SnowflakeId, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
#[layout(time = 30, worker = 4, seq = 8, epoch = "2024-01-01")]
#[snowflake(decode_only)] // the time field ran out long ago: a type that decodes only
pub struct SmallId(i64);

/// What every successfully decoded ID of `T` must satisfy, whatever the decoder: it is
/// an ID of the layout, it prints as its raw value, and that text parses back to it.
pub fn check_valid<T>(id: &T)
where
    T: SnowflakeId + Debug + PartialEq + ToString + FromStr,
    <T as FromStr>::Err: Debug,
{
    let raw = id.to_raw();
    assert!(raw >= 0, "{} {id:?}: negative raw value {raw}", T::NAME);
    assert!(T::LAYOUT.validate(raw).is_ok(), "{} {id:?}: {raw} is out of layout", T::NAME);
    let text = id.to_string();
    assert_eq!(text, raw.to_string(), "{} {id:?} prints as {text:?}", T::NAME);
    let back: T = text.parse().expect("the printed form of a valid ID parses");
    assert_eq!(&back, id, "{} {id:?} does not round-trip through {text:?}", T::NAME);
}

/// A prefixed type (`ord_…`) over [`OrderId`]'s layout.
#[derive(SnowflakeId, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
#[layout(time = 42, worker = 5, seq = 16, epoch = "2021-05-05")]
#[snowflake(prefix = "ord")]
pub struct PrefixedOrderId(i64);

/// A prefixed type of all 64 bits (Discord's layout on a `u64`): suffixes from `0` to `f`.
#[derive(SnowflakeId, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
#[layout(preset = "discord")]
#[snowflake(prefix = "msg", decode_only)]
pub struct PrefixedMessageId(u64);

/// A prefixed type that also reads decimal text (a migration), over [`SmallId`]'s layout.
#[derive(SnowflakeId, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
#[layout(time = 30, worker = 4, seq = 8, epoch = "2024-01-01")]
#[snowflake(prefix = "line_item", accept_decimal, decode_only)]
pub struct PrefixedSmallId(i64);

/// The prefixed form's reference decoder, written apart from the library's: `prefix`, `_`,
/// exactly 13 characters of the lowercase Crockford alphabet, a value of at most 64 bits.
pub fn reference_prefixed(prefix: &str, text: &str) -> Option<u64> {
    const ALPHABET: &str = "0123456789abcdefghjkmnpqrstvwxyz";
    let suffix = text.strip_prefix(prefix)?.strip_prefix('_')?;
    if suffix.len() != 13 {
        return None;
    }
    let mut value: u128 = 0;
    for c in suffix.chars() {
        value = value * 32 + ALPHABET.find(c)? as u128;
    }
    u64::try_from(value).ok()
}
