//! The gRPC API (feature `grpc`): `snowflake.v1.Snowflake` from
//! `proto/snowflake/v1/snowflake.proto`, with `grpc.health.v1.Health` and server reflection,
//! answered on the HTTP port (an HTTP/2 request whose path names a gRPC service goes to
//! it; everything else to [`mod@crate::router`]).
//!
//! The calls use the same generators, worker ID and checks as the HTTP routes (both are faces
//! over the crate's `issue` module), and refuse for the same reasons, as gRPC status codes:
//! an unknown type `NOT_FOUND`, a bad ID or count `INVALID_ARGUMENT`, no worker ID yet, a
//! fenced one, a clock that cannot issue or a server that is draining `UNAVAILABLE`, with the
//! seconds to wait in the trailing metadata `retry-after`. The health service's status (for
//! the server, `""`, and for `snowflake.v1.Snowflake`) is `SERVING` while `/readyz` is 200
//! and `NOT_SERVING` otherwise, read from the same lease status at each call (a `Watch` is
//! sent each change within 100 ms); the types share one worker ID, so they are ready
//! together.
//!
//! ```no_run
//! use snowflake_server::grpc::pb::IssueBatchRequest;
//! use snowflake_server::grpc::pb::snowflake_client::SnowflakeClient;
//!
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! let channel = tonic::transport::Endpoint::from_static("http://127.0.0.1:8080").connect().await?;
//! let mut client = SnowflakeClient::new(channel);
//! let request = IssueBatchRequest { r#type: "order".into(), count: 1000, text: false };
//! let ids = client.issue_batch(request).await?.into_inner().ids;
//! assert_eq!(ids.len(), 1000);
//! # Ok(()) }
//! ```

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::{mpsc, watch};
use tokio_stream::wrappers::ReceiverStream;
use tonic::{Request, Response, Status};
use tonic_health::pb::health_check_response::ServingStatus;
use tonic_health::pb::{HealthCheckRequest, HealthCheckResponse};

use crate::issue::{self, Decoded, IssueError};
use crate::state::{AppState, IdType};

/// The code generated from `proto/snowflake/v1/snowflake.proto`: messages, the server
/// ([`pb::snowflake_server::SnowflakeServer`]) and a client
/// ([`pb::snowflake_client::SnowflakeClient`], on any tonic channel).
///
/// ```
/// use snowflake_server::grpc::pb::{DecodeRequest, decode_request::Id};
///
/// let request = DecodeRequest { r#type: "order".into(), id: Some(Id::Text("ord_1fvpp347wxqzz".into())) };
/// assert_eq!(request.r#type, "order");
/// ```
#[allow(missing_docs, unused_qualifications, clippy::all, clippy::pedantic)]
pub mod pb {
    tonic::include_proto!("snowflake.v1");
}

/// The compiled `snowflake/v1/snowflake.proto` (a `FileDescriptorSet`), as the reflection
/// service serves it.
///
/// ```
/// assert!(!snowflake_server::grpc::FILE_DESCRIPTOR_SET.is_empty());
/// ```
pub const FILE_DESCRIPTOR_SET: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/snowflake_v1_descriptor.bin"));

/// The full name of the ID service, as health checks and reflection name it.
///
/// ```
/// assert_eq!(snowflake_server::grpc::SERVICE, "snowflake.v1.Snowflake");
/// ```
pub const SERVICE: &str = "snowflake.v1.Snowflake";

/// Messages buffered per stream ahead of the client: the server issues as fast as the client
/// reads, and no further.
const STREAM_AHEAD: usize = 2;

/// A batch of at most this share of a tick's IDs (64 of a 12-bit sequence's 4 096) is made
/// on the async worker that answers the call; a larger one on a blocking thread.
const INLINE_SHARE: usize = 64;

/// The gRPC face of a server: its routes and its draining signal.
pub(crate) struct Grpc {
    draining: Arc<watch::Sender<bool>>,
}

impl Grpc {
    /// The services on `state`, with the health service reading its readiness; and the routes
    /// that answer them, each call counted (`snowflake_grpc_requests_total`).
    pub(crate) async fn new(state: Arc<AppState>) -> Result<(Grpc, axum::Router), crate::StartError> {
        let reflection = tonic_reflection::server::Builder::configure()
            .register_encoded_file_descriptor_set(FILE_DESCRIPTOR_SET)
            .register_encoded_file_descriptor_set(tonic_health::pb::FILE_DESCRIPTOR_SET)
            .build_v1()
            .map_err(|e| crate::StartError(format!("the gRPC reflection service: {e}")))?;
        let reflection_alpha = tonic_reflection::server::Builder::configure()
            .register_encoded_file_descriptor_set(FILE_DESCRIPTOR_SET)
            .register_encoded_file_descriptor_set(tonic_health::pb::FILE_DESCRIPTOR_SET)
            .build_v1alpha()
            .map_err(|e| crate::StartError(format!("the gRPC reflection service: {e}")))?;
        let (draining, _) = watch::channel(false);
        let draining = Arc::new(draining);
        let api = Api { state: Arc::clone(&state), draining: Arc::clone(&draining) };
        let health = Health { state };
        let routes = axum::Router::new()
            .route_service(&route_of(SERVICE), pb::snowflake_server::SnowflakeServer::new(api))
            .route_service(
                &route_of("grpc.health.v1.Health"),
                tonic_health::pb::health_server::HealthServer::new(health),
            )
            .route_service(&route_of("grpc.reflection.v1.ServerReflection"), reflection)
            .route_service(&route_of("grpc.reflection.v1alpha.ServerReflection"), reflection_alpha)
            .layer(axum::middleware::from_fn(crate::calls::count_grpc));
        Ok((Grpc { draining }, routes))
    }

    /// The server stops: streams end with `UNAVAILABLE`, new calls are refused with it
    /// (health says `NOT_SERVING` from the drain's start on, as `/readyz` does).
    pub(crate) fn drain(&self) {
        self.draining.send_replace(true);
    }
}

/// `grpc.health.v1.Health`, answered from the server's readiness at each call: what `/readyz`
/// says at that instant.
struct Health {
    state: Arc<AppState>,
}

/// How often a `Watch` reads the readiness again.
const HEALTH_WATCH_EVERY: Duration = Duration::from_millis(100);

impl Health {
    /// The status of `service`: `None` for a service this server does not have.
    fn status(&self, service: &str) -> Option<ServingStatus> {
        if !service.is_empty() && service != SERVICE {
            return None;
        }
        Some(if self.state.not_ready().is_none() { ServingStatus::Serving } else { ServingStatus::NotServing })
    }
}

#[tonic::async_trait]
impl tonic_health::pb::health_server::Health for Health {
    async fn check(&self, request: Request<HealthCheckRequest>) -> Result<Response<HealthCheckResponse>, Status> {
        let service = request.into_inner().service;
        match self.status(&service) {
            Some(status) => Ok(Response::new(HealthCheckResponse { status: status.into() })),
            None => Err(Status::not_found(format!("no service {service:?}; this server has {SERVICE:?}"))),
        }
    }

    type WatchStream = ReceiverStream<Result<HealthCheckResponse, Status>>;

    async fn watch(&self, request: Request<HealthCheckRequest>) -> Result<Response<Self::WatchStream>, Status> {
        let service = request.into_inner().service;
        let (out, out_rx) = mpsc::channel(1);
        let health = Health { state: Arc::clone(&self.state) };
        tokio::spawn(async move {
            let mut last = None;
            let mut tick = tokio::time::interval(HEALTH_WATCH_EVERY);
            loop {
                tick.tick().await;
                let status = health.status(&service).unwrap_or(ServingStatus::ServiceUnknown);
                if last != Some(status) {
                    if out.send(Ok(HealthCheckResponse { status: status.into() })).await.is_err() {
                        return;
                    }
                    last = Some(status);
                } else if out.is_closed() {
                    return;
                }
            }
        });
        Ok(Response::new(ReceiverStream::new(out_rx)))
    }
}

fn route_of(service: &str) -> String {
    format!("/{service}/{{*method}}")
}

/// The ID service.
struct Api {
    state: Arc<AppState>,
    draining: Arc<watch::Sender<bool>>,
}

/// A refusal as the gRPC status with the HTTP routes' reason, the seconds to wait in the
/// metadata `retry-after`.
fn status(error: IssueError) -> Status {
    let code = match &error {
        IssueError::UnknownType(_) => tonic::Code::NotFound,
        IssueError::Invalid(_) => tonic::Code::InvalidArgument,
        IssueError::Unavailable { .. } => tonic::Code::Unavailable,
        IssueError::Internal(_) => tonic::Code::Internal,
    };
    let retry_after = error.retry_after();
    let mut status = Status::new(code, error.message());
    if let Some(seconds) = retry_after {
        status.metadata_mut().insert("retry-after", seconds.into());
    }
    status
}

fn draining_status() -> Status {
    status(IssueError::Unavailable {
        message: "the server is shutting down: ask another".to_owned(),
        retry_after: Some(1),
    })
}

impl Api {
    fn refuse_if_draining(&self) -> Result<(), Status> {
        if *self.draining.borrow() { Err(draining_status()) } else { Ok(()) }
    }
}

/// `count` IDs of `id_type` in issuing order, with their text when `text`.
fn batch(state: &AppState, id_type: &IdType, count: usize, text: bool) -> Result<pb::IssueBatchResponse, IssueError> {
    let mut ids = Vec::with_capacity(count);
    issue::fill(state, id_type, count, |raw| ids.push(raw.cast_unsigned()))?;
    let texts =
        if text { ids.iter().map(|&id| issue::text_of(&id_type.spec, id.cast_signed())).collect() } else { Vec::new() };
    Ok(pb::IssueBatchResponse { ids, texts })
}

fn count_of(given: &str, n: u32, id_type: &IdType) -> Result<usize, Status> {
    let n = usize::try_from(n).unwrap_or(usize::MAX);
    issue::check_count(given, n, id_type.generator.batch_limit()).map_err(status)
}

#[tonic::async_trait]
impl pb::snowflake_server::Snowflake for Api {
    async fn issue(&self, request: Request<pb::IssueRequest>) -> Result<Response<pb::IssueResponse>, Status> {
        self.refuse_if_draining()?;
        let request = request.into_inner();
        let id_type = issue::issuer(&self.state, &request.r#type).map_err(status)?;
        let raw = issue::one(&self.state, id_type).map_err(status)?;
        Ok(Response::new(pb::IssueResponse { id: raw.cast_unsigned(), text: issue::text_of(&id_type.spec, raw) }))
    }

    async fn issue_batch(
        &self,
        request: Request<pb::IssueBatchRequest>,
    ) -> Result<Response<pb::IssueBatchResponse>, Status> {
        self.refuse_if_draining()?;
        let request = request.into_inner();
        let id_type = issue::issuer(&self.state, &request.r#type).map_err(status)?;
        let count = count_of(&format!("count={}", request.count), request.count, id_type)?;
        // A batch that finds the tick's sequence spent waits for the next tick (up to a tick,
        // spinning then sleeping). On an async worker that wait also holds every HTTP/2
        // connection the worker drives, answers already made included: at the cap (batches
        // of 1 000 on a 12-bit sequence, 32 in flight) it cost a quarter of the cap. So a
        // batch that may well wait (more than 1/64 of a tick's IDs) is made on a blocking
        // thread; a smaller one, which waits at most once in 64 calls at the cap, is made
        // here, without the hop to the blocking pool (which costs a quarter of the calls/s
        // of small batches). See BENCHMARKS.md, "The service over gRPC".
        let per_tick =
            usize::try_from(id_type.generator.layout().max_seq()).map_or(usize::MAX, |m| m.saturating_add(1));
        let text = request.text;
        issue::batch(&self.state, id_type, count, per_tick / INLINE_SHARE, move |state, id_type| {
            batch(state, id_type, count, text)
        })
        .await
        .map(Response::new)
        .map_err(status)
    }

    type IssueStreamStream = ReceiverStream<Result<pb::IssueBatchResponse, Status>>;

    async fn issue_stream(
        &self,
        request: Request<pb::IssueStreamRequest>,
    ) -> Result<Response<Self::IssueStreamStream>, Status> {
        self.refuse_if_draining()?;
        let request = request.into_inner();
        let id_type = issue::issuer(&self.state, &request.r#type).map_err(status)?;
        let chunk = count_of(&format!("chunk={}", request.chunk), request.chunk, id_type)?;
        // A blocking thread issues (at the layout's cap, each chunk after a tick's worth waits
        // for the clock) into `issued`; a task hands the chunks on as the client reads them,
        // and ends the stream when the server drains or the client goes.
        let (issued_tx, mut issued) = mpsc::channel(STREAM_AHEAD);
        let (out, out_rx) = mpsc::channel(STREAM_AHEAD);
        let state = Arc::clone(&self.state);
        tokio::task::spawn_blocking(move || {
            loop {
                let answer = issue::issuer(&state, &request.r#type)
                    .and_then(|id_type| batch(&state, id_type, chunk, request.text))
                    .map_err(status);
                let failed = answer.is_err();
                if issued_tx.blocking_send(answer).is_err() || failed {
                    return;
                }
            }
        });
        let mut draining = self.draining.subscribe();
        tokio::spawn(async move {
            loop {
                let next = tokio::select! {
                    next = issued.recv() => next,
                    _ = draining.wait_for(|&d| d) => None,
                };
                let Some(next) = next else {
                    if *draining.borrow() {
                        let _ = out.try_send(Err(draining_status()));
                    }
                    return;
                };
                tokio::select! {
                    sent = out.send(next) => if sent.is_err() { return },
                    _ = draining.wait_for(|&d| d) => {
                        let _ = out.try_send(Err(draining_status()));
                        return;
                    }
                }
            }
        });
        Ok(Response::new(ReceiverStream::new(out_rx)))
    }

    async fn decode(&self, request: Request<pb::DecodeRequest>) -> Result<Response<pb::DecodeResponse>, Status> {
        use pb::decode_request::Id;

        let request = request.into_inner();
        let spec = issue::spec(&self.state, &request.r#type).map_err(status)?;
        let raw = match &request.id {
            Some(Id::Number(number)) => issue::parse_id(spec, &number.to_string()),
            Some(Id::Text(text)) => issue::parse_text(spec, text),
            None => Err(IssueError::Invalid("give the ID to decode: `number` or `text`".to_owned())),
        }
        .map_err(status)?;
        let decoded = Decoded::new(spec, raw);
        let parts = &decoded.parts;
        Ok(Response::new(pb::DecodeResponse {
            id: raw.cast_unsigned(),
            text: decoded.text(),
            decimal: decoded.decimal(),
            r#type: spec.name.clone(),
            layout: spec.layout.to_string(),
            time: decoded.time(),
            unix_ms: parts.timestamp_ms,
            ticks: parts.ticks,
            worker: parts.worker,
            datacenter: parts.datacenter,
            machine: parts.machine,
            sequence: parts.sequence,
        }))
    }

    async fn list_types(
        &self,
        _request: Request<pb::ListTypesRequest>,
    ) -> Result<Response<pb::ListTypesResponse>, Status> {
        let app = &self.state;
        let worker = app.worker();
        let types = app
            .specs()
            .iter()
            .map(|spec| {
                let layout = &spec.layout;
                let limit = issue::batch_limit(app, spec);
                pb::TypeInfo {
                    name: spec.name.clone(),
                    layout: layout.to_string(),
                    preset: spec.preset.map(|p| p.name.to_owned()),
                    prefix: spec.prefix.clone(),
                    time_bits: layout.time_bits(),
                    worker_bits: layout.worker_bits(),
                    datacenter_bits: layout.datacenter_bits(),
                    seq_bits: layout.seq_bits(),
                    order: layout.order().as_str().to_owned(),
                    tick: layout.unit().as_str().to_owned(),
                    epoch_ms: layout.epoch_ms(),
                    worker,
                    batch_limit: u32::try_from(limit).unwrap_or(u32::MAX),
                }
            })
            .collect();
        Ok(Response::new(pb::ListTypesResponse { types, worker_source: app.worker_source().to_owned() }))
    }
}
