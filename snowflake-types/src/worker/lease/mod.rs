//! Worker-ID leases in a coordination store: Redis (feature `lease-redis`), PostgreSQL or
//! MySQL/MariaDB (features `lease-postgres`, `lease-mysql`), etcd (`lease-etcd`) or ZooKeeper
//! (`lease-zookeeper`, `lease-zookeeper-tls`), each over TLS where the URL asks for it.
//!
//! A lease gives one worker ID of a space (`0..32`, say) inside a namespace (the name of the
//! ID space shared by every process that generates the same types) for a TTL. Each
//! acquisition takes a fencing number that only grows, and reads the high water the previous
//! holder of that worker ID recorded, so that the new holder issues only above it.

mod handle;
mod protocol;
mod store;
pub use handle::{
    DEFAULT_CLOCK_TOLERANCE, DEFAULT_MARGIN, DEFAULT_NAMESPACE, DEFAULT_RESERVATION, DEFAULT_STORE_WAIT, DEFAULT_TTL,
    LeaseStats, LeaseStatus, WorkerLease, WorkerLeaseBuilder,
};
pub use store::{
    CA_ENV, Claim, DEFAULT_STORE_TIMEOUT, Grant, LeaseError, LeaseStore, MAX_NAMESPACE_LEN, MAX_TTL, MAX_WORKER_SPACE,
    StoreFaults, WorkerRecord,
};

#[cfg(feature = "lease-redis")]
mod redis;
#[cfg(feature = "lease-redis")]
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
    store::support::redact_url(url)
}

/// Opens the store a URL names: `redis://`, `rediss://` (TLS) or `redis+sentinel://` (a master
/// found through Redis Sentinel) (feature `lease-redis`),
/// `postgres://` or `postgresql://` (feature `lease-postgres`), `mysql://` or `mariadb://`
/// (feature `lease-mysql`), `etcd://`, `etcds://` (TLS), `etcd+http://` or `etcd+https://`
/// (feature `lease-etcd`), `zk://` (feature `lease-zookeeper`), `zks://` or `zk+tls://` for
/// TLS (feature `lease-zookeeper-tls`). A URL of a store whose feature is off is an error
/// naming the feature. TLS and its CA are asked for in the URL (see [`CA_ENV`] for a CA file of the
/// environment); `docs/stores.md` lists the URL forms.
///
/// ```
/// use typed_snowflake::worker::lease::{LeaseError, open_store};
///
/// let Err(LeaseError::BadUrl { reason, .. }) = open_store("gopher://127.0.0.1:70") else { panic!() };
/// assert!(reason.starts_with("expected redis://"), "{reason}");
/// Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn open_store(url: &str) -> Result<std::sync::Arc<dyn LeaseStore>, LeaseError> {
    let scheme = url.split_once("://").map_or(String::new(), |(scheme, _)| scheme.to_ascii_lowercase());
    #[allow(unused_variables)] // with every store compiled in, no scheme is off
    let off = |feature: &str| LeaseError::BadUrl {
        url: store::support::redact_url(url),
        reason: format!("this build has no {scheme} lease store: enable the `{feature}` feature of typed-snowflake"),
        source: None,
    };
    match scheme.as_str() {
        #[cfg(feature = "lease-redis")]
        "redis" | "rediss" | "valkey" | "valkeys" | "redis+sentinel" | "rediss+sentinel" => {
            Ok(std::sync::Arc::new(RedisLeaseStore::open(url)?))
        }
        #[cfg(not(feature = "lease-redis"))]
        "redis" | "rediss" | "valkey" | "valkeys" | "redis+sentinel" | "rediss+sentinel" => Err(off("lease-redis")),
        #[cfg(any(feature = "lease-postgres", feature = "lease-mysql"))]
        "postgres" | "postgresql" | "mysql" | "mariadb" => Ok(std::sync::Arc::new(SqlLeaseStore::connect(url)?)),
        #[cfg(not(any(feature = "lease-postgres", feature = "lease-mysql")))]
        "postgres" | "postgresql" => Err(off("lease-postgres")),
        #[cfg(not(any(feature = "lease-postgres", feature = "lease-mysql")))]
        "mysql" | "mariadb" => Err(off("lease-mysql")),
        #[cfg(feature = "lease-etcd")]
        "etcd" | "etcd+http" | "etcds" | "etcd+https" => Ok(std::sync::Arc::new(EtcdLeaseStore::open(url)?)),
        #[cfg(not(feature = "lease-etcd"))]
        "etcd" | "etcd+http" | "etcds" | "etcd+https" => Err(off("lease-etcd")),
        #[cfg(feature = "lease-zookeeper")]
        "zk" => Ok(std::sync::Arc::new(ZooKeeperLeaseStore::open(url)?)),
        #[cfg(not(feature = "lease-zookeeper"))]
        "zk" => Err(off("lease-zookeeper")),
        #[cfg(feature = "lease-zookeeper-tls")]
        "zks" | "zk+tls" => Ok(std::sync::Arc::new(ZooKeeperLeaseStore::open(url)?)),
        #[cfg(not(feature = "lease-zookeeper-tls"))]
        "zks" | "zk+tls" => Err(off("lease-zookeeper-tls")),
        _ => Err(LeaseError::BadUrl {
            url: store::support::redact_url(url),
            reason:
                "expected redis://, rediss://, redis+sentinel://, postgres://, postgresql://, mysql://, mariadb://, \
                     etcd://, etcds://, zk:// or zks://"
                    .into(),
            source: None,
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_store_whose_feature_is_off_names_its_feature() {
        for (url, feature) in [
            ("redis://127.0.0.1:6379", "lease-redis"),
            ("rediss://:secret@cache.internal:6380", "lease-redis"),
            ("postgres://app:secret@127.0.0.1/test", "lease-postgres"),
            ("mariadb://root@127.0.0.1/test", "lease-mysql"),
        ] {
            let on = match feature {
                "lease-redis" => cfg!(feature = "lease-redis"),
                // One of the SQL features compiles the store, which names the other itself.
                _ => cfg!(any(feature = "lease-postgres", feature = "lease-mysql")),
            };
            if on {
                continue;
            }
            let Err(err) = open_store(url) else { panic!("{url} must be refused") };
            let LeaseError::BadUrl { reason, .. } = &err else { panic!("{url}: {err:?}") };
            assert!(reason.ends_with(&format!("enable the `{feature}` feature of typed-snowflake")), "{reason}");
            assert!(!err.to_string().contains("secret"), "{err}");
        }
    }
}
