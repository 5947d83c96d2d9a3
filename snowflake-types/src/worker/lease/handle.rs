//! A worker-ID lease held by this process: the handle ([`WorkerLease`]), its status, and the
//! fence every generator on it checks. One thread per lease (`renewal.rs`) makes every store
//! call, so none runs inside the caller's async runtime.

mod builder;
mod channel;
mod renewal;
mod shared;
mod state_file;
mod status;

pub use builder::{DEFAULT_NAMESPACE, DEFAULT_STORE_WAIT, WorkerLeaseBuilder};
pub use status::{LeaseStats, LeaseStatus, LeaseTiming};

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::sync::mpsc;
use std::time::Duration;

use self::channel::Receive;
use self::shared::{Command, Shared};
use super::protocol::holder::{Machine, Standing};
pub use super::protocol::{DEFAULT_MARGIN, DEFAULT_RESERVATION, DEFAULT_TTL};
use super::store::LeaseError;
use crate::fence::{Fence, FenceReason, GrantView, Limit, Refusal};
use crate::generator::GeneratorBuilder;

/// A worker ID leased from a coordination store, renewed in the background, and acquired
/// again by itself whenever it is lost (the rules: `docs/lease-rules.md`).
///
/// Give it to a [`Generator`](crate::Generator) (`Generator::builder(layout).lease(lease)`) or
/// to the registry (`Registry::builder().worker_lease(lease)`); clones share the lease. The
/// generators check it where they already check their issuing limit, and stop with
/// [`GenerateError::Fenced`](crate::GenerateError::Fenced) when the store has not answered for
/// `W - margin`. [`WorkerLease::status`] says where it stands; dropping the last clone
/// releases it without waiting for the store's answer.
#[derive(Clone, Debug)]
pub struct WorkerLease {
    shared: Arc<Shared>,
    /// The last clone's drop closes the command channel, which tells the lease thread to release.
    commands: mpsc::Sender<Command>,
}

impl GeneratorBuilder {
    /// Issue under a worker-ID lease, which decides the worker ID (any `worker` set here is
    /// ignored); several generators (one per ID type) may share one lease.
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
    /// The leased worker ID (the last grant's while the lease is acquired again).
    pub fn worker(&self) -> u64 {
        self.shared.lock().worker_and_fence().0
    }

    /// The namespace.
    pub fn namespace(&self) -> &str {
        &self.shared.namespace
    }

    /// The store, as [`LeaseStore::describe`](super::LeaseStore::describe) names it (without any password).
    pub fn store(&self) -> &str {
        &self.shared.store
    }

    /// The fencing number of the current grant: higher than every earlier holder's of this
    /// worker ID, and than every earlier grant of this lease.
    pub fn fence(&self) -> u64 {
        self.shared.lock().worker_and_fence().1
    }

    /// The highest timestamp (Unix ms) earlier holders of the worker ID may have issued: the
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

    /// Where the lease stands; for a readiness probe, ready while [`LeaseStatus::Issuing`].
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
            renewals: machine.renewals(),
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

    /// Fences the generators on this lease (and its clones), records the last timestamp they
    /// may have issued, and frees the worker ID, blocking until the store answers.
    ///
    /// Errors: [`LeaseError::Lost`] when the store no longer holds this grant (nothing to
    /// free); [`LeaseError::Store`] or [`LeaseError::Timeout`] when the store did not answer
    /// (the worker ID frees when the TTL runs out).
    pub fn release(self) -> Result<(), LeaseError> {
        self.send_release().wait()
    }

    /// [`WorkerLease::release`] for async code.
    pub async fn release_async(self) -> Result<(), LeaseError> {
        self.send_release().await
    }

    fn send_release(&self) -> Receive<()> {
        let (reply, receive) = channel::channel();
        // Released already, the thread may be gone before it reads a command sent now.
        let released = self.shared.lock().is_done();
        if released || self.commands.send(Command::Release(reply)).is_err() {
            let (reply, receive) = channel::channel();
            channel::answer(reply, Ok(()));
            return receive;
        }
        receive
    }

    /// Stops renewing without releasing, as a crashed process would (for tests of crashes).
    pub fn abandon(self) {
        self.shared.command(Machine::abandon);
        let _ = self.commands.send(Command::Abandon);
    }

    /// Sends no renewal for `pause`, as a paused process would not (for tests of pauses).
    pub fn pause_renewals(&self, pause: Duration) {
        let _ = self.commands.send(Command::Pause(pause));
    }
}

impl Fence for WorkerLease {
    fn namespace(&self) -> &str {
        &self.shared.namespace
    }

    fn resume_window_ms(&self) -> i64 {
        self.shared.rules.resume_window_ms()
    }

    fn view(&self) -> GrantView {
        let now = self.shared.now();
        self.shared.lock().view(now)
    }

    fn holds(&self, epoch: u64) -> bool {
        self.shared.lock().holds(epoch)
    }

    fn watch(&self, limit: &Arc<Limit>, tick_ms: i64) {
        self.shared.longest_tick_ms.fetch_max(tick_ms.unsigned_abs(), Ordering::Relaxed);
        let mut limits = self.shared.limits.lock().unwrap_or_else(|p| p.into_inner());
        limits.retain(|weak| weak.strong_count() > 0);
        limits.push(Arc::downgrade(limit));
    }

    /// How far a generator under grant `epoch` may issue now (`protocol/holder/grant.rs`).
    fn grant_until(&self, from_ms: i64, min_step_ms: i64, epoch: u64) -> Result<i64, Refusal> {
        let s = &self.shared;
        let mut machine = s.lock();
        // Read once the lock is held, so that a wait for it never lengthens the validity.
        let now = s.now();
        machine.grant_until(now, from_ms, min_step_ms, epoch)
    }
}
