//! The `schemars` integration: every derived type's schema is a string of 1 to 19 digits,
//! the shape the `serde` integration writes in JSON.

use schemars::{JsonSchema, schema_for};
use serde::Serialize;
use serde_json::json;
use typed_snowflake::SnowflakeId;

#[derive(SnowflakeId, Clone, Copy, PartialEq, Eq, Debug)]
#[layout(time = 42, worker = 5, seq = 16, epoch = "2021-05-05")]
struct OrderId(i64);

mod other {
    use typed_snowflake::SnowflakeId;

    /// Same name as the outer `OrderId`, another type: another schema id.
    #[derive(SnowflakeId, Clone, Copy, PartialEq, Eq, Debug)]
    #[layout(time = 41, worker = 10, seq = 12, epoch = 1288834974657)]
    pub(super) struct OrderId(u64);
}

#[derive(JsonSchema, Serialize)]
struct Order {
    id: OrderId,
    parent: Option<OrderId>,
    lines: Vec<OrderId>,
}

#[test]
fn root_schema_is_a_digit_string() -> Result<(), Box<dyn std::error::Error>> {
    let schema = serde_json::to_value(schema_for!(OrderId))?;
    assert_eq!(schema["type"], "string");
    assert_eq!(schema["pattern"], "^[0-9]{1,19}$");
    assert_eq!(schema["title"], "OrderId");
    let description = schema["description"].as_str().ok_or("no description")?;
    assert!(description.starts_with("OrderId Snowflake ID"), "{description}");
    assert!(description.contains("2^53"), "{description}");
    Ok(())
}

#[test]
fn fields_refer_to_one_definition() -> Result<(), Box<dyn std::error::Error>> {
    let schema = serde_json::to_value(schema_for!(Order))?;
    let def = &schema["$defs"]["OrderId"];
    assert_eq!(def["type"], "string");
    assert_eq!(def["pattern"], "^[0-9]{1,19}$");
    assert_eq!(schema["properties"]["id"], json!({"$ref": "#/$defs/OrderId"}));
    assert_eq!(schema["properties"]["lines"]["items"], json!({"$ref": "#/$defs/OrderId"}));
    assert_eq!(schema["required"], json!(["id", "lines"]));
    Ok(())
}

#[test]
fn the_schema_admits_what_serde_writes() -> Result<(), Box<dyn std::error::Error>> {
    // The JSON serde writes for the smallest and largest IDs fits the pattern's length bound.
    for raw in [0, 9, 10, i64::MAX] {
        let json = serde_json::to_value(OrderId::try_from(raw)?)?;
        let text = json.as_str().ok_or("not a string")?;
        assert!((1..=19).contains(&text.len()) && text.bytes().all(|b| b.is_ascii_digit()), "{text}");
    }
    Ok(())
}

#[test]
fn same_name_in_another_module_is_another_schema() {
    assert_eq!(OrderId::schema_name(), other::OrderId::schema_name());
    assert_ne!(OrderId::schema_id(), other::OrderId::schema_id());
    assert!(OrderId::schema_id().ends_with("::OrderId"), "{}", OrderId::schema_id());
    assert!(other::OrderId::schema_id().ends_with("::other::OrderId"), "{}", other::OrderId::schema_id());
}

/// All 64 bits: IDs up to `u64::MAX`, 20 digits.
#[derive(SnowflakeId, Clone, Copy, PartialEq, Eq, Debug)]
#[layout(preset = "discord")]
struct MessageId(u64);

#[test]
fn a_64_bit_type_admits_20_digits() -> Result<(), Box<dyn std::error::Error>> {
    let schema = serde_json::to_value(schema_for!(MessageId))?;
    assert_eq!(schema["pattern"], "^[0-9]{1,20}$");
    let json = serde_json::to_value(MessageId::try_from(u64::MAX)?)?;
    assert_eq!(json.as_str().map(str::len), Some(20));
    Ok(())
}

/// A prefixed type (`ord_…`).
#[derive(SnowflakeId, Clone, Copy, PartialEq, Eq)]
#[layout(time = 42, worker = 5, seq = 16, epoch = "2021-05-05")]
#[snowflake(prefix = "ord")]
struct PrefixedOrderId(i64);

/// Whether `text` matches `^ord_[0-7][0-9a-hjkmnp-tv-z]{12}$`, the pattern below, by hand.
fn matches_prefixed_pattern(text: &str) -> bool {
    let Some(suffix) = text.strip_prefix("ord_") else { return false };
    let class = |b: u8| b.is_ascii_digit() || (b.is_ascii_lowercase() && !b"ilou".contains(&b));
    suffix.len() == 13 && (b'0'..=b'7').contains(&suffix.as_bytes()[0]) && suffix.bytes().all(class)
}

#[test]
fn a_prefixed_type_has_its_pattern_and_example() -> Result<(), Box<dyn std::error::Error>> {
    let schema = serde_json::to_value(schema_for!(PrefixedOrderId))?;
    assert_eq!(schema["type"], "string");
    assert_eq!(schema["pattern"], "^ord_[0-7][0-9a-hjkmnp-tv-z]{12}$");
    assert_eq!((schema["minLength"].as_u64(), schema["maxLength"].as_u64()), (Some(17), Some(17)));
    let description = schema["description"].as_str().ok_or("no description")?;
    assert!(description.contains("`ord_` and 13 lowercase Crockford base32 characters"), "{description}");
    let example = schema["examples"][0].as_str().ok_or("no example")?;
    let id: PrefixedOrderId = example.parse()?;
    assert_eq!((id.timestamp_ms(), id.worker()), (1_767_225_600_000, 1), "2026-01-01 on worker 1");
    // What serde writes for the smallest and largest IDs matches the pattern.
    for raw in [0, 31, 32, i64::MAX >> 1, (1 << 63 >> 1) - 1] {
        let raw = raw & PrefixedOrderId::LAYOUT.max_id();
        let json = serde_json::to_value(PrefixedOrderId::try_from(raw)?)?;
        let text = json.as_str().ok_or("not a string")?;
        assert!(matches_prefixed_pattern(text), "{text}");
    }
    assert!(!matches_prefixed_pattern("ord_8000000000000") && !matches_prefixed_pattern("ord_000000000000l"));
    Ok(())
}
