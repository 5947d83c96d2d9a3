//! [`LeaseError`], why a worker-ID lease could not be acquired, renewed or released, and the
//! limit its message quotes: below `error.rs` (whose `GenerateError::Lease` carries it) and
//! below the leases that return it. `typed_snowflake::worker::lease` re-exports both.

use std::error::Error as StdError;
use std::sync::Arc;
use std::time::Duration;

use thiserror::Error;

/// The widest worker-ID space a lease covers: 2^22 IDs (`0..4194304`), more than any layout in
/// use gives its worker field.
///
/// ```
/// use typed_snowflake::worker::lease::MAX_WORKER_SPACE;
///
/// assert_eq!(MAX_WORKER_SPACE, 1 << 22);
/// Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub const MAX_WORKER_SPACE: u64 = 1 << 22;

/// Why a lease could not be acquired, renewed or released. Every message names the
/// namespace, the worker ID or the store it concerns, and a message that stands for a failed
/// call ([`LeaseError::Store`], [`LeaseError::Thread`], a [`LeaseError::BadUrl`] the driver
/// refused) ends with its cause, which `source()` returns as well: the lease thread logs these errors on their own, where a bare "renewing
/// … failed" would tell an operator nothing. Printers that walk `source()` should skip a cause
/// whose text the message already holds, as this crate's do.
///
/// ```
/// use typed_snowflake::worker::lease::LeaseError;
///
/// let err = LeaseError::NoFreeWorker { namespace: "shop".into(), space: 32 };
/// assert_eq!(err.to_string(), "no free worker ID in namespace \"shop\": all 32 (0..32) are leased");
/// Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Debug, Error)]
#[non_exhaustive]
pub enum LeaseError {
    /// Every worker ID of the space is leased by a live holder.
    #[error("no free worker ID in namespace {namespace:?}: all {space} (0..{space}) are leased")]
    NoFreeWorker {
        /// The namespace.
        namespace: String,
        /// The size of the worker-ID space.
        space: u64,
    },
    /// The lease is not this holder's any more: it expired, or another holder took the
    /// worker ID. The holder must stop issuing IDs on it.
    #[error("the lease on worker ID {worker} in namespace {namespace:?} is lost: it expired or another holder took it")]
    Lost {
        /// The namespace.
        namespace: String,
        /// The worker ID.
        worker: u64,
    },
    /// The store answered with an error, or could not be reached. The message ends with the
    /// driver's error.
    #[error("lease store {store}: {what} failed: {source}")]
    Store {
        /// The store, as [`LeaseStore::describe`](crate::worker::lease::LeaseStore::describe) names it.
        store: String,
        /// What was being done, with the namespace and worker ID.
        what: String,
        /// The driver's error (shared, so that the error is `Clone`).
        #[source]
        source: Arc<dyn StdError + Send + Sync>,
    },
    /// The store did not answer in time.
    #[error("lease store {store}: {what} did not finish within {after:?}")]
    Timeout {
        /// The store, as [`LeaseStore::describe`](crate::worker::lease::LeaseStore::describe) names it.
        store: String,
        /// What was being done, with the namespace and worker ID.
        what: String,
        /// The store's timeout.
        after: Duration,
    },
    /// A store URL that cannot be used.
    #[error("bad lease store URL {url:?}: {reason}")]
    BadUrl {
        /// The URL, without any password.
        url: String,
        /// Why it cannot be used.
        reason: String,
        /// The driver's error, when the driver refused the URL (shared, so that the error is
        /// `Clone`); `None` when this crate refused it (an unknown scheme, a feature that is off).
        #[source]
        source: Option<Arc<dyn StdError + Send + Sync>>,
    },
    /// A namespace that is empty, too long, or has characters outside `A-Z a-z 0-9 _ . : -`.
    #[error("bad lease namespace {namespace:?}: {reason}")]
    BadNamespace {
        /// The namespace.
        namespace: String,
        /// What is wrong with it.
        reason: String,
    },
    /// A worker-ID space of 0 or more than [`MAX_WORKER_SPACE`] IDs.
    #[error("a worker-ID space of {space} IDs cannot be leased: it must hold 1 to {MAX_WORKER_SPACE} (2^22)")]
    BadSpace {
        /// The size asked for.
        space: u64,
    },
    /// A TTL under 1 ms or over [`MAX_TTL`](crate::worker::lease::MAX_TTL).
    #[error("a lease TTL of {ttl:?} cannot be used: it must lie between 1ms and 24h")]
    BadTtl {
        /// The TTL asked for.
        ttl: Duration,
    },
    /// Lease settings that cannot work together (a margin as long as the TTL, say).
    #[error("lease settings: {reason}")]
    BadSettings {
        /// What is wrong.
        reason: String,
    },
    /// The local clock and the store's disagree by more than the tolerance. The hand-over and
    /// fencing rules assume they agree within the margin, so this node must not serve until
    /// its clock is fixed.
    #[error(
        "the local clock reads {local_ms} (Unix ms) and lease store {store} reads {store_ms}: {}ms apart, more than the tolerance of {tolerance:?}; fix the clock (NTP) before serving",
        local_ms.abs_diff(*store_ms)
    )]
    ClockSkew {
        /// The store.
        store: String,
        /// The local clock.
        local_ms: i64,
        /// The store's clock.
        store_ms: i64,
        /// The tolerance.
        tolerance: Duration,
    },
    /// The lease thread could not be started. The message ends with the system's error.
    #[error("the lease thread could not be started: {source}")]
    Thread {
        /// Why.
        #[source]
        source: Arc<std::io::Error>,
    },
    /// A SQL table name that is not a plain identifier (or `schema.table`).
    #[error("bad lease table name {table:?}: {reason}")]
    BadTable {
        /// The name.
        table: String,
        /// What is wrong with it.
        reason: String,
    },
}

/// Compared by variant and field by field. The driver errors behind `Store` and `BadUrl` have
/// no equality of their own: those are compared by their messages; the system error behind
/// `Thread` by its kind and message.
impl PartialEq for LeaseError {
    fn eq(&self, other: &LeaseError) -> bool {
        use LeaseError::*;
        /// Two driver errors, by what they say.
        fn same_cause(a: &(dyn StdError + Send + Sync), b: &(dyn StdError + Send + Sync)) -> bool {
            a.to_string() == b.to_string()
        }
        match (self, other) {
            (NoFreeWorker { namespace: n1, space: s1 }, NoFreeWorker { namespace: n2, space: s2 }) => {
                n1 == n2 && s1 == s2
            }
            (Lost { namespace: n1, worker: w1 }, Lost { namespace: n2, worker: w2 }) => n1 == n2 && w1 == w2,
            (Store { store: s1, what: w1, source: c1 }, Store { store: s2, what: w2, source: c2 }) => {
                s1 == s2 && w1 == w2 && same_cause(&**c1, &**c2)
            }
            (Timeout { store: s1, what: w1, after: a1 }, Timeout { store: s2, what: w2, after: a2 }) => {
                s1 == s2 && w1 == w2 && a1 == a2
            }
            (BadUrl { url: u1, reason: r1, source: c1 }, BadUrl { url: u2, reason: r2, source: c2 }) => {
                u1 == u2
                    && r1 == r2
                    && match (c1, c2) {
                        (Some(c1), Some(c2)) => same_cause(&**c1, &**c2),
                        (None, None) => true,
                        _ => false,
                    }
            }
            (BadNamespace { namespace: n1, reason: r1 }, BadNamespace { namespace: n2, reason: r2 }) => {
                n1 == n2 && r1 == r2
            }
            (BadSpace { space: s1 }, BadSpace { space: s2 }) => s1 == s2,
            (BadTtl { ttl: t1 }, BadTtl { ttl: t2 }) => t1 == t2,
            (BadSettings { reason: r1 }, BadSettings { reason: r2 }) => r1 == r2,
            (
                ClockSkew { store: s1, local_ms: l1, store_ms: m1, tolerance: t1 },
                ClockSkew { store: s2, local_ms: l2, store_ms: m2, tolerance: t2 },
            ) => s1 == s2 && l1 == l2 && m1 == m2 && t1 == t2,
            (Thread { source: e1 }, Thread { source: e2 }) => {
                e1.kind() == e2.kind() && e1.to_string() == e2.to_string()
            }
            (BadTable { table: t1, reason: r1 }, BadTable { table: t2, reason: r2 }) => t1 == t2 && r1 == r2,
            _ => false,
        }
    }
}

impl Eq for LeaseError {}

/// Consistent with `PartialEq`: equal errors say the same, and a cause is compared by what it
/// says.
impl std::hash::Hash for LeaseError {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        std::mem::discriminant(self).hash(state);
        self.to_string().hash(state);
    }
}
