//! The service's state: one generator per ID type, all on one worker ID (fixed, from the
//! environment, a StatefulSet ordinal, or a lease), and whether they issue now, read from the
//! lease's status.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant, SystemTime};

use snowflake_types::worker::lease::store::redact_url;
use snowflake_types::worker::lease::{LeaseStatus, WorkerLease, WorkerLeaseBuilder};
use snowflake_types::{FenceReason, GenerateError, Generator, WorkerSource};

use crate::config::{Config, IdSpec, LeaseConfig, WorkerConfig};

/// One ID type served: its configuration and its generator.
///
/// ```
/// use snowflake_server::config::{Config, IdSpec, WorkerConfig};
/// use snowflake_server::AppState;
///
/// let state = AppState::new(&Config::new(vec![IdSpec::parse("tweet=twitter")?], WorkerConfig::Fixed(1)), None)?;
/// let tweet = &state.types()[0];
/// assert_eq!((tweet.spec.name.as_str(), tweet.generator.worker()), ("tweet", 1));
/// Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct IdType {
    /// The name, layout and field names.
    pub spec: IdSpec,
    /// The generator.
    pub generator: Generator,
    /// The name, for the labels of metrics (leaked once per type).
    label: &'static str,
}

impl IdType {
    /// The name, for the labels of metrics.
    pub(crate) fn label(&self) -> &'static str {
        self.label
    }
}

/// The ID types and the worker ID they issue under.
///
/// A server whose worker ID is leased starts its lease ([`AppState::start`]) and builds its
/// generators on it at once: they refuse until the lease issues, and the lease's status says
/// why. [`AppState::readiness`] reads that status (and whether the server drains), so that
/// `/readyz`, gRPC health, the `snowflake_server_ready` gauge and the ID routes' refusals say
/// the same thing.
///
/// ```
/// use snowflake_server::config::{Config, IdSpec, WorkerConfig};
/// use snowflake_server::AppState;
///
/// let config = Config::new(vec![IdSpec::parse("order=preset=leaf")?], WorkerConfig::Fixed(7));
/// let state = AppState::new(&config, None)?;
/// let order = state.get("order").ok_or("not configured")?;
/// assert_eq!(order.spec.layout.worker_of(order.generator.next_raw()?), 7);
/// assert!(state.not_ready().is_none());
/// Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct AppState {
    specs: Vec<IdSpec>,
    by_name: HashMap<String, usize>,
    types: Vec<IdType>,
    worker: Worker,
    refusals: Mutex<Refusals>,
    /// Asked to stop: not ready, still serving ([`AppState::start_draining`]).
    draining: AtomicBool,
}

/// Where the worker ID comes from.
#[derive(Debug)]
enum Worker {
    /// Fixed for the life of the process, with where it came from.
    Fixed { worker: u64, source: String },
    /// Leased.
    Leased {
        lease: WorkerLease,
        /// The store's URL, without any password.
        store: String,
    },
}

/// What the server can do now, from the lease's status and whether it drains.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    /// Every type issues.
    Issuing,
    /// The first worker ID is being acquired.
    Acquiring,
    /// A worker ID is held; earlier holders of it are waited out before the first ID.
    WaitingOut,
    /// The worker ID is held, and issuing is stopped (a renewal overdue, a clock ahead, the
    /// state file behind, a rollback).
    Fenced,
    /// The lease was lost and is being acquired again.
    Recovering,
    /// The lease was released: the server stops.
    Released,
    /// The first acquisition gave up: the server stops.
    Failed,
    /// Asked to stop: still issuing, but out of rotation.
    Draining,
}

impl Phase {
    /// The name `/readyz`, the logs and the metrics use.
    ///
    /// ```
    /// use snowflake_server::state::Phase;
    ///
    /// assert_eq!(Phase::WaitingOut.as_str(), "waiting_out");
    /// ```
    pub fn as_str(self) -> &'static str {
        match self {
            Phase::Issuing => "issuing",
            Phase::Acquiring => "acquiring",
            Phase::WaitingOut => "waiting_out",
            Phase::Fenced => "fenced",
            Phase::Recovering => "recovering",
            Phase::Released => "released",
            Phase::Failed => "failed",
            Phase::Draining => "draining",
        }
    }

    /// Every phase, for gauges that are there from the start.
    pub const ALL: [Phase; 8] = [
        Phase::Issuing,
        Phase::Acquiring,
        Phase::WaitingOut,
        Phase::Fenced,
        Phase::Recovering,
        Phase::Released,
        Phase::Failed,
        Phase::Draining,
    ];
}

/// Whether the server is ready, and why not.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Readiness {
    /// The phase.
    pub phase: Phase,
    /// Why the server is not ready; `None` while it issues.
    pub reason: Option<String>,
    /// Whether something is wrong (the store does not answer, the lease is fenced, lost or
    /// failed), as opposed to a normal step (acquiring, waiting out, draining): what decides
    /// whether it is logged as a warning.
    pub trouble: bool,
    /// How long a client should wait before asking again (seconds), while not ready.
    pub retry_after: Option<u64>,
}

/// A refused ID request: why, as the readiness says it, and the label it is counted under.
#[derive(Debug)]
pub(crate) struct Refusal {
    /// The label of `snowflake_server_refusals_total`.
    pub kind: &'static str,
    pub message: String,
    pub retry_after: Option<u64>,
    /// Whether waiting cures it (a 503; otherwise a 500).
    pub transient: bool,
}

/// The refused ID requests not yet logged.
#[derive(Debug, Default)]
struct Refusals {
    count: u64,
    last_error: String,
    /// Whether any of them was refused for something wrong (not while acquiring or waiting
    /// out, the steps of a normal start).
    trouble: bool,
    last_line: Option<Instant>,
}

/// At most one WARN line about refused ID requests this often, with their count.
pub(crate) const REFUSAL_LOG_EVERY: Duration = Duration::from_secs(5);

/// Why the service cannot start.
///
/// ```
/// use snowflake_server::config::{Config, IdSpec, WorkerConfig};
/// use snowflake_server::AppState;
///
/// // Leaf's worker field has 10 bits: 0..=1023.
/// let config = Config::new(vec![IdSpec::parse("order=preset=leaf")?], WorkerConfig::Fixed(2000));
/// let err = AppState::new(&config, None).err().ok_or("started")?;
/// assert!(err.to_string().contains("does not fit"), "{err}");
/// Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct StartError(pub String);

impl std::fmt::Display for StartError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for StartError {}

/// The lease `settings` ask for, on the worker IDs `space`.
fn lease_builder(settings: &LeaseConfig, space: u64) -> WorkerLeaseBuilder {
    // What is not set takes the library's defaults (`docs/lease-rules.md`), applied by the
    // builder as for every lease.
    let mut builder = WorkerLease::from_url(settings.url.clone()).namespace(settings.namespace.clone()).space(space);
    if let Some(ttl) = settings.ttl {
        builder = builder.ttl(ttl);
    }
    if let Some(reservation) = settings.reservation {
        builder = builder.reservation(reservation);
    }
    if let Some(wait) = settings.wait {
        builder = builder.wait_for_store(wait);
    }
    if settings.create_namespace {
        builder = builder.create_namespace();
    }
    if let Some(path) = &settings.state_file {
        builder = builder.state_file(path);
    }
    builder
}

/// Unix milliseconds now.
fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
}

impl AppState {
    /// Builds a generator per type on the worker ID `config` names, or on `lease` when one is
    /// given (acquired, or only started: the generators then refuse until it issues).
    pub fn new(config: &Config, lease: Option<WorkerLease>) -> Result<AppState, StartError> {
        let worker = match (&config.worker, lease) {
            (WorkerConfig::Lease(settings), Some(lease)) => Worker::Leased { lease, store: redact_url(&settings.url) },
            (_, Some(lease)) => {
                let store = lease.store().to_owned();
                Worker::Leased { lease, store }
            }
            (WorkerConfig::Fixed(n), None) => Worker::Fixed { worker: *n, source: format!("fixed: worker {n}") },
            (WorkerConfig::EnvOrZero, None) => {
                let n = WorkerSource::EnvOrZero.resolve().map_err(|e| StartError(e.to_string()))?;
                Worker::Fixed { worker: n, source: format!("SNOWFLAKE_WORKER_ID or 0: worker {n}") }
            }
            (WorkerConfig::HostnameOrdinal, None) => {
                let n = WorkerSource::HostnameOrdinal.resolve().map_err(|e| StartError(e.to_string()))?;
                Worker::Fixed { worker: n, source: format!("hostname ordinal: worker {n}") }
            }
            (WorkerConfig::Lease(_), None) => {
                return Err(StartError("a lease is configured but none was started".into()));
            }
        };
        let specs = config.ids.clone();
        let by_name = specs.iter().enumerate().map(|(i, spec)| (spec.name.clone(), i)).collect();
        let mut types = Vec::with_capacity(specs.len());
        for spec in &specs {
            // The generator names its type in errors and metrics for the life of the process.
            let name: &'static str = Box::leak(spec.name.clone().into_boxed_str());
            let builder = Generator::builder(spec.layout).name(name);
            let builder = match &worker {
                Worker::Leased { lease, .. } => builder.lease(lease.clone()),
                Worker::Fixed { worker, .. } => builder.worker(*worker),
            };
            let generator =
                builder.build().map_err(|e| StartError(format!("ID type {:?} ({}): {e}", spec.name, spec.layout)))?;
            types.push(IdType { spec: spec.clone(), generator, label: name });
        }
        Ok(AppState {
            specs,
            by_name,
            types,
            worker,
            refusals: Mutex::new(Refusals::default()),
            draining: AtomicBool::new(false),
        })
    }

    /// Starts the lease `config` asks for, if any, and builds the generators on it at once:
    /// the state answers from the first instant, what needs no worker ID as always, and the
    /// ID requests with the lease's reason until it issues ([`AppState::ready`] waits for
    /// that). Settings, a URL or a state file the lease refuses are refused here.
    ///
    /// ```
    /// use snowflake_server::config::{Config, IdSpec, LeaseConfig, WorkerConfig};
    /// use snowflake_server::AppState;
    ///
    /// let lease = LeaseConfig::new("redis://:secret@127.0.0.1:1");
    /// let config = Config::new(vec![IdSpec::parse("order=preset=leaf")?], WorkerConfig::Lease(lease));
    /// let state = AppState::start(&config)?;
    /// assert!(state.spec("order").is_some() && state.worker().is_none());
    /// let reason = state.not_ready().ok_or("ready")?;
    /// assert!(reason.starts_with("waiting for a worker-ID lease from redis://127.0.0.1:1"), "{reason}");
    /// assert!(!reason.contains("secret"), "{reason}");
    /// Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn start(config: &Config) -> Result<AppState, StartError> {
        let lease = match &config.worker {
            WorkerConfig::Lease(settings) => {
                tracing::info!(
                    namespace = %settings.namespace,
                    space = config.lease_space(),
                    "acquiring a worker-ID lease"
                );
                let lease = lease_builder(settings, config.lease_space())
                    .start()
                    .map_err(|e| StartError(format!("worker-ID lease: {e}")))?;
                Some(lease)
            }
            _ => None,
        };
        AppState::new(config, lease)
    }

    /// Waits until the types issue for the first time: at once without a lease; with one,
    /// until its first grant issues, or its first acquisition gives up (the error).
    pub async fn ready(&self) -> Result<(), StartError> {
        match &self.worker {
            Worker::Fixed { .. } => Ok(()),
            Worker::Leased { lease, .. } => {
                lease.ready_async().await.map_err(|e| StartError(format!("worker-ID lease: {e}")))
            }
        }
    }

    /// The type named `name` with its generator.
    pub fn get(&self, name: &str) -> Option<&IdType> {
        self.by_name.get(name).map(|&i| &self.types[i])
    }

    /// The configuration of the type named `name`.
    pub fn spec(&self, name: &str) -> Option<&IdSpec> {
        self.by_name.get(name).map(|&i| &self.specs[i])
    }

    /// Every type's configuration, in the order configured.
    pub fn specs(&self) -> &[IdSpec] {
        &self.specs
    }

    /// Every type, in the order configured.
    pub fn types(&self) -> &[IdType] {
        &self.types
    }

    /// The lease, if the worker ID is leased.
    pub fn lease(&self) -> Option<&WorkerLease> {
        match &self.worker {
            Worker::Leased { lease, .. } => Some(lease),
            Worker::Fixed { .. } => None,
        }
    }

    /// The worker ID the types issue under: the fixed one, or the one the lease holds (also
    /// while it is fenced or waits out earlier holders); `None` while the lease has none.
    pub fn worker(&self) -> Option<u64> {
        match &self.worker {
            Worker::Fixed { worker, .. } => Some(*worker),
            Worker::Leased { lease, .. } => match lease.status() {
                LeaseStatus::Issuing { worker, .. } | LeaseStatus::Fenced { worker, .. } => Some(worker),
                _ => None,
            },
        }
    }

    /// Where the worker ID comes from, for logs and `/v1/types`.
    pub fn worker_source(&self) -> String {
        match &self.worker {
            Worker::Fixed { source, .. } => source.clone(),
            Worker::Leased { lease, store } => match self.worker() {
                Some(worker) => format!("lease: worker {worker} in namespace {:?} of {store}", lease.namespace()),
                None => format!("lease: waiting for a worker ID in namespace {:?} of {store}", lease.namespace()),
            },
        }
    }

    /// Why the types cannot issue now (see [`AppState::readiness`]), or `None` when they can.
    pub fn not_ready(&self) -> Option<String> {
        self.readiness().reason
    }

    /// The lease while it issues: its worker ID, how long it may still issue without its store
    /// (ms), and whether the store answers. `None` without a lease, or while it cannot issue.
    pub fn lease_issuing(&self) -> Option<(u64, u128, bool)> {
        match self.lease()?.status() {
            LeaseStatus::Issuing { worker, issuing_for, store_answering, .. } => {
                Some((worker, issuing_for.as_millis(), store_answering))
            }
            _ => None,
        }
    }

    /// Marks the server as stopping: from now on it is not ready (`/readyz` 503, reason
    /// "draining…") while it still issues and answers, so that a load balancer takes it out
    /// of rotation before it stops taking connections.
    ///
    /// ```
    /// use snowflake_server::config::{Config, IdSpec, WorkerConfig};
    /// use snowflake_server::AppState;
    ///
    /// let state = AppState::new(&Config::new(vec![IdSpec::parse("order=preset=leaf")?], WorkerConfig::Fixed(1)), None)?;
    /// state.start_draining();
    /// assert!(state.not_ready().is_some_and(|reason| reason.starts_with("draining")));
    /// assert!(state.get("order").ok_or("not issuing")?.generator.next_raw().is_ok(), "still issues");
    /// Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn start_draining(&self) {
        self.draining.store(true, Ordering::Relaxed);
    }

    /// Whether the server drains ([`AppState::start_draining`]).
    pub fn is_draining(&self) -> bool {
        self.draining.load(Ordering::Relaxed)
    }

    /// Whether the server is ready, and why not: draining, or what the lease's status says
    /// (acquiring, with the store's last error; waiting out earlier holders, with the time
    /// left; fenced, with the reason; recovering; released; failed). Ready exactly while the
    /// lease issues and the server does not drain: the generators issue exactly while the
    /// lease says it issues.
    ///
    /// ```
    /// use snowflake_server::config::{Config, IdSpec, WorkerConfig};
    /// use snowflake_server::AppState;
    /// use snowflake_server::state::Phase;
    ///
    /// let state = AppState::new(&Config::new(vec![IdSpec::parse("order=preset=leaf")?], WorkerConfig::Fixed(1)), None)?;
    /// assert_eq!(state.readiness().phase, Phase::Issuing);
    /// state.start_draining();
    /// assert_eq!(state.readiness().phase, Phase::Draining);
    /// Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn readiness(&self) -> Readiness {
        if self.is_draining() {
            return Readiness {
                phase: Phase::Draining,
                reason: Some("draining: the server is stopping; it answers until it stops taking connections".into()),
                trouble: false,
                retry_after: Some(1),
            };
        }
        self.lease_readiness().unwrap_or(Readiness {
            phase: Phase::Issuing,
            reason: None,
            trouble: false,
            retry_after: None,
        })
    }

    /// The readiness the lease's status gives, draining or not; `None` without a lease.
    fn lease_readiness(&self) -> Option<Readiness> {
        match &self.worker {
            Worker::Fixed { .. } => None,
            Worker::Leased { lease, store } => Some(readiness_of(&lease.status(), lease.namespace(), store)),
        }
    }

    /// Why an ID request was refused with `error`, counted (`snowflake_server_refusals_total`)
    /// and kept for the rate-limited log. A lease's refusal is told as the lease's status
    /// says it (what `/readyz` says); the generator's own reason only where the status moved
    /// on to issuing between the two readings.
    pub(crate) fn refusal(&self, type_name: &str, error: &GenerateError) -> Refusal {
        let refusal = match error {
            GenerateError::Fenced { reason, .. } => match self.lease_readiness() {
                Some(readiness) if readiness.phase != Phase::Issuing => Refusal {
                    kind: readiness.phase.as_str(),
                    message: readiness.reason.unwrap_or_default(),
                    retry_after: readiness.retry_after,
                    transient: true,
                },
                _ => Refusal {
                    kind: fence_kind(reason),
                    message: format!("the lease refused: {reason}"),
                    retry_after: Some(fence_retry(reason)),
                    transient: true,
                },
            },
            GenerateError::ClockBackwards { .. } | GenerateError::ClockBeforeEpoch { .. } => {
                Refusal { kind: "clock", message: error.to_string(), retry_after: Some(1), transient: true }
            }
            // The time field has run out: no later request succeeds, but another server (a
            // later layout) may; say so with a long wait rather than none.
            GenerateError::TimeExhausted { .. } => {
                Refusal { kind: "time_exhausted", message: error.to_string(), retry_after: Some(3600), transient: true }
            }
            _ => Refusal { kind: "internal", message: error.to_string(), retry_after: None, transient: false },
        };
        metrics::counter!("snowflake_server_refusals_total", "reason" => refusal.kind).increment(1);
        let trouble = !matches!(refusal.kind, "acquiring" | "waiting_out");
        let mut refusals = lock(&self.refusals);
        refusals.count += 1;
        refusals.trouble |= trouble;
        refusals.last_error = format!("{type_name}: {}", refusal.message);
        if refusals.last_line.is_none_or(|at| at.elapsed() >= REFUSAL_LOG_EVERY) {
            log_refusals(&mut refusals);
        }
        refusal
    }

    /// Logs the refusals counted and not yet logged, once [`REFUSAL_LOG_EVERY`] has passed
    /// since the last line (at once with `now`).
    pub(crate) fn flush_refusals(&self, now: bool) {
        let mut refusals = lock(&self.refusals);
        if refusals.count > 0 && (now || refusals.last_line.is_none_or(|at| at.elapsed() >= REFUSAL_LOG_EVERY)) {
            log_refusals(&mut refusals);
        }
    }

    /// Releases the lease, if any: the generators stop and the worker ID frees at once.
    pub async fn release(&self) {
        let Some(lease) = self.lease() else { return };
        let worker = match lease.status() {
            // Nothing held: the lease's thread ends with the lease.
            LeaseStatus::Acquiring { .. } | LeaseStatus::Failed { .. } | LeaseStatus::Released => return,
            _ => lease.worker(),
        };
        match lease.clone().release_async().await {
            Ok(()) => tracing::info!(worker, "worker-ID lease released"),
            Err(e) => {
                tracing::warn!(worker, error = %e, "worker-ID lease not released; it frees when its TTL runs out")
            }
        }
    }
}

/// The label of a generator's fence reason, as the phases name them.
fn fence_kind(reason: &FenceReason) -> &'static str {
    match reason {
        FenceReason::WaitingOut { .. } => "waiting_out",
        FenceReason::Lost => "recovering",
        FenceReason::Released => "released",
        _ => "fenced",
    }
}

/// Seconds to wait before asking again after `reason`.
fn fence_retry(reason: &FenceReason) -> u64 {
    match reason {
        FenceReason::WaitingOut { until_ms } => u64::try_from((until_ms - now_ms()).max(0) / 1000 + 1).unwrap_or(1),
        _ => 1,
    }
}

/// The readiness a lease's `status` gives, for a lease of `namespace` from `store`.
fn readiness_of(status: &LeaseStatus, namespace: &str, store: &str) -> Readiness {
    let head = format!("waiting for a worker-ID lease from {store} (namespace {namespace:?})");
    let with_error = |text: String, error: &Option<snowflake_types::worker::lease::LeaseError>| match error {
        Some(e) => format!("{text} (last store error: {e})"),
        None => text,
    };
    let (phase, reason, trouble, retry) = match status {
        LeaseStatus::Issuing { .. } => (Phase::Issuing, None, false, None),
        LeaseStatus::Acquiring { error, .. } => (
            Phase::Acquiring,
            Some(with_error(format!("{head}: acquiring a worker ID"), error)),
            error.is_some(),
            Some(1),
        ),
        LeaseStatus::Failed { error } => {
            (Phase::Failed, Some(format!("{head}: gave up: {error}; the server exits")), true, None)
        }
        LeaseStatus::Fenced { worker, reason: reason @ FenceReason::WaitingOut { until_ms }, .. } => {
            let left = Duration::from_millis(u64::try_from(until_ms - now_ms()).unwrap_or(0));
            let text = format!(
                "worker ID {worker} of namespace {namespace:?} is leased; waiting out earlier holders ({left:.1?} left): {reason}"
            );
            (Phase::WaitingOut, Some(text), false, Some(fence_retry(reason)))
        }
        LeaseStatus::Fenced { worker, reason, error, .. } => {
            (Phase::Fenced, Some(with_error(format!("worker ID {worker} is fenced: {reason}"), error)), true, Some(1))
        }
        LeaseStatus::Recovering { previous_worker, error, .. } => (
            Phase::Recovering,
            Some(with_error(
                format!("the lease of worker ID {previous_worker} is lost and being acquired again"),
                error,
            )),
            true,
            Some(1),
        ),
        LeaseStatus::Released => {
            (Phase::Released, Some("the lease was released: the server is shutting down".to_owned()), false, Some(1))
        }
        other => (Phase::Fenced, Some(format!("the lease does not issue: {other:?}")), true, Some(1)),
    };
    Readiness { phase, reason: reason.map(|r| redact_all(&r)), trouble, retry_after: retry }
}

fn log_refusals(refusals: &mut Refusals) {
    let period = refusals.last_line.map(|at| at.elapsed());
    let (count, last_error) = (refusals.count, refusals.last_error.as_str());
    let message = match period {
        Some(period) => format!("ID requests refused: {count} in the last {period:.1?}"),
        None => {
            format!("ID requests refused: {count} (further refusals are counted, one line every {REFUSAL_LOG_EVERY:?})")
        }
    };
    // Refusals while a normal start acquires its worker ID or waits out earlier holders are
    // no fault: a client asked before `/readyz` said ready.
    if refusals.trouble {
        tracing::warn!(refused = count, last_error, "{message}");
    } else {
        tracing::info!(refused = count, last_error, "{message}");
    }
    refusals.count = 0;
    refusals.trouble = false;
    refusals.last_line = Some(Instant::now());
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|p| p.into_inner())
}

/// `text` without the password of any URL in it.
fn redact_all(text: &str) -> String {
    if !text.contains('@') {
        return text.to_owned();
    }
    text.split(' ')
        .map(|word| if word.contains("://") { redact_url(word) } else { word.to_owned() })
        .collect::<Vec<_>>()
        .join(" ")
}
