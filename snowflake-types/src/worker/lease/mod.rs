//! Worker-ID leases in a coordination store: Redis (feature `lease-redis`), PostgreSQL or
//! MySQL/MariaDB (features `lease-postgres`, `lease-mysql`), etcd (`lease-etcd`) or ZooKeeper
//! (`lease-zookeeper`, `lease-zookeeper-tls`), each over TLS where the URL asks for it.
//!
//! A lease gives one worker ID of a space (`0..32`, say) inside a namespace (the name of the
//! ID space shared by every process that generates the same types), renewed every few
//! seconds. A new holder of a worker ID issues only above everything an earlier holder may
//! have issued. The rules are stated once, on the guide page `lease_rules`
//! (`docs/lease-rules.md`); they are written once, in `protocol.rs` (the trust rule) and
//! `protocol/holder.rs` (the holder as a state machine without I/O).

mod admin;
mod handle;
mod memory;
mod open;
mod protocol;
mod store;
#[cfg(test)]
mod testing;
mod url;
pub use admin::{NamespaceReport, WorkerRecord, create_namespace, fence_namespace, inspect};
pub use handle::{
    DEFAULT_MARGIN, DEFAULT_NAMESPACE, DEFAULT_RESERVATION, DEFAULT_STORE_WAIT, DEFAULT_TTL, LeaseStats, LeaseStatus,
    LeaseTiming, WorkerLease, WorkerLeaseBuilder,
};
pub use memory::{MemoryBackup, MemoryLeaseStore};
pub use open::open_store;
pub use store::{
    CA_ENV, Cas, DEFAULT_CLOCK_TOLERANCE, DEFAULT_STORE_TIMEOUT, LeaseError, LeaseStore, MAX_NAMESPACE_LEN, MAX_READ,
    MAX_TTL, MAX_VALUE_LEN, MAX_WORKER_SPACE, Query, Slot, Snapshot, Written,
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
pub use sql::{DEFAULT_TABLE, MYSQL_TABLE_DDL, POSTGRES_TABLE_DDL, SqlLeaseStore, SqlLeaseStoreBuilder};

/// `url` without its password, as every lease store and error shows a store URL:
/// `redis://:secret@host/0` → `redis://host/0`, `postgres://app:secret@db/ids` →
/// `postgres://app@db/ids`. Text that is not a URL with a password is returned as it is.
///
/// ```
/// use typed_snowflake::worker::lease::redact_url;
///
/// assert_eq!(redact_url("redis://:s3cret@cache:6379/0"), "redis://cache:6379/0");
/// assert_eq!(redact_url("postgres://app:s3cret@db/shop"), "postgres://app@db/shop");
/// assert_eq!(redact_url("etcd://127.0.0.1:2379"), "etcd://127.0.0.1:2379");
/// Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn redact_url(url: &str) -> String {
    url::redact(url)
}
