//! The HTTP API: IDs one at a time and in batches, decoding, the types' layouts, Leaf's two
//! routes, health, readiness and metrics.
//!
//! | route | answer |
//! | --- | --- |
//! | `GET /v1/ids/{name}` | `{"id":"…"}` |
//! | `GET /v1/ids/{name}?count=N` | `{"ids":["…",…]}`, in issuing order, `N` up to the type's batch limit |
//! | `GET /v1/ids/{name}/{id}` | the decoded parts, the time as RFC 3339 |
//! | `GET /v1/types` | each type's layout and prefix |
//!
//! A type with a prefix (`--id order=prefix=ord,…`) has its IDs written `ord_…` on the v1
//! routes (decoded from that form only, with the stored integer as `decimal` beside them);
//! Leaf's routes stay numeric.
//! | `GET /v1/ping` | `pong` (the cost of HTTP alone, for benchmarks) |
//! | `GET /api/snowflake/get/{key}` | Leaf: the ID as plain text |
//! | `GET /decodeSnowflakeId?snowflakeId=…` | Leaf: `{"timestamp":"ms(yyyy-MM-dd HH:mm:ss.SSS)","workerId":"…","sequenceId":"…"}` |
//! | `GET /healthz`, `/readyz`, `/metrics` | liveness, readiness, Prometheus text |
//!
//! Errors are `{"error":"…"}`: 404 for an unknown type or route, 400 for a bad ID or count
//! (saying why), 503 with `Retry-After` while the worker-ID lease does not issue (at once, with
//! the reason `/readyz` gives, read from the same status: acquiring, waiting out, fenced,
//! recovering) or while the clock cannot issue. Refused ID requests are logged as a count, one
//! line every 5 s at most.
//!
//! The lookups, checks, issuing, text forms and decoding are the crate's `issue` module's,
//! shared with the gRPC calls; this module writes their answers and errors as HTTP.
//!
//! Every route answers from the moment the port is open: the routes that need no worker ID
//! (`/v1/types`, decoding, `/v1/ping`, `/healthz`) as always, the ID routes with a 503 until
//! the lease issues, `/readyz` with 200 exactly while every type can issue.

use std::fmt::Write as _;
use std::sync::Arc;
use std::time::Instant;

use axum::extract::rejection::QueryRejection;
use axum::extract::{FromRequestParts, MatchedPath, Path, Query, Request, State};
use axum::http::request::Parts as RequestParts;
use axum::http::{HeaderValue, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::{Json, Router};
use metrics_exporter_prometheus::PrometheusHandle;
use serde::Deserialize;
use serde_json::{Map, Value, json};
use snowflake_types::Parts;
use snowflake_types::layout::LayoutSummary;

use crate::config::IdSpec;
use crate::issue::{self, Decoded, IssueError};
use crate::state::{AppState, IdType, Phase};

/// An error answer: a status and `{"error":"…"}`, with `Retry-After` when waiting helps.
#[derive(Debug)]
struct ApiError {
    status: StatusCode,
    message: String,
    retry_after: Option<u64>,
}

impl ApiError {
    fn new(status: StatusCode, message: impl Into<String>) -> ApiError {
        ApiError { status, message: message.into(), retry_after: None }
    }
}

/// The ID routes' refusals as HTTP answers: 404, 400, 503 with `Retry-After`, 500.
impl From<IssueError> for ApiError {
    fn from(error: IssueError) -> ApiError {
        let status = match &error {
            IssueError::UnknownType(_) => StatusCode::NOT_FOUND,
            IssueError::Invalid(_) => StatusCode::BAD_REQUEST,
            IssueError::Unavailable { .. } => StatusCode::SERVICE_UNAVAILABLE,
            IssueError::Internal(_) => StatusCode::INTERNAL_SERVER_ERROR,
        };
        let retry_after = error.retry_after();
        ApiError { status, message: error.message().to_owned(), retry_after }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let mut response = (self.status, Json(json!({ "error": self.message }))).into_response();
        if let Some(seconds) = self.retry_after {
            response.headers_mut().insert(header::RETRY_AFTER, HeaderValue::from(seconds));
        }
        response
    }
}

/// The state handlers see: the types, and the exporter's handle for `/metrics`.
#[derive(Clone)]
struct Shared {
    app: Arc<AppState>,
    metrics: Option<PrometheusHandle>,
}

/// The service's routes on `state`; `/metrics` renders `metrics` (without a handle it answers
/// 404). Every request is counted and timed (`snowflake_http_requests_total`,
/// `snowflake_http_request_duration_seconds`, labelled by route and status).
///
/// ```
/// use std::sync::Arc;
/// use snowflake_server::config::{Config, IdSpec, WorkerConfig};
/// use snowflake_server::{AppState, router};
///
/// let config = Config::new(vec![IdSpec::parse("order=preset=leaf")?], WorkerConfig::Fixed(1));
/// let app: axum::Router = router(Arc::new(AppState::new(&config, None)?), None);
/// Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn router(state: Arc<AppState>, metrics: Option<PrometheusHandle>) -> Router {
    Router::new()
        .route("/v1/ids/{name}", get(next_ids))
        .route("/v1/ids/{name}/{id}", get(decode))
        .route("/v1/ids/{name}/", get(decode_empty))
        .route("/v1/types", get(types))
        .route("/v1/ping", get(|| async { "pong" }))
        .route("/api/snowflake/get/{key}", get(leaf_get))
        .route("/decodeSnowflakeId", get(leaf_decode))
        .route("/healthz", get(|| async { Json(json!({ "alive": true })) }))
        .route("/readyz", get(readyz))
        .route("/metrics", get(render_metrics))
        .fallback(|| async { ApiError::new(StatusCode::NOT_FOUND, "no such route; see GET /v1/types") })
        .method_not_allowed_fallback(|| async {
            ApiError::new(StatusCode::METHOD_NOT_ALLOWED, "every route of this server answers GET only")
        })
        .layer(middleware::from_fn(count_requests))
        .with_state(Shared { app: state, metrics })
}

async fn count_requests(request: Request, next: Next) -> Response {
    let started = Instant::now();
    let route = request.extensions().get::<MatchedPath>().map_or("unmatched", |p| p.as_str()).to_owned();
    let response = next.run(request).await;
    let status = response.status().as_u16().to_string();
    let labels = [("route", route), ("status", status)];
    metrics::counter!("snowflake_http_requests_total", &labels).increment(1);
    metrics::histogram!("snowflake_http_request_duration_seconds", &labels).record(started.elapsed().as_secs_f64());
    response
}

/// The path's parameters, or a JSON 400 (a segment that is not UTF-8 once decoded, say).
struct Segments<T>(T);

impl<S: Send + Sync, T: serde::de::DeserializeOwned + Send> FromRequestParts<S> for Segments<T> {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut RequestParts, state: &S) -> Result<Self, ApiError> {
        match Path::<T>::from_request_parts(parts, state).await {
            Ok(Path(value)) => Ok(Segments(value)),
            Err(e) => Err(ApiError::new(StatusCode::BAD_REQUEST, e.body_text())),
        }
    }
}

#[derive(Deserialize)]
struct CountQuery {
    count: Option<String>,
}

/// The count of a batch: 1 to the type's limit, in decimal digits.
fn parse_count(text: &str, limit: usize) -> Result<usize, ApiError> {
    if text.is_empty() || !text.bytes().all(|b| b.is_ascii_digit()) {
        let why = format!("expected a whole number from 1 to {limit}");
        return Err(ApiError::new(StatusCode::BAD_REQUEST, format!("count={text:?}: {why}")));
    }
    Ok(issue::check_count(&format!("count={text:?}"), text.parse::<usize>().unwrap_or(usize::MAX), limit)?)
}

async fn next_ids(
    State(shared): State<Shared>,
    Segments(name): Segments<String>,
    query: Result<Query<CountQuery>, QueryRejection>,
) -> Result<Response, ApiError> {
    let id_type = issue::issuer(&shared.app, &name)?;
    let Query(query) = query.map_err(|e| ApiError::new(StatusCode::BAD_REQUEST, e.body_text()))?;
    let Some(count) = query.count else {
        let raw = issue::one(&shared.app, id_type)?;
        return Ok(json_text(format!("{{\"id\":\"{}\"}}", issue::text(&id_type.spec, raw))));
    };
    let count = parse_count(&count, id_type.generator.batch_limit())?;
    // Past a tick's worth of IDs the generator waits for the clock: off the async workers.
    let body =
        issue::batch(&shared.app, id_type, count, LARGE_BATCH, move |state, id_type| batch(state, id_type, count))
            .await?;
    Ok(json_text(body))
}

/// Batches above this many IDs are made on a blocking thread (a 12-bit sequence's tick holds 4 096).
const LARGE_BATCH: usize = 4096;

/// `{"ids":[…]}`: `count` IDs in issuing order.
fn batch(state: &AppState, id_type: &IdType, count: usize) -> Result<String, IssueError> {
    let spec = &id_type.spec;
    // At most 20 digits (or a prefix, `_` and 13 characters), 2 quotes and a comma each.
    let width = spec.prefix.as_deref().map_or(20, |p| p.len() + 14);
    let mut body = String::with_capacity(10 + count * (width + 3));
    body.push_str("{\"ids\":[");
    let mut first = true;
    issue::fill(state, id_type, count, |raw| {
        if !first {
            body.push(',');
        }
        first = false;
        // Writing to a String cannot fail.
        let _ = write!(body, "\"{}\"", issue::text(spec, raw));
    })?;
    body.push_str("]}");
    Ok(body)
}

fn json_text(body: String) -> Response {
    ([(header::CONTENT_TYPE, HeaderValue::from_static("application/json"))], body).into_response()
}

/// The node and sequence fields, by the type's names for them.
fn fields(spec: &IdSpec, parts: &Parts) -> Map<String, Value> {
    let labels = &spec.labels;
    let mut fields = Map::new();
    if let (Some(dc), Some(machine)) = (parts.datacenter, parts.machine) {
        fields.insert(labels.datacenter.to_owned(), json!(dc));
        fields.insert(labels.machine.to_owned(), json!(machine));
    } else if spec.layout.worker_bits() > 0 {
        fields.insert(labels.node.to_owned(), json!(parts.worker));
    }
    fields.insert(labels.sequence.to_owned(), json!(parts.sequence));
    fields
}

async fn decode(
    State(shared): State<Shared>,
    Segments((name, id)): Segments<(String, String)>,
) -> Result<Response, ApiError> {
    let spec = issue::spec(&shared.app, &name)?;
    let decoded = Decoded::new(spec, issue::parse_text(spec, &id)?);
    let parts = &decoded.parts;
    Ok(Json(json!({
        "id": decoded.text(),
        // The stored integer (a prefixed type's `id` is its text form).
        "decimal": decoded.decimal(),
        "type": spec.name,
        "layout": spec.layout.to_string(),
        "time": decoded.time(),
        "unix_ms": parts.timestamp_ms,
        "ticks": parts.ticks,
        "worker": parts.worker,
        "datacenter": parts.datacenter,
        "machine": parts.machine,
        "sequence": parts.sequence,
        "fields": Value::Object(fields(spec, parts)),
    }))
    .into_response())
}

/// `/v1/ids/{name}/`: an empty ID, refused as the decoder refuses it.
async fn decode_empty(State(shared): State<Shared>, Segments(name): Segments<String>) -> Result<Response, ApiError> {
    let spec = issue::spec(&shared.app, &name)?;
    issue::parse_text(spec, "")?;
    Err(ApiError::new(StatusCode::BAD_REQUEST, "an empty ID"))
}

async fn types(State(shared): State<Shared>) -> Json<Value> {
    let app = &shared.app;
    let types: Vec<Value> = app
        .specs()
        .iter()
        .map(|spec| {
            let worker = app.worker();
            let mut described = json!(LayoutSummary(&spec.layout));
            described["name"] = json!(spec.name);
            described["preset"] = json!(spec.preset.map(|p| p.name));
            // `ord` for a type whose v1 IDs are `ord_…`; null for decimal IDs.
            described["prefix"] = json!(spec.prefix);
            // No worker ID yet while the lease is being acquired.
            described["worker"] = json!(worker);
            described["batch_limit"] = json!(issue::batch_limit(app, spec));
            described
        })
        .collect();
    Json(json!({ "types": types, "worker_source": app.worker_source() }))
}

/// The type a Leaf route means: the one named `key`, else the only one (Leaf's Snowflake mode
/// ignores the key).
fn leaf_type<'a>(state: &'a AppState, key: Option<&str>) -> Result<&'a IdSpec, ApiError> {
    match (key.and_then(|k| state.spec(k)), state.specs()) {
        (Some(t), _) => Ok(t),
        (None, [only]) => Ok(only),
        (None, _) => match key {
            Some(key) => Err(IssueError::unknown_type(key, state).into()),
            None => Err(ApiError::new(
                StatusCode::BAD_REQUEST,
                "this server serves several ID types: add &type=NAME (see GET /v1/types)",
            )),
        },
    }
}

async fn leaf_get(State(shared): State<Shared>, Segments(key): Segments<String>) -> Result<Response, ApiError> {
    let spec = leaf_type(&shared.app, Some(&key))?;
    let id_type = issue::issuer(&shared.app, &spec.name)?;
    let raw = issue::one(&shared.app, id_type)?;
    let text = issue::decimal(raw);
    Ok(([(header::CONTENT_TYPE, HeaderValue::from_static("text/plain; charset=utf-8"))], text).into_response())
}

#[derive(Deserialize)]
struct LeafDecodeQuery {
    #[serde(rename = "snowflakeId")]
    snowflake_id: Option<String>,
    r#type: Option<String>,
}

async fn leaf_decode(
    State(shared): State<Shared>,
    query: Result<Query<LeafDecodeQuery>, QueryRejection>,
) -> Result<Response, ApiError> {
    let Query(query) = query.map_err(|e| ApiError::new(StatusCode::BAD_REQUEST, e.body_text()))?;
    let spec = leaf_type(&shared.app, query.r#type.as_deref())?;
    if let Some(name) = &query.r#type
        && shared.app.spec(name).is_none()
    {
        return Err(IssueError::unknown_type(name, &shared.app).into());
    }
    let Some(text) = query.snowflake_id else {
        return Err(ApiError::new(StatusCode::BAD_REQUEST, "give the ID to decode: ?snowflakeId=…"));
    };
    // Leaf answers a bad ID with `errorMsg`; here it comes with a 400 and `error` beside it.
    let raw = issue::parse_id(spec, &text).map_err(|e| {
        let body = json!({ "errorMsg": e.message(), "error": e.message() });
        (StatusCode::BAD_REQUEST, Json(body)).into_response()
    });
    let raw = match raw {
        Ok(raw) => raw,
        Err(response) => return Ok(response),
    };
    let decoded = Decoded::new(spec, raw);
    let parts = &decoded.parts;
    // Leaf writes `ms(yyyy-MM-dd HH:mm:ss.SSS)` in its server's time zone; here in UTC.
    let rfc = decoded.time();
    let civil = rfc.trim_end_matches('Z').replacen('T', " ", 1);
    let civil = if civil.len() == 19 { format!("{civil}.000") } else { civil };
    Ok(Json(json!({
        "timestamp": format!("{}({civil})", parts.timestamp_ms),
        "workerId": parts.worker.to_string(),
        "sequenceId": parts.sequence.to_string(),
    }))
    .into_response())
}

/// `/readyz`: 200 while every type issues and the server does not drain; 503 otherwise, with
/// the phase and the reason, both read from the lease's status (what the ID routes refuse
/// with).
async fn readyz(State(shared): State<Shared>) -> Response {
    let readiness = shared.app.readiness();
    let phase = readiness.phase.as_str();
    match readiness.reason {
        None => match shared.app.lease_issuing() {
            // A store that does not answer leaves the server ready while its reservation lasts.
            Some((worker, issuing_for_ms, store_answering)) => Json(json!({
                "ready": true,
                "phase": phase,
                "lease": { "worker": worker, "issuing_for_ms": issuing_for_ms, "store_answering": store_answering }
            }))
            .into_response(),
            None => Json(json!({ "ready": true, "phase": phase })).into_response(),
        },
        Some(reason) => {
            let body = json!({ "ready": false, "phase": phase, "reason": reason });
            let mut response = (StatusCode::SERVICE_UNAVAILABLE, Json(body)).into_response();
            if let Some(seconds) = readiness.retry_after {
                response.headers_mut().insert(header::RETRY_AFTER, HeaderValue::from(seconds));
            }
            response
        }
    }
}

/// `/metrics`: the recorder's text, and the server's readiness as gauges read at the scrape
/// from the lease's status: `snowflake_server_ready` and `snowflake_server_phase` (1 for the
/// phase the server is in, 0 for the others, every phase there from the first scrape).
async fn render_metrics(State(shared): State<Shared>) -> Result<Response, ApiError> {
    let Some(handle) = &shared.metrics else {
        return Err(ApiError::new(StatusCode::NOT_FOUND, "metrics are not recorded by this server"));
    };
    handle.run_upkeep();
    let readiness = shared.app.readiness();
    let ready = u8::from(readiness.reason.is_none());
    let mut body = handle.render();
    body.push_str(&format!(
        "# HELP snowflake_server_ready Whether every ID type can issue now and the server does not drain.\n# TYPE snowflake_server_ready gauge\nsnowflake_server_ready {ready}\n"
    ));
    body.push_str(
        "# HELP snowflake_server_phase The server's phase, from its lease's status: 1 for the current one.\n# TYPE snowflake_server_phase gauge\n",
    );
    for phase in Phase::ALL {
        let _ = writeln!(
            body,
            "snowflake_server_phase{{phase=\"{}\"}} {}",
            phase.as_str(),
            u8::from(phase == readiness.phase)
        );
    }
    Ok(([(header::CONTENT_TYPE, HeaderValue::from_static("text/plain; version=0.0.4; charset=utf-8"))], body)
        .into_response())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts() {
        assert_eq!(parse_count("1", 10).unwrap(), 1);
        assert_eq!(parse_count("010", 10).unwrap(), 10);
        for (bad, says) in [
            ("0", "at least 1"),
            ("11", "batch limit of 10"),
            ("99999999999999999999999", "batch limit"),
            ("", "whole number"),
            ("-1", "whole number"),
            ("1.5", "whole number"),
            ("ten", "whole number"),
            (" 1", "whole number"),
        ] {
            let e = parse_count(bad, 10).unwrap_err();
            assert_eq!(e.status, StatusCode::BAD_REQUEST);
            assert!(e.message.contains(says), "{bad:?}: {}", e.message);
        }
    }
}
