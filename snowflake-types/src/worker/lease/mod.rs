//! Worker-ID leases in a coordination store: Redis (feature `redis`), PostgreSQL or
//! MySQL/MariaDB (features `sqlx-postgres`, `sqlx-mysql`).
//!
//! A lease gives one worker ID of a space (`0..32`, say) inside a namespace (the name of the
//! ID space shared by every process that generates the same types) for a TTL. Each
//! acquisition takes a fencing number that only grows, and reads the high water the previous
//! holder of that worker ID recorded, so that the new holder issues only above it.

mod store;
pub use store::{DEFAULT_STORE_TIMEOUT, Grant, LeaseError, LeaseStore, MAX_NAMESPACE_LEN, MAX_TTL, MAX_WORKER_SPACE};

#[cfg(feature = "redis")]
mod redis;
#[cfg(feature = "redis")]
pub use self::redis::RedisLeaseStore;

#[cfg(any(feature = "sqlx-postgres", feature = "sqlx-mysql"))]
mod sql;
#[cfg(any(feature = "sqlx-postgres", feature = "sqlx-mysql"))]
pub use sql::{DEFAULT_TABLE, MYSQL_TABLE_DDL, POSTGRES_TABLE_DDL, SqlLeaseStore, SqlLeaseStoreBuilder};
