//! What every coordination store offers a lease: acquire a free worker ID, renew it, release
//! it, and read the store's clock. The stores are blocking by design: a lease renews from a
//! thread of its own, never from inside an async runtime.

use std::error::Error as StdError;
use std::fmt;
use std::hash::{BuildHasher, Hash, Hasher, RandomState};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use thiserror::Error;

// The lease's error and the limit its message quotes live with the errors, below everything
// that returns them (`error.rs`'s `GenerateError::Lease` carries it); re-exported here, where
// the stores' contract names them.
pub use crate::error::lease::{LeaseError, MAX_WORKER_SPACE};

/// How long one round trip to a store may take before it is abandoned with
/// [`LeaseError::Timeout`]: 2 s, unless the store is told otherwise.
///
/// ```
/// use std::time::Duration;
/// use typed_snowflake::worker::lease::DEFAULT_STORE_TIMEOUT;
///
/// assert_eq!(DEFAULT_STORE_TIMEOUT, Duration::from_secs(2));
/// Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub const DEFAULT_STORE_TIMEOUT: Duration = Duration::from_secs(2);

/// The default largest difference between the local clock and the store's at acquisition: 1 s.
/// A lease takes it unless told otherwise, and so does the etcd store, which compares clocks
/// itself.
///
/// ```
/// use std::time::Duration;
/// use typed_snowflake::worker::lease::DEFAULT_CLOCK_TOLERANCE;
///
/// assert_eq!(DEFAULT_CLOCK_TOLERANCE, Duration::from_secs(1));
/// Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub const DEFAULT_CLOCK_TOLERANCE: Duration = Duration::from_secs(1);

/// The environment variable naming a PEM file of CA certificates that the lease stores trust
/// for TLS when their URL names none (`ssl_ca_certs=` for Redis, `sslrootcert=` for
/// PostgreSQL, `ssl-ca=` for MySQL and MariaDB). Unset, the system's trusted roots are used.
///
/// ```
/// assert_eq!(typed_snowflake::worker::lease::CA_ENV, "SNOWFLAKE_LEASE_CA");
/// Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub const CA_ENV: &str = "SNOWFLAKE_LEASE_CA";

/// The longest namespace, in bytes. Namespaces are made of `A-Z a-z 0-9 _ . : -`.
///
/// ```
/// use typed_snowflake::worker::lease::MAX_NAMESPACE_LEN;
///
/// assert_eq!(MAX_NAMESPACE_LEN, 64);
/// Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub const MAX_NAMESPACE_LEN: usize = 64;

/// The longest lease a store hands out: one day. A lease renews every few seconds; a TTL of
/// days would leave a crashed holder's worker ID blocked for as long.
///
/// ```
/// use std::time::Duration;
/// use typed_snowflake::worker::lease::MAX_TTL;
///
/// assert_eq!(MAX_TTL, Duration::from_secs(24 * 60 * 60));
/// Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub const MAX_TTL: Duration = Duration::from_secs(24 * 60 * 60);

/// What an acquisition hands out: a worker ID, and what its holder needs to renew it and to
/// start after every previous holder.
///
/// ```
/// use typed_snowflake::worker::lease::Grant;
///
/// let grant = Grant {
///     worker: 7,
///     token: "5f0c6a1e9b2d4c3a8e7f6a5b4c3d2e1f".into(),
///     fence: 42,
///     previous_high_water_ms: Some(1_700_000_000_000),
///     store_now_ms: 1_700_000_060_000,
///     namespace_since_ms: Some(1_600_000_000_000),
/// };
/// // Issue only above what the previous holder of this worker ID may have issued.
/// let floor_ms = grant.previous_high_water_ms.map_or(grant.store_now_ms, |hw| hw.max(grant.store_now_ms));
/// assert_eq!(floor_ms, 1_700_000_060_000);
/// Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Grant {
    /// The worker ID, in `0..space`.
    pub worker: u64,
    /// Unique per acquisition: renewals and the release present it to prove the lease is
    /// still this holder's (32 hexadecimal digits).
    pub token: String,
    /// The fencing number: strictly increasing per namespace and worker ID, so a later holder
    /// of a worker ID always has a higher fence than an earlier one.
    pub fence: u64,
    /// The highest Unix millisecond any previous holder of this worker ID recorded (its last
    /// issued timestamp or its fence deadline, whichever is later). The new holder must issue
    /// only above it. `None` when the store has no record it can vouch for: the worker ID was
    /// never leased in this namespace, or the store lost its data (a Redis restarted empty,
    /// a flush, a table emptied) and an earlier holder may still be issuing on it.
    pub previous_high_water_ms: Option<i64>,
    /// The store's clock at acquisition, in Unix milliseconds.
    pub store_now_ms: i64,
    /// Since when (the store's clock, Unix ms) the store has known the namespace without
    /// losing its records: a worker ID it has no record of was then never used since, and
    /// only holders from before, who reserved at most `W` ahead, may still issue on it. A
    /// grant without a record starts above this plus `W` plus the clock tolerance, so a
    /// namespace known for longer starts its never-used worker IDs at once. `None` when the
    /// store cannot say (it counts as the store's clock now: the grant waits out `W`).
    pub namespace_since_ms: Option<i64>,
}

/// What an acquisition asks a store for: a free worker ID of `0..space` in a namespace, for
/// a TTL; the worker ID to try first (the one a holder had before its lease was lost), and a
/// fencing number the grant's must exceed (the last one the holder saw, so that fencing
/// numbers never go backwards, even across a store that lost its data).
///
/// ```
/// use std::time::Duration;
/// use typed_snowflake::worker::lease::Claim;
///
/// let claim = Claim::new("shop", 32, Duration::from_secs(10)).prefer(7).fence_above(41);
/// assert_eq!((claim.namespace, claim.space, claim.prefer, claim.fence_above), ("shop", 32, Some(7), 41));
/// Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Claim<'a> {
    /// The namespace.
    pub namespace: &'a str,
    /// The size of the worker-ID space: worker IDs `0..space`.
    pub space: u64,
    /// How long the store keeps the lease without a renewal.
    pub ttl: Duration,
    /// The worker ID to try first, if it is free.
    pub prefer: Option<u64>,
    /// The grant's fencing number is higher than this.
    pub fence_above: u64,
}

impl<'a> Claim<'a> {
    /// A claim on any free worker ID of `0..space` in `namespace` for `ttl`.
    pub fn new(namespace: &'a str, space: u64, ttl: Duration) -> Self {
        Claim { namespace, space, ttl, prefer: None, fence_above: 0 }
    }

    /// Tries `worker` first.
    #[must_use]
    pub fn prefer(mut self, worker: u64) -> Self {
        self.prefer = Some(worker);
        self
    }

    /// Asks for a fencing number above `fence`.
    #[must_use]
    pub fn fence_above(mut self, fence: u64) -> Self {
        self.fence_above = fence;
        self
    }
}

/// One worker ID of a namespace as its store records it: whether it is leased, by whom, under
/// which fencing number and for how long still, and the high water its holders recorded.
/// [`LeaseStore::list`] gives one for every worker ID the store has a record of.
///
/// ```
/// use std::time::Duration;
/// use typed_snowflake::worker::lease::WorkerRecord;
///
/// let record = WorkerRecord::new(7)
///     .leased_by(Some("orders-5d9c7:4242".into()), 1_700_000_000_000_000, Some(Duration::from_secs(8)))
///     .high_water(Some(1_700_000_010_000));
/// assert!(record.leased);
/// assert_eq!(record.holder.as_deref(), Some("orders-5d9c7:4242"));
/// assert_eq!(WorkerRecord::new(8).high_water(Some(1)).leased, false);
/// Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct WorkerRecord {
    /// The worker ID.
    pub worker: u64,
    /// Whether a live lease holds it.
    pub leased: bool,
    /// The holder of the live lease, as it recorded itself: `host:pid` (the host name, cut to
    /// 36 bytes, and the process ID). `None` when free, or when the holder recorded no name
    /// (an earlier version of this crate).
    pub holder: Option<String>,
    /// The live lease's fencing number; `None` when free.
    pub fence: Option<u64>,
    /// How long the live lease lasts without a renewal, on the store's clock. `None` when
    /// free, and in ZooKeeper, where a lease lives as long as its holder's session.
    pub expires_in: Option<Duration>,
    /// The high water the holders of this worker ID recorded (Unix ms): the later of the last
    /// timestamp issued and the fence deadline of the last renewal. A new holder issues only
    /// above it. `None`: nothing recorded.
    pub high_water_ms: Option<i64>,
}

impl WorkerRecord {
    /// A free worker ID with nothing recorded.
    pub fn new(worker: u64) -> Self {
        WorkerRecord { worker, leased: false, holder: None, fence: None, expires_in: None, high_water_ms: None }
    }

    /// Leased by `holder` under `fence`, for `expires_in` more.
    #[must_use]
    pub fn leased_by(mut self, holder: Option<String>, fence: u64, expires_in: Option<Duration>) -> Self {
        self.leased = true;
        self.holder = holder;
        self.fence = Some(fence);
        self.expires_in = expires_in;
        self
    }

    /// With the high water recorded for it.
    #[must_use]
    pub fn high_water(mut self, high_water_ms: Option<i64>) -> Self {
        self.high_water_ms = high_water_ms;
        self
    }
}

/// The faults a lease store may have, as its adapter declares them
/// ([`LeaseStore::faults`]): what the lease protocol must survive on that store. The model
/// check and the simulation of the protocol give each store's world exactly these faults, and
/// the docs' fault tables (`docs/stores.md`) follow them.
///
/// ```
/// use typed_snowflake::worker::lease::StoreFaults;
///
/// let sentinel = StoreFaults::REDIS_SENTINEL;
/// assert!(sentinel.loses_data && sentinel.two_primaries && !sentinel.sessions_expire);
/// assert!(!StoreFaults::SQL.deleted_behind_holder);
/// assert!(StoreFaults::ETCD.no_clock && StoreFaults::ETCD.member_hangs);
/// Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct StoreFaults {
    /// It may lose its data: a restart without persistence, a flush, a table emptied, a
    /// cluster rebuilt empty. A grant without a record then waits out every earlier holder.
    pub loses_data: bool,
    /// A replica may be promoted while the old primary still takes requests from some
    /// clients (two primaries for a while; a stale replica promoted).
    pub two_primaries: bool,
    /// A lease's record may be deleted behind its live holder, and created afresh by another.
    pub deleted_behind_holder: bool,
    /// A lease lives as long as a session that the servers expire when they hear nothing.
    pub sessions_expire: bool,
    /// One of several servers may hang (accept connections, answer nothing) while the
    /// others serve.
    pub member_hangs: bool,
    /// It has no clock of its own: the holders' clocks must agree within the tolerance of
    /// each other, and a holder's wall clock stepping back must not read as a skew.
    pub no_clock: bool,
}

impl StoreFaults {
    /// Every fault: what a store of a user's own is assumed to have.
    pub const ANY: StoreFaults = StoreFaults {
        loses_data: true,
        two_primaries: true,
        deleted_behind_holder: true,
        sessions_expire: true,
        member_hangs: true,
        no_clock: true,
    };
    /// Redis (or Valkey), one server: it may restart empty, be flushed, or lose a key.
    pub const REDIS: StoreFaults = StoreFaults {
        loses_data: true,
        two_primaries: false,
        deleted_behind_holder: true,
        sessions_expire: false,
        member_hangs: false,
        no_clock: false,
    };
    /// Redis under Sentinel: also a replica promoted while the old master lives on.
    pub const REDIS_SENTINEL: StoreFaults = StoreFaults { two_primaries: true, ..StoreFaults::REDIS };
    /// PostgreSQL, MySQL, MariaDB: rows deleted or a database restored (one primary, the
    /// database's clock).
    pub const SQL: StoreFaults = StoreFaults { deleted_behind_holder: false, ..StoreFaults::REDIS };
    /// etcd: a member may hang; no clock; a cluster rebuilt empty.
    pub const ETCD: StoreFaults = StoreFaults {
        loses_data: true,
        two_primaries: false,
        deleted_behind_holder: false,
        sessions_expire: false,
        member_hangs: true,
        no_clock: true,
    };
    /// ZooKeeper: a worker znode deleted behind its holder, sessions that expire, an ensemble
    /// rebuilt empty.
    pub const ZOOKEEPER: StoreFaults = StoreFaults {
        loses_data: true,
        two_primaries: false,
        deleted_behind_holder: true,
        sessions_expire: true,
        member_hangs: false,
        no_clock: false,
    };
}

/// A coordination store that leases worker IDs: Redis (`RedisLeaseStore`, feature
/// `lease-redis`), PostgreSQL or MySQL/MariaDB (`SqlLeaseStore`, features `lease-postgres`,
/// `lease-mysql`), etcd (`EtcdLeaseStore`, `lease-etcd`) or ZooKeeper (`ZooKeeperLeaseStore`,
/// `lease-zookeeper`).
///
/// Every method blocks for at most the store's timeout per round trip (an acquisition reads
/// which worker IDs are held, up to 1024 per round trip, and makes one more for each free one
/// it tries), and must not be called from inside an async
/// runtime. A connection that failed is replaced on the next call. A call that timed out may
/// still take effect on the server afterwards (a renewal may extend the lease, a release may
/// free it): a holder counts its lease from its last renewal that succeeded, never from one that
/// timed out.
///
/// ```
/// use std::time::Duration;
/// use typed_snowflake::worker::lease::{Claim, LeaseError, LeaseStore};
///
/// /// Holds a worker ID of `0..32` in namespace "shop" for one renewal, then frees it.
/// fn hold_once(store: &dyn LeaseStore) -> Result<u64, LeaseError> {
///     let ttl = Duration::from_secs(10);
///     let grant = store.acquire(&Claim::new("shop", 32, ttl))?;
///     let last_issued_ms = grant.store_now_ms;
///     match store.renew("shop", &grant, ttl, last_issued_ms) {
///         Ok(()) => store.release("shop", &grant, last_issued_ms)?,
///         Err(LeaseError::Lost { .. }) => eprintln!("stop issuing on worker {}", grant.worker),
///         Err(other) => return Err(other),
///     }
///     Ok(grant.worker)
/// }
/// Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub trait LeaseStore: Send + Sync + fmt::Debug + 'static {
    /// Leases a free worker ID of `0..claim.space` for `claim.ttl`: the preferred one if it
    /// is free, else the first free one from a random start. None free:
    /// [`LeaseError::NoFreeWorker`].
    ///
    /// The grant's fencing number is higher than every earlier grant's for that worker ID
    /// and higher than `claim.fence_above`, even after the store lost its data: stores take
    /// it from their clock in microseconds when that is higher than the last one. The grant's
    /// `previous_high_water_ms` is `None` whenever the store cannot vouch for that worker ID's
    /// history (no record of it, or a fencing counter that had to start again): the holder
    /// then waits out every earlier holder before issuing (see [`WorkerLease`](super::WorkerLease)).
    fn acquire(&self, claim: &Claim<'_>) -> Result<Grant, LeaseError>;

    /// Extends the lease to `ttl` from now on the store's clock, only while it is still this
    /// grant's (the token matches and it has not expired), and records `high_water_ms` (never
    /// lowering what is stored). Not this grant's any more: [`LeaseError::Lost`].
    fn renew(&self, namespace: &str, grant: &Grant, ttl: Duration, high_water_ms: i64) -> Result<(), LeaseError>;

    /// Records the final high water (replacing what is stored: the holder has stopped
    /// issuing, and the fence deadlines its renewals recorded lie beyond its last ID, so the
    /// next holder may start right after that ID) and frees the worker ID, only if the lease
    /// is still this grant's. Not this grant's any more:
    /// [`LeaseError::Lost`], and nothing is changed.
    fn release(&self, namespace: &str, grant: &Grant, high_water_ms: i64) -> Result<(), LeaseError>;

    /// The store's clock, in Unix milliseconds.
    fn now_ms(&self) -> Result<i64, LeaseError>;

    /// The store's address without any password, for messages:
    /// `redis://127.0.0.1:6379/0`.
    fn describe(&self) -> String;

    /// The faults this store may have (see [`StoreFaults`]); a store of a user's own is
    /// assumed to have them all ([`StoreFaults::ANY`]).
    fn faults(&self) -> StoreFaults {
        StoreFaults::ANY
    }

    /// Every worker ID of `namespace` the store has a record of (a live lease, a recorded high
    /// water, or both), in ascending order: what `snowflake leases` shows. A read for
    /// operators, not part of the lease protocol: it takes no lock, and a lease may change
    /// while it reads. Stores that cannot list (the default) answer
    /// [`LeaseError::BadSettings`].
    fn list(&self, namespace: &str) -> Result<Vec<WorkerRecord>, LeaseError> {
        Err(LeaseError::BadSettings {
            reason: format!("lease store {} cannot list the leases of namespace {namespace:?}", self.describe()),
        })
    }
}

/// What the stores share: argument checks, tokens, messages. Unused when no store is
/// compiled in.
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

    /// A reply from a store that no lease of ours writes: the store holds foreign data under our
    /// keys or rows.
    #[derive(Debug, Error)]
    #[error("unexpected reply: {0}")]
    pub(crate) struct UnexpectedReply(pub(crate) String);

    /// Checks a namespace: 1 to 64 bytes of `A-Z a-z 0-9 _ . : -`, so it is safe in a Redis key
    /// and equal under every SQL collation only to itself.
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

    /// 64 unpredictable bits without a new dependency: the standard library's randomly keyed
    /// hasher over the process, the time, a counter and the thread.
    pub(crate) fn random_u64() -> u64 {
        static COUNTER: AtomicU64 = AtomicU64::new(0);
        let mut hasher = RandomState::new().build_hasher();
        hasher.write_u32(std::process::id());
        hasher.write_u128(SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_nanos()));
        hasher.write_u64(COUNTER.fetch_add(1, Ordering::Relaxed));
        std::thread::current().id().hash(&mut hasher);
        hasher.finish()
    }

    /// How many worker IDs an acquisition looks at in one round trip before it tries the
    /// free ones among them.
    pub(crate) const SCAN_CHUNK: u64 = 1024;

    /// The order an acquisition tries worker IDs in: the preferred one (if it lies in the
    /// space) alone, then all of `0..space` from a random start, in ranges of at most
    /// [`SCAN_CHUNK`] IDs.
    pub(crate) fn scan_order(space: u64, prefer: Option<u64>) -> impl Iterator<Item = std::ops::Range<u64>> {
        let start = random_u64() % space;
        let chunks = |range: std::ops::Range<u64>| {
            range.clone().step_by(SCAN_CHUNK as usize).map(move |lo| lo..(lo + SCAN_CHUNK).min(range.end))
        };
        let first = prefer.filter(|&worker| worker < space).map(|worker| worker..worker + 1);
        first.into_iter().chain(chunks(start..space)).chain(chunks(0..start))
    }

    /// The longest host name a holder records with its leases, in bytes.
    pub(crate) const HOST_NAME_BYTES: usize = 36;

    /// Who this process is, as it records itself with each lease it takes: `host:pid`, the
    /// host name cut to [`HOST_NAME_BYTES`] and made of `A-Z a-z 0-9 - . _` only (anything else
    /// becomes `_`), so that it fits every store's field and splits no store's separator.
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

    /// `host` trimmed, cut to [`HOST_NAME_BYTES`], with every character outside
    /// `A-Z a-z 0-9 - . _` replaced by `_`; `unknown` when empty.
    pub(crate) fn clean_host(host: &str) -> String {
        let host: String = host
            .trim()
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() || matches!(c, '-' | '.' | '_') { c } else { '_' })
            .take(HOST_NAME_BYTES)
            .collect();
        if host.is_empty() { "unknown".to_owned() } else { host }
    }

    /// A recorded holder name, if it is one this crate could have written (`host:pid`, each
    /// part as [`holder_name`] makes it): a record written otherwise shows no holder rather
    /// than something a store's reader would have to trust.
    pub(crate) fn recorded_holder(text: &str) -> Option<String> {
        let (host, pid) = text.rsplit_once(':')?;
        let host_ok = !host.is_empty()
            && host.len() <= HOST_NAME_BYTES
            && host.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '.' | '_'));
        (host_ok && !pid.is_empty() && pid.len() <= 10 && pid.bytes().all(|b| b.is_ascii_digit()))
            .then(|| text.to_owned())
    }

    /// `%2F` and the like as the bytes they stand for; the result must be UTF-8. A `%` not
    /// followed by two hexadecimal digits is an error, not a literal.
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

    /// Installs ring as the process's default rustls provider unless one is installed. redis-rs,
    /// sqlx and zookeeper-client build their TLS configurations with the default provider, and
    /// a process whose crates compile two providers in (`lease-zookeeper-tls` brings
    /// aws-lc-rs beside ring) has none until someone installs one: without this, their first
    /// TLS connection panics.
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

    /// A fresh holder token: 32 hexadecimal digits.
    pub(crate) fn new_token() -> String {
        format!("{:016x}{:016x}", random_u64(), random_u64())
    }

    /// What an operation is doing, for error messages.
    pub(crate) fn acquiring(namespace: &str) -> String {
        format!("acquiring a worker ID in namespace {namespace:?}")
    }

    /// What a listing is doing, for error messages.
    pub(crate) fn listing(namespace: &str) -> String {
        format!("listing the leases of namespace {namespace:?}")
    }

    /// What an operation on one worker ID is doing, for error messages.
    pub(crate) fn doing(verb: &str, namespace: &str, worker: u64) -> String {
        format!("{verb} worker ID {worker} in namespace {namespace:?}")
    }
}

/// Checks that `error`, a store's failure to reach a server that refused the connection,
/// names the system's cause once: in its own message, in the chain `generate()` panics with,
/// and in the start-up check's report.
#[cfg(all(test, any(feature = "lease-redis", feature = "lease-postgres", feature = "lease-mysql")))]
pub(crate) fn assert_refusal_named_once(error: &LeaseError) {
    use crate::check::Problem;
    use crate::error::{Chain, GenerateError, WorkerError};

    assert!(matches!(error, LeaseError::Store { .. }), "{error:?}");
    // The system's own words, at the end of the chain: "Connection refused (os error 111)".
    let mut deepest: &(dyn StdError + 'static) = error;
    while let Some(cause) = deepest.source() {
        deepest = cause;
    }
    // (Redis wraps it in an `Arc`, so it is told by its words, not by its type.)
    let cause = deepest.to_string();
    assert!(cause.contains("refused"), "the last cause is the system's refusal: {cause}");
    let once = |text: &str| assert_eq!(text.matches(&cause).count(), 1, "{cause:?} once in: {text}");
    let message = error.to_string();
    assert!(message.ends_with(&cause), "the message names its cause: {message}");
    assert!(message.contains(" failed: "), "{message}");
    once(&message);
    assert!(error.source().is_some(), "the cause is still the source");
    once(&Chain(error).to_string());
    let generate = GenerateError::Worker(WorkerError::Lease(error.clone()));
    once(&generate.to_string());
    once(&Chain(&generate).to_string());
    once(&Problem { type_name: None, error: generate.clone() }.to_string());
    let failing = std::panic::AssertUnwindSafe(|| crate::id::generate_failed("OrderId", &generate));
    let panic = std::panic::catch_unwind(failing).unwrap_err();
    let panic = panic.downcast_ref::<String>().expect("a formatted panic message");
    assert!(panic.starts_with("OrderId::generate() failed: lease store "), "{panic}");
    once(panic);
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
    fn scans_cover_the_space_once() {
        for space in [1, 2, 32, SCAN_CHUNK - 1, SCAN_CHUNK, SCAN_CHUNK + 1, 5 * SCAN_CHUNK + 17] {
            for _ in 0..20 {
                let chunks: Vec<_> = scan_order(space, None).collect();
                assert!(chunks.iter().all(|c| !c.is_empty() && c.end - c.start <= SCAN_CHUNK), "{chunks:?}");
                let mut seen: Vec<u64> = chunks.into_iter().flatten().collect();
                seen.sort_unstable();
                assert_eq!(seen, (0..space).collect::<Vec<_>>());
            }
        }
        let starts: std::collections::HashSet<u64> =
            (0..200).map(|_| scan_order(32, None).next().unwrap().start).collect();
        assert!(starts.len() > 10, "random starts: {starts:?}");
        for _ in 0..20 {
            let mut order = scan_order(32, Some(7));
            assert_eq!(order.next(), Some(7..8), "the preferred worker ID comes first");
            let rest: std::collections::BTreeSet<u64> = order.flatten().collect();
            assert_eq!(rest, (0..32).collect(), "then the whole space");
        }
        assert!(scan_order(32, Some(32)).flatten().all(|w| w < 32), "a preference outside the space is ignored");
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
    fn a_store_that_cannot_list_says_so() {
        #[derive(Debug)]
        struct Unlisted;
        impl LeaseStore for Unlisted {
            fn acquire(&self, claim: &Claim<'_>) -> Result<Grant, LeaseError> {
                Err(LeaseError::NoFreeWorker { namespace: claim.namespace.to_owned(), space: claim.space })
            }
            fn renew(&self, namespace: &str, grant: &Grant, _: Duration, _: i64) -> Result<(), LeaseError> {
                Err(LeaseError::Lost { namespace: namespace.to_owned(), worker: grant.worker })
            }
            fn release(&self, namespace: &str, grant: &Grant, _: i64) -> Result<(), LeaseError> {
                Err(LeaseError::Lost { namespace: namespace.to_owned(), worker: grant.worker })
            }
            fn now_ms(&self) -> Result<i64, LeaseError> {
                Ok(0)
            }
            fn describe(&self) -> String {
                "mine://".to_owned()
            }
        }
        let err = Unlisted.list("shop").unwrap_err();
        assert_eq!(err.to_string(), "lease settings: lease store mine:// cannot list the leases of namespace \"shop\"");
    }

    #[test]
    fn tokens_are_distinct_hex() {
        let tokens: std::collections::HashSet<String> = (0..10_000).map(|_| new_token()).collect();
        assert_eq!(tokens.len(), 10_000);
        assert!(tokens.iter().all(|t| t.len() == 32 && t.bytes().all(|b| b.is_ascii_hexdigit())));
    }

    #[test]
    fn errors_keep_their_cause_and_clone() {
        let cause = std::io::Error::new(std::io::ErrorKind::ConnectionRefused, "refused");
        let err = LeaseError::store("redis://127.0.0.1:6379/0", doing("renewing", "shop", 3), cause);
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
            what: doing("renewing", "shop", 3),
            after: Duration::from_millis(300),
        };
        assert_eq!(
            timeout.to_string(),
            "lease store redis://127.0.0.1:6379/0: renewing worker ID 3 in namespace \"shop\" did not finish within 300ms"
        );
    }
}
