//! Worker-ID leases in a coordination store: Redis (feature `lease-redis`), PostgreSQL or
//! MySQL/MariaDB (features `lease-postgres`, `lease-mysql`), etcd (`lease-etcd`) or ZooKeeper
//! (`lease-zookeeper`, `lease-zookeeper-tls`), each over TLS where the URL asks for it.
//!
//! A lease gives one worker ID of a space inside a namespace; a new holder of a worker ID
//! issues only above everything an earlier holder may have issued (`docs/lease-rules.md`).

pub mod admin;
mod handle;
mod memory;
mod open;
mod protocol;
pub mod store;
#[cfg(test)]
mod testing;
mod url;
// The users' face; store authors have `store`, operators `admin`.
pub use handle::{
    DEFAULT_MARGIN, DEFAULT_NAMESPACE, DEFAULT_RESERVATION, DEFAULT_STORE_WAIT, DEFAULT_TTL, LeaseStats, LeaseStatus,
    LeaseTiming, WorkerLease, WorkerLeaseBuilder,
};
pub use memory::MemoryLeaseStore;
pub use open::open_store;
pub use store::{
    CA_ENV, DEFAULT_CLOCK_TOLERANCE, DEFAULT_STORE_TIMEOUT, LeaseError, LeaseStore, MAX_NAMESPACE_LEN, MAX_TTL,
    MAX_WORKER_SPACE,
};
pub use url::{StoreKind, StoreUrl};

#[cfg(feature = "lease-redis")]
mod redis;
#[cfg(feature = "lease-redis")]
pub use self::redis::RedisLeaseStore;

#[cfg(feature = "lease-etcd")]
mod etcd;
#[cfg(feature = "lease-etcd")]
pub use self::etcd::EtcdLeaseStore;
#[cfg(feature = "lease-zookeeper")]
mod zookeeper;
#[cfg(feature = "lease-zookeeper")]
pub use self::zookeeper::ZooKeeperLeaseStore;

#[cfg(any(feature = "lease-postgres", feature = "lease-mysql"))]
mod sql;
#[cfg(any(feature = "lease-postgres", feature = "lease-mysql"))]
pub use sql::{DEFAULT_TABLE, SqlLeaseStore, SqlLeaseStoreBuilder};
