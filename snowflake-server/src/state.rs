//! The service's state: one generator per ID type, all on one worker ID (fixed, from the
//! environment, a StatefulSet ordinal, or a lease), and whether each can issue now.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, MutexGuard, OnceLock};
use std::time::{Duration, Instant};

use snowflake_types::worker::lease::{DEFAULT_MARGIN, DEFAULT_RESERVATION, LeaseStatus, WorkerLease, redact_url};
use snowflake_types::{GenerateError, Generator, WorkerSource};

use crate::config::{Config, IdSpec, WorkerConfig};

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
}

/// The ID types and the worker ID they issue under.
///
/// A server whose worker ID is leased starts without generators
/// ([`AppState::awaiting_lease`]): it answers at once, and its types issue once
/// [`AppState::acquire`] has the lease. Until then [`AppState::get`] finds no generator and
/// [`AppState::not_ready`] says what the server waits for.
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
    /// The generators, once the worker ID is known (at once, or when the lease is acquired).
    issuing: OnceLock<Issuing>,
    /// What the server waits for while it has no generators.
    waiting: Option<Waiting>,
    refusals: Mutex<Refusals>,
    /// Asked to stop: not ready, still serving ([`AppState::start_draining`]).
    draining: AtomicBool,
}

/// The generators and the worker ID they issue under.
#[derive(Debug)]
struct Issuing {
    types: Vec<IdType>,
    lease: Option<WorkerLease>,
    worker_source: String,
}

/// A lease being acquired: from where, and since when.
#[derive(Debug)]
struct Waiting {
    /// The store's URL, without any password.
    store: String,
    namespace: String,
    since: Instant,
    worker_source: String,
    /// Why the acquisition gave up, once it has.
    failed: Mutex<Option<String>>,
}

/// The refused ID requests not yet logged.
#[derive(Debug, Default)]
struct Refusals {
    count: u64,
    last_error: String,
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

fn leased_source(lease: &WorkerLease) -> String {
    format!("lease: worker {} in namespace {:?} of {}", lease.worker(), lease.namespace(), lease.store())
}

impl AppState {
    /// Builds a generator per type on the worker ID `config` names, or on `lease` when one is
    /// given (see [`AppState::start`], which acquires it).
    pub fn new(config: &Config, lease: Option<WorkerLease>) -> Result<AppState, StartError> {
        let state = AppState::unissuing(config, None);
        state.install(config, lease)?;
        Ok(state)
    }

    /// A state of the types `config` names, none issuing yet: it answers what needs no worker
    /// ID (the types, decoding) and refuses IDs with the reason, until [`AppState::acquire`]
    /// has the lease `config` asks for. For a configuration without a lease it is
    /// [`AppState::new`].
    ///
    /// ```
    /// use snowflake_server::config::{Config, IdSpec, LeaseConfig, WorkerConfig};
    /// use snowflake_server::AppState;
    ///
    /// let lease = LeaseConfig::new("redis://:secret@127.0.0.1:1");
    /// let config = Config::new(vec![IdSpec::parse("order=preset=leaf")?], WorkerConfig::Lease(lease));
    /// let state = AppState::awaiting_lease(&config)?;
    /// assert!(state.get("order").is_none() && state.spec("order").is_some());
    /// let reason = state.not_ready().ok_or("ready")?;
    /// assert!(reason.starts_with("waiting for a worker-ID lease from redis://127.0.0.1:1"), "{reason}");
    /// assert!(!reason.contains("secret"), "{reason}");
    /// Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn awaiting_lease(config: &Config) -> Result<AppState, StartError> {
        match &config.worker {
            WorkerConfig::Lease(settings) => {
                let store = redact_url(&settings.url);
                let worker_source =
                    format!("lease: waiting for a worker ID in namespace {:?} of {store}", settings.namespace);
                let waiting = Waiting {
                    store,
                    namespace: settings.namespace.clone(),
                    since: Instant::now(),
                    worker_source,
                    failed: Mutex::new(None),
                };
                Ok(AppState::unissuing(config, Some(waiting)))
            }
            _ => AppState::new(config, None),
        }
    }

    fn unissuing(config: &Config, waiting: Option<Waiting>) -> AppState {
        let specs = config.ids.clone();
        let by_name = specs.iter().enumerate().map(|(i, spec)| (spec.name.clone(), i)).collect();
        AppState {
            specs,
            by_name,
            issuing: OnceLock::new(),
            waiting,
            refusals: Mutex::new(Refusals::default()),
            draining: AtomicBool::new(false),
        }
    }

    /// Builds the generators on the worker ID `config` names, or on `lease`.
    fn install(&self, config: &Config, lease: Option<WorkerLease>) -> Result<(), StartError> {
        let (worker, worker_source) = match (&config.worker, &lease) {
            (_, Some(lease)) => (None, leased_source(lease)),
            (WorkerConfig::Fixed(n), None) => (Some(*n), format!("fixed: worker {n}")),
            (WorkerConfig::EnvOrZero, None) => {
                let n = WorkerSource::EnvOrZero.resolve().map_err(|e| StartError(e.to_string()))?;
                (Some(n), format!("SNOWFLAKE_WORKER_ID or 0: worker {n}"))
            }
            (WorkerConfig::HostnameOrdinal, None) => {
                let n = WorkerSource::HostnameOrdinal.resolve().map_err(|e| StartError(e.to_string()))?;
                (Some(n), format!("hostname ordinal: worker {n}"))
            }
            (WorkerConfig::Lease(_), None) => {
                return Err(StartError("a lease is configured but none was acquired".into()));
            }
        };
        let mut types = Vec::with_capacity(self.specs.len());
        for spec in &self.specs {
            // The generator names its type in errors and metrics for the life of the process.
            let name: &'static str = Box::leak(spec.name.clone().into_boxed_str());
            let mut builder = Generator::builder(spec.layout).name(name);
            builder = match (&lease, worker) {
                (Some(lease), _) => builder.lease(lease.clone()),
                (None, Some(n)) => builder.worker(n),
                (None, None) => builder,
            };
            let generator =
                builder.build().map_err(|e| StartError(format!("ID type {:?} ({}): {e}", spec.name, spec.layout)))?;
            types.push(IdType { spec: spec.clone(), generator });
        }
        self.issuing
            .set(Issuing { types, lease, worker_source })
            .map_err(|_| StartError("the generators were built already".into()))
    }

    /// Acquires the lease `config` asks for, if any (waiting for a store that does not answer
    /// as configured), and builds the generators on it.
    pub async fn start(config: &Config) -> Result<AppState, StartError> {
        let state = AppState::awaiting_lease(config)?;
        state.acquire(config).await?;
        Ok(state)
    }

    /// Acquires the lease `config` asks for (waiting for a store that does not answer as
    /// configured, then for earlier holders of a worker ID the store has no record of) and
    /// builds the generators on it: from then on the types issue. Without a lease in `config`,
    /// or once the generators are built, it does nothing.
    pub async fn acquire(&self, config: &Config) -> Result<(), StartError> {
        let WorkerConfig::Lease(settings) = &config.worker else { return Ok(()) };
        if self.issuing.get().is_some() {
            return Ok(());
        }
        let ttl = settings.ttl.unwrap_or(snowflake_types::worker::lease::DEFAULT_TTL);
        let mut builder = WorkerLease::from_url(settings.url.clone())
            .namespace(settings.namespace.clone())
            .space(config.lease_space())
            .ttl(ttl)
            .reservation(settings.reservation.unwrap_or(DEFAULT_RESERVATION).max(ttl))
            .margin(DEFAULT_MARGIN.min(ttl / 5));
        if let Some(wait) = settings.wait {
            builder = builder.wait_for_store(wait);
        }
        if settings.create_namespace {
            builder = builder.create_namespace();
        }
        if let Some(path) = &settings.state_file {
            builder = builder.state_file(path);
        }
        tracing::info!(namespace = %settings.namespace, space = config.lease_space(), "acquiring a worker-ID lease");
        let lease = match builder.acquire_async().await {
            Ok(lease) => lease,
            Err(e) => {
                let error = StartError(format!("worker-ID lease: {e}"));
                if let Some(waiting) = &self.waiting {
                    *lock(&waiting.failed) = Some(e.to_string());
                }
                return Err(error);
            }
        };
        tracing::info!(
            worker = lease.worker(),
            fence = lease.fence(),
            store = lease.store(),
            "worker-ID lease acquired"
        );
        self.install(config, Some(lease))
    }

    /// The type named `name`, once it issues (see [`AppState::spec`] for its configuration,
    /// there from the start).
    pub fn get(&self, name: &str) -> Option<&IdType> {
        let &i = self.by_name.get(name)?;
        self.issuing.get().map(|issuing| &issuing.types[i])
    }

    /// The configuration of the type named `name`.
    pub fn spec(&self, name: &str) -> Option<&IdSpec> {
        self.by_name.get(name).map(|&i| &self.specs[i])
    }

    /// Every type's configuration, in the order configured.
    pub fn specs(&self) -> &[IdSpec] {
        &self.specs
    }

    /// Every type, in the order configured, once they issue; empty before.
    pub fn types(&self) -> &[IdType] {
        self.issuing.get().map_or(&[], |issuing| issuing.types.as_slice())
    }

    /// The lease, if the worker ID is leased and the lease acquired.
    pub fn lease(&self) -> Option<&WorkerLease> {
        self.issuing.get().and_then(|issuing| issuing.lease.as_ref())
    }

    /// Where the worker ID comes from, for logs and `/v1/types`.
    pub fn worker_source(&self) -> &str {
        match (self.issuing.get(), &self.waiting) {
            (Some(issuing), _) => &issuing.worker_source,
            (None, Some(waiting)) => &waiting.worker_source,
            (None, None) => "none",
        }
    }

    /// Why the types cannot issue now (the lease is being acquired, earlier holders are being
    /// waited out, the lease is fenced, recovering or released), or `None` when they can.
    pub fn not_ready(&self) -> Option<String> {
        self.readiness().1
    }

    /// The lease while it issues: its worker ID, how long it may still issue without its store
    /// (ms), and whether the store answers. `None` without a lease, or while it cannot issue.
    pub fn lease_issuing(&self) -> Option<(u64, u128, bool)> {
        let lease = self.issuing.get()?.lease.as_ref()?;
        match lease.status() {
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

    /// Whether the server issues (its generators are built), whatever its lease's state.
    pub(crate) fn has_generators(&self) -> bool {
        self.issuing.get().is_some()
    }

    /// The phase the server is in (`issuing`, `acquiring`, `waiting out`, `fenced`,
    /// `recovering`, `released`, `failed`, `draining`), and why it cannot issue, if it cannot.
    pub(crate) fn readiness(&self) -> (&'static str, Option<String>) {
        if self.draining.load(Ordering::Relaxed) {
            let reason = "draining: the server is stopping; it answers until it stops taking connections";
            return ("draining", Some(reason.to_owned()));
        }
        let Some(issuing) = self.issuing.get() else {
            return match &self.waiting {
                Some(waiting) => waiting.reason(),
                None => ("failed", Some("no generators were built".to_owned())),
            };
        };
        let Some(lease) = &issuing.lease else { return ("issuing", None) };
        match lease.status() {
            LeaseStatus::Issuing { .. } => ("issuing", None),
            LeaseStatus::Fenced { worker, reason, error, .. } => {
                let phase = match reason {
                    snowflake_types::FenceReason::WaitingOut { .. } => "waiting out",
                    _ => "fenced",
                };
                let left = match reason {
                    snowflake_types::FenceReason::WaitingOut { until_ms } => {
                        let now_ms = std::time::SystemTime::now()
                            .duration_since(std::time::UNIX_EPOCH)
                            .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX));
                        let left = Duration::from_millis(u64::try_from(until_ms - now_ms).unwrap_or(0));
                        format!(" ({left:.1?} left)")
                    }
                    _ => String::new(),
                };
                let text = match error {
                    Some(e) => format!("worker ID {worker} is fenced: {reason}{left} (last store error: {e})"),
                    None => format!("worker ID {worker} is fenced: {reason}{left}"),
                };
                (phase, Some(text))
            }
            LeaseStatus::Recovering { previous_worker, error, .. } => (
                "recovering",
                Some(match error {
                    Some(e) => format!(
                        "the lease of worker ID {previous_worker} is lost and being acquired again (last store error: {e})"
                    ),
                    None => format!("the lease of worker ID {previous_worker} is lost and being acquired again"),
                }),
            ),
            LeaseStatus::Released => {
                ("released", Some("the lease was released: the server is shutting down".to_owned()))
            }
            other => ("fenced", Some(format!("{other:?}"))),
        }
    }

    /// Counts an ID request refused with `error`, and logs the refusals at most once every
    /// [`REFUSAL_LOG_EVERY`]: the first at once, the next ones as a count.
    pub(crate) fn refused(&self, type_name: &str, error: &str) {
        let mut refusals = lock(&self.refusals);
        refusals.count += 1;
        refusals.last_error = format!("{type_name}: {error}");
        if refusals.last_line.is_none_or(|at| at.elapsed() >= REFUSAL_LOG_EVERY) {
            log_refusals(&mut refusals);
        }
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
        if let Some(lease) = self.lease() {
            let worker = lease.worker();
            match lease.clone().release_async().await {
                Ok(()) => tracing::info!(worker, "worker-ID lease released"),
                Err(e) => {
                    tracing::warn!(worker, error = %e, "worker-ID lease not released; it frees when its TTL runs out")
                }
            }
        }
    }
}

fn log_refusals(refusals: &mut Refusals) {
    let period = refusals.last_line.map(|at| at.elapsed());
    match period {
        Some(period) => tracing::warn!(
            refused = refusals.count,
            last_error = %refusals.last_error,
            "ID requests refused: {} in the last {:.1?}",
            refusals.count,
            period
        ),
        None => tracing::warn!(
            refused = refusals.count,
            last_error = %refusals.last_error,
            "ID requests refused: {} (further refusals are counted, one line every {REFUSAL_LOG_EVERY:?})",
            refusals.count
        ),
    }
    refusals.count = 0;
    refusals.last_line = Some(Instant::now());
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|p| p.into_inner())
}

impl Waiting {
    /// The phase and the reason while the lease is not there: acquiring (with the last store
    /// error the lease thread reported), waiting out earlier holders, or given up.
    fn reason(&self) -> (&'static str, Option<String>) {
        let head = format!("waiting for a worker-ID lease from {} (namespace {:?})", self.store, self.namespace);
        if let Some(error) = lock(&self.failed).as_ref() {
            return ("failed", Some(format!("{head}: gave up: {error}; the server exits")));
        }
        let progress = crate::progress::latest(&self.namespace, self.since);
        let (phase, text) = match progress {
            Some(crate::progress::Progress { waiting_out: Some(message), worker, .. }) => (
                "waiting out",
                match worker {
                    Some(worker) => {
                        format!("{head}: worker ID {worker} is leased; waiting out earlier holders: {message}")
                    }
                    None => format!("{head}: a worker ID is leased; waiting out earlier holders: {message}"),
                },
            ),
            Some(crate::progress::Progress { store_error: Some(error), .. }) => {
                ("acquiring", format!("{head}: acquiring a worker ID (last store error: {error})"))
            }
            _ => ("acquiring", format!("{head}: acquiring a worker ID")),
        };
        (phase, Some(redact_all(&text)))
    }
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

/// How long a client should wait before asking again after `error` (seconds), for the
/// `Retry-After` header; `None` for errors that waiting does not cure.
pub(crate) fn retry_after(error: &GenerateError) -> Option<u64> {
    match error {
        GenerateError::Fenced { reason: snowflake_types::FenceReason::WaitingOut { until_ms }, .. } => {
            let now_ms = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX));
            Some(u64::try_from((until_ms - now_ms).max(0) / 1000 + 1).unwrap_or(1))
        }
        GenerateError::Fenced { .. }
        | GenerateError::ClockBackwards { .. }
        | GenerateError::ClockBeforeEpoch { .. } => Some(1),
        // The time field has run out: no later request succeeds, but another server (a
        // later layout) may; say so with a long wait rather than none.
        GenerateError::TimeExhausted { .. } => Some(3600),
        _ => None,
    }
}
