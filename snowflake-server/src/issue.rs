//! What the HTTP routes ([`mod@crate::router`]) and the gRPC calls (the `grpc` module) both
//! do, written once: finding an ID type by name, checking a batch's count, issuing one ID or
//! a batch (a large batch on a blocking thread), the IDs' text forms, decoding, and the
//! errors, as one [`IssueError`] that each face turns into its own status (an HTTP status
//! with `Retry-After`, a gRPC status with `retry-after` metadata).

use std::fmt;
use std::sync::Arc;

use snowflake_types::layout::format_rfc3339;
use snowflake_types::{DEFAULT_BATCH_LIMIT, GenerateError, Parts};

use crate::config::IdSpec;
use crate::state::{AppState, IdType};

/// Why a request for IDs (or for decoding one) was refused; each face answers it with its
/// status: the HTTP routes with the status named on each variant, the gRPC calls with the
/// code.
#[derive(Debug)]
pub(crate) enum IssueError {
    /// No type of that name: 404, `NOT_FOUND`.
    UnknownType(String),
    /// A bad ID or count: 400, `INVALID_ARGUMENT`.
    Invalid(String),
    /// Not now (no worker ID yet, a fenced one, a clock that cannot issue, a server that
    /// drains): 503, `UNAVAILABLE`, with the seconds to wait when waiting helps.
    Unavailable { message: String, retry_after: Option<u64> },
    /// What waiting does not cure: 500, `INTERNAL`.
    Internal(String),
}

impl IssueError {
    /// The sentence the client is answered with.
    pub(crate) fn message(&self) -> &str {
        match self {
            IssueError::UnknownType(message) | IssueError::Invalid(message) | IssueError::Internal(message) => message,
            IssueError::Unavailable { message, .. } => message,
        }
    }

    /// The seconds to wait before asking again, when waiting helps.
    pub(crate) fn retry_after(&self) -> Option<u64> {
        match self {
            IssueError::Unavailable { retry_after, .. } => *retry_after,
            _ => None,
        }
    }

    /// The type `name` is not served: says which are.
    pub(crate) fn unknown_type(name: &str, state: &AppState) -> IssueError {
        let names: Vec<&str> = state.specs().iter().map(|spec| spec.name.as_str()).collect();
        IssueError::UnknownType(format!("no ID type {name:?}; this server serves: {}", names.join(", ")))
    }

    /// A refused generation: a lease's refusal with the reason `/readyz` gives (from the
    /// lease's status), counted by reason and for the rate-limited log
    /// ([`AppState::refusal`]); a batch past the type's limit is a bad count.
    pub(crate) fn generate(state: &AppState, id_type: &IdType, error: &GenerateError) -> IssueError {
        let name = &id_type.spec.name;
        if let GenerateError::BatchTooLarge { .. } = error {
            return IssueError::Invalid(format!("cannot issue {name} IDs: {error}"));
        }
        let refusal = state.refusal(name, error);
        let message = format!("cannot issue {name} IDs: {}", refusal.message);
        if refusal.transient {
            IssueError::Unavailable { message, retry_after: refusal.retry_after }
        } else {
            // What waiting does not cure comes without a time to wait ([`AppState::refusal`]).
            IssueError::Internal(message)
        }
    }
}

/// The configuration of the type `name` (enough to decode its IDs).
pub(crate) fn spec<'a>(state: &'a AppState, name: &str) -> Result<&'a IdSpec, IssueError> {
    state.spec(name).ok_or_else(|| IssueError::unknown_type(name, state))
}

/// The type `name` with its generator. Its generator refuses while the lease does not issue
/// ([`IssueError::generate`] says why).
pub(crate) fn issuer<'a>(state: &'a AppState, name: &str) -> Result<&'a IdType, IssueError> {
    state.get(name).ok_or_else(|| IssueError::unknown_type(name, state))
}

/// The most IDs one batch of the type `spec` may hold, as `/v1/types` and `ListTypes` say.
pub(crate) fn batch_limit(state: &AppState, spec: &IdSpec) -> usize {
    state.get(&spec.name).map_or(DEFAULT_BATCH_LIMIT, |t| t.generator.batch_limit())
}

/// A batch's count `n` (`given` says how it was given, for the message): 1 to the type's
/// `limit`.
pub(crate) fn check_count(given: &str, n: usize, limit: usize) -> Result<usize, IssueError> {
    let bad = |why: String| IssueError::Invalid(format!("{given}: {why}"));
    match n {
        0 => Err(bad(format!("a batch holds at least 1 ID (at most {limit})"))),
        n if n <= limit => Ok(n),
        _ => Err(bad(format!("more than this type's batch limit of {limit} IDs"))),
    }
}

/// Counts `n` IDs of `id_type` issued (`snowflake_server_ids_issued_total`).
fn issued(id_type: &IdType, n: usize) {
    metrics::counter!("snowflake_server_ids_issued_total", "type" => id_type.label())
        .increment(u64::try_from(n).unwrap_or(u64::MAX));
}

/// One ID of `id_type`, counted.
pub(crate) fn one(state: &AppState, id_type: &IdType) -> Result<i64, IssueError> {
    let raw = id_type.generator.next_raw().map_err(|e| IssueError::generate(state, id_type, &e))?;
    issued(id_type, 1);
    Ok(raw)
}

/// `count` IDs of `id_type`, each handed to `each` in issuing order, counted once all are
/// issued. A batch that finds the tick's sequence spent waits for the next tick: [`batch`]
/// makes a large one on a blocking thread.
pub(crate) fn fill(state: &AppState, id_type: &IdType, count: usize, each: impl FnMut(i64)) -> Result<(), IssueError> {
    id_type.generator.fill_batch(count, each).map_err(|e| IssueError::generate(state, id_type, &e))?;
    issued(id_type, count);
    Ok(())
}

/// Makes a batch of `count` IDs of `id_type` with `make` (which issues them with [`fill`]):
/// here, on the async worker, when `count` is at most `inline_up_to`; else on a blocking
/// thread, since past what is left of a tick the batch waits for the clock, and on an async
/// worker that wait holds every request the worker drives. Each face says where its line is.
pub(crate) async fn batch<T: Send + 'static>(
    state: &Arc<AppState>,
    id_type: &IdType,
    count: usize,
    inline_up_to: usize,
    make: impl FnOnce(&AppState, &IdType) -> Result<T, IssueError> + Send + 'static,
) -> Result<T, IssueError> {
    if count <= inline_up_to {
        return make(state, id_type);
    }
    let (state, name) = (Arc::clone(state), id_type.spec.name.clone());
    tokio::task::spawn_blocking(move || make(&state, issuer(&state, &name)?))
        .await
        .map_err(|e| IssueError::Internal(format!("the batch did not finish: {e}")))?
}

/// An ID as its decimal text: the bit pattern read unsigned (a 64-bit layout's IDs may lie
/// above `i64::MAX`).
pub(crate) fn decimal(raw: i64) -> String {
    raw.cast_unsigned().to_string()
}

/// An ID of the type `spec` as the v1 routes and the gRPC `text` fields write it, for
/// `write!`: `ord_…` for a prefixed type, else decimal.
pub(crate) fn text(spec: &IdSpec, raw: i64) -> Text<'_> {
    Text { prefix: spec.prefix.as_deref(), raw }
}

/// [`text`] as a `String`.
pub(crate) fn text_of(spec: &IdSpec, raw: i64) -> String {
    text(spec, raw).to_string()
}

/// An ID's text form ([`text`]).
pub(crate) struct Text<'a> {
    prefix: Option<&'a str>,
    raw: i64,
}

impl fmt::Display for Text<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.prefix {
            Some(prefix) => fmt::Display::fmt(&snowflake_types::prefixed::Written::new(prefix, self.raw), f),
            None => fmt::Display::fmt(&self.raw.cast_unsigned(), f),
        }
    }
}

/// Parses decimal `text` as an ID of the type `spec` (Leaf's routes, gRPC's `number`), or
/// says why not.
pub(crate) fn parse_id(spec: &IdSpec, text: &str) -> Result<i64, IssueError> {
    spec.layout
        .parse_id(text)
        .map_err(|e| IssueError::Invalid(format!("{text:?} is not an ID of type {:?}: {e}", spec.name)))
}

/// Parses `text` as [`text`] writes an ID of `spec`: `ord_…` for a prefixed type (a bare
/// number is refused, naming its prefixed spelling), else decimal; or says why not.
pub(crate) fn parse_text(spec: &IdSpec, text: &str) -> Result<i64, IssueError> {
    use snowflake_types::prefixed::{self, Decimal, parse};

    let Some(prefix) = &spec.prefix else { return parse_id(spec, text) };
    parse(prefix, &spec.layout, Decimal::Refuse, text).map_err(|e| {
        let shown: String = text.chars().take(40).collect();
        IssueError::Invalid(format!("{shown:?} is not {} {} ID: {e}", prefixed::article(&spec.name), spec.name))
    })
}

/// An ID decoded: what both faces answer a decoding with, beside the type's field names.
pub(crate) struct Decoded<'a> {
    /// The type.
    pub(crate) spec: &'a IdSpec,
    /// The stored integer.
    pub(crate) raw: i64,
    /// Its fields.
    pub(crate) parts: Parts,
}

impl<'a> Decoded<'a> {
    /// The ID `raw` of the type `spec`.
    pub(crate) fn new(spec: &'a IdSpec, raw: i64) -> Decoded<'a> {
        Decoded { spec, raw, parts: spec.layout.parts_of(raw) }
    }

    /// Its text form ([`text`]).
    pub(crate) fn text(&self) -> String {
        text_of(self.spec, self.raw)
    }

    /// The stored integer in decimal (a prefixed type's text form is not).
    pub(crate) fn decimal(&self) -> String {
        decimal(self.raw)
    }

    /// Its time, RFC 3339 in UTC.
    pub(crate) fn time(&self) -> String {
        format_rfc3339(self.parts.timestamp_ms)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{Config, WorkerConfig};

    fn state() -> Arc<AppState> {
        let ids = vec![
            IdSpec::parse("order=prefix=ord,preset=leaf,epoch=2020-01-01").unwrap(),
            IdSpec::parse("tweet=preset=twitter").unwrap(),
        ];
        Arc::new(AppState::new(&Config::new(ids, WorkerConfig::Fixed(3)), None).unwrap())
    }

    #[test]
    fn an_unknown_type_names_the_served_ones() {
        let state = state();
        let e = issuer(&state, "invoice").unwrap_err();
        assert!(matches!(e, IssueError::UnknownType(_)), "{e:?}");
        assert_eq!(e.message(), "no ID type \"invoice\"; this server serves: order, tweet");
        assert_eq!(e.retry_after(), None);
        assert!(spec(&state, "invoice").is_err() && spec(&state, "order").is_ok());
    }

    #[test]
    fn counts_from_1_to_the_limit() {
        assert_eq!(check_count("count=5", 5, 5).unwrap(), 5);
        for (n, says) in [(0, "count=X: a batch holds at least 1 ID (at most 5)"), (6, "batch limit of 5 IDs")] {
            let e = check_count("count=X", n, 5).unwrap_err();
            assert!(matches!(e, IssueError::Invalid(_)) && e.message().contains(says), "{n}: {e:?}");
        }
        let state = state();
        let order = &state.specs()[0];
        assert_eq!(batch_limit(&state, order), state.types()[0].generator.batch_limit());
    }

    #[test]
    fn text_forms_read_back() {
        let state = state();
        let (order, tweet) = (issuer(&state, "order").unwrap(), issuer(&state, "tweet").unwrap());
        let raw = one(&state, order).unwrap();
        assert_eq!(text_of(&order.spec, raw), snowflake_types::prefixed::format("ord", raw));
        assert_eq!(parse_text(&order.spec, &text_of(&order.spec, raw)).unwrap(), raw);
        // A prefixed type's text form only; the decimal one on the routes that take numbers.
        assert!(matches!(parse_text(&order.spec, &decimal(raw)), Err(IssueError::Invalid(_))));
        assert_eq!(parse_id(&order.spec, &decimal(raw)).unwrap(), raw);
        let raw = one(&state, tweet).unwrap();
        assert_eq!(text_of(&tweet.spec, raw), decimal(raw));
        let decoded = Decoded::new(&tweet.spec, raw);
        assert_eq!((decoded.text(), decoded.parts.worker), (decimal(raw), 3));
        // The bit pattern read unsigned.
        assert_eq!(decimal(-1), u64::MAX.to_string());
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_batch_is_the_same_inline_and_on_a_blocking_thread() {
        let state = state();
        let order = issuer(&state, "order").unwrap();
        for inline_up_to in [10, 9] {
            let ids = batch(&state, order, 10, inline_up_to, |state, id_type| {
                let mut ids = Vec::new();
                fill(state, id_type, 10, |raw| ids.push(raw))?;
                Ok(ids)
            })
            .await
            .unwrap();
            assert_eq!(ids.len(), 10);
            assert!(ids.windows(2).all(|w| w[0] < w[1]), "{ids:?}");
        }
        let e = batch(&state, order, usize::MAX, 0, |state, id_type| fill(state, id_type, usize::MAX, |_| {}))
            .await
            .unwrap_err();
        assert!(matches!(e, IssueError::Invalid(_)) && e.message().starts_with("cannot issue order IDs: "), "{e:?}");
    }
}
