//! The `utoipa` integration: every derived type's OpenAPI schema is a string of 1 to 19
//! digits with an example ID, the same schema as the `schemars` integration's.
// utoipa's `OpenApi` derive writes paths that this workspace's lint calls unnecessary.
#![allow(unused_qualifications)]

use serde_json::{Value, json};
use typed_snowflake::SnowflakeId;
use utoipa::{OpenApi, PartialSchema, ToSchema};

#[derive(SnowflakeId, Clone, Copy, PartialEq, Eq, Debug)]
#[layout(time = 42, worker = 5, seq = 16, epoch = "2021-05-05")]
struct OrderId(i64);

/// A layout whose epoch lies after 2026-01-01: the example falls back to its largest ID.
#[derive(SnowflakeId, Clone, Copy, PartialEq, Eq, Debug)]
#[layout(time = 41, worker = 2, seq = 2, epoch = "2026-06-01")]
struct ShortLivedId(i64);

#[derive(ToSchema, serde::Serialize)]
#[allow(dead_code)]
struct Order {
    id: OrderId,
    parent: Option<OrderId>,
    lines: Vec<OrderId>,
}

#[derive(OpenApi)]
#[openapi(components(schemas(Order, OrderId)))]
struct Api;

#[test]
fn schema_is_a_digit_string_with_an_example() -> Result<(), Box<dyn std::error::Error>> {
    let schema = serde_json::to_value(<OrderId as PartialSchema>::schema())?;
    assert_eq!(schema["type"], "string");
    assert_eq!(schema["pattern"], "^[0-9]{1,19}$");
    assert_eq!((schema["minLength"].as_u64(), schema["maxLength"].as_u64()), (Some(1), Some(19)));
    let example = schema["examples"][0].as_str().ok_or("no example")?;
    let id: OrderId = example.parse()?;
    assert_eq!((id.timestamp_ms(), id.worker()), (1_767_225_600_000, 1), "2026-01-01 on worker 1");
    assert_eq!(<OrderId as ToSchema>::name(), "OrderId");

    let short = serde_json::to_value(<ShortLivedId as PartialSchema>::schema())?;
    let example: ShortLivedId = short["examples"][0].as_str().ok_or("no example")?.parse()?;
    assert_eq!(example.get(), ShortLivedId::LAYOUT.max_id());
    Ok(())
}

#[test]
fn schema_matches_the_json_schema_of_schemars() -> Result<(), Box<dyn std::error::Error>> {
    let openapi = serde_json::to_value(<OrderId as PartialSchema>::schema())?;
    let json_schema = serde_json::to_value(schemars::schema_for!(OrderId))?;
    for key in ["type", "pattern", "description"] {
        assert_eq!(openapi[key], json_schema[key], "{key}");
    }
    // Every example is a value the JSON Schema's pattern admits and serde reads back.
    let example = &openapi["examples"][0];
    let back: OrderId = serde_json::from_value(example.clone())?;
    assert_eq!(serde_json::to_value(back)?, *example);
    Ok(())
}

#[test]
fn structs_refer_to_the_id_schema() -> Result<(), Box<dyn std::error::Error>> {
    let doc = serde_json::to_value(Api::openapi())?;
    let schemas = &doc["components"]["schemas"];
    assert_eq!(schemas["OrderId"]["pattern"], "^[0-9]{1,19}$");
    let properties = &schemas["Order"]["properties"];
    assert_eq!(properties["id"], json!({"$ref": "#/components/schemas/OrderId"}));
    assert_eq!(properties["lines"]["items"], json!({"$ref": "#/components/schemas/OrderId"}));
    let parent = serde_json::to_string(&properties["parent"])?;
    assert!(parent.contains("#/components/schemas/OrderId") && parent.contains("null"), "{parent}");
    let required: Vec<Value> = schemas["Order"]["required"].as_array().cloned().unwrap_or_default();
    assert!(required.contains(&json!("id")) && !required.contains(&json!("parent")), "{required:?}");
    Ok(())
}

/// A prefixed type (`ord_…`): its pattern, length and example are the prefixed form's.
#[derive(SnowflakeId, Clone, Copy, PartialEq, Eq)]
#[layout(time = 42, worker = 5, seq = 16, epoch = "2021-05-05")]
#[snowflake(prefix = "ord")]
struct PrefixedOrderId(i64);

#[test]
fn a_prefixed_type_has_the_prefixed_pattern() -> Result<(), Box<dyn std::error::Error>> {
    let schema = serde_json::to_value(<PrefixedOrderId as PartialSchema>::schema())?;
    assert_eq!(schema["type"], "string");
    assert_eq!(schema["pattern"], "^ord_[0-7][0-9a-hjkmnp-tv-z]{12}$");
    assert_eq!((schema["minLength"].as_u64(), schema["maxLength"].as_u64()), (Some(17), Some(17)));
    let example = schema["examples"][0].as_str().ok_or("no example")?;
    assert!(example.starts_with("ord_"), "{example}");
    let id: PrefixedOrderId = example.parse()?;
    assert_eq!((id.timestamp_ms(), id.worker()), (1_767_225_600_000, 1), "2026-01-01 on worker 1");
    // The same schema as schemars' (the prefixed fields).
    let other = serde_json::to_value(schemars::schema_for!(PrefixedOrderId))?;
    for key in ["type", "pattern", "minLength", "maxLength", "description"] {
        assert_eq!(schema[key], other[key], "{key}");
    }
    assert_eq!(schema["examples"], other["examples"]);
    Ok(())
}
