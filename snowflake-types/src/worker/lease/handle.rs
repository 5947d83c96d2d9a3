//! A worker-ID lease held by this process: acquired from a [`LeaseStore`], renewed in the
//! background, acquired again by itself when it is lost, released on shutdown, and the fence
//! that every generator on it checks.
//!
//! One thread per lease (`snowflake-lease`) makes every store call: the acquisition, the
//! renewals (every `renew_every`, by default a third of the TTL), the acquisitions after a
//! loss, and the release. Store calls therefore never run inside the caller's async runtime,
//! and a lease is the same object for tokio services ([`WorkerLeaseBuilder::acquire_async`])
//! and for blocking programs ([`WorkerLeaseBuilder::acquire`]).
//!
//! This file is the handle: [`WorkerLease`], its builder and status, and the fence every
//! generator on it checks ([`Fence`] for [`WorkerLease`]). The lease thread (`renewal.rs`)
//! renews, acquires again and releases, and holds the proof that a lease is never trusted
//! beyond its fence; `channel.rs` carries its answers to the caller that waits for them.

mod channel;
mod renewal;
mod state_file;
mod status;

pub use status::{LeaseStats, LeaseStatus, LeaseTiming};

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Mutex, MutexGuard, OnceLock, Weak};
use std::time::{Duration, Instant, SystemTime};

use self::channel::{Receive, Reply};
use self::state_file::StateFile;
use super::protocol::holder::{Machine, Now, Settings, Standing};
use super::protocol::{self, Asked};
pub use super::protocol::{DEFAULT_MARGIN, DEFAULT_RESERVATION, DEFAULT_TTL};
use super::store::support::{check_namespace, check_space};
use super::store::{DEFAULT_CLOCK_TOLERANCE, LeaseError, LeaseStore};
use crate::clock::{Clock, MonotonicClock};
use crate::fence::{Fence, FenceReason, GrantView, Limit, Refusal};
use crate::generator::GeneratorBuilder;

/// How long an acquisition keeps trying a store that does not answer before it fails: 30 s by
/// default. A process started during a store outage waits this long (logging every few
/// seconds), so a rolling update stalls with its new pods not ready, rather than crash-looping,
/// through a short outage; past it, the start fails with the store's error.
///
/// ```
/// use std::time::Duration;
/// use typed_snowflake::worker::lease::DEFAULT_STORE_WAIT;
///
/// assert_eq!(DEFAULT_STORE_WAIT, Duration::from_secs(30));
/// Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub const DEFAULT_STORE_WAIT: Duration = Duration::from_secs(30);

/// The namespace of a lease configured by `SNOWFLAKE_WORKER_LEASE` alone.
pub const DEFAULT_NAMESPACE: &str = "typed-snowflake";

/// Configures and acquires a [`WorkerLease`]. See [`WorkerLease::builder`].
#[derive(Debug, Clone)]
#[must_use]
pub struct WorkerLeaseBuilder {
    store: Store,
    namespace: String,
    space: u64,
    ttl: Duration,
    reservation: Option<Duration>,
    margin: Option<Duration>,
    renew_every: Option<Duration>,
    tolerance: Duration,
    wait_for_store: Duration,
    create_namespace: bool,
    state_file: Option<std::path::PathBuf>,
    clock: Arc<dyn Clock>,
}

impl WorkerLeaseBuilder {
    /// The namespace: the name of the ID space shared by every process that generates the
    /// same types (default [`DEFAULT_NAMESPACE`]). 1 to 64 bytes of `A-Z a-z 0-9 _ . : -`.
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
        self.ttl = ttl;
        self
    }
    /// How far ahead of its clock the holder reserves timestamps in the store at each renewal
    /// (`W`, default [`DEFAULT_RESERVATION`] or the TTL where that is longer; never less than
    /// the TTL): how long it keeps
    /// issuing while the store does not answer (`W - margin` after the last renewal that
    /// succeeded began). The TTL still says how soon a crashed holder's worker ID is free; a
    /// holder that takes it starts above the reservation, and an acquisition prefers worker IDs
    /// whose reservation has passed. The cost: a start the store cannot vouch for (the
    /// namespace's first, or the first after the store lost its records) waits about `W`
    /// before its first ID. `reservation(ttl)` gives a lease that stops with its store after
    /// `TTL - margin`, and waits only a TTL on such starts.
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
        self.reservation = Some(reservation);
        self
    }
    /// How long before the reservation runs out, counted from the start of the last successful
    /// renewal on the local monotonic clock, the holder stops issuing (default
    /// [`DEFAULT_MARGIN`], or a fifth of the TTL where that is shorter). It must cover the
    /// store's clock drift and one round trip, and be shorter than the TTL.
    pub fn margin(mut self, margin: Duration) -> Self {
        self.margin = Some(margin);
        self
    }
    /// How often the lease renews (default: a third of the TTL). It must be shorter than
    /// `TTL - margin`, so a renewal that fails once is retried before the fence falls.
    pub fn renew_every(mut self, every: Duration) -> Self {
        self.renew_every = Some(every);
        self
    }
    /// The largest difference between the local clock and the store's that acquisition
    /// accepts (default [`DEFAULT_CLOCK_TOLERANCE`]).
    pub fn clock_tolerance(mut self, tolerance: Duration) -> Self {
        self.tolerance = tolerance;
        self
    }
    /// How long the first acquisition keeps trying a store that does not answer (or cannot
    /// be connected to) before it fails with the store's error (default
    /// [`DEFAULT_STORE_WAIT`]; `Duration::ZERO` fails at the first error). It logs every few
    /// seconds while it waits. Errors that waiting cannot mend (a bad URL, a full worker-ID
    /// space, a skewed clock) fail at once.
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
    /// Declares the namespace new where the store holds nothing of it (no marker, no
    /// record): its first holders then issue at once instead of waiting out `W` (what
    /// [`DEFAULT_RESERVATION`] says a holder of a namespace the store did not know may still
    /// issue). Where the store holds anything of the namespace, this does nothing: the lease
    /// is acquired as usual.
    ///
    /// What it cannot protect against: a store that lost its data while holders of the
    /// namespace still run (a Redis restarted without persistence, a table emptied) holds
    /// nothing of it either, and a start with this set right after such a loss would issue
    /// beside those holders. Set it for a namespace's first deployment (or use `snowflake
    /// leases init`, which declares once), not on a store that may lose its data while the
    /// fleet runs. `docs/lease-rules.md` has the rule.
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
    /// Keeps the lease's grant in a state file at `path` (one per process: on a Kubernetes
    /// `emptyDir` that survives container restarts, or a VM's disk), so that a process
    /// restarted while its store does not answer resumes on its worker ID at once: above
    /// everything the file says it may have issued, below the reservation the store last
    /// acknowledged, and for as long as that reservation lasts (`W - margin` after the last
    /// renewal, less the clock tolerance). When the store answers, the lease goes on, or, if
    /// another holder took the worker ID meanwhile, is lost and acquired again.
    ///
    /// The generators then issue only up to what the file says, which a thread of the lease
    /// rewrites (durably) ahead of them. A second process on the same file is refused (a
    /// lock); a file read elsewhere than where it was written (another path, another host, a
    /// cloned machine, or after a reboot) is not resumed; a file that says a release may have
    /// been written is not resumed. A file put back from a backup of the disk (an older file)
    /// is found out at the first store call, and its grant given up without a fence; until
    /// then the process issues above the file's limit at its clock, so it repeats an ID it
    /// issued after that backup only if its clock reads earlier than it did then. The rule,
    /// once: the guide page `lease_rules` (`docs/lease-rules.md`, rule 11). Without a state
    /// file, a restart acquires afresh.
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
    /// The local clock: the one compared with the store's at acquisition and whose readings
    /// bound the timestamps recorded in the store. Give it the clock of the generators that
    /// use the lease (default: the [`MonotonicClock`], the generators' default too).
    pub fn clock(self, clock: impl Clock) -> Self {
        self.shared_clock(Arc::new(clock))
    }
    /// The local clock, already shared.
    pub fn shared_clock(mut self, clock: Arc<dyn Clock>) -> Self {
        self.clock = clock;
        self
    }

    /// The rules the lease decides with: the settings asked, the defaults applied and
    /// checked by [`protocol::Rules::new`].
    fn rules(&self) -> Result<protocol::Rules, LeaseError> {
        protocol::Rules::new(Asked {
            ttl: self.ttl,
            reservation: self.reservation,
            margin: self.margin,
            renew_every: self.renew_every,
            tolerance: self.tolerance,
        })
    }

    /// The timing the lease would have: the TTL, the reservation `W`, the margin, the renewal
    /// interval and the clock tolerance, each as asked or by its default (the policies of
    /// `docs/lease-rules.md`), or the error that [`start`](Self::start) and
    /// [`acquire`](Self::acquire) would give for settings the rules cannot hold under.
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
        let rules = self.rules()?;
        Ok(LeaseTiming {
            ttl: rules.ttl,
            reservation: rules.reservation,
            margin: rules.margin,
            renew_every: rules.renew_every,
            clock_tolerance: rules.tolerance,
        })
    }

    /// What the holder machine decides with.
    fn settings(&self, rules: protocol::Rules, store: String) -> Settings {
        let ns = |d: Duration| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX);
        Settings {
            namespace: self.namespace.clone(),
            space: self.space,
            rules,
            first_wait_ns: ns(self.wait_for_store),
            acquire_backoff_ns: (50_000_000, 2_000_000_000),
            create_namespace: self.create_namespace,
            wait_for_free: false,
            state_file: self.state_file.is_some(),
            name: super::store::support::holder_name().to_owned(),
            store,
            seed: super::store::support::random_u64(),
        }
    }

    /// The settings checked: the namespace, the space and the rules.
    fn check(&self) -> Result<protocol::Rules, LeaseError> {
        check_namespace(&self.namespace)?;
        check_space(self.space)?;
        self.rules()
    }

    /// Acquires a worker ID, blocking until the store answers (retrying a store that does not
    /// answer for up to [`wait_for_store`](Self::wait_for_store)): checks the local clock
    /// against the store's, prefers a worker ID that issues at once, and records the first
    /// reservation. Where the store cannot vouch for the worker ID's earlier holders (a
    /// namespace it began to know less than the reservation ago, a record it lost), it returns
    /// once any of them has stopped: what each start costs is on the guide page `lease_rules`
    /// (`docs/lease-rules.md`). Renewals then run on the lease's own thread.
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

    /// Starts the lease and returns it at once, before it holds a worker ID: its
    /// [`WorkerLease::status`] says where it stands from the first instant
    /// ([`LeaseStatus::Acquiring`], with the last store error, while the first worker ID is
    /// acquired), and [`WorkerLease::ready`] or [`WorkerLease::ready_async`] wait until it
    /// issues. For a service that answers its health checks while it starts. Settings, a bad
    /// URL and an unusable state file are refused here, at once.
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
        let rules = self.check()?;
        // A URL is parsed at once (a bad one is told, never waited on), and opened by the lease
        // thread at its first call, so that a store that does not answer is waited for as the
        // machine waits for it.
        let (url, store) = match &self.store {
            Store::Url(text) => (Some(super::url::StoreUrl::parse(text)?), None),
            Store::Open(store) => (None, Some(Arc::clone(store))),
        };
        let describe =
            store.as_ref().map_or_else(|| url.as_ref().map(ToString::to_string).unwrap_or_default(), |s| s.describe());
        let host = super::store::support::holder_name().rsplit_once(':').map_or("", |(host, _)| host);
        let (file, saved) = match &self.state_file {
            None => (None, None),
            Some(path) => {
                let (file, saved) = StateFile::open(path, host).map_err(|reason| LeaseError::BadSettings { reason })?;
                (Some(file), saved)
            }
        };
        let now = Now { ns: nanos_since_anchor(Instant::now()), ms: self.clock.now_ms() };
        let settings = self.settings(rules, describe.clone());
        let resumed = saved.and_then(|saved| Machine::resume(settings.clone(), &saved, now));
        if let Some(machine) = &resumed {
            crate::events::lease_resumed_from_file(&self.namespace, machine.worker_and_fence().0);
        }
        let from_file = resumed.is_some();
        let shared = Arc::new(Shared {
            namespace: self.namespace.as_str().into(),
            rules,
            store: describe,
            clock: Arc::clone(&self.clock),
            machine: Mutex::new(resumed.unwrap_or_else(|| Machine::new(settings, now))),
            limits: Mutex::new(Vec::new()),
            longest_tick_ms: AtomicU64::new(0),
            renewals: AtomicU64::new(0),
            late_renewals: AtomicU64::new(0),
            failed_renewals: AtomicU64::new(0),
            recoveries: AtomicU64::new(0),
            first: Mutex::default(),
        });
        let (commands, inbox) = mpsc::channel();
        let store = renewal::Opened { url, store, file, resumed: from_file };
        renewal::spawn(Arc::clone(&shared), store, self.wait_for_store, inbox)?;
        Ok(WorkerLease { shared, handle: Arc::new(Handle { commands }) })
    }

    /// [`WorkerLeaseBuilder::acquire`] for async code: the store calls run on the lease's
    /// thread, and the caller awaits their outcome without blocking its executor.
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
enum Store {
    Open(Arc<dyn LeaseStore>),
    Url(String),
}

/// What the generators and the lease thread share: the holder machine, under one lock (taken
/// by a generator at most once per issuing step, about every 100 ms), and what is counted and
/// told about it.
#[derive(Debug)]
struct Shared {
    namespace: Arc<str>,
    /// The TTL, reservation, margin and tolerance the machine decides with.
    rules: protocol::Rules,
    store: String,
    clock: Arc<dyn Clock>,
    /// The holder (`protocol/holder.rs`): every decision on the lease is taken there.
    machine: Mutex<Machine>,
    /// The issuing limits of the generators on the lease, dropped to 0 when it is released or
    /// rolled back, so they stop at their next tick rather than at the end of their last grant.
    limits: Mutex<Vec<Weak<Limit>>>,
    /// The longest tick of the generators on the lease, in ms: a generator whose limit fell
    /// may still finish the tick it is in.
    longest_tick_ms: AtomicU64,
    renewals: AtomicU64,
    late_renewals: AtomicU64,
    failed_renewals: AtomicU64,
    recoveries: AtomicU64,
    /// The first acquisition's outcome, once known, and who waits for it
    /// ([`WorkerLease::ready`]).
    first: Mutex<FirstAnswer>,
}

/// The first acquisition's outcome, and its callers.
#[derive(Default)]
struct FirstAnswer {
    outcome: Option<Result<(), LeaseError>>,
    waiting: Vec<Reply<()>>,
}

impl std::fmt::Debug for FirstAnswer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FirstAnswer").field("outcome", &self.outcome).field("waiting", &self.waiting.len()).finish()
    }
}

fn anchor() -> Instant {
    static ANCHOR: OnceLock<Instant> = OnceLock::new();
    *ANCHOR.get_or_init(Instant::now)
}

fn nanos_since_anchor(at: Instant) -> u64 {
    u64::try_from(at.saturating_duration_since(anchor()).as_nanos()).unwrap_or(u64::MAX)
}

enum Command {
    Release(Reply<()>),
    Abandon,
    Pause(Duration),
}

/// A worker ID leased from a coordination store, renewed in the background, and acquired
/// again by itself whenever it is lost.
///
/// Give it to a [`Generator`](crate::Generator) (`Generator::builder(layout).lease(lease)`) or
/// to the registry (`Registry::builder().worker_lease(lease)`); clones share the lease. The
/// generators check it where they already check their issuing limit (once per tick at most),
/// so it costs the hot path nothing. Each renewal records in the store, by compare-and-set,
/// a reservation ahead of the clock; the generators issue only within what the store
/// acknowledged, and stop with [`GenerateError::Fenced`](crate::GenerateError::Fenced) when
/// the store has not answered for `W - margin`. The next holder of the worker ID starts above
/// everything recorded, or, where the store cannot vouch for the record, above everything
/// any holder may have reserved. The rules, once: the guide page `lease_rules`
/// (`docs/lease-rules.md`).
///
/// When the store says the lease is lost (its record deleted or evicted, or taken by another
/// holder after it expired), the generators go on within what they reserved while the lease
/// acquires a worker ID again, with backoff and jitter, trying the one it held first; they
/// move to the new grant once it may issue. A record rolled back under the lease (a restore,
/// a failover that lost writes) stops them at once. No process restart is needed.
/// [`WorkerLease::status`] says where it stands.
///
/// [`WorkerLease::release`] fences the generators, records the last timestamp they may have
/// issued and frees the worker ID; dropping the last clone does the same without waiting for
/// the store's answer.
#[derive(Clone, Debug)]
pub struct WorkerLease {
    shared: Arc<Shared>,
    handle: Arc<Handle>,
}

/// The last clone's drop closes the command channel, which tells the lease thread to release.
#[derive(Debug)]
struct Handle {
    commands: mpsc::Sender<Command>,
}

impl GeneratorBuilder {
    /// Issue under a worker-ID lease: the lease decides the worker ID (any `worker` set
    /// here is ignored), the generator starts above what the previous holders of that
    /// worker ID recorded, and it stops issuing, with [`GenerateError::Fenced`](crate::GenerateError::Fenced), whenever
    /// the lease is not renewed in time. Several generators (one per ID type) may share one
    /// lease.
    ///
    /// ```no_run
    /// use typed_snowflake::worker::lease::{RedisLeaseStore, WorkerLease};
    /// use typed_snowflake::{Generator, Layout};
    ///
    /// let lease = WorkerLease::builder(RedisLeaseStore::open("redis://127.0.0.1:6379")?)
    ///     .namespace("shop")
    ///     .worker_bits(10)
    ///     .acquire()?;
    /// let generator = Generator::builder(Layout::new(41, 10, 12, 1_288_834_974_657)?).lease(lease).build()?;
    /// let id = generator.next_raw()?;
    /// Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn lease(self, lease: WorkerLease) -> Self {
        self.fenced_by(Arc::new(lease))
    }
}

impl WorkerLease {
    /// A builder for a lease from `store`.
    pub fn builder(store: impl LeaseStore) -> WorkerLeaseBuilder {
        WorkerLease::builder_shared(Arc::new(store))
    }

    /// A builder for a lease from a store already shared.
    pub fn builder_shared(store: Arc<dyn LeaseStore>) -> WorkerLeaseBuilder {
        WorkerLease::builder_with(Store::Open(store))
    }

    /// A builder for a lease from the store a URL names (see [`open_store`](super::open_store)),
    /// opened on the lease's own thread: unlike the stores' constructors (the SQL store
    /// connects, and a blocking call inside an async runtime panics), this may be called
    /// from async code.
    ///
    /// ```no_run
    /// use typed_snowflake::worker::lease::WorkerLease;
    ///
    /// # async fn start() -> Result<(), Box<dyn std::error::Error>> {
    /// let lease = WorkerLease::from_url("postgres://app@db/shop").namespace("shop").acquire_async().await?;
    /// # Ok(()) }
    /// ```
    pub fn from_url(url: impl Into<String>) -> WorkerLeaseBuilder {
        WorkerLease::builder_with(Store::Url(url.into()))
    }

    fn builder_with(store: Store) -> WorkerLeaseBuilder {
        WorkerLeaseBuilder {
            store,
            namespace: DEFAULT_NAMESPACE.to_owned(),
            space: 32,
            ttl: DEFAULT_TTL,
            reservation: None,
            margin: None,
            renew_every: None,
            tolerance: DEFAULT_CLOCK_TOLERANCE,
            wait_for_store: DEFAULT_STORE_WAIT,
            create_namespace: false,
            state_file: None,
            clock: Arc::new(MonotonicClock),
        }
    }

    /// The leased worker ID: the current grant's, or, while the lease is being acquired
    /// again, the last one's.
    pub fn worker(&self) -> u64 {
        self.shared.lock().worker_and_fence().0
    }

    /// The namespace.
    pub fn namespace(&self) -> &str {
        &self.shared.namespace
    }

    /// The store, as [`LeaseStore::describe`] names it (without any password).
    pub fn store(&self) -> &str {
        &self.shared.store
    }

    /// The fencing number of the current grant: higher than every earlier holder's of this
    /// worker ID, and than every earlier grant of this lease.
    pub fn fence(&self) -> u64 {
        self.shared.lock().worker_and_fence().1
    }

    /// The highest timestamp (Unix ms) earlier holders of the worker ID may have issued: what
    /// they recorded, or, when the store had no record, the floor this lease waited for. The
    /// generators on this lease issue only above it.
    pub fn previous_high_water_ms(&self) -> Option<i64> {
        self.shared.lock().floor_ms()
    }

    /// Waits until the lease's first worker ID issues ([`WorkerLeaseBuilder::start`]), or
    /// its first acquisition fails for good; at once after that.
    ///
    /// ```
    /// use typed_snowflake::worker::lease::{MemoryLeaseStore, WorkerLease};
    ///
    /// let lease = WorkerLease::builder(MemoryLeaseStore::new()).create_namespace().start()?;
    /// lease.ready()?;
    /// lease.ready()?; // answered at once from then on
    /// # lease.release()?;
    /// Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn ready(&self) -> Result<(), LeaseError> {
        self.shared.wait_first().wait()
    }

    /// [`WorkerLease::ready`] for async code, without blocking the executor.
    ///
    /// ```
    /// use typed_snowflake::worker::lease::{MemoryLeaseStore, WorkerLease};
    ///
    /// # async fn run() -> Result<(), Box<dyn std::error::Error>> {
    /// let lease = WorkerLease::builder(MemoryLeaseStore::new()).create_namespace().start()?;
    /// lease.ready_async().await?;
    /// assert!(lease.status().is_issuing());
    /// # Ok(()) }
    /// ```
    pub async fn ready_async(&self) -> Result<(), LeaseError> {
        self.shared.wait_first().await
    }

    /// Whether generators on the lease may issue now.
    pub fn is_valid(&self) -> bool {
        matches!(self.status(), LeaseStatus::Issuing { .. })
    }

    /// Where the lease stands: issuing, fenced (why, since when), recovering, or released.
    /// For readiness probes: ready while [`LeaseStatus::Issuing`].
    pub fn status(&self) -> LeaseStatus {
        let s = &self.shared;
        let now = s.now();
        let machine = s.lock();
        let since = s.system_time(machine.since_ms());
        let error = machine.error().cloned();
        match machine.standing(now) {
            Standing::Acquiring => LeaseStatus::Acquiring { since, error },
            Standing::Failed(error) => LeaseStatus::Failed { error },
            Standing::Released => LeaseStatus::Released,
            Standing::Recovering { previous_worker } => LeaseStatus::Recovering { previous_worker, since, error },
            Standing::Fenced { worker, reason } => {
                let error = if matches!(reason, FenceReason::WaitingOut { .. }) { None } else { error };
                LeaseStatus::Fenced { worker, reason, since, error }
            }
            Standing::Issuing { worker, fence, issuing_for_ns, store_answering } => LeaseStatus::Issuing {
                worker,
                fence,
                since,
                issuing_for: Duration::from_nanos(issuing_for_ns),
                store_answering,
            },
        }
    }

    /// The lease's counters.
    pub fn stats(&self) -> LeaseStats {
        let s = &self.shared;
        let now = s.now();
        let machine = s.lock();
        let (worker, fence) = machine.worker_and_fence();
        let standing = machine.standing(now);
        LeaseStats {
            namespace: s.namespace.to_string(),
            worker,
            fence,
            renewals: s.renewals.load(Ordering::Relaxed),
            late_renewals: s.late_renewals.load(Ordering::Relaxed),
            failed_renewals: s.failed_renewals.load(Ordering::Relaxed),
            recoveries: s.recoveries.load(Ordering::Relaxed),
            lost: matches!(
                standing,
                Standing::Recovering { .. } | Standing::Fenced { reason: FenceReason::RolledBack, .. }
            ),
            released: standing == Standing::Released,
        }
    }

    /// Fences the generators on this lease, records in the store the last timestamp they may
    /// have issued, and frees the worker ID, blocking until the store answers. Clones of the
    /// lease see it released.
    ///
    /// Errors: [`LeaseError::Lost`] when the store no longer holds this grant (it expired
    /// during an outage, or the store lost it) — nothing was freed, and none is needed;
    /// [`LeaseError::Store`] or [`LeaseError::Timeout`] when the store did not answer — the
    /// worker ID frees when the TTL runs out. A lease that is being acquired again holds
    /// nothing, and its release is `Ok`. The generators are fenced in every case.
    pub fn release(self) -> Result<(), LeaseError> {
        self.send_release().wait()
    }

    /// [`WorkerLease::release`] for async code.
    pub async fn release_async(self) -> Result<(), LeaseError> {
        self.send_release().await
    }

    fn send_release(&self) -> Receive<()> {
        let (reply, receive) = channel::channel();
        // Released already (by a clone, or an earlier call): nothing is left to release, and the
        // thread may be gone before it reads a command sent now.
        let released = self.shared.lock().is_done();
        let sent = if released { Err(()) } else { self.handle.commands.send(Command::Release(reply)).map_err(drop) };
        if sent.is_err() {
            // The thread is gone: the lease was released already.
            let (reply, receive) = channel::channel();
            channel::answer(reply, Ok(()));
            return receive;
        }
        receive
    }

    /// Stops renewing without releasing, as a crashed process would: the generators are
    /// fenced at once, and the worker ID frees when the store's TTL runs out. For tests and
    /// simulations of crashes.
    pub fn abandon(self) {
        self.shared.lock().abandon();
        self.shared.stop_limits();
        let _ = self.handle.commands.send(Command::Abandon);
    }

    /// Sends no renewal for `pause`, as a process paused that long (by a debugger, a stalled
    /// VM, a long garbage collection elsewhere in it) would not: the generators fence once
    /// `W - margin` has passed since the last renewal, and resume if the renewal after the
    /// pause succeeds. For tests and simulations of pauses.
    pub fn pause_renewals(&self, pause: Duration) {
        let _ = self.handle.commands.send(Command::Pause(pause));
    }
}

impl Fence for WorkerLease {
    fn namespace(&self) -> &str {
        &self.shared.namespace
    }

    /// How far a new holder may find the previous holder's record ahead of its own clock:
    /// a step past the clock, plus the clock tolerance between nodes. A generator resumed from
    /// such a record waits for its clock rather than treat it as a step back.
    fn resume_window_ms(&self) -> i64 {
        self.shared.rules.resume_window_ms()
    }

    /// The grant generators start under.
    fn view(&self) -> GrantView {
        let now = self.shared.now();
        self.shared.lock().view(now)
    }

    /// Whether the lease still holds grant `epoch` (it may be fenced for want of a renewal).
    fn holds(&self, epoch: u64) -> bool {
        self.shared.lock().holds(epoch)
    }

    /// Registers a generator's issuing limit, to be dropped when the lease is lost or released,
    /// and the length of its tick.
    fn watch(&self, limit: &Arc<Limit>, tick_ms: i64) {
        self.shared.longest_tick_ms.fetch_max(tick_ms.unsigned_abs(), Ordering::Relaxed);
        let mut limits = self.shared.limits.lock().unwrap_or_else(|p| p.into_inner());
        limits.retain(|weak| weak.strong_count() > 0);
        limits.push(Arc::downgrade(limit));
    }

    /// The highest timestamp a generator that issues under grant `epoch` may issue now,
    /// recorded as issued: the smaller of the acknowledged fence deadline and `from_ms` (the
    /// later of the clock and the tick asked for) plus a short step (at least `min_step_ms`)
    /// within the validity. Refused while the lease may not issue, and when the lease holds
    /// another grant than `epoch` (the generator switches to it first).
    fn grant_until(&self, from_ms: i64, min_step_ms: i64, epoch: u64) -> Result<i64, Refusal> {
        let s = &self.shared;
        let mut machine = s.lock();
        // Read once the lock is held, so that a wait for it never makes the validity look
        // longer than it is.
        let now = s.now();
        machine.grant_until(now, from_ms, min_step_ms, epoch)
    }
}

impl Shared {
    /// Answers everyone waiting for the first acquisition, and everyone who asks from now on.
    fn first_answer(&self, outcome: Result<(), LeaseError>) {
        let mut first = self.first.lock().unwrap_or_else(|p| p.into_inner());
        if first.outcome.is_some() {
            return;
        }
        for reply in first.waiting.drain(..) {
            channel::answer(reply, outcome.clone());
        }
        first.outcome = Some(outcome);
    }

    /// Where the first acquisition's outcome comes.
    fn wait_first(&self) -> Receive<()> {
        let (reply, receive) = channel::channel();
        let mut first = self.first.lock().unwrap_or_else(|p| p.into_inner());
        match &first.outcome {
            Some(outcome) => channel::answer(reply, outcome.clone()),
            None => first.waiting.push(reply),
        }
        receive
    }

    fn lock(&self) -> MutexGuard<'_, Machine> {
        self.machine.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The two clocks the machine reads, now.
    fn now(&self) -> Now {
        Now { ns: nanos_since_anchor(Instant::now()), ms: self.clock.now_ms() }
    }

    /// A reading of the lease's clock (Unix ms) as a `SystemTime`.
    fn system_time(&self, ms: i64) -> SystemTime {
        let ago_ms = self.clock.now_ms().saturating_sub(ms).max(0).unsigned_abs();
        SystemTime::now().checked_sub(Duration::from_millis(ago_ms)).unwrap_or(SystemTime::UNIX_EPOCH)
    }

    /// Drops every generator's issuing limit to 0: they stop at their next tick.
    fn stop_limits(&self) {
        for limit in self.limits.lock().unwrap_or_else(|p| p.into_inner()).iter().filter_map(Weak::upgrade) {
            limit.0.store(0, Ordering::Release);
        }
    }
}
