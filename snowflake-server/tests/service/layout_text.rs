//! One layout text for the service and the derive: the `layout` that `GET /v1/types` prints
//! for a type, pasted into `#[layout("…")]`, compiles to the same layout, and IDs the service
//! issues decode in the derived type with the service's worker.

use std::sync::Arc;

use axum::body::Body;
use axum::http::{Request, StatusCode};
use http_body_util::BodyExt;
use snowflake_server::config::{Config, IdSpec, WorkerConfig};
use snowflake_server::{AppState, router};
use tower::ServiceExt;
use typed_snowflake::SnowflakeId;

/// Pasted from `GET /v1/types` of `snowflake serve --id order=preset=leaf,epoch=2020-01-01`.
#[derive(SnowflakeId, Clone, Copy, PartialEq, Eq, Debug)]
#[layout("time=41,worker=10,seq=12,epoch=2020-01-01")]
struct OrderId(i64);

/// Pasted from `GET /v1/types` of `--id tweet=preset=twitter`.
#[derive(SnowflakeId, Clone, Copy, PartialEq, Eq, Debug)]
#[layout("time=41,datacenter=5,machine=5,seq=12,epoch=2010-11-04T01:42:54.657Z")]
struct TweetId(i64);

async fn get(app: &axum::Router, uri: &str) -> serde_json::Value {
    let response = app.clone().oneshot(Request::get(uri).body(Body::empty()).unwrap()).await.unwrap();
    assert_eq!(response.status(), StatusCode::OK, "{uri}");
    let bytes = response.into_body().collect().await.unwrap().to_bytes();
    serde_json::from_slice(&bytes).unwrap()
}

#[tokio::test]
async fn the_layout_text_of_v1_types_compiles_in_the_derive() {
    let ids = ["order=preset=leaf,epoch=2020-01-01", "tweet=preset=twitter"];
    let specs = ids.iter().map(|spec| IdSpec::parse(spec).unwrap()).collect();
    let state = AppState::new(&Config::new(specs, WorkerConfig::Fixed(7)), None).unwrap();
    let app = router(Arc::new(state), snowflake_server::prometheus());

    let types = get(&app, "/v1/types").await;
    assert_eq!(types["types"][0]["layout"], OrderId::LAYOUT.to_string(), "{types}");
    assert_eq!(types["types"][1]["layout"], TweetId::LAYOUT.to_string(), "{types}");

    // An ID of the service is an `OrderId` of worker 7, straight from its JSON.
    let issued = get(&app, "/v1/ids/order").await;
    let id: OrderId = serde_json::from_value(issued["id"].clone()).unwrap();
    assert_eq!(id.worker(), 7);
}
