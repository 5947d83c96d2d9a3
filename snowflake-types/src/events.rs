//! Slow-path events for operators: with the `tracing` feature, `tracing` events under the
//! target `typed_snowflake`; without it, nothing (the counters in
//! [`Registry::stats`](crate::Registry::stats) and [`WorkerLease::stats`](crate::worker::lease::WorkerLease::stats)
//! are always kept).
#![cfg_attr(not(feature = "tracing"), allow(unused_variables))]

use crate::worker::lease::LeaseError;

/// A lease was acquired.
pub(crate) fn lease_acquired(namespace: &str, worker: u64, fence: u64, store: &str) {
    #[cfg(feature = "tracing")]
    tracing::info!(target: "typed_snowflake", namespace, worker, fence, store, "worker ID leased");
}

/// A renewal succeeded after the fence had fallen: generation resumes.
pub(crate) fn lease_renewed_late(namespace: &str, worker: u64) {
    #[cfg(feature = "tracing")]
    tracing::warn!(target: "typed_snowflake", namespace, worker, "worker-ID lease renewed late; generation resumes");
}

/// A renewal failed; it is retried.
pub(crate) fn lease_renewal_failed(namespace: &str, worker: u64, error: &LeaseError) {
    #[cfg(feature = "tracing")]
    tracing::warn!(target: "typed_snowflake", namespace, worker, error = %error, "worker-ID lease renewal failed; retrying");
}

/// The store says the lease is lost: its generators stop for good.
pub(crate) fn lease_lost(namespace: &str, worker: u64) {
    #[cfg(feature = "tracing")]
    tracing::error!(target: "typed_snowflake", namespace, worker, "worker-ID lease lost; generation on it stops");
}

/// A lease was released (or its release failed).
pub(crate) fn lease_released(namespace: &str, worker: u64, ok: bool) {
    #[cfg(feature = "tracing")]
    if ok {
        tracing::info!(target: "typed_snowflake", namespace, worker, "worker-ID lease released");
    } else {
        tracing::warn!(target: "typed_snowflake", namespace, worker, "worker-ID lease release failed; it expires with its TTL");
    }
}

/// The first generator was built with no worker configuration at all: worker 0, right for
/// one process and wrong for two. Said once per process: a `tracing` warning with the
/// feature, one line on stderr without it.
pub(crate) fn default_worker_zero() {
    let message = "typed-snowflake: no worker ID is configured, so this process issues IDs as worker 0; a second process doing the same repeats its IDs. Set SNOWFLAKE_WORKER_ID=<n> for a fixed worker ID, or SNOWFLAKE_WORKER_LEASE=redis://... (or postgres://..., mysql://...) to lease one.";
    #[cfg(feature = "tracing")]
    tracing::warn!(target: "typed_snowflake", "{message}");
    #[cfg(not(feature = "tracing"))]
    eprintln!("{message}");
}
