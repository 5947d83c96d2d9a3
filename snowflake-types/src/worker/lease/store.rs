//! For the authors of a lease store: the contract ([`LeaseStore`] and what it reads and
//! writes), the reference store every adapter is measured against ([`MemoryLeaseStore`]), and
//! the limits a store must accept. A store judges nothing: the protocol decides
//! (`docs/lease-rules.md`). The stores are blocking: a lease calls them from a thread of its own.

use std::error::Error as StdError;
use std::fmt;
use std::hash::{BuildHasher, Hash, Hasher, RandomState};
use std::ops::Range;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use thiserror::Error;

// Defined with the errors (`GenerateError::Lease` carries it), named here by the contract.
pub use super::memory::{MemoryBackup, MemoryLeaseStore};
pub use crate::error::lease::{LeaseError, MAX_WORKER_SPACE};

/// `url` without its password, as every lease store and error shows a store URL: everything between `://` and
/// the last `@` goes but a plain user name (so a password with a raw `/`, `?` or `#` in it is hidden too).
///
/// ```
/// use typed_snowflake::worker::lease::store::redact_url;
///
/// assert_eq!(redact_url("redis://:s3cret@cache:6379/0"), "redis://cache:6379/0");
/// assert_eq!(redact_url("postgres://app:s3cret@db/shop"), "postgres://app@db/shop");
/// assert_eq!(redact_url("etcd://127.0.0.1:2379"), "etcd://127.0.0.1:2379");
/// ```
pub fn redact_url(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else { return url.to_owned() };
    let Some((userinfo, after)) = rest.rsplit_once('@') else { return url.to_owned() };
    let user = userinfo.split_once(':').map_or(userinfo, |(user, _)| user);
    if user.is_empty() {
        format!("{scheme}://{after}")
    } else if user.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-' | b'%')) {
        format!("{scheme}://{user}@{after}")
    } else {
        format!("{scheme}://…@{after}")
    }
}

/// How long one round trip to a store may take before it is abandoned ([`LeaseError::Timeout`]): 2 s by default.
///
/// ```
/// use std::time::Duration;
/// use typed_snowflake::worker::lease::DEFAULT_STORE_TIMEOUT;
///
/// assert_eq!(DEFAULT_STORE_TIMEOUT, Duration::from_secs(2));
/// ```
pub const DEFAULT_STORE_TIMEOUT: Duration = Duration::from_secs(2);

/// The default largest difference between the local clock and the store's (the holders', for one without): 1 s.
///
/// ```
/// use std::time::Duration;
/// use typed_snowflake::worker::lease::DEFAULT_CLOCK_TOLERANCE;
///
/// assert_eq!(DEFAULT_CLOCK_TOLERANCE, Duration::from_secs(1));
/// ```
pub const DEFAULT_CLOCK_TOLERANCE: Duration = Duration::from_secs(1);

/// The variable naming a PEM file of CA certificates the lease stores trust where a URL names none (`docs/stores.md`).
///
/// ```
/// assert_eq!(typed_snowflake::worker::lease::CA_ENV, "SNOWFLAKE_LEASE_CA");
/// ```
pub const CA_ENV: &str = "SNOWFLAKE_LEASE_CA";

/// The longest namespace, in bytes. Namespaces are made of `A-Z a-z 0-9 _ . : -`.
///
/// ```
/// use typed_snowflake::worker::lease::MAX_NAMESPACE_LEN;
///
/// assert_eq!(MAX_NAMESPACE_LEN, 64);
/// ```
pub const MAX_NAMESPACE_LEN: usize = 64;

/// The longest lease a store hands out: one day.
///
/// ```
/// use std::time::Duration;
/// use typed_snowflake::worker::lease::MAX_TTL;
///
/// assert_eq!(MAX_TTL, Duration::from_secs(24 * 60 * 60));
/// ```
pub const MAX_TTL: Duration = Duration::from_secs(24 * 60 * 60);

/// The longest value the protocol writes into a slot, in bytes: every store keeps this much.
///
/// ```
/// assert_eq!(typed_snowflake::worker::lease::store::MAX_VALUE_LEN, 512);
/// ```
pub const MAX_VALUE_LEN: usize = 512;

/// The most worker IDs one read asks for.
///
/// ```
/// assert_eq!(typed_snowflake::worker::lease::store::MAX_READ, 1024);
/// ```
pub const MAX_READ: u64 = 1024;

/// What a read asks for: the records of `workers` (at most [`MAX_READ`]), the marker, perhaps the highest.
///
/// ```
/// use typed_snowflake::worker::lease::store::Query;
///
/// let query = Query::workers(0..32).with_highest();
/// assert_eq!((query.workers, query.highest), (0..32, true));
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct Query {
    /// The worker IDs whose records to read.
    pub workers: Range<u64>,
    /// Whether to say which is the highest worker ID with a record ([`Snapshot::highest`]).
    pub highest: bool,
}

impl Query {
    /// The records of `workers` and the marker.
    pub fn workers(workers: Range<u64>) -> Self {
        Query { workers, highest: false }
    }

    /// Also the highest worker ID with a record.
    #[must_use]
    pub fn with_highest(mut self) -> Self {
        self.highest = true;
        self
    }
}

/// What a store read, in one consistent read where the store allows it.
///
/// ```
/// use typed_snowflake::worker::lease::store::Snapshot;
///
/// let snapshot = Snapshot::new(Some(1_700_000_000_000), "run-7f3a")
///     .with_marker(Some("m1|1|…".into()))
///     .with_records(vec![(3, "r1|…".into())])
///     .with_highest(Some(3));
/// assert_eq!(snapshot.record(3), Some("r1|…"));
/// assert_eq!(snapshot.record(4), None);
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct Snapshot {
    /// The store's clock during the read (Unix ms); `None` for a store without a clock (etcd).
    pub now_ms: Option<i64>,
    /// The store's incarnation ([`LeaseStore`]): printable ASCII but `|`, at most 128 bytes, empty if it cannot tell.
    pub incarnation: String,
    /// The namespace's marker, as last written.
    pub marker: Option<String>,
    /// The records of the worker IDs asked for that have one, in ascending order.
    pub records: Vec<(u64, String)>,
    /// The highest worker ID with a record in the namespace, when asked for.
    pub highest: Option<u64>,
}

impl Snapshot {
    /// A read at `now_ms` of a store in `incarnation`, with nothing in it.
    pub fn new(now_ms: Option<i64>, incarnation: impl Into<String>) -> Self {
        Snapshot { now_ms, incarnation: incarnation.into(), marker: None, records: Vec::new(), highest: None }
    }

    /// With the marker read.
    #[must_use]
    pub fn with_marker(mut self, marker: Option<String>) -> Self {
        self.marker = marker;
        self
    }

    /// With the records read.
    #[must_use]
    pub fn with_records(mut self, records: Vec<(u64, String)>) -> Self {
        self.records = records;
        self
    }

    /// With the highest worker ID that has a record.
    #[must_use]
    pub fn with_highest(mut self, highest: Option<u64>) -> Self {
        self.highest = highest;
        self
    }

    /// The record of `worker`, if it was read and exists.
    pub fn record(&self, worker: u64) -> Option<&str> {
        self.records.binary_search_by_key(&worker, |(w, _)| *w).ok().map(|i| self.records[i].1.as_str())
    }
}

/// A place in a namespace that holds one value: its marker, or one worker ID's record.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Slot {
    /// The namespace's marker.
    Marker,
    /// The record of a worker ID.
    Worker(u64),
}

/// One compare-and-set: `slot` takes `value` if it holds exactly `expect` (`None`: nothing).
///
/// ```
/// use typed_snowflake::worker::lease::store::{Cas, Slot};
///
/// let create = Cas::new(Slot::Worker(3), None, "r1|1|…");
/// let update = Cas::new(Slot::Worker(3), Some("r1|1|…"), "r1|2|…");
/// assert_eq!((create.expect, update.expect), (None, Some("r1|1|…")));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct Cas<'a> {
    /// Where.
    pub slot: Slot,
    /// What it must hold now: `None` for nothing.
    pub expect: Option<&'a str>,
    /// What it holds after.
    pub value: &'a str,
}

impl<'a> Cas<'a> {
    /// `slot` takes `value` if it holds `expect`.
    pub fn new(slot: Slot, expect: Option<&'a str>, value: &'a str) -> Self {
        Cas { slot, expect, value }
    }
}

/// What a write did.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Written {
    /// Every slot held what was expected, and took its new value.
    Done,
    /// Some slot held something else: nothing was written.
    Conflict,
}

/// A coordination store as the lease protocol sees it: per namespace, a marker and one record
/// per worker ID, each a line of printable ASCII of at most [`MAX_VALUE_LEN`] bytes, read
/// together and written by compare-and-set.
///
/// What every store must do (the conformance suite in `tests/common/conformance.rs` checks
/// each against the reference, [`MemoryLeaseStore`]):
///
/// - **Values are kept as written**, byte for byte, until the protocol writes again; nothing
///   expires or is changed by the store itself.
/// - **A write is atomic**: every [`Cas`] of it holds, and all take their values, or none
///   does ([`Written::Conflict`]). A write has at most two, in distinct slots.
/// - **A write answered [`Written::Done`] is acknowledged**: it survives whatever the store
///   calls durable. A write that failed ([`LeaseError::Store`], [`LeaseError::Timeout`]) may
///   or may not have been applied.
/// - **A read is of acknowledged writes**: a store that may have two primaries for a while
///   (Redis under Sentinel) answers a read or a write only once a majority of its servers
///   hold it, and errs otherwise.
/// - **The incarnation changes where the store may have lost or rolled back acknowledged
///   writes, where it can tell** ([`Snapshot::incarnation`]); the protocol then trusts no
///   record written before.
///
/// What a store may do, and the protocol survives: lose every value, or any one, or the
/// marker alone; roll back all or some of them to an earlier acknowledged state; not answer
/// for a while. Errors that waiting may mend are [`LeaseError::Store`] and
/// [`LeaseError::Timeout`]; anything else is final.
///
/// ```
/// use typed_snowflake::worker::lease::{LeaseStore, MemoryLeaseStore};
/// use typed_snowflake::worker::lease::store::{Cas, Query, Slot, Written};
///
/// let store = MemoryLeaseStore::new();
/// assert_eq!(store.write("shop", &[Cas::new(Slot::Worker(3), None, "a")])?, Written::Done);
/// assert_eq!(store.write("shop", &[Cas::new(Slot::Worker(3), None, "b")])?, Written::Conflict);
/// let read = store.read("shop", &Query::workers(0..32))?;
/// assert_eq!(read.record(3), Some("a"));
/// Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub trait LeaseStore: Send + Sync + fmt::Debug + 'static {
    /// Reads the marker of `namespace` and the records of `query.workers`, with the store's clock and incarnation.
    fn read(&self, namespace: &str, query: &Query) -> Result<Snapshot, LeaseError>;

    /// Writes `ops` in `namespace` atomically, if each slot holds what its op expects.
    fn write(&self, namespace: &str, ops: &[Cas<'_>]) -> Result<Written, LeaseError>;

    /// The store's address without any password, for messages: `redis://127.0.0.1:6379/0`.
    fn describe(&self) -> String;

    /// What the store's configuration costs the leases, in plain words, logged when a lease starts; none by default.
    fn warnings(&self) -> Result<Vec<String>, LeaseError> {
        Ok(Vec::new())
    }
}

impl<S: LeaseStore + ?Sized> LeaseStore for Arc<S> {
    fn read(&self, namespace: &str, query: &Query) -> Result<Snapshot, LeaseError> {
        (**self).read(namespace, query)
    }

    fn write(&self, namespace: &str, ops: &[Cas<'_>]) -> Result<Written, LeaseError> {
        (**self).write(namespace, ops)
    }

    fn describe(&self) -> String {
        (**self).describe()
    }

    fn warnings(&self) -> Result<Vec<String>, LeaseError> {
        (**self).warnings()
    }
}

/// What the stores share: argument checks, tokens, messages.
#[cfg_attr(
    not(any(
        feature = "lease-redis",
        feature = "lease-postgres",
        feature = "lease-mysql",
        feature = "lease-etcd",
        feature = "lease-zookeeper"
    )),
    allow(dead_code)
)]
pub(crate) mod support {
    use super::*;

    impl LeaseError {
        pub(crate) fn store(
            store: impl Into<String>,
            what: impl Into<String>,
            source: impl StdError + Send + Sync + 'static,
        ) -> Self {
            LeaseError::Store { store: store.into(), what: what.into(), source: Arc::new(source) }
        }
    }

    /// A reply from a store that no lease of ours writes (foreign data under our keys or rows).
    #[derive(Debug, Error)]
    #[error("unexpected reply: {0}")]
    pub(crate) struct UnexpectedReply(pub(crate) String);

    /// Checks a namespace: 1 to 64 bytes of `A-Z a-z 0-9 _ . : -` (safe in every store).
    pub(crate) fn check_namespace(namespace: &str) -> Result<(), LeaseError> {
        let bad = |reason: String| LeaseError::BadNamespace { namespace: namespace.to_owned(), reason };
        if namespace.is_empty() {
            return Err(bad("it is empty".into()));
        }
        if namespace.len() > MAX_NAMESPACE_LEN {
            return Err(bad(format!("it is {} bytes long; at most {MAX_NAMESPACE_LEN} fit", namespace.len())));
        }
        if let Some(c) = namespace.chars().find(|&c| !(c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | ':' | '-')))
        {
            return Err(bad(format!("{c:?} is not allowed; use A-Z a-z 0-9 _ . : -")));
        }
        Ok(())
    }

    /// Checks a worker-ID space: `1..=MAX_WORKER_SPACE`.
    pub(crate) fn check_space(space: u64) -> Result<(), LeaseError> {
        if (1..=MAX_WORKER_SPACE).contains(&space) { Ok(()) } else { Err(LeaseError::BadSpace { space }) }
    }

    /// A TTL in whole milliseconds (rounded down), between 1 ms and [`MAX_TTL`].
    pub(crate) fn ttl_ms(ttl: Duration) -> Result<i64, LeaseError> {
        if ttl < Duration::from_millis(1) || ttl > MAX_TTL {
            return Err(LeaseError::BadTtl { ttl });
        }
        i64::try_from(ttl.as_millis()).map_err(|_| LeaseError::BadTtl { ttl })
    }

    /// 64 unpredictable bits without a new dependency, from the standard library's keyed hasher.
    pub(crate) fn random_u64() -> u64 {
        static COUNTER: AtomicU64 = AtomicU64::new(0);
        let mut hasher = RandomState::new().build_hasher();
        hasher.write_u32(std::process::id());
        hasher.write_u128(SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_nanos()));
        hasher.write_u64(COUNTER.fetch_add(1, Ordering::Relaxed));
        std::thread::current().id().hash(&mut hasher);
        hasher.finish()
    }

    /// The longest host name a holder records with its leases, in bytes.
    pub(crate) const HOST_NAME_BYTES: usize = 36;

    /// Who this process is, as it records itself with each lease it takes: `host:pid`, the
    /// host as [`clean_host`] makes it, so that it fits every store's field and separators.
    pub(crate) fn holder_name() -> &'static str {
        static NAME: std::sync::OnceLock<String> = std::sync::OnceLock::new();
        NAME.get_or_init(|| {
            let host = std::fs::read_to_string("/proc/sys/kernel/hostname")
                .ok()
                .or_else(|| std::env::var("HOSTNAME").ok())
                .or_else(|| std::env::var("COMPUTERNAME").ok())
                .unwrap_or_default();
            format!("{}:{}", clean_host(&host), std::process::id())
        })
    }

    /// `host` trimmed, cut to [`HOST_NAME_BYTES`], outside `A-Z a-z 0-9 - . _` made `_`.
    pub(crate) fn clean_host(host: &str) -> String {
        let host: String = host
            .trim()
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() || matches!(c, '-' | '.' | '_') { c } else { '_' })
            .take(HOST_NAME_BYTES)
            .collect();
        if host.is_empty() { "unknown".to_owned() } else { host }
    }

    /// A recorded holder name, if [`holder_name`] could have made it (else it is not shown).
    pub(crate) fn recorded_holder(text: &str) -> Option<String> {
        let (host, pid) = text.rsplit_once(':')?;
        let host_ok = !host.is_empty()
            && host.len() <= HOST_NAME_BYTES
            && host.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '.' | '_'));
        (host_ok && !pid.is_empty() && pid.len() <= 10 && pid.bytes().all(|b| b.is_ascii_digit()))
            .then(|| text.to_owned())
    }

    /// `%2F` and the like as the bytes they stand for, into UTF-8; a lone `%` is an error.
    #[cfg_attr(
        not(any(feature = "lease-redis", feature = "lease-etcd", feature = "lease-zookeeper")),
        allow(dead_code)
    )]
    pub(crate) fn percent_decode(text: &str) -> Result<String, String> {
        let bytes = text.as_bytes();
        let mut out = Vec::with_capacity(bytes.len());
        let mut i = 0;
        while i < bytes.len() {
            if bytes[i] == b'%' {
                let digit = |at: usize| bytes.get(at).and_then(|&b| char::from(b).to_digit(16));
                let (Some(high), Some(low)) = (digit(i + 1), digit(i + 2)) else {
                    return Err("bad percent-encoding".into());
                };
                out.push(u8::try_from(high * 16 + low).expect("two hex digits fit a byte"));
                i += 3;
            } else {
                out.push(bytes[i]);
                i += 1;
            }
        }
        String::from_utf8(out).map_err(|_| "not UTF-8 once percent-decoded".to_owned())
    }

    /// Installs ring as the process's default rustls provider unless one is: with two
    /// compiled in (`lease-zookeeper-tls` brings aws-lc-rs), the drivers' first TLS connection
    /// would panic for want of a default.
    #[cfg(any(
        feature = "lease-redis",
        feature = "lease-postgres",
        feature = "lease-mysql",
        feature = "lease-zookeeper-tls"
    ))]
    pub(crate) fn install_crypto_provider() {
        if rustls::crypto::CryptoProvider::get_default().is_none() {
            // Another thread may have installed one meanwhile: theirs is as good.
            let _ = rustls::crypto::ring::default_provider().install_default();
        }
    }

    /// What a read is doing, for error messages: `reading worker IDs 0..32 of namespace "shop"`.
    pub(crate) fn reading(namespace: &str, query: &Query) -> String {
        let workers = &query.workers;
        match workers.end - workers.start {
            0 => format!("reading namespace {namespace:?}"),
            1 => format!("reading worker ID {} of namespace {namespace:?}", workers.start),
            _ => format!("reading worker IDs {workers:?} of namespace {namespace:?}"),
        }
    }

    /// What a write is doing, for error messages: `writing worker ID 3 of namespace "shop"`.
    pub(crate) fn writing(namespace: &str, ops: &[Cas<'_>]) -> String {
        let slots: Vec<String> = ops
            .iter()
            .map(|op| match op.slot {
                Slot::Marker => "the marker".to_owned(),
                Slot::Worker(worker) => format!("worker ID {worker}"),
            })
            .collect();
        format!("writing {} of namespace {namespace:?}", slots.join(" and "))
    }

    /// Checks a read's arguments: a namespace, at most [`MAX_READ`] worker IDs in the space.
    pub(crate) fn check_query(namespace: &str, query: &Query) -> Result<(), LeaseError> {
        check_namespace(namespace)?;
        let workers = &query.workers;
        if workers.start > workers.end || workers.end - workers.start > MAX_READ || workers.end > MAX_WORKER_SPACE {
            return Err(LeaseError::BadSettings {
                reason: format!(
                    "a read of worker IDs {workers:?}: at most {MAX_READ} at once, below {MAX_WORKER_SPACE}"
                ),
            });
        }
        Ok(())
    }

    /// Checks a write's arguments: one or two ops in distinct slots, within the limits.
    pub(crate) fn check_write(namespace: &str, ops: &[Cas<'_>]) -> Result<(), LeaseError> {
        check_namespace(namespace)?;
        let bad = |reason: String| Err(LeaseError::BadSettings { reason });
        if ops.is_empty() || ops.len() > 2 || (ops.len() == 2 && ops[0].slot == ops[1].slot) {
            return bad(format!("a write of {} ops: one or two, in distinct slots", ops.len()));
        }
        for op in ops {
            if let Slot::Worker(worker) = op.slot
                && worker >= MAX_WORKER_SPACE
            {
                return bad(format!("worker ID {worker} lies outside the leasable space 0..{MAX_WORKER_SPACE}"));
            }
            for value in op.expect.into_iter().chain([op.value]) {
                if value.is_empty() || value.len() > MAX_VALUE_LEN || !value.bytes().all(|b| (0x20..0x7f).contains(&b))
                {
                    return bad(format!(
                        "a value of {} bytes: 1 to {MAX_VALUE_LEN} bytes of printable ASCII",
                        value.len()
                    ));
                }
            }
        }
        Ok(())
    }

    /// `Debug` for a store: its name (never its password) and its timeout.
    #[allow(unused_macros)] // with no store compiled in
    macro_rules! store_debug {
        ($store:ident) => {
            impl std::fmt::Debug for $store {
                fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                    f.debug_struct(stringify!($store))
                        .field("store", &self.name)
                        .field("timeout", &self.timeout)
                        .finish()
                }
            }
        };
    }
    #[allow(unused_imports)]
    pub(crate) use store_debug;
}

#[cfg(test)]
mod tests {
    use super::support::*;
    use super::*;

    /// A driver's error, with no equality of its own.
    #[derive(Debug)]
    struct Driver(&'static str);

    impl fmt::Display for Driver {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str(self.0)
        }
    }

    impl StdError for Driver {}

    #[test]
    fn errors_compare_by_variant_and_fields() {
        let lost = |worker| LeaseError::Lost { namespace: "shop".into(), worker };
        assert_eq!(lost(3), lost(3));
        assert_ne!(lost(3), lost(4));
        assert_ne!(
            LeaseError::BadSettings { reason: "x".into() },
            LeaseError::BadNamespace { namespace: String::new(), reason: "x".into() }
        );
        let skew = |tolerance| LeaseError::ClockSkew {
            store: "redis://127.0.0.1:6379/0".into(),
            local_ms: 10,
            store_ms: 2_000,
            tolerance,
        };
        assert_eq!(skew(Duration::from_secs(1)), skew(Duration::from_secs(1)));
        assert_ne!(skew(Duration::from_secs(1)), skew(Duration::from_secs(2)));
    }

    #[test]
    fn driver_errors_compare_by_their_messages() {
        let store = |message| LeaseError::store("redis://127.0.0.1:1/0", "reading the clock", Driver(message));
        // Two driver errors that say the same, in different allocations.
        assert_eq!(store("refused"), store("refused"));
        assert_ne!(store("refused"), store("reset"));
        let bad_url = |source: Option<&'static str>| LeaseError::BadUrl {
            url: "redis://127.0.0.1:x".into(),
            reason: "invalid port".into(),
            source: source.map(|m| Arc::new(Driver(m)) as Arc<dyn StdError + Send + Sync>),
        };
        assert_eq!(bad_url(Some("invalid port")), bad_url(Some("invalid port")));
        assert_eq!(bad_url(None), bad_url(None));
        assert_ne!(bad_url(Some("invalid port")), bad_url(None));
        assert_ne!(bad_url(Some("invalid port")), bad_url(Some("invalid port number")));
        let thread = |kind| LeaseError::Thread { source: Arc::new(std::io::Error::new(kind, "no threads left")) };
        assert_eq!(thread(std::io::ErrorKind::OutOfMemory), thread(std::io::ErrorKind::OutOfMemory));
        assert_ne!(thread(std::io::ErrorKind::OutOfMemory), thread(std::io::ErrorKind::WouldBlock));
    }

    #[test]
    fn a_store_error_keeps_the_driver_error_as_its_source() {
        let error = LeaseError::store("redis://127.0.0.1:1/0", "reading the clock", Driver("refused"));
        let cause = error.source().expect("the driver's error");
        assert_eq!(cause.to_string(), "refused");
        assert!(error.to_string().ends_with(": refused"), "{error}");
    }

    #[test]
    fn namespaces() {
        for good in ["shop", "a", "orders.eu-west-1:v2", "A_Z", &"n".repeat(64)] {
            assert!(check_namespace(good).is_ok(), "{good:?}");
        }
        let long = "n".repeat(65);
        for (bad, reason) in [
            ("", "it is empty"),
            (long.as_str(), "it is 65 bytes long; at most 64 fit"),
            ("shop floor", "' ' is not allowed"),
            ("{shop}", "'{' is not allowed"),
            ("shop*", "'*' is not allowed"),
            ("shop\n", "'\\n' is not allowed"),
            ("x'; DROP TABLE t; --", "'\\'' is not allowed"),
            ("café", "'é' is not allowed"),
        ] {
            let err = check_namespace(bad).unwrap_err();
            assert!(matches!(err, LeaseError::BadNamespace { .. }), "{bad:?}");
            assert!(err.to_string().contains(reason), "{bad:?}: {err}");
            assert!(err.to_string().starts_with(&format!("bad lease namespace {bad:?}")), "{err}");
        }
    }

    #[test]
    fn spaces_and_ttls() {
        assert!(check_space(1).is_ok());
        assert!(check_space(MAX_WORKER_SPACE).is_ok());
        for bad in [0, MAX_WORKER_SPACE + 1, u64::MAX] {
            let err = check_space(bad).unwrap_err();
            assert_eq!(
                err.to_string(),
                format!("a worker-ID space of {bad} IDs cannot be leased: it must hold 1 to 4194304 (2^22)")
            );
        }
        assert_eq!(ttl_ms(Duration::from_millis(1)).unwrap(), 1);
        assert_eq!(ttl_ms(Duration::from_micros(2_999)).unwrap(), 2);
        assert_eq!(ttl_ms(MAX_TTL).unwrap(), 86_400_000);
        for bad in [Duration::ZERO, Duration::from_micros(999), MAX_TTL + Duration::from_millis(1), Duration::MAX] {
            assert!(matches!(ttl_ms(bad), Err(LeaseError::BadTtl { .. })), "{bad:?}");
        }
    }

    #[test]
    fn holder_names_are_host_and_pid_and_nothing_else() {
        let name = holder_name();
        assert!(name.ends_with(&format!(":{}", std::process::id())), "{name}");
        assert_eq!(recorded_holder(name).as_deref(), Some(name));
        assert_eq!(clean_host(" web-1.internal\n"), "web-1.internal");
        assert_eq!(clean_host("a|b c:d/é"), "a_b_c_d__");
        assert_eq!(clean_host(""), "unknown");
        assert_eq!(clean_host(&"h".repeat(100)).len(), HOST_NAME_BYTES);
        for hostile in [
            "",
            ":1",
            "web:",
            "web:x",
            "web:-1",
            "we b:1",
            "web|x:1",
            "web:12345678901",
            &format!("{}:1", "h".repeat(37)),
        ] {
            assert_eq!(recorded_holder(hostile), None, "{hostile:?}");
        }
        assert_eq!(recorded_holder("db-0.ids.svc:4242").as_deref(), Some("db-0.ids.svc:4242"));
    }

    #[test]
    fn reads_and_writes_are_checked_as_every_store_checks_them() {
        assert!(check_query("shop", &Query::workers(0..MAX_READ)).is_ok());
        for bad in [Query::workers(0..MAX_READ + 1), Query::workers(MAX_WORKER_SPACE..MAX_WORKER_SPACE + 1)] {
            assert!(matches!(check_query("shop", &bad), Err(LeaseError::BadSettings { .. })), "{bad:?}");
        }
        assert!(matches!(check_query("", &Query::workers(0..1)), Err(LeaseError::BadNamespace { .. })));
        let ok = Cas::new(Slot::Worker(3), None, "r1|a b");
        assert!(check_write("shop", &[ok, Cas::new(Slot::Marker, Some("m"), "m2")]).is_ok());
        let long = "x".repeat(MAX_VALUE_LEN + 1);
        for bad in [
            vec![],
            vec![ok, ok],
            vec![ok, ok, Cas::new(Slot::Marker, None, "m")],
            vec![Cas::new(Slot::Worker(MAX_WORKER_SPACE), None, "r")],
            vec![Cas::new(Slot::Worker(1), None, "")],
            vec![Cas::new(Slot::Worker(1), None, &long)],
            vec![Cas::new(Slot::Worker(1), Some("a\nb"), "r")],
            vec![Cas::new(Slot::Worker(1), None, "é")],
        ] {
            assert!(matches!(check_write("shop", &bad), Err(LeaseError::BadSettings { .. })), "{bad:?}");
        }
        assert_eq!(reading("shop", &Query::workers(3..4)), "reading worker ID 3 of namespace \"shop\"");
        assert_eq!(reading("shop", &Query::workers(0..32)), "reading worker IDs 0..32 of namespace \"shop\"");
        assert_eq!(
            writing("shop", &[ok, Cas::new(Slot::Marker, None, "m")]),
            "writing worker ID 3 and the marker of namespace \"shop\""
        );
    }

    #[test]
    fn errors_keep_their_cause_and_clone() {
        let cause = std::io::Error::new(std::io::ErrorKind::ConnectionRefused, "refused");
        let err = LeaseError::store("redis://127.0.0.1:6379/0", "renewing worker ID 3 in namespace \"shop\"", cause);
        // The cause is in the message, and still the source.
        assert_eq!(
            err.to_string(),
            "lease store redis://127.0.0.1:6379/0: renewing worker ID 3 in namespace \"shop\" failed: refused"
        );
        let copy = err.clone();
        assert_eq!(copy.source().map(ToString::to_string).as_deref(), Some("refused"));
        assert_eq!(crate::error::Chain(&copy).to_string(), copy.to_string());
        let thread = LeaseError::Thread { source: Arc::new(std::io::Error::other("no more threads")) };
        assert_eq!(thread.to_string(), "the lease thread could not be started: no more threads");
        assert_eq!(thread.source().map(ToString::to_string).as_deref(), Some("no more threads"));
        let lost = LeaseError::Lost { namespace: "shop".into(), worker: 7 };
        assert_eq!(
            lost.to_string(),
            "the lease on worker ID 7 in namespace \"shop\" is lost: it expired or another holder took it"
        );
        let timeout = LeaseError::Timeout {
            store: "redis://127.0.0.1:6379/0".into(),
            what: "renewing worker ID 3 in namespace \"shop\"".into(),
            after: Duration::from_millis(300),
        };
        assert_eq!(
            timeout.to_string(),
            "lease store redis://127.0.0.1:6379/0: renewing worker ID 3 in namespace \"shop\" did not finish within 300ms"
        );
    }
}
