//! The ID types the integration tests share, and how to read a [`DecodeIdError`] out of a
//! boxed error chain. Included with `#[path = "common/ids.rs"] mod ids;`.
#![allow(dead_code)]

use typed_snowflake::{DecodeIdError, LayoutError, SnowflakeId};

#[derive(SnowflakeId, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
#[layout(time = 42, worker = 5, seq = 16, epoch = "2021-05-05")]
pub struct OrderId(i64);

/// A small layout (39 bits), so a stored `BIGINT` can set bits above it.
#[derive(SnowflakeId, Clone, Copy, PartialEq, Eq, Debug)]
#[layout(time = 31, worker = 2, seq = 6, epoch = "2024-01-01", unit = "1s")]
pub struct SmallId(u64);

/// A value with bits above [`SmallId`]'s 39.
pub const ABOVE_SMALL: i64 = 1 << 45;

/// The [`DecodeIdError`] anywhere in `error`'s chain of sources, as `(type, reason)`.
pub fn decode_reason(error: &(dyn std::error::Error + 'static)) -> Option<(&'static str, LayoutError)> {
    let mut current = Some(error);
    while let Some(e) = current {
        if let Some(decode) = e.downcast_ref::<DecodeIdError>() {
            return Some((decode.type_name(), *decode.reason()));
        }
        current = e.source();
    }
    None
}

/// The reasons each hostile stored value must decode to, for [`OrderId`] (`-5`, `i64::MIN`)
/// and [`SmallId`] (`2^45`).
pub fn expected_reasons() -> [(&'static str, LayoutError); 3] {
    [
        ("OrderId", LayoutError::Negative { value: -5 }),
        ("OrderId", LayoutError::Negative { value: i64::MIN }),
        ("SmallId", LayoutError::OutOfLayout { value: 1 << 45, used_bits: 39 }),
    ]
}

/// `error` and its chain of sources, joined by `": "`, as error reporters print them.
pub fn chain(error: &(dyn std::error::Error + 'static)) -> String {
    let mut text = error.to_string();
    let mut current = error.source();
    while let Some(e) = current {
        text.push_str(": ");
        text.push_str(&e.to_string());
        current = e.source();
    }
    text
}
