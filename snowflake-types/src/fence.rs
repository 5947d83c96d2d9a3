//! What a generator may issue up to, and who may lower it: the issuing limit a generator
//! checks at every new tick, and the [`Fence`] (a worker-ID lease) that grants and withdraws
//! it. The generator knows only that something may lower its limit; what a lease is, and how
//! it talks to its store, lives above it, in `worker::lease`.

use std::sync::Arc;
use std::sync::atomic::AtomicU64;

use thiserror::Error;

/// Where the generator may issue up to: the high-water reservation (or the end of the
/// time field). Read on the hot path only when a new tick starts.
#[repr(align(128))]
pub(crate) struct Limit(pub(crate) AtomicU64);

/// Why a generator on a worker-ID lease stopped issuing.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Error)]
#[non_exhaustive]
pub enum FenceReason {
    /// No renewal succeeded for `W - margin` (the lease's reservation less its margin): the
    /// timestamps it reserved in the store run out.
    #[error(
        "its lease was not renewed within its reservation less the margin ({reservation:?} - {margin:?}); it resumes when a renewal succeeds"
    )]
    NotRenewed {
        /// The lease's reservation `W` (at least its TTL).
        reservation: std::time::Duration,
        /// The lease's margin.
        margin: std::time::Duration,
    },
    /// The store says the lease is lost (it expired, another process may hold the worker ID,
    /// or the store lost its data), or the store could not be reached for longer than the
    /// TTL: the lease is being acquired again, and generation resumes on the new grant
    /// (the same worker ID or another) by itself.
    #[error("its lease is lost; it is being acquired again, and generation resumes by itself")]
    Lost,
    /// The store cannot vouch for the worker ID's earlier holders (a namespace it began to
    /// know less than the reservation ago, or a record it lost or had rolled back), so one of
    /// them may still be issuing: the generator issues nothing until `until_ms`, when every
    /// such holder has stopped ([the rules](https://docs.rs/typed-snowflake/latest/typed_snowflake/guide/lease_rules/index.html)).
    #[error(
        "the store cannot vouch for this worker ID's earlier holders (a namespace it began to know less than the reservation ago, or a record it lost or had rolled back): issuing waits until {until_ms} (Unix ms), when any of them has stopped; a namespace that is really new skips this wait when declared new before its first start (`snowflake leases init`, `--create-namespace`, `WorkerLeaseBuilder::create_namespace`)"
    )]
    WaitingOut {
        /// Unix milliseconds above everything an earlier holder may have issued.
        until_ms: i64,
    },
    /// The store was rolled back under the lease (its record read back with a value its
    /// holder did not write): nothing is issued on it any more; a new worker ID is acquired,
    /// above anything the rollback may have hidden.
    #[error(
        "its lease's record was rolled back in the store (restored from a backup, or a replica promoted without the last writes); a new worker ID is being acquired, and generation resumes by itself"
    )]
    RolledBack,
    /// The lease was released.
    #[error("its lease was released")]
    Released,
    /// The generator's clock reads past the fence deadline the store acknowledged: it runs
    /// ahead of the lease's clock.
    #[error(
        "the clock reads {now_ms} (Unix ms), past the lease's fence deadline {bound_ms}: the generator's clock runs ahead of the lease's"
    )]
    ClockAhead {
        /// The generator's clock.
        now_ms: i64,
        /// The fence deadline in the store.
        bound_ms: i64,
    },
    /// The lease state file is not written up to the clock: a process restarted from it would
    /// issue above what it says, so nothing is issued above it until it is written again (the
    /// disk does not take the write).
    #[error(
        "its lease state file is not written up to the clock (the disk does not take the write); it resumes when the file is written"
    )]
    StateFileBehind,
}

/// A grant as a generator sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct GrantView {
    /// Counts grants: a generator that issues under another one switches to this one.
    pub(crate) epoch: u64,
    pub(crate) worker: u64,
    /// Issue only above this (Unix ms).
    pub(crate) floor_ms: Option<i64>,
}

/// Why a generator may not issue under the fence now, or must first take its new grant.
#[derive(Debug)]
pub(crate) enum Refusal {
    /// Not now: the generator fails with this reason.
    Fenced(FenceReason),
    /// The fence holds another grant than the one the generator issues under: take it.
    Switch(GrantView),
}

/// What fences a generator: grants it timestamps to issue up to, under a worker ID, and
/// drops its limit when the grant is withdrawn. A worker-ID lease is the one there is.
pub(crate) trait Fence: Send + Sync + std::fmt::Debug {
    /// The name the errors give the fence (a lease's namespace).
    fn namespace(&self) -> &str;
    /// The grant a generator starts under.
    fn view(&self) -> GrantView;
    /// Registers a generator's limit (dropped to 0 when the grant is withdrawn) and the length
    /// of its tick.
    fn watch(&self, limit: &Arc<Limit>, tick_ms: i64);
    /// How far ahead of the clock a grant's floor may lie while a generator waits for its
    /// clock rather than treat it as a step back.
    fn resume_window_ms(&self) -> i64;
    /// The highest timestamp a generator issuing under grant `epoch` may issue now, recorded
    /// as issued (see `WorkerLease`).
    fn grant_until(&self, from_ms: i64, min_step_ms: i64, epoch: u64) -> Result<i64, Refusal>;
    /// Whether grant `epoch` is still held.
    fn holds(&self, epoch: u64) -> bool;
}
