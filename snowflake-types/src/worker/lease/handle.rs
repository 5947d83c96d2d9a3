//! A worker-ID lease held by this process: acquired from a [`LeaseStore`], renewed in the
//! background, released on shutdown, and the fence that every generator on it checks.
//!
//! One thread per lease (`snowflake-lease`) makes every store call: the acquisition, the
//! renewals (every `renew_every`, by default a third of the TTL), and the release. Store calls
//! therefore never run inside the caller's async runtime, and a lease is the same object for
//! tokio services ([`WorkerLeaseBuilder::acquire_async`]) and for blocking programs
//! ([`WorkerLeaseBuilder::acquire`]).

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicI64, AtomicU8, AtomicU64, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::{Arc, Condvar, Mutex, OnceLock, Weak};
use std::task::{Context, Poll, Waker};
use std::time::{Duration, Instant};

use super::store::support::{check_namespace, check_space, ttl_ms};
use super::store::{Grant, LeaseError, LeaseStore};
use crate::clock::{Clock, MonotonicClock};
use crate::error::FenceReason;
use crate::generator::Limit;

/// The default lease TTL: 10 s. A crashed holder's worker ID frees this long after its last
/// renewal.
pub const DEFAULT_TTL: Duration = Duration::from_secs(10);

/// The default fencing margin: 2 s. A holder stops issuing `TTL - margin` after its last
/// successful renewal began, so it has stopped for at least the margin when the store lets
/// another process take the worker ID.
pub const DEFAULT_MARGIN: Duration = Duration::from_secs(2);

/// The default largest difference between the local clock and the store's at acquisition: 1 s.
pub const DEFAULT_CLOCK_TOLERANCE: Duration = Duration::from_secs(1);

/// The namespace of a lease configured by `SNOWFLAKE_WORKER_LEASE` alone.
pub const DEFAULT_NAMESPACE: &str = "typed-snowflake";

/// How far past the clock a generator on a lease issues before it asks the lease again: the
/// released lease records at most this much beyond the last issued tick, so the next holder
/// of the worker ID starts that close to its own clock.
const STEP_MS: i64 = 100;

/// Configures and acquires a [`WorkerLease`]. See [`WorkerLease::builder`].
#[derive(Debug, Clone)]
#[must_use]
pub struct WorkerLeaseBuilder {
    store: Store,
    namespace: String,
    space: u64,
    ttl: Duration,
    margin: Duration,
    renew_every: Option<Duration>,
    tolerance: Duration,
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
    /// How long before the TTL runs out, counted from the start of the last successful
    /// renewal on the local monotonic clock, the holder stops issuing (default
    /// [`DEFAULT_MARGIN`]). It must cover the store's clock drift and one round trip.
    pub fn margin(mut self, margin: Duration) -> Self {
        self.margin = margin;
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

    /// The store, once opened (on the lease thread, before any call).
    fn store(&self) -> &dyn LeaseStore {
        match &self.store {
            Store::Open(store) => store.as_ref(),
            Store::Url(_) => unreachable!("the lease thread opens the store before it calls it"),
        }
    }

    fn renew_interval(&self) -> Duration {
        self.renew_every.unwrap_or(self.ttl / 3)
    }

    fn check(&self) -> Result<(), LeaseError> {
        check_namespace(&self.namespace)?;
        check_space(self.space)?;
        ttl_ms(self.ttl)?;
        let bad = |reason: String| Err(LeaseError::BadSettings { reason });
        if self.margin >= self.ttl {
            return bad(format!("the margin ({:?}) must be shorter than the TTL ({:?})", self.margin, self.ttl));
        }
        let every = self.renew_interval();
        if every.is_zero() || every >= self.ttl - self.margin {
            return bad(format!(
                "renewals every {every:?} must be more frequent than TTL - margin ({:?}), and not 0",
                self.ttl - self.margin
            ));
        }
        Ok(())
    }

    /// Acquires a worker ID, blocking until the store answers: checks the local clock
    /// against the store's, takes the first free worker ID from a random start, and records
    /// the first fence deadline. Renewals then run on the lease's own thread.
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
        self.check()?;
        start(self).wait()
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
        self.check()?;
        start(self).await
    }
}

/// A store, or the URL of one that the lease thread opens.
#[derive(Clone, Debug)]
enum Store {
    Open(Arc<dyn LeaseStore>),
    Url(String),
}

const ACTIVE: u8 = 0;
const LOST: u8 = 1;
const RELEASED: u8 = 2;

/// What the generators and the lease thread share.
#[derive(Debug)]
struct Shared {
    namespace: Arc<str>,
    worker: u64,
    fence: u64,
    ttl: Duration,
    margin: Duration,
    tolerance: Duration,
    /// The high water the previous holders recorded: the generators issue above it.
    floor_ms: Option<i64>,
    store: String,
    /// Nanoseconds after [`anchor`] until which this holder may issue; 0 once fenced for good.
    valid_until_ns: AtomicU64,
    /// The fence deadline the store acknowledged: no timestamp above it is ever issued.
    bound_ms: AtomicI64,
    /// The highest timestamp any generator on the lease may have issued.
    issued_ms: AtomicI64,
    state: AtomicU8,
    /// Orders a generator's check-and-record against the release's final record.
    issuing: Mutex<()>,
    /// The issuing limits of the generators on the lease, dropped to 0 when it is fenced for
    /// good, so they stop at their next tick rather than at the end of their last grant.
    limits: Mutex<Vec<Weak<Limit>>>,
    renewals: AtomicU64,
    late_renewals: AtomicU64,
    failed_renewals: AtomicU64,
}

fn anchor() -> Instant {
    static ANCHOR: OnceLock<Instant> = OnceLock::new();
    *ANCHOR.get_or_init(Instant::now)
}

fn nanos_since_anchor(at: Instant) -> u64 {
    u64::try_from(at.saturating_duration_since(anchor()).as_nanos()).unwrap_or(u64::MAX)
}

fn millis(d: Duration) -> i64 {
    i64::try_from(d.as_millis()).unwrap_or(i64::MAX)
}

enum Command {
    Release(Arc<Oneshot<Result<(), LeaseError>>>),
    Abandon,
    Pause(Duration),
}

/// A worker ID leased from a coordination store, renewed in the background.
///
/// Give it to a [`Generator`](crate::Generator) (`Generator::builder(layout).lease(lease)`) or
/// to the registry (`Registry::builder().worker_lease(lease)`); clones share the lease. The
/// generators check it where they already check their issuing limit (once per tick at most),
/// so it costs the hot path nothing: they stop issuing, with [`GenerateError::Fenced`](crate::GenerateError::Fenced),
/// once `TTL - margin` has passed on the local monotonic clock since the last renewal that
/// succeeded began, and resume when a renewal succeeds. Every renewal records a fence deadline
/// (the local clock plus the TTL) in the store, and no generator on the lease issues a
/// timestamp above the deadline the store has acknowledged; the next holder of the worker ID
/// starts above everything recorded. [`WorkerLease::release`] fences the generators, records
/// the last timestamp they may have issued and frees the worker ID; dropping the last clone
/// does the same without waiting for the store's answer.
///
/// A lease keeps its worker ID for life: once the store says it is lost (it expired, and
/// another holder may have taken it), its generators stay fenced, and a new lease (a new
/// generator, or a restarted process) is the way back.
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

/// Counters of a lease, for operators.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct LeaseStats {
    /// The namespace.
    pub namespace: String,
    /// The leased worker ID.
    pub worker: u64,
    /// The fencing number of the acquisition.
    pub fence: u64,
    /// Renewals that succeeded.
    pub renewals: u64,
    /// Renewals that succeeded after the fence had fallen (the generators resumed then).
    pub late_renewals: u64,
    /// Renewals that failed (the store did not answer or answered with an error).
    pub failed_renewals: u64,
    /// Whether the store said the lease is lost.
    pub lost: bool,
    /// Whether the lease was released.
    pub released: bool,
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
            margin: DEFAULT_MARGIN,
            renew_every: None,
            tolerance: DEFAULT_CLOCK_TOLERANCE,
            clock: Arc::new(MonotonicClock),
        }
    }

    /// The leased worker ID.
    pub fn worker(&self) -> u64 {
        self.shared.worker
    }

    /// The namespace.
    pub fn namespace(&self) -> &str {
        &self.shared.namespace
    }

    /// The store, as [`LeaseStore::describe`] names it (without any password).
    pub fn store(&self) -> &str {
        &self.shared.store
    }

    /// The fencing number of this acquisition: higher than every earlier holder's of this
    /// worker ID.
    pub fn fence(&self) -> u64 {
        self.shared.fence
    }

    /// The highest timestamp (Unix ms) the previous holders of this worker ID recorded; the
    /// generators on this lease issue only above it.
    pub fn previous_high_water_ms(&self) -> Option<i64> {
        self.shared.floor_ms
    }

    /// Whether generators on the lease may issue now.
    pub fn is_valid(&self) -> bool {
        self.shared.state.load(Ordering::Acquire) == ACTIVE
            && nanos_since_anchor(Instant::now()) < self.shared.valid_until_ns.load(Ordering::Acquire)
    }

    /// The lease's counters.
    pub fn stats(&self) -> LeaseStats {
        let s = &self.shared;
        let state = s.state.load(Ordering::Acquire);
        LeaseStats {
            namespace: s.namespace.to_string(),
            worker: s.worker,
            fence: s.fence,
            renewals: s.renewals.load(Ordering::Relaxed),
            late_renewals: s.late_renewals.load(Ordering::Relaxed),
            failed_renewals: s.failed_renewals.load(Ordering::Relaxed),
            lost: state == LOST,
            released: state == RELEASED,
        }
    }

    /// Fences the generators on this lease, records in the store the last timestamp they may
    /// have issued, and frees the worker ID, blocking until the store answers. Clones of the
    /// lease see it released.
    pub fn release(self) -> Result<(), LeaseError> {
        self.send_release().wait()
    }

    /// [`WorkerLease::release`] for async code.
    pub async fn release_async(self) -> Result<(), LeaseError> {
        self.send_release().await
    }

    fn send_release(&self) -> Receive<Result<(), LeaseError>> {
        let (reply, receive) = oneshot();
        let sent = self.handle.commands.send(Command::Release(reply));
        if sent.is_err() {
            // The thread is gone: the lease was lost (or released) already.
            let (reply, receive) = oneshot();
            reply.send(Ok(()));
            return receive;
        }
        receive
    }

    /// Stops renewing without releasing, as a crashed process would: the generators are
    /// fenced at once, and the worker ID frees when the store's TTL runs out. For tests and
    /// simulations of crashes.
    pub fn abandon(self) {
        self.shared.fence_for_good(RELEASED);
        let _ = self.handle.commands.send(Command::Abandon);
    }

    /// How far a new holder may find the previous holder's record ahead of its own clock:
    /// a step past the clock, plus the clock tolerance between nodes. A generator resumed from
    /// such a record waits for its clock rather than treat it as a step back.
    pub(crate) fn resume_window_ms(&self) -> i64 {
        STEP_MS.saturating_add(millis(self.shared.tolerance))
    }

    /// Registers a generator's issuing limit, to be dropped when the lease is fenced for good.
    pub(crate) fn watch(&self, limit: &Arc<Limit>) {
        let mut limits = self.shared.limits.lock().unwrap_or_else(|p| p.into_inner());
        limits.retain(|weak| weak.strong_count() > 0);
        limits.push(Arc::downgrade(limit));
    }

    /// Sends no renewal for `pause`, as a process paused that long (by a debugger, a stalled
    /// VM, a long garbage collection elsewhere in it) would not: the generators fence once
    /// `TTL - margin` has passed since the last renewal, and resume if the renewal after the
    /// pause succeeds. For tests and simulations of pauses.
    pub fn pause_renewals(&self, pause: Duration) {
        let _ = self.handle.commands.send(Command::Pause(pause));
    }

    /// The highest timestamp generators may issue now, recorded as issued: the smaller of
    /// the acknowledged fence deadline and `from_ms` (the later of the clock and the tick
    /// asked for) plus a short step (at least `min_step_ms`) within the validity. An error
    /// once the lease is fenced.
    pub(crate) fn grant_until(&self, from_ms: i64, min_step_ms: i64) -> Result<i64, FenceReason> {
        let s = &self.shared;
        let _issuing = s.issuing.lock().unwrap_or_else(|p| p.into_inner());
        match s.state.load(Ordering::Acquire) {
            LOST => return Err(FenceReason::Lost),
            RELEASED => return Err(FenceReason::Released),
            _ => {}
        }
        let now_ns = nanos_since_anchor(Instant::now());
        let valid_ns = s.valid_until_ns.load(Ordering::Acquire);
        if now_ns >= valid_ns {
            return Err(FenceReason::NotRenewed { ttl: s.ttl, margin: s.margin });
        }
        let left_ms = i64::try_from((valid_ns - now_ns) / 1_000_000).unwrap_or(i64::MAX);
        let bound = s.bound_ms.load(Ordering::Acquire);
        let until = from_ms.saturating_add(left_ms.min(STEP_MS.max(min_step_ms))).min(bound);
        if until < from_ms {
            return Err(FenceReason::ClockAhead { now_ms: from_ms, bound_ms: bound });
        }
        s.issued_ms.fetch_max(until, Ordering::AcqRel);
        Ok(until)
    }
}

impl Shared {
    fn fence_for_good(&self, state: u8) {
        let _issuing = self.issuing.lock().unwrap_or_else(|p| p.into_inner());
        self.valid_until_ns.store(0, Ordering::Release);
        let _ = self.state.compare_exchange(ACTIVE, state, Ordering::AcqRel, Ordering::Acquire);
        for limit in self.limits.lock().unwrap_or_else(|p| p.into_inner()).iter().filter_map(Weak::upgrade) {
            limit.0.store(0, Ordering::Release);
        }
    }

    /// The last timestamp any generator on the lease may have issued, once fenced (at least
    /// the previous holders' record; 0, the Unix epoch, when nothing was ever issued).
    fn final_high_water(&self) -> i64 {
        self.issued_ms.load(Ordering::Acquire).max(self.floor_ms.unwrap_or(0)).max(0)
    }
}

/// Starts the lease thread, which acquires and then renews; the receiver gets the lease.
fn start(builder: WorkerLeaseBuilder) -> Receive<Result<WorkerLease, LeaseError>> {
    let (reply, receive) = oneshot();
    let spawned = std::thread::Builder::new().name("snowflake-lease".into()).spawn({
        let reply = Arc::clone(&reply);
        move || run(builder, reply)
    });
    if let Err(e) = spawned {
        reply.send(Err(LeaseError::Thread { source: Arc::new(e) }));
    }
    receive
}

fn acquire(b: &WorkerLeaseBuilder) -> Result<Grant, LeaseError> {
    let local_before = b.clock.now_ms();
    let store_ms = b.store().now_ms()?;
    let local_after = b.clock.now_ms();
    // The store read its clock somewhere within the round trip: the skew is the distance
    // from its reading to that interval, so a slow round trip is not taken for a skew.
    let tolerance = millis(b.tolerance);
    if store_ms < local_before.saturating_sub(tolerance) || store_ms > local_after.saturating_add(tolerance) {
        let local_ms = if store_ms < local_before { local_before } else { local_after };
        return Err(LeaseError::ClockSkew { store: b.store().describe(), local_ms, store_ms, tolerance: b.tolerance });
    }
    b.store().acquire(&b.namespace, b.space, b.ttl)
}

fn run(mut b: WorkerLeaseBuilder, reply: Arc<Oneshot<Result<WorkerLease, LeaseError>>>) {
    if let Store::Url(url) = &b.store {
        match super::open_store(url) {
            Ok(store) => b.store = Store::Open(store),
            Err(e) => return reply.send(Err(e)),
        }
    }
    let grant = match acquire(&b) {
        Ok(grant) => grant,
        Err(e) => return reply.send(Err(e)),
    };
    let shared = Arc::new(Shared {
        namespace: b.namespace.as_str().into(),
        worker: grant.worker,
        fence: grant.fence,
        ttl: b.ttl,
        margin: b.margin,
        tolerance: b.tolerance,
        floor_ms: grant.previous_high_water_ms,
        store: b.store().describe(),
        valid_until_ns: AtomicU64::new(0),
        bound_ms: AtomicI64::new(i64::MIN),
        issued_ms: AtomicI64::new(i64::MIN),
        state: AtomicU8::new(ACTIVE),
        issuing: Mutex::new(()),
        limits: Mutex::new(Vec::new()),
        renewals: AtomicU64::new(0),
        late_renewals: AtomicU64::new(0),
        failed_renewals: AtomicU64::new(0),
    });
    // The first renewal records the first fence deadline; nothing is issued before it.
    if let Err(e) = renew(&b, &grant, &shared) {
        let _ = b.store().release(&b.namespace, &grant, shared.final_high_water());
        return reply.send(Err(e));
    }
    crate::events::lease_acquired(&shared.namespace, grant.worker, grant.fence, &shared.store);
    let (commands, inbox) = mpsc::channel();
    let lease = WorkerLease { shared: Arc::clone(&shared), handle: Arc::new(Handle { commands }) };
    // Nobody waits any more (an acquisition future was dropped): dropping the lease closes
    // the channel, and the loop below releases it.
    reply.send_or_drop(Ok(lease));
    drop(reply);
    renew_until_done(&b, &grant, &shared, &inbox);
}

/// One renewal: records the new fence deadline and, on success, moves the fence.
fn renew(b: &WorkerLeaseBuilder, grant: &Grant, shared: &Shared) -> Result<(), LeaseError> {
    let started = Instant::now();
    let deadline_ms = b.clock.now_ms().saturating_add(millis(b.ttl));
    let record = deadline_ms.max(shared.issued_ms.load(Ordering::Acquire));
    b.store().renew(&b.namespace, grant, b.ttl, record)?;
    let _issuing = shared.issuing.lock().unwrap_or_else(|p| p.into_inner());
    if shared.state.load(Ordering::Acquire) != ACTIVE {
        return Ok(());
    }
    let was_valid = nanos_since_anchor(started) < shared.valid_until_ns.load(Ordering::Acquire);
    shared.bound_ms.fetch_max(deadline_ms, Ordering::AcqRel);
    shared.valid_until_ns.store(nanos_since_anchor(started + (b.ttl - b.margin)), Ordering::Release);
    let renewals = shared.renewals.fetch_add(1, Ordering::Relaxed);
    if !was_valid && renewals > 0 {
        shared.late_renewals.fetch_add(1, Ordering::Relaxed);
        crate::events::lease_renewed_late(&shared.namespace, grant.worker);
    }
    Ok(())
}

fn renew_until_done(b: &WorkerLeaseBuilder, grant: &Grant, shared: &Shared, inbox: &mpsc::Receiver<Command>) {
    let every = b.renew_interval();
    let retry = (every / 4).max(Duration::from_millis(10));
    let mut next = Instant::now() + every;
    loop {
        let command = match inbox.recv_timeout(next.saturating_duration_since(Instant::now())) {
            Ok(command) => Some(command),
            Err(RecvTimeoutError::Timeout) => None,
            // Every handle is gone: release, without anyone to tell.
            Err(RecvTimeoutError::Disconnected) => {
                let _ = release(b, grant, shared);
                return;
            }
        };
        match command {
            Some(Command::Release(reply)) => return reply.send(release(b, grant, shared)),
            Some(Command::Abandon) => return,
            Some(Command::Pause(pause)) => {
                std::thread::sleep(pause);
                next = Instant::now();
                continue;
            }
            None => {}
        }
        match renew(b, grant, shared) {
            Ok(()) => next = Instant::now() + every,
            Err(LeaseError::Lost { .. }) => {
                shared.fence_for_good(LOST);
                crate::events::lease_lost(&shared.namespace, grant.worker);
                // Stay until released or dropped, so the release is answered.
                while let Ok(command) = inbox.recv() {
                    if let Command::Release(reply) = command {
                        return reply
                            .send(Err(LeaseError::Lost { namespace: b.namespace.clone(), worker: grant.worker }));
                    }
                }
                return;
            }
            Err(error) => {
                shared.failed_renewals.fetch_add(1, Ordering::Relaxed);
                crate::events::lease_renewal_failed(&shared.namespace, grant.worker, &error);
                next = Instant::now() + retry;
            }
        }
    }
}

fn release(b: &WorkerLeaseBuilder, grant: &Grant, shared: &Shared) -> Result<(), LeaseError> {
    if shared.state.load(Ordering::Acquire) == LOST {
        return Err(LeaseError::Lost { namespace: b.namespace.clone(), worker: grant.worker });
    }
    shared.fence_for_good(RELEASED);
    let result = b.store().release(&b.namespace, grant, shared.final_high_water());
    crate::events::lease_released(&shared.namespace, grant.worker, result.is_ok());
    result
}

/// A value handed from the lease thread to one waiter, blocking or async.
struct Oneshot<T> {
    slot: Mutex<(Option<T>, Option<Waker>)>,
    ready: Condvar,
}

fn oneshot<T>() -> (Arc<Oneshot<T>>, Receive<T>) {
    let shared = Arc::new(Oneshot { slot: Mutex::new((None, None)), ready: Condvar::new() });
    (Arc::clone(&shared), Receive(shared))
}

impl<T> Oneshot<T> {
    fn send(&self, value: T) {
        let mut slot = self.slot.lock().unwrap_or_else(|p| p.into_inner());
        slot.0 = Some(value);
        if let Some(waker) = slot.1.take() {
            waker.wake();
        }
        self.ready.notify_all();
    }
}

impl<T> Oneshot<T> {
    /// Sends `value`, and drops it at once if no receiver is left to take it.
    fn send_or_drop(self: &Arc<Self>, value: T) {
        self.send(value);
        if Arc::strong_count(self) == 1 {
            let orphan = self.slot.lock().unwrap_or_else(|p| p.into_inner()).0.take();
            drop(orphan);
        }
    }
}

struct Receive<T>(Arc<Oneshot<T>>);

/// A receiver dropped before the value came (a cancelled future): the value, once sent, is
/// dropped rather than kept alive in the slot.
impl<T> Drop for Receive<T> {
    fn drop(&mut self) {
        let orphan = self.0.slot.lock().unwrap_or_else(|p| p.into_inner()).0.take();
        drop(orphan);
    }
}

impl<T> Receive<T> {
    fn wait(&self) -> T {
        let mut slot = self.0.slot.lock().unwrap_or_else(|p| p.into_inner());
        loop {
            if let Some(value) = slot.0.take() {
                return value;
            }
            slot = self.0.ready.wait(slot).unwrap_or_else(|p| p.into_inner());
        }
    }
}

impl<T> Future for Receive<T> {
    type Output = T;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<T> {
        let mut slot = self.0.slot.lock().unwrap_or_else(|p| p.into_inner());
        match slot.0.take() {
            Some(value) => Poll::Ready(value),
            None => {
                slot.1 = Some(cx.waker().clone());
                Poll::Pending
            }
        }
    }
}
