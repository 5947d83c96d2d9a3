//! The service's state: one generator per ID type, all on one worker ID (fixed, from the
//! environment, a StatefulSet ordinal, or a lease), and whether each can issue now.

use std::collections::HashMap;

use snowflake_types::worker::lease::{DEFAULT_MARGIN, LeaseStatus, WorkerLease};
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
    types: Vec<IdType>,
    by_name: HashMap<String, usize>,
    lease: Option<WorkerLease>,
    worker_source: String,
}

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

impl AppState {
    /// Builds a generator per type on the worker ID `config` names, or on `lease` when one is
    /// given (see [`AppState::start`], which acquires it).
    pub fn new(config: &Config, lease: Option<WorkerLease>) -> Result<AppState, StartError> {
        let (worker, worker_source) = match (&config.worker, &lease) {
            (_, Some(lease)) => (
                None,
                format!("lease: worker {} in namespace {:?} of {}", lease.worker(), lease.namespace(), lease.store()),
            ),
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
        let mut types = Vec::with_capacity(config.ids.len());
        let mut by_name = HashMap::new();
        for spec in &config.ids {
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
            by_name.insert(spec.name.clone(), types.len());
            types.push(IdType { spec: spec.clone(), generator });
        }
        Ok(AppState { types, by_name, lease, worker_source })
    }

    /// Acquires the lease `config` asks for, if any (waiting for a store that does not answer
    /// as configured), and builds the generators on it.
    pub async fn start(config: &Config) -> Result<AppState, StartError> {
        let lease = match &config.worker {
            WorkerConfig::Lease(settings) => {
                let ttl = settings.ttl.unwrap_or(snowflake_types::worker::lease::DEFAULT_TTL);
                let mut builder = WorkerLease::from_url(settings.url.clone())
                    .namespace(settings.namespace.clone())
                    .space(config.lease_space())
                    .ttl(ttl)
                    .margin(DEFAULT_MARGIN.min(ttl / 5));
                if let Some(wait) = settings.wait {
                    builder = builder.wait_for_store(wait);
                }
                tracing::info!(namespace = %settings.namespace, space = config.lease_space(), "acquiring a worker-ID lease");
                let lease = builder.acquire_async().await.map_err(|e| StartError(format!("worker-ID lease: {e}")))?;
                tracing::info!(
                    worker = lease.worker(),
                    fence = lease.fence(),
                    store = lease.store(),
                    "worker-ID lease acquired"
                );
                Some(lease)
            }
            _ => None,
        };
        AppState::new(config, lease)
    }

    /// The type named `name`.
    pub fn get(&self, name: &str) -> Option<&IdType> {
        self.by_name.get(name).map(|&i| &self.types[i])
    }

    /// Every type, in the order configured.
    pub fn types(&self) -> &[IdType] {
        &self.types
    }

    /// The lease, if the worker ID is leased.
    pub fn lease(&self) -> Option<&WorkerLease> {
        self.lease.as_ref()
    }

    /// Where the worker ID comes from, for logs and `/v1/types`.
    pub fn worker_source(&self) -> &str {
        &self.worker_source
    }

    /// Why the types cannot issue now (the lease is fenced, recovering or released), or
    /// `None` when they can.
    pub fn not_ready(&self) -> Option<String> {
        let lease = self.lease.as_ref()?;
        match lease.status() {
            LeaseStatus::Issuing { .. } => None,
            LeaseStatus::Fenced { worker, reason, error, .. } => Some(match error {
                Some(e) => format!("worker ID {worker} is fenced: {reason} (last store error: {e})"),
                None => format!("worker ID {worker} is fenced: {reason}"),
            }),
            LeaseStatus::Recovering { previous_worker, error, .. } => Some(match error {
                Some(e) => format!(
                    "the lease of worker ID {previous_worker} is lost and being acquired again (last store error: {e})"
                ),
                None => format!("the lease of worker ID {previous_worker} is lost and being acquired again"),
            }),
            LeaseStatus::Released => Some("the lease was released: the server is shutting down".to_owned()),
            other => Some(format!("{other:?}")),
        }
    }

    /// Releases the lease, if any: the generators stop and the worker ID frees at once.
    pub async fn release(&self) {
        if let Some(lease) = &self.lease {
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
