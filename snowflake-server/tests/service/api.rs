//! The API against the real router: every route, its status codes and bodies, and hostile
//! input (unknown types, bad ID strings, bad counts). The fenced case runs on a real Redis
//! lease whose renewals are paused.

use crate::common;

use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::body::Body;
use axum::http::{Request, StatusCode};
use http_body_util::BodyExt;
use serde_json::Value;
use snowflake_server::config::{Config, IdSpec, WorkerConfig};
use snowflake_server::{AppState, router};
use snowflake_types::worker::lease::WorkerLease;
use tower::ServiceExt;

const ORDER: &str = "order=preset=leaf,epoch=2020-01-01";
/// 55 bits: numbers at or above 2^55 are not IDs of it.
const SMALL: &str = "small=time=40,worker=5,seq=10,epoch=2021-05-05";

fn app(ids: &[&str], worker: u64) -> Router {
    let ids = ids.iter().map(|s| IdSpec::parse(s).unwrap()).collect();
    let state = AppState::new(&Config::new(ids, WorkerConfig::Fixed(worker)), None).unwrap();
    router(Arc::new(state), snowflake_server::prometheus())
}

struct Answer {
    status: StatusCode,
    content_type: String,
    retry_after: Option<String>,
    body: String,
}

impl Answer {
    fn json(&self) -> Value {
        serde_json::from_str(&self.body).unwrap_or_else(|e| panic!("{e}: {:?}", self.body))
    }
    fn error(&self) -> String {
        self.json()["error"].as_str().unwrap_or_else(|| panic!("no error in {:?}", self.body)).to_owned()
    }
}

async fn get(app: &Router, uri: &str) -> Answer {
    let response = app.clone().oneshot(Request::get(uri).body(Body::empty()).unwrap()).await.unwrap();
    let status = response.status();
    let header = |name| response.headers().get(name).map(|v: &axum::http::HeaderValue| v.to_str().unwrap().to_owned());
    let content_type = header("content-type").unwrap_or_default();
    let retry_after = header("retry-after");
    let bytes = response.into_body().collect().await.unwrap().to_bytes();
    Answer { status, content_type, retry_after, body: String::from_utf8(bytes.to_vec()).unwrap() }
}

fn leaf() -> snowflake_types::Layout {
    IdSpec::parse(ORDER).unwrap().layout
}

#[tokio::test]
async fn single_ids_batches_and_decoding() {
    let app = app(&[ORDER, SMALL], 7);
    let one = get(&app, "/v1/ids/order").await;
    assert_eq!(one.status, StatusCode::OK);
    assert_eq!(one.content_type, "application/json");
    let id: u64 = one.json()["id"].as_str().expect("the ID is a JSON string").parse().unwrap();
    assert_eq!(leaf().worker_of(i64::try_from(id).unwrap()), 7);

    let batch = get(&app, "/v1/ids/order?count=5").await;
    assert_eq!(batch.status, StatusCode::OK);
    let ids: Vec<u64> =
        batch.json()["ids"].as_array().unwrap().iter().map(|v| v.as_str().unwrap().parse().unwrap()).collect();
    assert_eq!(ids.len(), 5);
    assert!(ids.windows(2).all(|w| w[0] < w[1]), "in issuing order: {ids:?}");
    assert!(ids[0] > id);

    // The whole batch limit, in order and distinct.
    let full = get(&app, "/v1/ids/small?count=100000").await;
    assert_eq!(full.status, StatusCode::OK);
    let ids = full.json()["ids"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap().parse::<u64>().unwrap())
        .collect::<Vec<_>>();
    assert_eq!(ids.len(), 100_000);
    assert!(ids.windows(2).all(|w| w[0] < w[1]));

    let decoded = get(&app, &format!("/v1/ids/order/{id}")).await;
    assert_eq!(decoded.status, StatusCode::OK);
    let d = decoded.json();
    assert_eq!(d["id"], id.to_string());
    assert_eq!(d["type"], "order");
    assert_eq!(d["worker"], 7);
    assert_eq!(d["fields"]["worker"], 7, "the preset's field names: {d}");
    let time = d["time"].as_str().unwrap();
    assert!(time.starts_with("20") && time.ends_with('Z') && time.contains('T'), "{time}");
    let unix_ms = d["unix_ms"].as_i64().unwrap();
    let now_ms =
        i64::try_from(std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_millis()).unwrap();
    assert!((now_ms - unix_ms).abs() < 60_000, "{unix_ms} vs {now_ms}");
    // Leading zeros are the same ID.
    let padded = get(&app, &format!("/v1/ids/order/000{id}")).await;
    assert_eq!(padded.json()["id"], id.to_string());
}

#[tokio::test]
async fn types_health_readiness_and_metrics() {
    let app = app(&[ORDER, SMALL], 3);
    let types = get(&app, "/v1/types").await;
    assert_eq!(types.status, StatusCode::OK);
    let t = types.json();
    assert_eq!(t["types"][0]["name"], "order");
    assert_eq!(t["types"][0]["preset"], "leaf");
    assert_eq!(t["types"][0]["layout"], leaf().to_string());
    assert_eq!(t["types"][0]["worker"], 3);
    assert_eq!(t["types"][0]["batch_limit"], 100_000);
    assert_eq!(t["types"][1]["name"], "small");
    assert_eq!(t["types"][1]["seq_bits"], 10);
    assert_eq!(t["worker_source"], "fixed: worker 3");

    assert_eq!(get(&app, "/healthz").await.status, StatusCode::OK);
    let ready = get(&app, "/readyz").await;
    assert_eq!((ready.status, ready.json()["ready"].as_bool()), (StatusCode::OK, Some(true)));
    let ping = get(&app, "/v1/ping").await;
    assert_eq!((ping.status, ping.body.as_str()), (StatusCode::OK, "pong"));

    get(&app, "/v1/ids/order").await;
    get(&app, "/v1/ids/nope").await;
    let metrics = get(&app, "/metrics").await;
    assert_eq!(metrics.status, StatusCode::OK);
    assert!(metrics.content_type.starts_with("text/plain"), "{}", metrics.content_type);
    for line in [
        "snowflake_http_requests_total{route=\"/v1/ids/{name}\",status=\"200\"}",
        "snowflake_http_requests_total{route=\"/v1/ids/{name}\",status=\"404\"}",
        "snowflake_http_request_duration_seconds_bucket{route=\"/v1/ids/{name}\",status=\"200\",le=\"0.001\"}",
        "snowflake_server_ready 1",
        "snowflake_server_phase{phase=\"issuing\"} 1",
        "snowflake_server_phase{phase=\"acquiring\"} 0",
        "snowflake_server_ids_issued_total{type=\"order\"}",
    ] {
        assert!(metrics.body.contains(line), "{line} missing from:\n{}", metrics.body);
    }
}

#[tokio::test]
async fn unknown_types_and_routes_are_404() {
    let app = app(&[ORDER, SMALL], 1);
    for uri in ["/v1/ids/nope", "/v1/ids/nope?count=3", "/v1/ids/nope/123", "/v1/ids/ORDER"] {
        let a = get(&app, uri).await;
        assert_eq!(a.status, StatusCode::NOT_FOUND, "{uri}");
        assert!(a.error().contains("this server serves: order, small"), "{uri}: {}", a.error());
    }
    // Segments that are not UTF-8 once decoded: a 400 in JSON, like every error.
    for uri in ["/v1/ids/%FF", "/v1/ids/order/%FF%FE", "/api/snowflake/get/%C3%28"] {
        let a = get(&app, uri).await;
        assert_eq!(a.status, StatusCode::BAD_REQUEST, "{uri}: {}", a.body);
        assert!(a.error().contains("UTF-8"), "{uri}: {}", a.error());
    }
    let post = Request::post("/v1/ids/order").body(Body::empty()).unwrap();
    let response = app.clone().oneshot(post).await.unwrap();
    assert_eq!(response.status(), StatusCode::METHOD_NOT_ALLOWED);
    let body = response.into_body().collect().await.unwrap().to_bytes();
    assert!(String::from_utf8_lossy(&body).contains("GET only"), "{body:?}");
    let a = get(&app, "/v2/anything").await;
    assert_eq!(a.status, StatusCode::NOT_FOUND);
    assert!(a.error().contains("no such route"));
}

#[tokio::test]
async fn bad_ids_are_400_with_the_reason() {
    let app = app(&[ORDER, SMALL], 1);
    for (uri, says) in [
        ("/v1/ids/order/-1", "without a sign"),
        ("/v1/ids/order/+1", "without a sign"),
        ("/v1/ids/order/9223372036854775808", "larger than i64::MAX"),
        ("/v1/ids/order/99999999999999999999999", "larger than i64::MAX"),
        ("/v1/ids/order/12a", "found 'a' at byte 2"),
        ("/v1/ids/order/1.5", "decimal digits"),
        ("/v1/ids/order/%20", "decimal digits"),
        ("/v1/ids/order/", "empty text is not an ID"),
        ("/v1/ids/order/0x10", "decimal digits"),
        // 2^60: bits above the 55 of the layout.
        ("/v1/ids/small/1152921504606846976", "small"),
    ] {
        let a = get(&app, uri).await;
        assert_eq!(a.status, StatusCode::BAD_REQUEST, "{uri}: {}", a.body);
        assert!(a.error().contains(says), "{uri}: {}", a.error());
    }
    // The ID of the wrong layout is named as such.
    let a = get(&app, "/v1/ids/small/1152921504606846976").await;
    assert!(a.error().contains("is not an ID of type \"small\""), "{}", a.error());
}

#[tokio::test]
async fn bad_counts_are_400_with_the_reason() {
    let app = app(&[ORDER], 1);
    for (query, says) in [
        ("count=0", "at least 1"),
        ("count=100001", "batch limit of 100000"),
        ("count=18446744073709551616", "batch limit"),
        ("count=", "whole number"),
        ("count=-5", "whole number"),
        ("count=ten", "whole number"),
        ("count=2.0", "whole number"),
    ] {
        let a = get(&app, &format!("/v1/ids/order?{query}")).await;
        assert_eq!(a.status, StatusCode::BAD_REQUEST, "{query}: {}", a.body);
        assert!(a.error().contains(says), "{query}: {}", a.error());
    }
}

#[tokio::test]
async fn leaf_routes() {
    // One type: Leaf's key is ignored, as in Leaf's Snowflake mode.
    let app = app(&[ORDER], 9);
    let a = get(&app, "/api/snowflake/get/leaf-segment-test").await;
    assert_eq!(a.status, StatusCode::OK);
    assert_eq!(a.content_type, "text/plain; charset=utf-8");
    let id: i64 = a.body.parse().expect("the body is the ID alone");
    assert_eq!(leaf().worker_of(id), 9);

    let d = get(&app, &format!("/decodeSnowflakeId?snowflakeId={id}")).await;
    assert_eq!(d.status, StatusCode::OK);
    let d = d.json();
    assert_eq!(d["workerId"], "9");
    assert_eq!(d["sequenceId"], leaf().sequence_of(id).to_string());
    let ts = d["timestamp"].as_str().unwrap();
    let ms = leaf().timestamp_ms_of(id);
    assert!(ts.starts_with(&format!("{ms}(20")) && ts.ends_with(')'), "{ts}");
    // `ms(yyyy-MM-dd HH:mm:ss.SSS)`
    assert_eq!(ts.len(), ms.to_string().len() + 25, "{ts}");

    let bad = get(&app, "/decodeSnowflakeId?snowflakeId=abc").await;
    assert_eq!(bad.status, StatusCode::BAD_REQUEST);
    assert!(bad.json()["errorMsg"].as_str().unwrap().contains("decimal digits"));
    assert_eq!(get(&app, "/decodeSnowflakeId").await.status, StatusCode::BAD_REQUEST);

    // Several types: the key names one.
    let app = self::app(&[ORDER, SMALL], 2);
    let a = get(&app, "/api/snowflake/get/small").await;
    let id: i64 = a.body.parse().unwrap();
    assert_eq!(IdSpec::parse(SMALL).unwrap().layout.worker_of(id), 2);
    assert_eq!(get(&app, "/api/snowflake/get/other").await.status, StatusCode::NOT_FOUND);
    let d = get(&app, &format!("/decodeSnowflakeId?snowflakeId={id}&type=small")).await;
    assert_eq!(d.json()["workerId"], "2");
    assert_eq!(get(&app, &format!("/decodeSnowflakeId?snowflakeId={id}")).await.status, StatusCode::BAD_REQUEST);
    assert_eq!(get(&app, &format!("/decodeSnowflakeId?snowflakeId={id}&type=x")).await.status, StatusCode::NOT_FOUND);
}

#[test]
fn a_worker_that_does_not_fit_is_refused_at_start() {
    let config = Config::new(vec![IdSpec::parse(SMALL).unwrap()], WorkerConfig::Fixed(32));
    let err = AppState::new(&config, None).unwrap_err();
    assert!(err.to_string().contains("ID type \"small\""), "{err}");
    assert!(err.to_string().contains("does not fit"), "{err}");
}

/// A lease that is not renewed: 503 with `Retry-After` and `/readyz` false, then issuing
/// again once renewals resume.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fenced_is_503_with_retry_after_and_not_ready() {
    let Some(url) = common::redis_url() else { return };
    let namespace = common::unique("serve-api-fenced");
    let lease = WorkerLease::from_url(url.clone())
        .namespace(namespace.clone())
        .space(1024)
        .ttl(Duration::from_millis(1500))
        .reservation(Duration::from_millis(1500))
        .margin(Duration::from_millis(300))
        .acquire_async()
        .await
        .unwrap();
    let config = Config::new(
        vec![IdSpec::parse(ORDER).unwrap()],
        WorkerConfig::Lease(snowflake_server::config::LeaseConfig::new(&url)),
    );
    let state = Arc::new(AppState::new(&config, Some(lease.clone())).unwrap());
    let app = router(Arc::clone(&state), None);
    // The first use of the namespace waits out earlier holders, then issues.
    let mut ok = false;
    for _ in 0..100 {
        if get(&app, "/v1/ids/order").await.status == StatusCode::OK {
            ok = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(ok, "issues once the lease is held");
    assert_eq!(get(&app, "/readyz").await.status, StatusCode::OK);

    lease.pause_renewals(Duration::from_secs(4));
    let mut fenced = None;
    for _ in 0..100 {
        let a = get(&app, "/v1/ids/order").await;
        if a.status != StatusCode::OK {
            fenced = Some(a);
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let a = fenced.expect("fenced within 5 s");
    assert_eq!(a.status, StatusCode::SERVICE_UNAVAILABLE, "{}", a.body);
    assert!(a.retry_after.as_deref().is_some_and(|s| s.parse::<u64>().is_ok()), "{:?}", a.retry_after);
    assert!(a.error().contains("fenced"), "{}", a.error());
    assert_eq!(get(&app, "/v1/ids/order?count=10").await.status, StatusCode::SERVICE_UNAVAILABLE);
    assert_eq!(get(&app, "/api/snowflake/get/order").await.status, StatusCode::SERVICE_UNAVAILABLE);
    let r = get(&app, "/readyz").await;
    assert_eq!(r.status, StatusCode::SERVICE_UNAVAILABLE);
    assert_eq!(r.json()["ready"], false);
    assert!(r.json()["reason"].as_str().unwrap().contains("fenced"), "{}", r.body);
    assert_eq!(r.json()["phase"], "fenced", "{}", r.body);
    // The ID route's refusal gives the reason /readyz gives, from the same status.
    assert!(a.error().contains("worker ID") && a.error().contains("is fenced: "), "{}", a.error());

    let mut back = false;
    for _ in 0..200 {
        if get(&app, "/v1/ids/order").await.status == StatusCode::OK {
            back = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(back, "issues again once a renewal succeeds");
    assert_eq!(get(&app, "/readyz").await.status, StatusCode::OK);
    state.release().await;
    assert_eq!(get(&app, "/readyz").await.status, StatusCode::SERVICE_UNAVAILABLE);
    common::delete_namespace(&url, &namespace);
}

/// A prefixed type: `ord_…` on the v1 routes (issued, batched, decoded, listed), numbers on
/// Leaf's.
#[tokio::test]
async fn a_prefixed_type_is_served_and_decoded_prefixed_and_leaf_stays_numeric() {
    const PREFIXED: &str = "order=prefix=ord,preset=leaf,epoch=2020-01-01";
    let app = app(&[PREFIXED, SMALL], 5);
    let layout = leaf();
    let parse = |text: &str| {
        snowflake_types::prefixed::parse("ord", &layout, snowflake_types::prefixed::Decimal::Refuse, text)
            .unwrap_or_else(|e| panic!("{text:?}: {e}"))
    };
    let one = get(&app, "/v1/ids/order").await;
    assert_eq!(one.status, StatusCode::OK);
    let text = one.json()["id"].as_str().expect("a string").to_owned();
    assert!(text.starts_with("ord_") && text.len() == 17, "{text}");
    let raw = parse(&text);
    assert_eq!(layout.worker_of(raw), 5);

    let batch = get(&app, "/v1/ids/order?count=50").await;
    let texts: Vec<String> =
        batch.json()["ids"].as_array().unwrap().iter().map(|v| v.as_str().unwrap().to_owned()).collect();
    assert_eq!(texts.len(), 50);
    assert!(texts.windows(2).all(|w| w[0] < w[1]), "text order is issuing order: {texts:?}");
    assert!(texts.iter().map(|t| parse(t)).collect::<Vec<_>>().windows(2).all(|w| w[0] < w[1]));
    // The other type stays decimal.
    let small = get(&app, "/v1/ids/small").await;
    assert!(small.json()["id"].as_str().unwrap().parse::<u64>().is_ok());

    let decoded = get(&app, &format!("/v1/ids/order/{text}")).await;
    assert_eq!(decoded.status, StatusCode::OK);
    let d = decoded.json();
    assert_eq!(d["id"], text.as_str());
    assert_eq!(d["decimal"], raw.to_string());
    assert_eq!((d["type"].as_str(), d["worker"].as_u64()), (Some("order"), Some(5)));

    for (uri, says) in [
        (format!("/v1/ids/order/{raw}"), format!("it is written {text}")),
        (format!("/v1/ids/order/usr_{}", &text[4..]), "expected an ord_ ID, found usr_…".to_owned()),
        // "an order", "a tweet": the article follows the type's name.
        (format!("/v1/ids/order/usr_{}", &text[4..]), "is not an order ID: ".to_owned()),
        (format!("/v1/ids/order/ORD_{}", &text[4..]), "(prefixes are written in lowercase)".to_owned()),
        ("/v1/ids/order/ord_".to_owned(), "13 characters after `ord_`; found 0".to_owned()),
        ("/v1/ids/order/ord_zzzzzzzzzzzzz".to_owned(), "'z' cannot start an ID".to_owned()),
        ("/v1/ids/order/ord_0000000000%C3%A9".to_owned(), "'é' at byte 14 is not a base32 character".to_owned()),
        ("/v1/ids/order/".to_owned(), "empty text is not an ID; expected an ord_ ID".to_owned()),
    ] {
        let answer = get(&app, &uri).await;
        assert_eq!(answer.status, StatusCode::BAD_REQUEST, "{uri}");
        assert!(answer.error().contains(&says), "{uri}: {}", answer.error());
    }

    let types = get(&app, "/v1/types").await.json();
    assert_eq!(types["types"][0]["prefix"], "ord");
    assert_eq!(types["types"][1]["prefix"], Value::Null);

    // Leaf's routes: numbers, both ways.
    let leaf_id: i64 = get(&app, "/api/snowflake/get/order").await.body.parse().expect("a number");
    assert_eq!(layout.worker_of(leaf_id), 5);
    let d = get(&app, &format!("/decodeSnowflakeId?snowflakeId={raw}&type=order")).await;
    assert_eq!((d.status, d.json()["workerId"].as_str()), (StatusCode::OK, Some("5")));
    let d = get(&app, &format!("/decodeSnowflakeId?snowflakeId={text}&type=order")).await;
    assert_eq!(d.status, StatusCode::BAD_REQUEST, "Leaf's decoder reads numbers only");
}
