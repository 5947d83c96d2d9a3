//! Worker-ID leases in a coordination store: Redis (feature `redis`), PostgreSQL or
//! MySQL/MariaDB (features `sqlx-postgres`, `sqlx-mysql`).
//!
//! A lease gives one worker ID of a space (`0..32`, say) inside a namespace (the name of the
//! ID space shared by every process that generates the same types) for a TTL. Each
//! acquisition takes a fencing number that only grows, and reads the high water the previous
//! holder of that worker ID recorded, so that the new holder issues only above it.

mod handle;
mod store;
pub use handle::{
    DEFAULT_CLOCK_TOLERANCE, DEFAULT_MARGIN, DEFAULT_NAMESPACE, DEFAULT_STORE_WAIT, DEFAULT_TTL, LeaseStats,
    LeaseStatus, WorkerLease, WorkerLeaseBuilder,
};
pub use store::{
    Claim, DEFAULT_STORE_TIMEOUT, Grant, LeaseError, LeaseStore, MAX_NAMESPACE_LEN, MAX_TTL, MAX_WORKER_SPACE,
};

#[cfg(feature = "redis")]
mod redis;
#[cfg(feature = "redis")]
pub use self::redis::RedisLeaseStore;

#[cfg(any(feature = "lease-etcd", feature = "lease-zookeeper"))]
mod cluster_url;
#[cfg(feature = "lease-etcd")]
mod etcd;
#[cfg(feature = "lease-etcd")]
pub use self::etcd::EtcdLeaseStore;
#[cfg(feature = "lease-zookeeper")]
mod zookeeper;
#[cfg(feature = "lease-zookeeper")]
pub use self::zookeeper::ZooKeeperLeaseStore;

#[cfg(any(feature = "sqlx-postgres", feature = "sqlx-mysql"))]
mod sql;
#[cfg(any(feature = "sqlx-postgres", feature = "sqlx-mysql"))]
pub use sql::{DEFAULT_TABLE, MYSQL_TABLE_DDL, POSTGRES_TABLE_DDL, SqlLeaseStore, SqlLeaseStoreBuilder};

/// Opens the store a URL names: `redis://` (feature `redis`), `postgres://` or
/// `postgresql://` (feature `sqlx-postgres`), `mysql://` or `mariadb://` (feature
/// `sqlx-mysql`), `etcd://` or `etcd+http://` (feature `lease-etcd`), `zk://` (feature
/// `lease-zookeeper`). A URL of a store whose feature is off is an error naming the feature.
/// Redis over TLS (`rediss://`) is not supported yet: it is refused, saying so.
///
/// ```
/// use typed_snowflake::worker::lease::{LeaseError, open_store};
///
/// assert!(matches!(open_store("zookeeper://127.0.0.1:2181"), Err(LeaseError::BadUrl { .. })));
/// let Err(LeaseError::BadUrl { reason, .. }) = open_store("rediss://cache.internal:6380") else { panic!() };
/// assert!(reason.contains("TLS (rediss://) is not supported yet"), "{reason}");
/// Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn open_store(url: &str) -> Result<std::sync::Arc<dyn LeaseStore>, LeaseError> {
    let scheme = url.split_once("://").map_or("", |(scheme, _)| scheme);
    #[allow(unused_variables)] // with every store compiled in, no scheme is off
    let off = |feature: &str| LeaseError::BadUrl {
        url: store::support::redact_url(url),
        reason: format!("this build has no {scheme} lease store: enable the `{feature}` feature of typed-snowflake"),
        source: None,
    };
    if store::support::is_redis_tls(url) {
        return Err(store::support::redis_tls_refused(url));
    }
    match scheme {
        #[cfg(feature = "redis")]
        "redis" => Ok(std::sync::Arc::new(RedisLeaseStore::open(url)?)),
        #[cfg(not(feature = "redis"))]
        "redis" => Err(off("redis")),
        #[cfg(any(feature = "sqlx-postgres", feature = "sqlx-mysql"))]
        "postgres" | "postgresql" | "mysql" | "mariadb" => Ok(std::sync::Arc::new(SqlLeaseStore::connect(url)?)),
        #[cfg(not(any(feature = "sqlx-postgres", feature = "sqlx-mysql")))]
        "postgres" | "postgresql" => Err(off("sqlx-postgres")),
        #[cfg(not(any(feature = "sqlx-postgres", feature = "sqlx-mysql")))]
        "mysql" | "mariadb" => Err(off("sqlx-mysql")),
        #[cfg(feature = "lease-etcd")]
        "etcd" | "etcd+http" => Ok(std::sync::Arc::new(EtcdLeaseStore::open(url)?)),
        #[cfg(not(feature = "lease-etcd"))]
        "etcd" | "etcd+http" => Err(off("lease-etcd")),
        #[cfg(feature = "lease-zookeeper")]
        "zk" => Ok(std::sync::Arc::new(ZooKeeperLeaseStore::open(url)?)),
        #[cfg(not(feature = "lease-zookeeper"))]
        "zk" => Err(off("lease-zookeeper")),
        _ => Err(LeaseError::BadUrl {
            url: store::support::redact_url(url),
            reason: "expected redis://, postgres://, postgresql://, mysql://, mariadb://, etcd:// or zk://".into(),
            source: None,
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn redis_over_tls_is_refused_as_unsupported() {
        for url in [
            "rediss://127.0.0.1:6380",
            "rediss://:secret@cache.internal/2",
            "REDISS://127.0.0.1",
            "valkeys://127.0.0.1",
        ] {
            let Err(err) = open_store(url) else { panic!("{url} must be refused") };
            let LeaseError::BadUrl { reason, .. } = &err else { panic!("{url}: {err:?}") };
            assert_eq!(
                reason,
                "Redis over TLS (rediss://) is not supported yet; the Redis lease store connects with redis:// only"
            );
            // Nothing names a feature the user could enable, nor the password.
            assert!(!err.to_string().contains("feature"), "{err}");
            assert!(!err.to_string().contains("secret"), "{err}");
        }
        let Err(LeaseError::BadUrl { reason, .. }) = open_store("zookeeper://127.0.0.1:2181") else { panic!() };
        assert!(!reason.contains("rediss"), "{reason}");
    }
}
