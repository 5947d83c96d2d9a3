//! Slow-path events, for operators: `tracing` events (feature `tracing`) and `metrics`
//! counters (feature `metrics`), pushed where they happen. The hot path emits nothing: every
//! event below comes from a path that already left it (a full sequence, a clock behind the
//! last ID, an error, a high-water write, the lease's own thread). Without either feature
//! nothing is emitted but the lease's outage lines (the fence falling, a loss, recovery
//! attempts, generation resuming, waits for the store) and the worker-0 warning, which go to
//! stderr, as they do with `tracing` when no subscriber is installed; the counters of [`Registry::stats`](crate::Registry::stats) and
//! [`WorkerLease::stats`](crate::worker::lease::WorkerLease::stats) are always kept.
//!
//! `tracing` events have the target `typed_snowflake` and the fields listed. Every
//! generator counter is labelled `type` (the ID type's name, or the name given to a
//! standalone [`Generator`](crate::Generator)) and `worker` (the worker ID, in decimal);
//! every lease counter `namespace` and `worker`.
//!
//! | event | `tracing` level and fields | `metrics` counter (labels) |
//! |---|---|---|
//! | a caller waits for the next tick because the sequence ran out (or, after a restart, for the clock to pass the high-water mark); once per waiting call | `DEBUG`, `type`, `worker` | [`SEQUENCE_EXHAUSTED`] (`type`, `worker`) |
//! | the clock is seen behind the last issued ID; once per episode (see [`GeneratorStats::clock_step_backs`](crate::GeneratorStats::clock_step_backs)) | `WARN`, `type`, `worker`, `behind_ms` | [`CLOCK_STEP_BACKS`] (`type`, `worker`) |
//! | a generation returns an error | `WARN`, `type`, `worker`, `kind`, `error` | [`ERRORS`] (`type`, `worker`, `error`: the kind, below) |
//! | a type's generator cannot be built (configuration, worker ID, high-water file); every call retries | `WARN`, `type`, `kind`, `error` | [`ERRORS`] (`type`, `worker` = `none`, `error`) |
//! | a high-water reservation is written | `DEBUG`, `type`, `worker`, `path`, `mark_ms` | [`HIGH_WATER_WRITES`] (`type`, `worker`) |
//! | a worker-ID lease is acquired | `INFO`, `namespace`, `worker`, `fence`, `store` | [`LEASE_ACQUIRED`] (`namespace`, `worker`); [`LEASE_FENCED`] there from the first grant on (0) |
//! | a renewal fails (it is retried) | `WARN`, `namespace`, `worker`, `error` | [`LEASE_RENEWAL_FAILURES`] (`namespace`, `worker`) |
//! | a renewal succeeds after the fence fell (generation resumes) | `WARN`, `namespace`, `worker` | [`LEASE_RENEWED_LATE`] (`namespace`, `worker`) |
//! | the store says the lease is lost (its generators stop; the lease is acquired again) | `ERROR`, `namespace`, `worker` | [`LEASE_LOST`] (`namespace`, `worker`); [`LEASE_FENCED`] set to 1 |
//! | the fence falls for want of a renewal (an outage begins) | `ERROR`, `namespace`, `worker`, `error` (the last store error) | [`LEASE_FENCED`] (`namespace`) set to 1 |
//! | an acquisition after a loss fails (retried with backoff; said every 5 s) | `WARN`, `namespace`, `worker`, `error` | |
//! | the lease issues again after a fence or a loss (the outage ends) | `WARN`, `namespace`, `worker` | [`LEASE_FENCED`] set to 0 |
//! | a grant has no record in the store, so generation waits out earlier holders | `WARN`, `namespace`, `worker` | |
//! | the first acquisition waits for a store that does not answer (said every 5 s), and the store answers | `WARN`, then `INFO`, `namespace` | |
//! | the lease is released, or its release fails | `INFO` or `WARN`, `namespace`, `worker` | [`LEASE_RELEASES`] (`namespace`, `worker`, `result`: `ok` or `failed`) |
//! | the lease thread wakes (at least once per renewal interval) | | [`LEASE_WORKER`], [`LEASE_ISSUING_FOR`], [`LEASE_STORE_UP`] (`namespace`) |
//!
//! The `error` label of [`ERRORS`] is one of `clock_backwards`, `clock_before_epoch`,
//! `time_exhausted`, `worker_out_of_range`, `worker`, `batch_too_large`, `high_water`,
//! `fenced`, `leased_worker_out_of_range`, `registry`: a fixed set, so it never multiplies
//! the series.
//!
//! ```
//! use typed_snowflake::events;
//!
//! // A Prometheus exporter installed as the `metrics` recorder shows, for example,
//! // snowflake_clock_step_backs_total{type="OrderId",worker="3"} 1
//! assert_eq!(events::CLOCK_STEP_BACKS, "snowflake_clock_step_backs_total");
//! ```
#![cfg_attr(not(feature = "tracing"), allow(unused_variables))]

use crate::error::GenerateError;

/// Counter: callers that waited for the next tick because the sequence ran out.
pub const SEQUENCE_EXHAUSTED: &str = "snowflake_sequence_exhausted_total";
/// Counter: clock step-back episodes.
pub const CLOCK_STEP_BACKS: &str = "snowflake_clock_step_backs_total";
/// Counter: generation errors, by kind.
pub const ERRORS: &str = "snowflake_errors_total";
/// Counter: high-water reservations written.
pub const HIGH_WATER_WRITES: &str = "snowflake_high_water_writes_total";
/// Counter: worker-ID leases acquired.
pub const LEASE_ACQUIRED: &str = "snowflake_lease_acquired_total";
/// Counter: lease renewals that failed.
pub const LEASE_RENEWAL_FAILURES: &str = "snowflake_lease_renewal_failures_total";
/// Counter: lease renewals that succeeded after the fence had fallen.
pub const LEASE_RENEWED_LATE: &str = "snowflake_lease_renewed_late_total";
/// Counter: leases the store said were lost.
pub const LEASE_LOST: &str = "snowflake_lease_lost_total";
/// Counter: lease releases, by result.
pub const LEASE_RELEASES: &str = "snowflake_lease_releases_total";
/// Gauge: 1 while a namespace's lease is fenced (a renewal overdue) or being acquired again
/// after a loss, 0 while it issues; there (0) from the first grant on. Labelled `namespace`.
pub const LEASE_FENCED: &str = "snowflake_lease_fenced";
/// Gauge: the worker ID a namespace's lease holds (the one held before, while it is being
/// acquired again). Labelled `namespace`.
pub const LEASE_WORKER: &str = "snowflake_lease_worker";
/// Gauge: how many seconds a namespace's lease may still issue if no renewal succeeds from now
/// on (what is left of its reservation; 0 while fenced). Stays near `W - margin` while the store
/// answers, counts down through an outage. Labelled `namespace`.
pub const LEASE_ISSUING_FOR: &str = "snowflake_lease_issuing_for_seconds";
/// Gauge: 1 while a namespace's lease store answered its last call, 0 while it does not.
/// Labelled `namespace`.
pub const LEASE_STORE_UP: &str = "snowflake_lease_store_up";

/// The `error` label of [`ERRORS`].
#[cfg(any(feature = "tracing", feature = "metrics"))]
fn error_kind(error: &GenerateError) -> &'static str {
    match error {
        GenerateError::ClockBackwards { .. } => "clock_backwards",
        GenerateError::ClockBeforeEpoch { .. } => "clock_before_epoch",
        GenerateError::TimeExhausted { .. } => "time_exhausted",
        GenerateError::DecodeOnly { .. } => "decode_only",
        GenerateError::WorkerOutOfRange { .. } => "worker_out_of_range",
        GenerateError::Worker(_) => "worker",
        GenerateError::BatchTooLarge { .. } => "batch_too_large",
        GenerateError::HighWater { .. } => "high_water",
        GenerateError::Fenced { .. } => "fenced",
        GenerateError::LeasedWorkerOutOfRange { .. } => "leased_worker_out_of_range",
        GenerateError::Registry(_) => "registry",
    }
}

/// A counter of a generator, labelled by type and worker.
#[cfg(feature = "metrics")]
fn generator_counter(name: &'static str, type_name: &'static str, worker: u64) -> metrics::Counter {
    metrics::counter!(name, "type" => type_name, "worker" => worker.to_string())
}

/// A counter of a lease, labelled by namespace and worker.
#[cfg(feature = "metrics")]
fn lease_counter(name: &'static str, namespace: &str, worker: u64) -> metrics::Counter {
    metrics::counter!(name, "namespace" => namespace.to_owned(), "worker" => worker.to_string())
}

/// A caller waits for the next tick: the sequence ran out (or, after a restart, the clock
/// has not passed the high-water mark yet).
#[cold]
pub(crate) fn sequence_exhausted(type_name: &'static str, worker: u64) {
    #[cfg(feature = "tracing")]
    tracing::debug!(target: "typed_snowflake", r#type = type_name, worker, "sequence exhausted; waiting for the next tick");
    #[cfg(feature = "metrics")]
    generator_counter(SEQUENCE_EXHAUSTED, type_name, worker).increment(1);
}

/// The clock was seen behind the last issued ID: a new episode.
#[cold]
pub(crate) fn clock_step_back(type_name: &'static str, worker: u64, behind_ms: i64) {
    #[cfg(feature = "tracing")]
    tracing::warn!(target: "typed_snowflake", r#type = type_name, worker, behind_ms, "the clock stepped back behind the last issued ID");
    #[cfg(feature = "metrics")]
    generator_counter(CLOCK_STEP_BACKS, type_name, worker).increment(1);
}

/// A generation returned `error`.
#[cold]
pub(crate) fn generate_error(type_name: &'static str, worker: u64, error: &GenerateError) {
    #[cfg(any(feature = "tracing", feature = "metrics"))]
    let kind = error_kind(error);
    #[cfg(feature = "tracing")]
    tracing::warn!(target: "typed_snowflake", r#type = type_name, worker, kind, error = %error, "ID generation failed");
    #[cfg(feature = "metrics")]
    metrics::counter!(ERRORS, "type" => type_name, "worker" => worker.to_string(), "error" => kind).increment(1);
}

/// A type's generator could not be built (the registry's configuration, the worker ID, the
/// high-water file): counted as an error under the worker label `none`.
#[cold]
pub(crate) fn generator_unavailable(type_name: &'static str, error: &GenerateError) {
    #[cfg(any(feature = "tracing", feature = "metrics"))]
    let kind = error_kind(error);
    #[cfg(feature = "tracing")]
    tracing::warn!(target: "typed_snowflake", r#type = type_name, kind, error = %error, "no generator for this ID type");
    #[cfg(feature = "metrics")]
    metrics::counter!(ERRORS, "type" => type_name, "worker" => "none", "error" => kind).increment(1);
}

/// A high-water reservation was written.
#[cold]
pub(crate) fn high_water_written(type_name: &'static str, worker: u64, path: &std::path::Path, mark_ms: i64) {
    #[cfg(feature = "tracing")]
    tracing::debug!(target: "typed_snowflake", r#type = type_name, worker, path = %path.display(), mark_ms, "high-water mark written");
    #[cfg(feature = "metrics")]
    generator_counter(HIGH_WATER_WRITES, type_name, worker).increment(1);
}

/// A lease was acquired.
pub(crate) fn lease_acquired(namespace: &str, worker: u64, fence: u64, store: &str) {
    #[cfg(feature = "tracing")]
    tracing::info!(target: "typed_snowflake", namespace, worker, fence, store, "worker ID leased");
    #[cfg(feature = "metrics")]
    {
        lease_counter(LEASE_ACQUIRED, namespace, worker).increment(1);
        // The fenced gauge is there from the first grant on (0), so that a scrape and an
        // alert see it before any outage; adding 0 leaves the 1 of an outage in progress.
        metrics::gauge!(LEASE_FENCED, "namespace" => namespace.to_owned()).increment(0.0);
    }
}

/// A renewal succeeded after the fence had fallen: generation resumes.
pub(crate) fn lease_renewed_late(namespace: &str, worker: u64) {
    #[cfg(feature = "tracing")]
    tracing::warn!(target: "typed_snowflake", namespace, worker, "worker-ID lease renewed late; generation resumes");
    #[cfg(feature = "metrics")]
    lease_counter(LEASE_RENEWED_LATE, namespace, worker).increment(1);
}

/// A renewal failed; it is retried.
pub(crate) fn lease_renewal_failed(namespace: &str, worker: u64, error: &dyn std::error::Error) {
    #[cfg(feature = "tracing")]
    tracing::warn!(target: "typed_snowflake", namespace, worker, error = %error, "worker-ID lease renewal failed; retrying");
    #[cfg(feature = "metrics")]
    lease_counter(LEASE_RENEWAL_FAILURES, namespace, worker).increment(1);
}

/// The store no longer holds the lease (its record is gone, or another holder took the
/// worker ID after it expired): the generators issue on what it reserved while it is acquired
/// again.
pub(crate) fn lease_lost(namespace: &str, worker: u64, why: &str, rides: bool) {
    let then = if rides {
        "generation goes on within what it reserved while the lease is acquired again"
    } else {
        "generation stops, and the lease is being acquired again"
    };
    say_lease(
        Level::Error,
        namespace,
        worker,
        &format!("the store no longer holds the worker-ID lease ({why}); {then}"),
        None,
    );
    #[cfg(feature = "metrics")]
    lease_counter(LEASE_LOST, namespace, worker).increment(1);
}

/// The lease's record was read back with a value its holder did not write: the store was
/// rolled back. Generation stops at once; the namespace is fenced and a lease acquired again.
pub(crate) fn lease_rolled_back(namespace: &str, worker: u64) {
    say_lease(
        Level::Error,
        namespace,
        worker,
        "the worker-ID lease's record was rolled back in the store (a restore from a backup, or a replica promoted without the last writes); generation stops, the namespace is fenced (every record written before waits out the reservation), and the lease is being acquired again",
        None,
    );
    fenced_gauge(namespace, true);
    #[cfg(feature = "metrics")]
    lease_counter(LEASE_LOST, namespace, worker).increment(1);
}

/// The namespace's marker was written afresh.
pub(crate) fn lease_marked(namespace: &str, declared: bool, fenced: bool) {
    let message = if declared {
        "namespace declared new in the lease store: its never-used worker IDs issue at once"
    } else if fenced {
        "namespace fenced in the lease store after a rollback: every worker ID granted before waits out the reservation"
    } else {
        "the lease store did not know the namespace (new, or the store lost it, or it is another incarnation of the store): its marker was written afresh, and every worker ID granted before waits out the reservation"
    };
    // A declaration is what a normal first start does: said, not warned about.
    #[cfg(feature = "tracing")]
    if declared {
        tracing::info!(target: "typed_snowflake", namespace, "{message}");
    } else {
        tracing::warn!(target: "typed_snowflake", namespace, "{message}");
    }
    if to_stderr() {
        eprintln!("typed-snowflake: namespace {namespace:?}: {message}");
    }
}

/// A lease resumed from its state file.
pub(crate) fn lease_resumed_from_file(namespace: &str, worker: u64) {
    say_lease(
        Level::Warn,
        namespace,
        worker,
        "worker-ID lease resumed from its state file: issuing within what the store last acknowledged, while the lease is confirmed with the store",
        None,
    );
}

/// The lease state file could not be written or removed: the generators stop at the last
/// file's limit.
pub(crate) fn lease_state_file_failed(namespace: &str, error: &std::io::Error) {
    #[cfg(feature = "tracing")]
    tracing::error!(target: "typed_snowflake", namespace, error = %error, "the lease state file could not be written; generation stops at what the last one allows");
    if to_stderr() {
        eprintln!(
            "typed-snowflake: namespace {namespace:?}: the lease state file could not be written ({error}); generation stops at what the last one allows"
        );
    }
}

/// What a store's configuration costs the leases, said once when a lease starts.
pub(crate) fn lease_store_warning(namespace: &str, store: &str, warning: &str) {
    #[cfg(feature = "tracing")]
    tracing::warn!(target: "typed_snowflake", namespace, store, "{warning}");
    if to_stderr() {
        eprintln!("typed-snowflake: lease store {store}: {warning}");
    }
}

/// The fence fell for want of a renewal: generation stops until a renewal (or a new grant)
/// succeeds. The outage begins.
pub(crate) fn lease_fenced(
    namespace: &str,
    worker: u64,
    reason: &crate::FenceReason,
    error: Option<&dyn std::error::Error>,
) {
    let message = match reason {
        crate::FenceReason::NotRenewed { .. } => {
            "worker-ID lease not renewed within its reservation less the margin; generation stops until the store answers"
                .to_owned()
        }
        reason => format!("worker-ID lease: generation stops: {reason}"),
    };
    say_lease(Level::Error, namespace, worker, &message, error);
    fenced_gauge(namespace, true);
}

/// Generation resumes after a fence or a loss: the outage ends.
pub(crate) fn lease_resumed(namespace: &str, worker: u64, after: std::time::Duration) {
    let message = format!("worker-ID lease held again after {after:.1?}; generation resumes");
    say_lease(Level::Warn, namespace, worker, &message, None);
    fenced_gauge(namespace, false);
}

/// An acquisition after a loss failed; it is tried again with backoff. Said every few
/// seconds while it lasts.
pub(crate) fn lease_recovering(namespace: &str, worker: u64, error: &dyn std::error::Error) {
    say_lease(Level::Warn, namespace, worker, "acquiring the worker-ID lease again failed; retrying", Some(error));
}

/// Why a grant waits before its first ID.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum WaitingOut {
    /// A worker ID never granted in a namespace the store began to know less than `W` ago.
    NamespaceYoung,
    /// A worker ID whose last holder's record lies ahead of this clock.
    RecordAhead,
    /// A worker ID whose record the store cannot vouch for.
    Unvouched,
}

/// A grant waits out earlier holders before its first ID: said once, in plain words, with
/// the time left and the way to skip it where there is one.
pub(crate) fn lease_waiting_out(
    namespace: &str,
    worker: u64,
    until_ms: i64,
    wait: std::time::Duration,
    why: WaitingOut,
) {
    let message = match why {
        WaitingOut::NamespaceYoung => format!(
            "the lease store began to know this namespace less than the reservation ago, so a holder from before may still issue: the first ID waits {wait:.1?}, until {until_ms} (Unix ms). A namespace that is really new can skip this: declare it with `snowflake leases init <url> --namespace {namespace}`, or `WorkerLeaseBuilder::create_namespace`"
        ),
        WaitingOut::RecordAhead => format!(
            "the worker ID's last holder may have issued up to {until_ms} (Unix ms), ahead of this clock (it stopped without releasing before its reservation ended, or its clock ran ahead): the first ID waits {wait:.1?}"
        ),
        WaitingOut::Unvouched => format!(
            "the lease store cannot vouch for this worker ID's record (deleted, lost, or written before the store was rolled back or replaced), so its last holder may still issue: the first ID waits {wait:.1?}, until {until_ms} (Unix ms)"
        ),
    };
    say_lease(Level::Warn, namespace, worker, &message, None);
}

/// The first acquisition waits for a store that does not answer. Said every few seconds.
pub(crate) fn lease_waiting_for_store(
    namespace: &str,
    what: &str,
    error: &dyn std::error::Error,
    waited: std::time::Duration,
    limit: std::time::Duration,
) {
    let message = format!("{what} waits for the lease store ({waited:.1?} of at most {limit:?}): {error}");
    #[cfg(feature = "tracing")]
    tracing::warn!(target: "typed_snowflake", namespace, "{message}");
    if to_stderr() {
        eprintln!("typed-snowflake: namespace {namespace:?}: {message}");
    }
}

/// The store answered after the first acquisition waited for it.
pub(crate) fn lease_store_back(namespace: &str, what: &str, waited: std::time::Duration) {
    let message = format!("{what}: the lease store answered after {waited:.1?}");
    #[cfg(feature = "tracing")]
    tracing::info!(target: "typed_snowflake", namespace, "{message}");
    if to_stderr() {
        eprintln!("typed-snowflake: namespace {namespace:?}: {message}");
    }
}

enum Level {
    Error,
    Warn,
}

/// Whether a line goes to stderr: always without the `tracing` feature, and with it when no
/// subscriber hears this thread (another dependency turned the feature on, the application
/// installed none), so that no warning goes nowhere.
fn to_stderr() -> bool {
    #[cfg(feature = "tracing")]
    {
        tracing::dispatcher::get_default(|dispatch| dispatch.is::<tracing::subscriber::NoSubscriber>())
    }
    #[cfg(not(feature = "tracing"))]
    {
        true
    }
}

/// A lease event that begins or ends an outage: a `tracing` event with the feature, one line
/// on stderr without it, so that an operator sees both ends of an outage in the logs, with
/// the store's error and its cause.
fn say_lease(level: Level, namespace: &str, worker: u64, message: &str, error: Option<&dyn std::error::Error>) {
    #[cfg(feature = "tracing")]
    match (level, error) {
        (Level::Error, Some(error)) => {
            tracing::error!(target: "typed_snowflake", namespace, worker, error = %error, "{message}")
        }
        (Level::Error, None) => tracing::error!(target: "typed_snowflake", namespace, worker, "{message}"),
        (Level::Warn, Some(error)) => {
            tracing::warn!(target: "typed_snowflake", namespace, worker, error = %error, "{message}")
        }
        (Level::Warn, None) => tracing::warn!(target: "typed_snowflake", namespace, worker, "{message}"),
    }
    if to_stderr() {
        let _ = level;
        match error {
            Some(error) => {
                eprintln!("typed-snowflake: namespace {namespace:?}, worker {worker}: {message}: {error}")
            }
            None => eprintln!("typed-snowflake: namespace {namespace:?}, worker {worker}: {message}"),
        }
    }
}

/// [`LEASE_FENCED`]: 1 while the namespace's lease is fenced or being acquired again, 0
/// while it issues.
#[cfg_attr(not(feature = "metrics"), allow(unused_variables))]
fn fenced_gauge(namespace: &str, fenced: bool) {
    #[cfg(feature = "metrics")]
    metrics::gauge!(LEASE_FENCED, "namespace" => namespace.to_owned()).set(if fenced { 1.0 } else { 0.0 });
}

/// The lease's state as gauges: [`LEASE_WORKER`], [`LEASE_ISSUING_FOR`], [`LEASE_STORE_UP`]
/// (set by the lease thread at every wake, at least once per renewal interval).
#[cfg_attr(not(feature = "metrics"), allow(unused_variables))]
pub(crate) fn lease_gauges(namespace: &str, worker: u64, issuing_for: std::time::Duration, store_up: bool) {
    #[cfg(feature = "metrics")]
    {
        let label = namespace.to_owned();
        metrics::gauge!(LEASE_WORKER, "namespace" => label.clone()).set(worker as f64);
        metrics::gauge!(LEASE_ISSUING_FOR, "namespace" => label.clone()).set(issuing_for.as_secs_f64());
        metrics::gauge!(LEASE_STORE_UP, "namespace" => label).set(if store_up { 1.0 } else { 0.0 });
    }
}

/// A lease was released (or its release failed).
pub(crate) fn lease_released(namespace: &str, worker: u64, ok: bool) {
    #[cfg(feature = "tracing")]
    if ok {
        tracing::info!(target: "typed_snowflake", namespace, worker, "worker-ID lease released");
    } else {
        tracing::warn!(target: "typed_snowflake", namespace, worker, "worker-ID lease release failed; it expires with its TTL");
    }
    #[cfg(feature = "metrics")]
    metrics::counter!(
        LEASE_RELEASES,
        "namespace" => namespace.to_owned(),
        "worker" => worker.to_string(),
        "result" => if ok { "ok" } else { "failed" }
    )
    .increment(1);
}

/// The first generator was built with no worker configuration at all: worker 0, right for
/// one process and wrong for two. Said once per process: a `tracing` warning with the
/// feature, one line on stderr without it.
pub(crate) fn default_worker_zero() {
    let message = "typed-snowflake: no worker ID is configured, so this process issues IDs as worker 0; a second process doing the same repeats its IDs. Set SNOWFLAKE_WORKER_ID=<n> for a fixed worker ID, or SNOWFLAKE_WORKER_LEASE=redis://... (or postgres://..., mysql://..., etcd://..., zk://...) to lease one.";
    #[cfg(feature = "tracing")]
    tracing::warn!(target: "typed_snowflake", "{message}");
    if to_stderr() {
        eprintln!("{message}");
    }
}
