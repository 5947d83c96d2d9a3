//! The gRPC calls counted beside the HTTP routes: `snowflake_grpc_requests_total` and
//! `snowflake_grpc_request_duration_seconds`, labelled by method (`Issue`, `IssueBatch`, …,
//! health's `Check` and `Watch`) and by the call's gRPC status code (`OK`, `UNAVAILABLE`, …).
//! The code is read where tonic writes it: in the response's headers for a call refused at
//! once, in the trailers after the last message otherwise; a call whose client went away
//! first is `CANCELLED`. A stream's duration is its whole life.
#![cfg(feature = "grpc")]

use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Instant;

use axum::body::{Body, Bytes, HttpBody};
use axum::extract::Request;
use axum::http::HeaderMap;
use axum::middleware::Next;
use axum::response::Response;
use http_body::{Frame, SizeHint};

/// The methods of the services served, so that a label never takes a client's text.
const METHODS: [&str; 9] =
    ["Issue", "IssueBatch", "IssueStream", "Decode", "ListTypes", "Check", "Watch", "ServerReflectionInfo", "List"];

/// The gRPC status codes by number.
const CODES: [&str; 17] = [
    "OK",
    "CANCELLED",
    "UNKNOWN",
    "INVALID_ARGUMENT",
    "DEADLINE_EXCEEDED",
    "NOT_FOUND",
    "ALREADY_EXISTS",
    "PERMISSION_DENIED",
    "RESOURCE_EXHAUSTED",
    "FAILED_PRECONDITION",
    "ABORTED",
    "OUT_OF_RANGE",
    "UNIMPLEMENTED",
    "INTERNAL",
    "UNAVAILABLE",
    "DATA_LOSS",
    "UNAUTHENTICATED",
];

/// The code `grpc-status` names in `headers`, if it is there.
fn code_in(headers: &HeaderMap) -> Option<&'static str> {
    let value = headers.get("grpc-status")?;
    let n: usize = value.to_str().ok()?.parse().ok()?;
    Some(CODES.get(n).copied().unwrap_or("UNKNOWN"))
}

/// Counts one gRPC call when its status is known (a middleware on the gRPC routes).
pub(crate) async fn count_grpc(request: Request, next: Next) -> Response {
    let started = Instant::now();
    let asked = request.uri().path().rsplit('/').next().unwrap_or_default();
    let method = METHODS.iter().copied().find(|m| *m == asked).unwrap_or("unknown");
    let response = next.run(request).await;
    let call = Call { method, started };
    if let Some(code) = code_in(response.headers()) {
        call.done(code);
        return response;
    }
    response.map(|body| Body::new(Counted { inner: body, call: Some(call) }))
}

struct Call {
    method: &'static str,
    started: Instant,
}

impl Call {
    fn done(self, code: &'static str) {
        let labels = [("method", self.method), ("code", code)];
        metrics::counter!("snowflake_grpc_requests_total", &labels).increment(1);
        metrics::histogram!("snowflake_grpc_request_duration_seconds", &labels)
            .record(self.started.elapsed().as_secs_f64());
    }
}

/// A response body that counts its call when the trailers pass (or the body ends or is
/// dropped without them).
struct Counted {
    inner: Body,
    call: Option<Call>,
}

impl Counted {
    fn finish(&mut self, code: &'static str) {
        if let Some(call) = self.call.take() {
            call.done(code);
        }
    }
}

impl HttpBody for Counted {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, axum::Error>>> {
        let polled = Pin::new(&mut self.inner).poll_frame(cx);
        match &polled {
            Poll::Ready(Some(Ok(frame))) => {
                if let Some(code) = frame.trailers_ref().and_then(code_in) {
                    self.finish(code);
                }
            }
            Poll::Ready(Some(Err(_))) => self.finish("INTERNAL"),
            Poll::Ready(None) => self.finish("UNKNOWN"),
            Poll::Pending => {}
        }
        polled
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

impl Drop for Counted {
    fn drop(&mut self) {
        self.finish("CANCELLED");
    }
}
