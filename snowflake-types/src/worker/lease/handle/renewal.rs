//! The lease thread (`snowflake-lease`): the first acquisition, the renewals, the fence
//! falling when they fail, the acquisitions after a loss, and the release.
//!
//! # Why a store that forgot is not trusted
//!
//! A holder issues only timestamps up to the fence deadline the store acknowledged (its
//! clock at the start of its last renewal plus the TTL), and stops issuing `TTL - margin`
//! after that renewal began. So at any instant, everything a holder of a worker ID may ever
//! issue lies at or below the store's clock plus the TTL, plus the clock tolerance between
//! the holder and the store (the clocks are compared at every acquisition).
//!
//! A grant that carries a high water (`previous_high_water_ms`) starts above it: every
//! holder records its deadline before its first ID and at every renewal, and its final
//! issued timestamp when it releases. A grant without one (the store has no record of the
//! worker ID, or its fencing counter had to start again: a new namespace, or a Redis
//! restarted empty, a flush, a table emptied) gets the floor `store clock + TTL + tolerance`
//! instead: above anything an earlier holder, who may not know yet that its record
//! vanished, can still issue. Its generators issue nothing until the local clock reaches
//! that floor, so the first use of a worker ID in a namespace, and the first acquisition
//! after a store lost its data, wait about one TTL; an ordinary hand-over (the record is
//! there) does not wait. The floor is recorded at the first renewal, so a crash during the
//! wait hands it on.
//!
//! Where each step is kept: [`renew`] moves the deadline and the validity only once the store
//! acknowledged them, and records the high water; `protocol::floor_of` gives a grant its floor;
//! [`release`] records the last timestamp issued; the fence in `handle.rs`
//! (`Fence::grant_until`) never lets a generator issue past the deadline or the validity.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime};

use super::channel::{Receive, Reply, answer, channel};
use super::{Command, Handle, Inner, Shared, Store, WorkerLease, WorkerLeaseBuilder, anchor, nanos_since_anchor};
use crate::worker::lease::protocol::{self, Lease, Phase, Renewed};
use crate::worker::lease::store::support::random_u64;
use crate::worker::lease::store::{Claim, Grant, LeaseError};

/// How often a wait for the store, or a recovery, says so in the logs.
const LOG_EVERY: Duration = Duration::from_secs(5);

/// Starts the lease thread, which acquires and then renews; the receiver gets the lease.
pub(super) fn start(builder: WorkerLeaseBuilder) -> Receive<WorkerLease> {
    let (reply, receive) = channel();
    match std::thread::Builder::new().name("snowflake-lease".into()).spawn(move || run(builder, reply)) {
        Ok(_) => receive,
        Err(e) => {
            // The closure, and the reply in it, were dropped: answer on a new channel.
            let (reply, receive) = channel();
            answer(reply, Err(LeaseError::Thread { source: Arc::new(e) }));
            receive
        }
    }
}

/// Errors that waiting may mend: the store did not answer, or answered with an error of its
/// own. A bad URL, bad settings, a skewed clock or a full space fail at once.
fn worth_waiting(error: &LeaseError) -> bool {
    matches!(error, LeaseError::Store { .. } | LeaseError::Timeout { .. })
}

/// Doubling delays between `min` and `max`, each with ±20 % jitter, so that a fleet that lost
/// its store does not return to it in step.
struct Backoff {
    min: Duration,
    max: Duration,
    next: Duration,
}

impl Backoff {
    fn new(min: Duration, max: Duration) -> Self {
        Backoff { min, max: max.max(min), next: min }
    }

    fn reset(&mut self) {
        self.next = self.min;
    }

    fn delay(&mut self) -> Duration {
        let base = self.next;
        self.next = (self.next * 2).min(self.max);
        // 0.8 to 1.2 times the base.
        let jitter = 0.8 + 0.4 * (random_u64() % 1_000) as f64 / 1_000.0;
        base.mul_f64(jitter)
    }
}

/// Takes a grant: checks the local clock against the store's, then claims a worker ID.
fn acquire(b: &WorkerLeaseBuilder, prefer: Option<u64>, fence_above: u64) -> Result<Grant, LeaseError> {
    let local_before = b.clock.now_ms();
    let store_ms = b.store().now_ms()?;
    let local_after = b.clock.now_ms();
    if let Err(local_ms) = protocol::check_skew(local_before, store_ms, local_after, b.tolerance) {
        return Err(LeaseError::ClockSkew { store: b.store().describe(), local_ms, store_ms, tolerance: b.tolerance });
    }
    let mut claim = Claim::new(&b.namespace, b.space, b.ttl).fence_above(fence_above);
    if let Some(worker) = prefer.or_else(|| ready_worker(b, store_ms)) {
        claim = claim.prefer(worker);
    }
    b.store().acquire(&claim)
}

/// The free worker ID to try first when none was held before: one whose record says its last
/// holder's reservation has passed (released, or expired long enough ago), chosen at random
/// among those, so that processes starting together spread over them. Such a grant issues at
/// once; one whose reservation is still running waits for it. `None` when the store lists no
/// such worker ID (or cannot list): the store then picks a free one, preferring none (a
/// never-used worker ID issues at once in a namespace the store has long known, see
/// [`Grant::namespace_since_ms`]).
fn ready_worker(b: &WorkerLeaseBuilder, store_ms: i64) -> Option<u64> {
    let records = b.store().list(&b.namespace).ok()?;
    let passed: Vec<u64> = records
        .iter()
        .filter(|r| !r.leased && r.worker < b.space)
        .filter(|r| r.high_water_ms.is_some_and(|hw| hw <= store_ms.saturating_add(protocol::STEP_MS)))
        .map(|r| r.worker)
        .collect();
    (!passed.is_empty()).then(|| passed[(random_u64() % passed.len() as u64) as usize])
}

/// Retries `attempt` while it fails with an error worth waiting for, until `deadline`,
/// logging every few seconds.
fn patiently<T>(
    b: &WorkerLeaseBuilder,
    what: &str,
    deadline: Instant,
    mut attempt: impl FnMut() -> Result<T, LeaseError>,
) -> Result<T, LeaseError> {
    let began = Instant::now();
    let mut backoff = Backoff::new(Duration::from_millis(50), Duration::from_secs(2));
    let mut logged: Option<Instant> = None;
    loop {
        match attempt() {
            Ok(value) => {
                if logged.is_some() {
                    crate::events::lease_store_back(&b.namespace, what, began.elapsed());
                }
                return Ok(value);
            }
            Err(error) if worth_waiting(&error) && Instant::now() < deadline => {
                if logged.is_none_or(|at| at.elapsed() >= LOG_EVERY) {
                    logged = Some(Instant::now());
                    crate::events::lease_waiting_for_store(
                        &b.namespace,
                        what,
                        &error,
                        began.elapsed(),
                        deadline.saturating_duration_since(began),
                    );
                }
                std::thread::sleep(backoff.delay().min(deadline.saturating_duration_since(Instant::now())));
            }
            Err(error) => return Err(error),
        }
    }
}

fn run(mut b: WorkerLeaseBuilder, reply: Reply<WorkerLease>) {
    let deadline = Instant::now() + b.wait_for_store;
    if let Store::Url(url) = &b.store {
        // Parsed once: a bad URL is told at once, never waited on.
        let url = match crate::worker::lease::url::StoreUrl::parse(url) {
            Ok(url) => url,
            Err(e) => return answer(reply, Err(e)),
        };
        match patiently(&b, "connecting", deadline, || url.open()) {
            Ok(store) => b.store = Store::Open(store),
            Err(e) => return answer(reply, Err(e)),
        }
    }
    let grant = match patiently(&b, "acquiring a worker ID", deadline, || acquire(&b, None, 0)) {
        Ok(grant) => grant,
        Err(e) => return answer(reply, Err(e)),
    };
    let rules = b.rules();
    let shared = Arc::new(Shared {
        namespace: b.namespace.as_str().into(),
        rules,
        store: b.store().describe(),
        clock: Arc::clone(&b.clock),
        inner: Mutex::new(Inner { lease: Lease::granted(grant, &rules), since: SystemTime::now(), error: None }),
        limits: Mutex::new(Vec::new()),
        longest_tick_ms: AtomicU64::new(0),
        renewals: AtomicU64::new(0),
        late_renewals: AtomicU64::new(0),
        failed_renewals: AtomicU64::new(0),
        recoveries: AtomicU64::new(0),
    });
    // The first renewal records the first fence deadline (and the floor); nothing is issued
    // before it.
    if let Err(e) = renew(&b, &shared) {
        let inner = shared.lock();
        let _ = b.store().release(&b.namespace, &inner.grant, inner.high_water());
        return answer(reply, Err(e));
    }
    let (commands, inbox) = mpsc::channel();
    let lease = WorkerLease { shared: Arc::clone(&shared), handle: Arc::new(Handle { commands }) };
    announce_grant(&b, &shared);
    let wait = deadline.saturating_duration_since(Instant::now());
    Holder { b: &b, shared: &shared, inbox: &inbox, pending: Some((reply, lease)), wait }.run();
}

/// Says a grant was taken, and, when it has no record, how long it waits.
fn announce_grant(b: &WorkerLeaseBuilder, shared: &Shared) {
    let inner = shared.lock();
    crate::events::lease_acquired(&shared.namespace, inner.grant.worker, inner.grant.fence, &shared.store);
    if inner.grant.previous_high_water_ms.is_none() {
        let wait = Duration::from_millis(u64::try_from(inner.ready_ms - b.clock.now_ms()).unwrap_or(0));
        crate::events::lease_waiting_out(&shared.namespace, inner.grant.worker, inner.floor_ms.unwrap_or(0), wait);
    }
}

/// The lease thread after the first grant: renews, notices the fence falling, acquires again
/// after a loss, answers the first acquisition once the lease may issue, and releases.
struct Holder<'a> {
    b: &'a WorkerLeaseBuilder,
    shared: &'a Shared,
    inbox: &'a mpsc::Receiver<Command>,
    /// The first acquisition's answer, sent once its generators may issue.
    pending: Option<(Reply<WorkerLease>, WorkerLease)>,
    /// How long the first acquisition may wait for a store that went away.
    wait: Duration,
}

impl Holder<'_> {
    fn run(mut self) {
        let b = self.b;
        let every = b.renew_interval();
        let mut backoff = Backoff::new((every / 4).max(Duration::from_millis(10)), every);
        let mut next = Instant::now() + every;
        // Whether the outage in progress (fenced or recovering) was announced, and since when.
        let mut outage: Option<Instant> = None;
        // Since when every store call failed (none since succeeded).
        let mut trouble: Option<Instant> = None;
        let mut logged = Instant::now();
        loop {
            self.answer_if_ready();
            self.gauges();
            // The first acquisition waits for a store that went away no longer than it would
            // have waited for one that never answered.
            if self.pending.is_some() && trouble.is_some_and(|since| since.elapsed() >= self.wait) {
                let error = self.shared.lock().error.clone();
                let worker = self.worker();
                self.refuse_pending(error.unwrap_or(LeaseError::Lost { namespace: b.namespace.clone(), worker }));
                let _ = release(b, self.shared);
                return;
            }
            if let Some(began) = outage
                && self.issuing()
            {
                outage = None;
                crate::events::lease_resumed(&self.shared.namespace, self.worker(), began.elapsed());
            }
            let wake = self.wake(next, outage.is_some());
            let command = match self.inbox.recv_timeout(wake.saturating_duration_since(Instant::now())) {
                Ok(command) => Some(command),
                Err(RecvTimeoutError::Timeout) => None,
                // Every handle is gone: release, without anyone to tell.
                Err(RecvTimeoutError::Disconnected) => {
                    let _ = release(b, self.shared);
                    return;
                }
            };
            match command {
                Some(Command::Release(reply)) => return answer(reply, release(b, self.shared)),
                Some(Command::Abandon) => return,
                Some(Command::Pause(pause)) => {
                    std::thread::sleep(pause);
                    next = Instant::now();
                    continue;
                }
                None => {}
            }
            let phase = self.shared.lock().phase;
            if outage.is_none() && self.fenced() {
                outage = Some(Instant::now());
                let error = self.shared.lock().error.clone();
                crate::events::lease_fenced(
                    &self.shared.namespace,
                    self.worker(),
                    error.as_ref().map(|e| e as &dyn std::error::Error),
                );
            }
            if Instant::now() < next {
                continue;
            }
            match phase {
                Phase::Released => return,
                Phase::Holding => match renew(b, self.shared) {
                    Ok(()) => {
                        trouble = None;
                        backoff.reset();
                        next = Instant::now() + every;
                        self.shared.lock().error = None;
                    }
                    Err(LeaseError::Lost { .. }) => {
                        self.shared.stop(Phase::Recovering);
                        crate::events::lease_lost(&self.shared.namespace, self.worker());
                        outage.get_or_insert_with(Instant::now);
                        backoff.reset();
                        next = Instant::now();
                        logged = Instant::now();
                    }
                    Err(error) => {
                        trouble.get_or_insert_with(Instant::now);
                        self.shared.failed_renewals.fetch_add(1, Ordering::Relaxed);
                        crate::events::lease_renewal_failed(&self.shared.namespace, self.worker(), &error);
                        self.shared.lock().error = Some(error);
                        next = Instant::now() + backoff.delay();
                    }
                },
                Phase::Recovering => {
                    trouble.get_or_insert_with(Instant::now);
                    match self.reacquire() {
                        Ok(()) => {
                            trouble = None;
                            backoff.reset();
                            next = Instant::now() + every;
                            self.shared.recoveries.fetch_add(1, Ordering::Relaxed);
                            announce_grant(b, self.shared);
                        }
                        Err(error) => {
                            if logged.elapsed() >= LOG_EVERY {
                                logged = Instant::now();
                                crate::events::lease_recovering(&self.shared.namespace, self.worker(), &error);
                            }
                            self.shared.lock().error = Some(error);
                            next = Instant::now() + backoff.delay();
                        }
                    }
                }
            }
        }
    }

    fn worker(&self) -> u64 {
        self.shared.lock().grant.worker
    }

    /// The lease's gauges: its worker ID, how long it may still issue, whether the store answers.
    fn gauges(&self) {
        let now_ns = nanos_since_anchor(Instant::now());
        let (worker, left, up) = {
            let inner = self.shared.lock();
            let left = if inner.phase == Phase::Holding { inner.valid_until_ns.saturating_sub(now_ns) } else { 0 };
            (inner.grant.worker, Duration::from_nanos(left), inner.error.is_none())
        };
        crate::events::lease_gauges(&self.shared.namespace, worker, left, up);
    }

    /// Whether generators may issue now.
    fn issuing(&self) -> bool {
        let now_ns = nanos_since_anchor(Instant::now());
        self.shared.lock().issuing(now_ns, self.shared.clock.now_ms())
    }

    /// Whether generators may not issue now for want of the store: a renewal overdue, or the
    /// lease lost.
    fn fenced(&self) -> bool {
        self.shared.lock().fenced(nanos_since_anchor(Instant::now()))
    }

    /// When to wake: for the next renewal or attempt, when the fence falls (to say so), and,
    /// while the first acquisition or an outage waits, when the lease may issue.
    fn wake(&self, next: Instant, waiting: bool) -> Instant {
        let inner = self.shared.lock();
        let mut wake = next;
        if inner.phase == Phase::Holding {
            let until = anchor() + Duration::from_nanos(inner.valid_until_ns);
            if until > Instant::now() {
                wake = wake.min(until + Duration::from_millis(1));
            }
            let wait = inner.ready_ms.saturating_sub(self.shared.clock.now_ms());
            if (self.pending.is_some() || waiting) && wait > 0 {
                wake = wake.min(Instant::now() + Duration::from_millis(wait.unsigned_abs()));
            }
        }
        wake
    }

    fn answer_if_ready(&mut self) {
        if self.pending.is_some()
            && self.issuing()
            && let Some((reply, lease)) = self.pending.take()
        {
            // Dropped at once if the caller gave up waiting: with its last handle gone,
            // the thread releases the lease.
            answer(reply, Ok(lease));
        }
    }

    fn refuse_pending(&mut self, error: LeaseError) {
        if let Some((reply, _lease)) = self.pending.take() {
            answer(reply, Err(error));
        }
    }

    /// One attempt to acquire a worker ID again, the one held before first, with a fence above
    /// the last one; on success the grant is installed and its first deadline recorded.
    fn reacquire(&self) -> Result<(), LeaseError> {
        let (previous, fence) = self.shared.lock().last_fence();
        let grant = acquire(self.b, Some(previous), fence)?;
        {
            let mut inner = self.shared.lock();
            if inner.phase != Phase::Recovering {
                drop(inner);
                let floor_ms = protocol::floor_of(&self.shared.rules, &grant).0;
                let _ = self.b.store().release(&self.b.namespace, &grant, floor_ms.unwrap_or(0).max(0));
                return Ok(());
            }
            // Our own last issued timestamps stay below what we issue next when the worker ID
            // is the same: the generators never go back (they start above their own last ID).
            inner.lease.regrant(grant, &self.shared.rules, nanos_since_anchor(Instant::now()));
            inner.since = SystemTime::now();
        }
        match renew(self.b, self.shared) {
            Ok(()) => {
                self.shared.lock().error = None;
                Ok(())
            }
            Err(error) => {
                // Held but not recorded: the renewals that follow record it, or find it lost.
                self.shared.lock().error = Some(error);
                Ok(())
            }
        }
    }
}

/// One renewal: records the new fence deadline (and everything that must stay above what
/// earlier holders issued) and, on success, moves the fence.
fn renew(b: &WorkerLeaseBuilder, shared: &Shared) -> Result<(), LeaseError> {
    let started = nanos_since_anchor(Instant::now());
    let renewal = shared.lock().renewal(b.clock.now_ms(), &shared.rules);
    b.store().renew(&b.namespace, &renewal.grant, b.ttl, renewal.record_ms)?;
    let outcome = shared.lock().renewed(&renewal, started, &shared.rules);
    if outcome != Renewed::Stale {
        shared.renewals.fetch_add(1, Ordering::Relaxed);
    }
    if outcome == Renewed::Late {
        shared.late_renewals.fetch_add(1, Ordering::Relaxed);
        crate::events::lease_renewed_late(&shared.namespace, renewal.grant.worker);
    }
    Ok(())
}

fn release(b: &WorkerLeaseBuilder, shared: &Shared) -> Result<(), LeaseError> {
    let phase = shared.lock().phase;
    shared.stop(Phase::Released);
    if phase != Phase::Holding {
        return Ok(());
    }
    // A generator in the middle of a tick may finish it without looking at its limit (the
    // tick was granted, and lies below the high water recorded next): once a tick has passed,
    // none issues, so the worker ID is free only when no ID is issued on it any more.
    std::thread::sleep(Duration::from_millis(shared.longest_tick_ms.load(Ordering::Relaxed) + 1));
    let (grant, high_water) = {
        let inner = shared.lock();
        (inner.grant.clone(), inner.high_water())
    };
    let result = b.store().release(&b.namespace, &grant, high_water);
    crate::events::lease_released(&shared.namespace, grant.worker, result.is_ok());
    result
}
