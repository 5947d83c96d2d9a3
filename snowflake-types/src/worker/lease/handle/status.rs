//! What a lease says of itself: where it stands ([`LeaseStatus`]), its timing
//! ([`LeaseTiming`]) and its counters ([`LeaseStats`]).

use std::time::{Duration, SystemTime};

use crate::fence::FenceReason;
use crate::worker::lease::LeaseError;

/// Where a lease stands, for a readiness probe: [`WorkerLease::status`](crate::worker::lease::WorkerLease::status),
/// [`Registry::lease_status`](crate::Registry::lease_status).
///
/// ```
/// use typed_snowflake::worker::lease::LeaseStatus;
///
/// fn ready(status: &LeaseStatus) -> bool {
///     matches!(status, LeaseStatus::Issuing { .. })
/// }
/// assert!(!ready(&LeaseStatus::Released));
/// assert!(!LeaseStatus::Released.is_issuing());
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum LeaseStatus {
    /// The lease's first worker ID is being acquired: generators on it may not issue yet.
    Acquiring {
        /// Since when.
        since: SystemTime,
        /// The last store error, while the store does not answer.
        error: Option<LeaseError>,
    },
    /// The first acquisition failed for good: the lease ended.
    Failed {
        /// Why.
        error: LeaseError,
    },
    /// Generators on the lease may issue.
    Issuing {
        /// The worker ID.
        worker: u64,
        /// The fencing number of the grant.
        fence: u64,
        /// Since when (the grant's first issuing instant, or the renewal that ended a fence).
        since: SystemTime,
        /// How long the generators may still issue if no renewal succeeds from now on (`W - margin` at most).
        issuing_for: Duration,
        /// Whether the store answered the lease's last call.
        store_answering: bool,
    },
    /// The lease holds its worker ID, but generators may not issue (`reason` says why).
    Fenced {
        /// The worker ID.
        worker: u64,
        /// Why.
        reason: FenceReason,
        /// Since when.
        since: SystemTime,
        /// The last store error, if any.
        error: Option<LeaseError>,
    },
    /// The lease was lost and is being acquired again; generation resumes on the new grant.
    Recovering {
        /// The worker ID held before, tried first.
        previous_worker: u64,
        /// Since when.
        since: SystemTime,
        /// The last store error, if any.
        error: Option<LeaseError>,
    },
    /// The lease was released (or abandoned): generators on it stay fenced.
    Released,
}

impl LeaseStatus {
    /// Whether generators on the lease may issue: [`LeaseStatus::Issuing`].
    ///
    /// ```
    /// use typed_snowflake::worker::lease::LeaseStatus;
    ///
    /// assert!(!LeaseStatus::Released.is_issuing());
    /// ```
    pub fn is_issuing(&self) -> bool {
        matches!(self, LeaseStatus::Issuing { .. })
    }
}

/// A lease's timing, as asked or by default ([`WorkerLeaseBuilder::timing`](super::WorkerLeaseBuilder::timing)).
///
/// ```
/// use std::time::Duration;
/// use typed_snowflake::worker::lease::{DEFAULT_MARGIN, DEFAULT_TTL, MemoryLeaseStore, WorkerLease};
///
/// let timing = WorkerLease::builder(MemoryLeaseStore::new()).timing()?;
/// assert_eq!((timing.ttl, timing.margin), (DEFAULT_TTL, DEFAULT_MARGIN));
/// assert_eq!(timing.renew_every, DEFAULT_TTL / 3);
/// Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct LeaseTiming {
    /// How long the store keeps the lease after its last renewal.
    pub ttl: Duration,
    /// `W`: how far ahead of its clock the holder reserves.
    pub reservation: Duration,
    /// How long before its reservation runs out the holder stops issuing.
    pub margin: Duration,
    /// How often the lease renews.
    pub renew_every: Duration,
    /// The largest difference between the local clock and the store's that is accepted.
    pub clock_tolerance: Duration,
}

/// Counters of a lease, for operators.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct LeaseStats {
    /// The namespace.
    pub namespace: String,
    /// The leased worker ID (the last one, while the lease is being acquired again).
    pub worker: u64,
    /// The fencing number of the current (or last) grant.
    pub fence: u64,
    /// Renewals that succeeded.
    pub renewals: u64,
    /// Renewals that succeeded after the fence had fallen (the generators resumed then).
    pub late_renewals: u64,
    /// Renewals that failed (the store did not answer or answered with an error).
    pub failed_renewals: u64,
    /// Grants taken after a loss.
    pub recoveries: u64,
    /// Whether the lease is lost now, and being acquired again.
    pub lost: bool,
    /// Whether the lease was released.
    pub released: bool,
}
