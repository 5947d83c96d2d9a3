//! [`WorkerLeaseBuilder`]: a lease's settings, checked, and its start.

use std::sync::atomic::AtomicU64;
use std::sync::{Arc, Mutex, mpsc};
use std::time::{Duration, Instant};

use super::shared::{Shared, nanos_since_anchor};
use super::state_file::StateFile;
use super::status::LeaseTiming;
use super::{WorkerLease, renewal};
use crate::clock::{Clock, MonotonicClock};
use crate::worker::lease::protocol::holder::{Machine, Now, Settings};
use crate::worker::lease::protocol::{self, Asked, DEFAULT_TTL};
use crate::worker::lease::store::support::{check_namespace, check_space, holder_name, random_u64};
use crate::worker::lease::store::{DEFAULT_CLOCK_TOLERANCE, LeaseError, LeaseStore};

/// How long an acquisition tries a store that does not answer before it fails: 30 s (a rollout stalls, not loops).
///
/// ```
/// use std::time::Duration;
/// use typed_snowflake::worker::lease::DEFAULT_STORE_WAIT;
///
/// assert_eq!(DEFAULT_STORE_WAIT, Duration::from_secs(30));
/// ```
pub const DEFAULT_STORE_WAIT: Duration = Duration::from_secs(30);

/// The namespace of a lease configured by `SNOWFLAKE_WORKER_LEASE` alone.
pub const DEFAULT_NAMESPACE: &str = "typed-snowflake";

impl WorkerLease {
    /// A builder for a lease from `store`.
    pub fn builder(store: impl LeaseStore) -> WorkerLeaseBuilder {
        WorkerLease::builder_shared(Arc::new(store))
    }

    /// A builder for a lease from a store already shared.
    pub fn builder_shared(store: Arc<dyn LeaseStore>) -> WorkerLeaseBuilder {
        WorkerLeaseBuilder::with_store(Store::Open(store))
    }

    /// A builder for a lease from the store a URL names (see [`open_store`](crate::worker::lease::open_store)),
    /// opened on the lease's own thread, so that it may be called from async code.
    ///
    /// ```no_run
    /// use typed_snowflake::worker::lease::WorkerLease;
    ///
    /// # async fn start() -> Result<(), Box<dyn std::error::Error>> {
    /// let lease = WorkerLease::from_url("postgres://app@db/shop").namespace("shop").acquire_async().await?;
    /// # Ok(()) }
    /// ```
    pub fn from_url(url: impl Into<String>) -> WorkerLeaseBuilder {
        WorkerLeaseBuilder::with_store(Store::Url(url.into()))
    }
}

/// Configures and acquires a [`WorkerLease`]. See [`WorkerLease::builder`].
#[derive(Debug, Clone)]
#[must_use]
pub struct WorkerLeaseBuilder {
    store: Store,
    namespace: String,
    space: u64,
    asked: Asked,
    wait_for_store: Duration,
    create_namespace: bool,
    state_file: Option<std::path::PathBuf>,
    clock: Arc<dyn Clock>,
}

impl WorkerLeaseBuilder {
    /// The defaults, for `store`.
    pub(super) fn with_store(store: Store) -> WorkerLeaseBuilder {
        WorkerLeaseBuilder {
            store,
            namespace: DEFAULT_NAMESPACE.to_owned(),
            space: 32,
            asked: Asked {
                ttl: DEFAULT_TTL,
                reservation: None,
                margin: None,
                renew_every: None,
                tolerance: DEFAULT_CLOCK_TOLERANCE,
            },
            wait_for_store: DEFAULT_STORE_WAIT,
            create_namespace: false,
            state_file: None,
            clock: Arc::new(MonotonicClock),
        }
    }
    /// The namespace: the ID space shared by every process that generates the same types
    /// (default [`DEFAULT_NAMESPACE`]); 1 to 64 bytes of `A-Z a-z 0-9 _ . : -`.
    pub fn namespace(mut self, namespace: impl Into<String>) -> Self {
        self.namespace = namespace.into();
        self
    }
    /// The worker IDs to choose from: `0..space` (default 32, a 5-bit worker field).
    pub fn space(mut self, space: u64) -> Self {
        self.space = space;
        self
    }
    /// The worker IDs a node field of `bits` bits holds: `0..2^bits`.
    pub fn worker_bits(self, bits: u32) -> Self {
        self.space(1u64.checked_shl(bits).unwrap_or(u64::MAX))
    }
    /// How long the store keeps the lease after its last renewal (default [`DEFAULT_TTL`]).
    pub fn ttl(mut self, ttl: Duration) -> Self {
        self.asked.ttl = ttl;
        self
    }
    /// How far ahead of its clock the holder reserves at each renewal (`W`, default
    /// [`DEFAULT_RESERVATION`](super::DEFAULT_RESERVATION), at least the TTL): how long it rides through an outage,
    /// and what a start the store cannot vouch for waits (`docs/lease-rules.md`).
    ///
    /// ```no_run
    /// use std::time::Duration;
    /// use typed_snowflake::worker::lease::WorkerLease;
    ///
    /// // Ride through store outages of up to 5 minutes.
    /// let lease = WorkerLease::from_url("redis://127.0.0.1:6379").reservation(Duration::from_secs(300)).acquire()?;
    /// assert!(lease.status().is_issuing());
    /// Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn reservation(mut self, reservation: Duration) -> Self {
        self.asked.reservation = Some(reservation);
        self
    }
    /// How long before the reservation runs out the holder stops issuing (default
    /// [`DEFAULT_MARGIN`](super::DEFAULT_MARGIN)); shorter than the TTL.
    pub fn margin(mut self, margin: Duration) -> Self {
        self.asked.margin = Some(margin);
        self
    }
    /// How often the lease renews (default: a third of the TTL; shorter than `TTL - margin`).
    pub fn renew_every(mut self, every: Duration) -> Self {
        self.asked.renew_every = Some(every);
        self
    }
    /// The largest difference allowed between the clocks (default [`DEFAULT_CLOCK_TOLERANCE`]).
    pub fn clock_tolerance(mut self, tolerance: Duration) -> Self {
        self.asked.tolerance = tolerance;
        self
    }
    /// How long the first acquisition tries a store that does not answer before it fails with its error (default
    /// [`DEFAULT_STORE_WAIT`]; `Duration::ZERO`: at once); errors that waiting cannot mend fail at once.
    ///
    /// ```no_run
    /// use std::time::Duration;
    /// use typed_snowflake::worker::lease::WorkerLease;
    ///
    /// let lease = WorkerLease::from_url("redis://127.0.0.1:6379").wait_for_store(Duration::from_secs(120)).acquire()?;
    /// Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn wait_for_store(mut self, wait: Duration) -> Self {
        self.wait_for_store = wait;
        self
    }
    /// Declares the namespace new where the store holds nothing of it, so that its first holders issue at once:
    /// only before its first holder starts (`docs/lease-rules.md`, "What the operator must do").
    ///
    /// ```no_run
    /// use typed_snowflake::worker::lease::WorkerLease;
    ///
    /// let lease = WorkerLease::from_url("redis://127.0.0.1:6379").namespace("shop").create_namespace().acquire()?;
    /// Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn create_namespace(mut self) -> Self {
        self.create_namespace = true;
        self
    }
    /// Keeps the lease's grant in a state file at `path` (one per process, on a disk that survives its restarts):
    /// a process restarted while its store does not answer resumes on its worker ID (`docs/lease-rules.md` rule
    /// 11, `docs/many-nodes.md`). A second process on the same file is refused.
    ///
    /// ```no_run
    /// use typed_snowflake::worker::lease::WorkerLease;
    ///
    /// let lease = WorkerLease::from_url("redis://127.0.0.1:6379").state_file("/var/lib/ids/lease").acquire()?;
    /// Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn state_file(mut self, path: impl Into<std::path::PathBuf>) -> Self {
        self.state_file = Some(path.into());
        self
    }
    /// The local clock (the generators'), compared with the store's (default: the [`MonotonicClock`]).
    pub fn clock(self, clock: impl Clock) -> Self {
        self.shared_clock(Arc::new(clock))
    }
    /// The local clock, already shared.
    pub fn shared_clock(mut self, clock: Arc<dyn Clock>) -> Self {
        self.clock = clock;
        self
    }

    /// The timing the lease would have, or the error that [`start`](Self::start) would give.
    ///
    /// ```
    /// use std::time::Duration;
    /// use typed_snowflake::worker::lease::{MemoryLeaseStore, WorkerLease};
    ///
    /// let timing = WorkerLease::builder(MemoryLeaseStore::new()).ttl(Duration::from_secs(5)).timing()?;
    /// assert_eq!(timing.margin, Duration::from_secs(1)); // a fifth of the TTL, under 2 s
    /// assert_eq!(timing.reservation, Duration::from_secs(60));
    /// Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn timing(&self) -> Result<LeaseTiming, LeaseError> {
        let rules = protocol::Rules::new(self.asked)?;
        Ok(LeaseTiming {
            ttl: rules.ttl,
            reservation: rules.reservation,
            margin: rules.margin,
            renew_every: rules.renew_every,
            clock_tolerance: rules.tolerance,
        })
    }

    /// Acquires a worker ID, blocking until it issues (`docs/lease-rules.md`); renewals run on the lease's thread.
    ///
    /// ```no_run
    /// use typed_snowflake::worker::lease::{RedisLeaseStore, WorkerLease};
    ///
    /// let lease = WorkerLease::builder(RedisLeaseStore::open("redis://127.0.0.1:6379")?)
    ///     .namespace("shop")
    ///     .worker_bits(5)
    ///     .acquire()?;
    /// println!("worker {} (fence {})", lease.worker(), lease.fence());
    /// lease.release()?;
    /// Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn acquire(self) -> Result<WorkerLease, LeaseError> {
        let lease = self.start()?;
        lease.ready()?;
        Ok(lease)
    }

    /// Starts the lease and returns it at once, before it holds a worker ID: [`WorkerLease::status`] says where it
    /// stands, [`WorkerLease::ready`] waits until it issues. Bad settings are refused at once.
    ///
    /// ```
    /// use std::time::Duration;
    /// use typed_snowflake::worker::lease::{LeaseStatus, MemoryLeaseStore, WorkerLease};
    ///
    /// let lease = WorkerLease::builder(MemoryLeaseStore::new()).namespace("shop").create_namespace().start()?;
    /// // `status()` answers at once: acquiring, or issuing already.
    /// assert!(matches!(lease.status(), LeaseStatus::Acquiring { .. } | LeaseStatus::Issuing { .. }));
    /// lease.ready()?;
    /// assert!(lease.status().is_issuing());
    /// # lease.release()?;
    /// Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn start(self) -> Result<WorkerLease, LeaseError> {
        check_namespace(&self.namespace)?;
        check_space(self.space)?;
        let rules = protocol::Rules::new(self.asked)?;
        // A URL is parsed now, and opened by the lease thread, which waits for its store.
        let (url, store) = match &self.store {
            Store::Url(text) => (Some(crate::worker::lease::url::StoreUrl::parse(text)?), None),
            Store::Open(store) => (None, Some(Arc::clone(store))),
        };
        let describe =
            store.as_ref().map_or_else(|| url.as_ref().map(ToString::to_string).unwrap_or_default(), |s| s.describe());
        let host = holder_name().rsplit_once(':').map_or("", |(host, _)| host);
        let opened = self.state_file.as_ref().map(|path| StateFile::open(path, host)).transpose();
        let (file, saved) = opened.map_err(|reason| LeaseError::BadSettings { reason })?.unzip();
        let now = Now { ns: nanos_since_anchor(Instant::now()), ms: self.clock.now_ms() };
        let settings = Settings {
            namespace: self.namespace.clone(),
            space: self.space,
            rules,
            first_wait_ns: u64::try_from(self.wait_for_store.as_nanos()).unwrap_or(u64::MAX),
            acquire_backoff_ns: (50_000_000, 2_000_000_000),
            create_namespace: self.create_namespace,
            wait_for_free: false,
            state_file: self.state_file.is_some(),
            name: holder_name().to_owned(),
            store: describe.clone(),
            seed: random_u64(),
        };
        let resumed = saved.flatten().and_then(|saved| Machine::resume(settings.clone(), &saved, now));
        if let Some(machine) = &resumed {
            crate::events::lease_resumed_from_file(&self.namespace, machine.worker_and_fence().0);
        }
        let shared = Arc::new(Shared {
            namespace: self.namespace.as_str().into(),
            rules,
            store: describe,
            clock: Arc::clone(&self.clock),
            machine: Mutex::new(resumed.unwrap_or_else(|| Machine::new(settings, now))),
            limits: Mutex::new(Vec::new()),
            longest_tick_ms: AtomicU64::new(0),
            late_renewals: AtomicU64::new(0),
            failed_renewals: AtomicU64::new(0),
            recoveries: AtomicU64::new(0),
            stops_seen: AtomicU64::new(0),
            first: Mutex::default(),
        });
        let (commands, inbox) = mpsc::channel();
        renewal::spawn(Arc::clone(&shared), url, store, file, self.wait_for_store, inbox)?;
        Ok(WorkerLease { shared, commands })
    }

    /// [`WorkerLeaseBuilder::acquire`] for async code, without blocking the executor.
    ///
    /// ```no_run
    /// use typed_snowflake::worker::lease::{SqlLeaseStore, WorkerLease};
    ///
    /// # async fn run() -> Result<(), Box<dyn std::error::Error>> {
    /// let store = SqlLeaseStore::connect("postgres://postgres@127.0.0.1:5432/test")?;
    /// let lease = WorkerLease::builder(store).namespace("shop").space(1024).acquire_async().await?;
    /// assert!(lease.worker() < 1024);
    /// # Ok(()) }
    /// ```
    pub async fn acquire_async(self) -> Result<WorkerLease, LeaseError> {
        let lease = self.start()?;
        lease.ready_async().await?;
        Ok(lease)
    }
}

/// A store, or the URL of one that the lease thread opens.
#[derive(Clone, Debug)]
pub(super) enum Store {
    Open(Arc<dyn LeaseStore>),
    Url(String),
}
