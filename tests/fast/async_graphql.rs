//! The `async-graphql` integration: each ID type is a scalar written as a string, read from a
//! string or an integer, and bad input is refused with the reason, end to end through a schema.

use async_graphql::{EmptyMutation, EmptySubscription, Object, Schema, Variables};
use serde_json::json;
use typed_snowflake::SnowflakeId;

#[derive(SnowflakeId, Clone, Copy, PartialEq, Eq, Debug)]
#[layout(time = 42, worker = 5, seq = 16, epoch = "2021-05-05")]
struct OrderId(i64);

/// A small layout (39 bits), so an integer can set bits above it.
#[derive(SnowflakeId, Clone, Copy, PartialEq, Eq, Debug)]
#[layout(time = 31, worker = 2, seq = 6, epoch = "2024-01-01", unit = "1s")]
struct SmallId(u64);

/// A prefixed type: the scalar is the `ord_…` text.
#[derive(SnowflakeId, Clone, Copy, PartialEq, Eq)]
#[layout(time = 42, worker = 5, seq = 16, epoch = "2021-05-05")]
#[snowflake(prefix = "ord")]
struct PrefixedOrderId(i64);

struct Query;

#[Object]
impl Query {
    /// Echoes the ID, and its worker.
    async fn order(&self, id: OrderId) -> OrderId {
        id
    }
    async fn worker(&self, id: OrderId) -> u64 {
        id.worker()
    }
    async fn small(&self, id: SmallId) -> SmallId {
        id
    }
    async fn maybe(&self, id: Option<OrderId>) -> Option<OrderId> {
        id
    }
    async fn prefixed(&self, id: PrefixedOrderId) -> PrefixedOrderId {
        id
    }
}

fn schema() -> Schema<Query, EmptyMutation, EmptySubscription> {
    Schema::new(Query, EmptyMutation, EmptySubscription)
}

#[test]
fn the_sdl_declares_one_scalar_per_type() {
    let sdl = schema().sdl();
    assert!(sdl.contains("scalar OrderId"), "{sdl}");
    assert!(sdl.contains("scalar SmallId"), "{sdl}");
    assert!(sdl.contains("order(id: OrderId!): OrderId!"), "{sdl}");
    assert!(sdl.contains("OrderId Snowflake ID: a positive 64-bit integer written as a string"), "{sdl}");
}

#[tokio::test]
async fn ids_round_trip_as_strings_from_strings_or_integers() -> Result<(), Box<dyn std::error::Error>> {
    let id = OrderId::from_parts(1_700_000_000_000, 3, 7)?;
    let text = id.to_string();
    let response = schema()
        .execute(format!(
            r#"{{ a: order(id: "{text}") b: order(id: {text}) worker(id: "{text}") none: maybe(id: null) }}"#
        ))
        .await;
    assert!(response.errors.is_empty(), "{:?}", response.errors);
    assert_eq!(response.data.into_json()?, json!({"a": text, "b": text, "worker": 3, "none": null}));

    let request = async_graphql::Request::new("query($id: OrderId!) { order(id: $id) }")
        .variables(Variables::from_json(json!({"id": text})));
    let response = schema().execute(request).await;
    assert!(response.errors.is_empty(), "{:?}", response.errors);
    assert_eq!(response.data.into_json()?, json!({"order": text}));
    Ok(())
}

#[tokio::test]
async fn bad_ids_are_refused_with_the_reason() -> Result<(), Box<dyn std::error::Error>> {
    let cases = [
        (r#"order(id: "-5")"#, "Failed to parse \"OrderId\""),
        (r#"order(id: "12x")"#, "Failed to parse \"OrderId\""),
        (r#"order(id: "")"#, "Failed to parse \"OrderId\""),
        (r#"order(id: "99999999999999999999")"#, "Failed to parse \"OrderId\""),
        ("order(id: -5)", "-5 is negative"),
        ("order(id: -9223372036854775808)", "-9223372036854775808 is negative"),
        ("order(id: 9223372036854775808)", "above the layout's 63 bits"),
        ("order(id: 1.5)", "1.5 is not an integer"),
        ("order(id: true)", "expected type \"OrderId\""),
        ("order(id: null)", "expected type \"OrderId\""),
        ("small(id: 35184372088832)", "35184372088832 sets bits above the layout's 39 bits"),
        (r#"small(id: "35184372088832")"#, "Failed to parse \"SmallId\""),
    ];
    for (field, expected) in cases {
        let response = schema().execute(format!("{{ {field} }}")).await;
        let message = response.errors.iter().map(|e| e.message.as_str()).collect::<Vec<_>>().join("; ");
        assert!(message.contains(expected), "{field}: {message}");
        assert_eq!(response.data.into_json()?, json!(null), "{field}: no data for a bad ID");
    }
    // The reasons are those of FromStr.
    let response = schema().execute(r#"{ order(id: "12x") }"#).await;
    let reason = "12x".parse::<OrderId>().expect_err("12x").to_string();
    assert!(response.errors[0].message.contains(&reason), "{:?} lacks {reason}", response.errors);
    // A variable is checked the same way.
    let request = async_graphql::Request::new("query($id: OrderId!) { order(id: $id) }")
        .variables(Variables::from_json(json!({"id": "-5"})));
    let response = schema().execute(request).await;
    assert!(!response.errors.is_empty(), "a bad variable is an error");
    Ok(())
}

#[tokio::test]
async fn a_prefixed_type_is_its_prefixed_text_both_ways() -> Result<(), Box<dyn std::error::Error>> {
    let id = PrefixedOrderId::from_parts(1_700_000_000_000, 3, 7)?;
    let text = id.to_string();
    assert!(text.starts_with("ord_"), "{text}");
    let response = schema().execute(format!(r#"{{ prefixed(id: "{text}") }}"#)).await;
    assert!(response.errors.is_empty(), "{:?}", response.errors);
    assert_eq!(response.data.into_json()?, json!({ "prefixed": text }));
    let sdl = schema().sdl();
    assert!(sdl.contains("scalar PrefixedOrderId"), "{sdl}");
    let decimal = id.get().to_string();
    for (field, expected) in [
        (format!(r#"prefixed(id: "usr_{}")"#, &text[4..]), "expected an ord_ ID, found usr_…".to_owned()),
        (format!(r#"prefixed(id: "{decimal}")"#), format!("it is written {text}")),
        (format!("prefixed(id: {decimal})"), format!("it is written {text}")),
        (r#"prefixed(id: "ord_")"#.to_owned(), "13 characters after `ord_`; found 0".to_owned()),
    ] {
        let response = schema().execute(format!("{{ {field} }}")).await;
        let message = response.errors.iter().map(|e| e.message.as_str()).collect::<Vec<_>>().join("; ");
        assert!(message.contains(&expected), "{field}: {message}");
    }
    Ok(())
}
