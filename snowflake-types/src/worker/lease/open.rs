//! Opening the store a URL names: [`open_store`] and [`StoreUrl::open`].

use std::sync::Arc;

#[cfg(feature = "lease-etcd")]
use super::etcd::EtcdLeaseStore;
#[cfg(feature = "lease-redis")]
use super::redis::RedisLeaseStore;
#[cfg(any(feature = "lease-postgres", feature = "lease-mysql"))]
use super::sql::SqlLeaseStore;
use super::store::{LeaseError, LeaseStore};
use super::url::{StoreKind, StoreUrl};
#[cfg(feature = "lease-zookeeper")]
use super::zookeeper::ZooKeeperLeaseStore;

/// Opens the store a URL names (the forms and the feature of each: `docs/stores.md`); a store
/// whose feature is off is an error naming the feature.
///
/// ```
/// use typed_snowflake::worker::lease::{LeaseError, open_store};
///
/// let Err(LeaseError::BadUrl { reason, .. }) = open_store("gopher://127.0.0.1:70") else { panic!() };
/// assert!(reason.starts_with("expected redis://"), "{reason}");
/// ```
pub fn open_store(url: &str) -> Result<Arc<dyn LeaseStore>, LeaseError> {
    StoreUrl::parse(url)?.open()
}

impl StoreUrl {
    /// Opens the store this URL names, as [`open_store`] does with its text. A store whose
    /// feature is off is an error naming the feature.
    ///
    /// ```
    /// use typed_snowflake::worker::lease::StoreUrl;
    ///
    /// let store = StoreUrl::parse("redis://:s3cret@127.0.0.1:6379/2")?.open()?;
    /// assert_eq!(store.describe(), "redis://127.0.0.1:6379/2");
    /// Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn open(&self) -> Result<Arc<dyn LeaseStore>, LeaseError> {
        #[allow(unused_variables)] // with every store compiled in, no store is off
        let off = |feature: &str| {
            let scheme = self.scheme();
            self.bad(
                format!("this build has no {scheme} lease store: enable the `{feature}` feature of typed-snowflake"),
                None,
            )
        };
        match self.kind() {
            #[cfg(feature = "lease-redis")]
            StoreKind::Redis | StoreKind::RedisSentinel => Ok(Arc::new(RedisLeaseStore::from_url(self)?)),
            #[cfg(any(feature = "lease-postgres", feature = "lease-mysql"))]
            StoreKind::Postgres | StoreKind::MySql => {
                Ok(Arc::new(SqlLeaseStore::builder_from_url(self.clone()).connect()?))
            }
            #[cfg(feature = "lease-etcd")]
            StoreKind::Etcd => Ok(Arc::new(EtcdLeaseStore::from_url(self)?)),
            #[cfg(feature = "lease-zookeeper")]
            StoreKind::ZooKeeper if !self.is_tls() || cfg!(feature = "lease-zookeeper-tls") => {
                Ok(Arc::new(ZooKeeperLeaseStore::from_url(self)?))
            }
            StoreKind::ZooKeeper if self.is_tls() => Err(off("lease-zookeeper-tls")),
            #[allow(unreachable_patterns)] // with every store compiled in
            kind => Err(off(kind.feature())),
        }
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
