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
