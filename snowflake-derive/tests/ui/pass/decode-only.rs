//! A type that decodes IDs of a scheme whose time field has run out compiles with
//! `#[snowflake(decode_only)]`, decodes, and has no generator.
use typed_snowflake::{GenerateError, SnowflakeId};

/// Baidu uid-generator's default: 28 bits of seconds from 2016-05-20, run out in 2024.
#[derive(SnowflakeId, Clone, Copy, PartialEq, Eq, Debug)]
#[layout(time = 28, worker = 22, seq = 13, epoch = "2016-05-20", unit = "1s")]
#[snowflake(decode_only)]
pub struct BaiduId(i64);

/// The same scheme by its preset name: its default epoch is allowed when the type only decodes.
#[derive(SnowflakeId, Clone, Copy, PartialEq, Eq, Debug)]
#[layout(preset = "baidu")]
#[snowflake(decode_only)]
pub struct BaiduPresetId(i64);

/// The narrowest layout there is: ran out 2 ms after 1970 began.
#[derive(SnowflakeId, Clone, Copy, PartialEq, Eq, Debug)]
#[layout(time = 1, worker = 0, seq = 1, epoch = 0)]
#[snowflake(decode_only, crate = "typed_snowflake")]
pub struct TinyId(i64);

fn make<T: SnowflakeId>() -> Result<T, GenerateError> {
    T::try_generate()
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let id = BaiduId::from_parts(1_500_000_000_000, 7, 9)?;
    assert_eq!((id.timestamp_ms(), id.worker(), id.sequence()), (1_500_000_000_000, 7, 9));
    assert!(BaiduId::DECODE_ONLY && !<BaiduId as SnowflakeId>::PATH.is_empty());
    assert!(matches!(make::<BaiduId>(), Err(GenerateError::DecodeOnly { type_name: "BaiduId" })));
    assert!(matches!(BaiduId::generate_batch(3), Err(GenerateError::DecodeOnly { .. })));
    assert_eq!(BaiduPresetId::LAYOUT, BaiduId::LAYOUT);
    assert!(matches!(make::<BaiduPresetId>(), Err(GenerateError::DecodeOnly { type_name: "BaiduPresetId" })));
    assert_eq!(TinyId::MAX_TIMESTAMP_MS, 1);
    Ok(())
}
