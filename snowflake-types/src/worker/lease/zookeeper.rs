//! Worker-ID leases in ZooKeeper: the znodes are described on [`ZooKeeperLeaseStore`].

use std::collections::{HashMap, HashSet};
use std::future::Future;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use tokio::runtime::Runtime;
use zookeeper_client as zk;

use super::url::{StoreKind, StoreUrl};
use crate::clock::wall_us;
#[cfg(feature = "lease-zookeeper-tls")]
use tls::{Tls, TlsHandshakeFailed};

#[cfg(feature = "lease-zookeeper-tls")]
mod tls;
use super::store::support::{
    UnexpectedReply, acquiring, check_namespace, check_space, doing, holder_name, listing, new_token, recorded_holder,
    scan_order, ttl_ms,
};
use super::store::{Claim, DEFAULT_STORE_TIMEOUT, Grant, LeaseError, LeaseStore, StoreFaults, WorkerRecord};

/// How many times a renewal or a release reads and writes again when the high-water znode
/// changed between the two.
const WRITE_ATTEMPTS: usize = 3;

/// The session timeout of the store's own session, which reads the servers' clock and lists
/// the leases.
const CLOCK_SESSION: Duration = Duration::from_secs(10);

/// Worker-ID leases in a ZooKeeper ensemble, through `zookeeper-client`.
///
/// URL: `zk://host[:port][,host[:port]…][/path]` (port 2181 by default): every znode lives
/// under `path`, created as needed. **TLS**: `zks://host[:port][,host[:port]…][/path]` (also
/// written `zk+tls://`), port 2281 by default (ZooKeeper's usual `secureClientPort`), trusts
/// the CA certificates of the PEM file named by the query parameter `ca=<path>`
/// (percent-decoded), or else by the environment variable [`CA_ENV`](super::CA_ENV), or else
/// the system's trusted roots; each server's certificate must be valid for the host name (or
/// IP address) the URL gives it. A CA file that cannot be read is [`LeaseError::BadUrl`]; a
/// server whose certificate is not trusted, or a plain-text port asked for TLS, is a store
/// error naming the failed handshake, within the store's timeout. Authentication (SASL,
/// digest, client certificates) is not supported: a URL with a user name or password is
/// refused.
///
/// Each grant has a ZooKeeper session of its own whose timeout is the lease's TTL, and these
/// znodes, for namespace `shop` and worker ID 7:
///
/// - `/snowflake/shop/workers/7`: ephemeral, tied to the grant's session, holding
///   `token|fence|name` (the holder's `host:pid`). An acquisition creates it only if it is absent; ZooKeeper deletes it when
///   the session ends.
/// - `/snowflake/shop/high-water/7`: persistent, `fence|high water`: the last fencing number
///   handed out for worker 7, and the high water its holders recorded (Unix ms, empty before
///   the first renewal).
///
/// An acquisition creates the first and writes the second in one `multi`, which fails if the
/// worker znode exists or the high-water znode changed since it was read (its version).
/// A renewal reads the high-water znode (version `h`), then the worker znode, which must be
/// ephemeral to the grant's session and hold its token and fence (version `v`), then commits
/// a `multi` on the grant's session: a check that the worker znode is at `v` and the write of
/// the high water at `h`. It succeeds only while the session lives, and it refreshes the
/// session. A worker znode deleted behind the holder's back (an operator's `deleteall`, a
/// cleanup job) while its session lives makes the next renewal [`LeaseError::Lost`], also
/// when another holder has created it afresh (a new znode is at version 0 too, so the
/// version alone cannot tell): that holder's acquisition wrote the high-water znode, so it
/// came either before the renewal's first read (which then finds the other holder's znode)
/// or after it (the `multi` then fails on `h`, and the next read finds it). The read of the
/// worker znode also sets a watch: ZooKeeper reports a deletion between that read and the
/// `multi` to the session before the `multi`'s reply, and that renewal is `Lost` too (this
/// covers high-water znodes deleted as well, whose version starts again). A release writes
/// its record the same way, then closes the session, so that ZooKeeper deletes the session's
/// own worker znode, never a znode that replaced it; it does not delete by path.
///
/// **No overlap with the next holder.** A holder issues only below the fence deadline its
/// last successful renewal recorded as high water, and its fence falls there unless another
/// renewal succeeds. Every renewal that succeeds was committed before the next holder's
/// acquisition (which makes every later one fail, as above), and that acquisition reads the
/// high water as it stands then, which never goes down while holders renew: the next holder
/// starts above every ID the last one issued or may still issue before its fence falls.
/// Deleting the high-water znodes too is a loss of data: the next holder then gets no high
/// water and waits out every earlier holder. A renewal or release that was between its reads
/// and its `multi` at that moment may write its record into the new high-water znode (and
/// reports `Lost`).
///
/// **The session expires** on the servers when they hear nothing for the TTL (a process that
/// froze or lost the network), and the store also closes it when no renewal succeeded for
/// the TTL (a holder that stopped renewing): either way the worker znode goes, and the
/// holder's next renewal is [`LeaseError::Lost`]; the lease's recovery then acquires again,
/// with a new session. A renewal may not ask for a longer TTL than the session has. Renewals
/// and the release must come from the store that made the acquisition, where the grant's
/// session lives (a [`WorkerLease`](super::WorkerLease) keeps its store): from another store
/// they are [`LeaseError::Lost`].
///
/// **Fencing numbers** are the local clock in microseconds, or one more than the last fence
/// of the worker ID (or than the claim's) when that is higher, written in the acquisition's
/// `multi`: a later holder of a worker ID always has a higher fence. The worker znode's
/// `czxid` orders acquisitions the same way while the ensemble keeps its data, but it starts
/// again when an ensemble is rebuilt empty, and it lies far below the clock, so it is not used.
/// An ensemble that lost its data has no high-water znode: the grant then carries no high
/// water, and the holder waits out every earlier holder before it issues.
///
/// **Clock.** [`now_ms`](LeaseStore::now_ms) is the servers' clock: the `mtime` of the znode
/// `/snowflake/clock`, which it writes (the time the leader stamped on the write), so the
/// lease compares the local clock with the ensemble's at every acquisition, as with the other
/// stores.
///
/// The servers bound session timeouts (`minSessionTimeout`, `maxSessionTimeout`, by default 2
/// and 20 ticks: 4 s to 40 s): a TTL above the maximum is refused when acquiring, one below the
/// minimum is raised by the servers (the worker ID then frees later after a crash, never
/// earlier).
///
/// Meituan's Leaf takes worker IDs from ZooKeeper too, differently: a persistent sequential
/// znode per `ip:port` keeps a node's worker ID forever (a local file caches it for when
/// ZooKeeper is down), and a node checks its clock against the times the other nodes
/// reported. Nothing expires there: a worker ID is never reused by another node, so a space
/// of 1024 serves 1024 `ip:port`s in total, and two processes given the same `ip:port`, or a
/// cached file copied to another host, share a worker ID. Here a worker ID is held only while
/// its session lives and is renewed, and it is reused after its holder is gone, above the high
/// water that holder recorded (or after waiting out the TTL when there is no record).
///
/// The store runs its calls on a small tokio runtime of its own (one worker thread): its
/// methods must not be called from inside an async runtime. Each round trip is bounded by the
/// store's timeout (default [`DEFAULT_STORE_TIMEOUT`]).
///
/// ```no_run
/// use std::time::Duration;
/// use typed_snowflake::worker::lease::{Claim, LeaseStore, ZooKeeperLeaseStore};
///
/// let store = ZooKeeperLeaseStore::open("zk://127.0.0.1:2181/apps")?.timeout(Duration::from_millis(500));
/// let grant = store.acquire(&Claim::new("shop", 32, Duration::from_secs(10)))?;
/// println!("worker {} leased from {}", grant.worker, store.describe());
/// store.release("shop", &grant, grant.store_now_ms)?;
///
/// // Over TLS, the servers' certificates checked against a CA file.
/// let store = ZooKeeperLeaseStore::open("zks://zk1.internal,zk2.internal/apps?ca=/etc/zookeeper/ca.pem")?;
/// assert_eq!(store.describe(), "zks://zk1.internal:2281,zk2.internal:2281/apps");
/// Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct ZooKeeperLeaseStore {
    runtime: Option<Runtime>,
    /// The connect string: `host:port,…`, each prefixed `tcp+tls://` for TLS.
    servers: String,
    /// The servers' `host:port`s, for the diagnosis of a failed TLS handshake.
    #[cfg(feature = "lease-zookeeper-tls")]
    addresses: Vec<String>,
    #[cfg(feature = "lease-zookeeper-tls")]
    tls: Option<Tls>,
    prefix: String,
    /// The sessions of the grants this store handed out, by token.
    held: Arc<Mutex<HashMap<String, Held>>>,
    /// The session that reads the clock.
    clock: Mutex<Option<zk::Client>>,
    timeout: Duration,
    name: String,
}

/// A grant's session.
struct Held {
    client: zk::Client,
    namespace: String,
    worker: u64,
    fence: u64,
    /// When the store closes the session unless a renewal succeeds first.
    deadline: Instant,
}

impl std::fmt::Debug for ZooKeeperLeaseStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ZooKeeperLeaseStore").field("store", &self.name).field("timeout", &self.timeout).finish()
    }
}

impl Drop for ZooKeeperLeaseStore {
    fn drop(&mut self) {
        // The sessions close with their clients.
        lock(&self.held).clear();
        if let Some(runtime) = self.runtime.take() {
            runtime.shutdown_background();
        }
    }
}

/// Spawns zookeeper-client's tasks onto the tokio runtime of the thread.
struct TokioSpawner;

impl spawns_core::Spawn for TokioSpawner {
    fn spawn(&self, task: spawns_core::Task) {
        tokio::spawn(Box::into_pin(task.future));
    }
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// What the high-water znode holds: the last fence and the high water.
fn parse_record(data: &[u8]) -> Option<(u64, Option<i64>)> {
    let (fence, high_water) = std::str::from_utf8(data).ok()?.split_once('|')?;
    let high_water = if high_water.is_empty() { None } else { Some(high_water.parse().ok()?) };
    Some((fence.parse().ok()?, high_water))
}

fn encode_record(fence: u64, high_water_ms: Option<i64>) -> String {
    format!("{fence}|{}", high_water_ms.map(|hw| hw.to_string()).unwrap_or_default())
}

/// Why a call failed: the driver's error, a failed TLS handshake, or the timeout.
enum Failure {
    Zk(zk::Error),
    #[cfg(feature = "lease-zookeeper-tls")]
    Tls(TlsHandshakeFailed),
    Timeout,
}

impl From<zk::Error> for Failure {
    fn from(error: zk::Error) -> Self {
        Failure::Zk(error)
    }
}

impl ZooKeeperLeaseStore {
    /// A store for the ZooKeeper ensemble at `url`: `zk://host[:port][,host[:port]…][/path]`
    /// (port 2181 by default), or `zks://…` (also written `zk+tls://…`) for TLS, port 2281 by
    /// default (ZooKeeper's usual `secureClientPort`). Over TLS the store checks each server's
    /// certificate and host name against the CA certificates of the PEM file that the query
    /// parameter `ca=<path>` (percent-decoded) or else the environment variable [`CA_ENV`](super::CA_ENV)
    /// names, or else against the system's trusted roots. A user name or password is refused
    /// (authentication is not supported), and so is any other query parameter. Nothing is sent
    /// until the first call.
    ///
    /// ```
    /// use typed_snowflake::worker::lease::{LeaseError, LeaseStore, ZooKeeperLeaseStore};
    ///
    /// let store = ZooKeeperLeaseStore::open("zk://zk1,zk2:2182/apps")?;
    /// assert_eq!(store.describe(), "zk://zk1:2181,zk2:2182/apps");
    /// assert!(matches!(ZooKeeperLeaseStore::open("zk://user:pw@zk1"), Err(LeaseError::BadUrl { .. })));
    ///
    /// // TLS, on ZooKeeper's secure client port unless the URL names another.
    /// # let dir = std::env::temp_dir().join(format!("zks-doc-{}", std::process::id()));
    /// # std::fs::create_dir_all(&dir)?;
    /// # let ca = dir.join("ca.pem");
    /// # let pem = "-----BEGIN CERTIFICATE-----
    /// # MIIBiTCCAS+gAwIBAgIUXXlMvuxcqlo1uGlxBu0XimNfrpEwCgYIKoZIzj0EAwIw
    /// # GTEXMBUGA1UEAwwOZG9jIGV4YW1wbGUgQ0EwIBcNMjYxMjAxMjE0NTIzWhgPMjEy
    /// # NjExMDcyMTQ1MjNaMBkxFzAVBgNVBAMMDmRvYyBleGFtcGxlIENBMFkwEwYHKoZI
    /// # zj0CAQYIKoZIzj0DAQcDQgAElCH1fIb1k6fvB/fUqA9P7l2Swyas0wqIKQSg71KV
    /// # EbKKEA7MVlJ3Jj8DxKvKPZZ7IMi//QgrOM14taQB3GZATaNTMFEwHQYDVR0OBBYE
    /// # FBuJVL0ZMwdUwrwMNmxply+ZiBFqMB8GA1UdIwQYMBaAFBuJVL0ZMwdUwrwMNmxp
    /// # ly+ZiBFqMA8GA1UdEwEB/wQFMAMBAf8wCgYIKoZIzj0EAwIDSAAwRQIhALpmzbQl
    /// # b0S6dxxzpzIzH6BpGC0m7VNn5/hcNnypcm0aAiAzprIcBDgxUGEZ5C6SEk69jnKm
    /// # K95VBejuL6RS3ShTQw==
    /// # -----END CERTIFICATE-----";
    /// # std::fs::write(&ca, pem)?;
    /// let url = format!("zks://zk1,zk2:3281/apps?ca={}", ca.display());
    /// let store = ZooKeeperLeaseStore::open(&url)?;
    /// assert_eq!(store.describe(), "zks://zk1:2281,zk2:3281/apps");
    /// let missing = ZooKeeperLeaseStore::open("zks://zk1?ca=/no/such/ca.pem");
    /// assert!(matches!(missing, Err(LeaseError::BadUrl { .. })));
    /// # std::fs::remove_dir_all(&dir)?;
    /// Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn open(url: &str) -> Result<Self, LeaseError> {
        Self::from_url(&StoreUrl::parse(url)?)
    }

    /// A store for a URL already parsed: `zk://`, `zks://` or `zk+tls://`, as
    /// [`open`](Self::open) takes them.
    ///
    /// ```
    /// use typed_snowflake::worker::lease::{LeaseStore, StoreUrl, ZooKeeperLeaseStore};
    ///
    /// let url = StoreUrl::parse("zk://zk1,zk2:3181/apps")?;
    /// assert_eq!(ZooKeeperLeaseStore::from_url(&url)?.describe(), "zk://zk1:2181,zk2:3181/apps");
    /// assert!(ZooKeeperLeaseStore::from_url(&StoreUrl::parse("etcd://h")?).is_err());
    /// Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn from_url(url: &StoreUrl) -> Result<Self, LeaseError> {
        let bad = |reason: String| LeaseError::BadUrl { url: url.to_string(), reason, source: None };
        if url.kind() != StoreKind::ZooKeeper {
            return Err(bad("expected zk://, zks:// or zk+tls://".into()));
        }
        let secure = url.is_tls();
        let name = url.describe_as(if secure { "zks" } else { "zk" });
        #[cfg(feature = "lease-zookeeper-tls")]
        let tls = if secure { Some(Tls::new(url)?) } else { None };
        #[cfg(not(feature = "lease-zookeeper-tls"))]
        if secure {
            return Err(bad(format!(
                "this build has no {} lease store: enable the `lease-zookeeper-tls` feature of typed-snowflake \
                 (the environment's CA file would be {})",
                url.scheme(),
                super::CA_ENV
            )));
        }
        let servers = if secure {
            url.servers().iter().map(|server| format!("tcp+tls://{server}")).collect::<Vec<_>>().join(",")
        } else {
            url.servers().join(",")
        };
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name("snowflake-zookeeper")
            .on_thread_start(|| std::mem::forget(spawns_core::enter(&TokioSpawner)))
            .enable_all()
            .build()
            .map_err(|e| LeaseError::store(&name, "starting the store's runtime", e))?;
        Ok(ZooKeeperLeaseStore {
            runtime: Some(runtime),
            servers,
            #[cfg(feature = "lease-zookeeper-tls")]
            addresses: url.servers().to_vec(),
            #[cfg(feature = "lease-zookeeper-tls")]
            tls,
            prefix: url.path().to_owned(),
            held: Arc::default(),
            clock: Mutex::new(None),
            timeout: DEFAULT_STORE_TIMEOUT,
            name,
        })
    }

    /// Bounds every round trip, and each connection of a new session, by `timeout` instead of
    /// [`DEFAULT_STORE_TIMEOUT`]. A zero timeout counts as 1 ms.
    ///
    /// ```
    /// use std::time::Duration;
    /// use typed_snowflake::worker::lease::ZooKeeperLeaseStore;
    ///
    /// let store = ZooKeeperLeaseStore::open("zk://127.0.0.1:2181")?.timeout(Duration::from_millis(250));
    /// Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[must_use]
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout.max(Duration::from_millis(1));
        self
    }

    fn dir(&self, namespace: &str, kind: &str) -> String {
        format!("{}/snowflake/{namespace}/{kind}", self.prefix)
    }

    fn worker_path(&self, namespace: &str, worker: u64) -> String {
        format!("{}/{worker}", self.dir(namespace, "workers"))
    }

    fn high_water_path(&self, namespace: &str, worker: u64) -> String {
        format!("{}/{worker}", self.dir(namespace, "high-water"))
    }

    /// Runs `future` on the store's runtime within the timeout.
    fn block_on<T>(
        &self,
        what: &dyn Fn() -> String,
        future: impl Future<Output = Result<T, Failure>>,
    ) -> Result<T, LeaseError> {
        let runtime = self.runtime.as_ref().expect("the runtime lives until the store is dropped");
        let _spawner = spawns_core::enter(&TokioSpawner);
        let timeout = self.timeout;
        let result = runtime.block_on(async move {
            match tokio::time::timeout(timeout, future).await {
                Ok(result) => result,
                Err(_) => Err(Failure::Timeout),
            }
        });
        result.map_err(|failure| self.error(what, failure))
    }

    fn error(&self, what: &dyn Fn() -> String, failure: Failure) -> LeaseError {
        match failure {
            Failure::Timeout => LeaseError::Timeout { store: self.name.clone(), what: what(), after: self.timeout },
            Failure::Zk(error) => LeaseError::store(&self.name, what(), error),
            #[cfg(feature = "lease-zookeeper-tls")]
            Failure::Tls(error) => LeaseError::store(&self.name, what(), error),
        }
    }

    /// A new session with `session_timeout`.
    async fn connect(&self, session_timeout: Duration) -> Result<zk::Client, Failure> {
        let began = Instant::now();
        // The store's timeout bounds the whole; the client's own, longer, does not cut it short.
        #[cfg_attr(not(feature = "lease-zookeeper-tls"), allow(unused_mut))]
        let mut connector = zk::Client::connector()
            .with_session_timeout(session_timeout)
            .with_connection_timeout(self.timeout * 2)
            .with_fail_eagerly();
        #[cfg(feature = "lease-zookeeper-tls")]
        if let Some(tls) = &self.tls {
            connector = connector.with_tls(tls.options.clone());
        }
        let connecting = connector.connect(&self.servers);
        let error = match tokio::time::timeout(self.timeout, connecting).await {
            Ok(Ok(client)) => return Ok(client),
            Ok(Err(error)) => Failure::Zk(error),
            Err(_) => Failure::Timeout,
        };
        // zookeeper-client says only that no server could be reached: over TLS, find out
        // whether the handshake is why, within what is left of the timeout.
        #[cfg(feature = "lease-zookeeper-tls")]
        if let Some(tls) = &self.tls
            && let Some(failed) = tls.diagnose(self.addresses.clone(), began + self.timeout).await
        {
            return Err(Failure::Tls(failed));
        }
        #[cfg(not(feature = "lease-zookeeper-tls"))]
        let _ = began;
        Err(error)
    }

    /// The persistent znode `path` and its parents, made if missing.
    async fn make_dirs(client: &zk::Client, paths: &[String]) -> Result<(), zk::Error> {
        let options = zk::CreateMode::Persistent.with_acls(zk::Acls::anyone_all());
        for path in paths {
            match client.mkdir(path, &options).await {
                Ok(()) | Err(zk::Error::NodeExists) => {}
                Err(error) => return Err(error),
            }
        }
        Ok(())
    }

    /// Closes the session of grant `token` when no renewal succeeded for its TTL.
    fn watch_deadline(&self, token: String) {
        let held = Arc::clone(&self.held);
        let runtime = self.runtime.as_ref().expect("the runtime lives until the store is dropped");
        runtime.spawn(async move {
            loop {
                let deadline = {
                    let mut sessions = lock(&held);
                    let Some(session) = sessions.get(&token) else { return };
                    if Instant::now() >= session.deadline {
                        // Dropping the last client closes the session: ZooKeeper deletes the
                        // worker znode.
                        sessions.remove(&token);
                        return;
                    }
                    session.deadline
                };
                tokio::time::sleep_until(deadline.into()).await;
            }
        });
    }

    /// The session of `grant`, if it is still this store's and alive; else `Lost`.
    fn session(&self, namespace: &str, grant: &Grant) -> Result<zk::Client, LeaseError> {
        let lost = || LeaseError::Lost { namespace: namespace.to_owned(), worker: grant.worker };
        let mut sessions = lock(&self.held);
        let session = sessions.get(&grant.token).ok_or_else(lost)?;
        if session.namespace != namespace || session.worker != grant.worker || session.fence != grant.fence {
            return Err(lost());
        }
        if session.client.state().is_terminated() {
            sessions.remove(&grant.token);
            return Err(lost());
        }
        Ok(session.client.clone())
    }

    /// Writes the high-water record on the grant's session, only while the worker znode is
    /// still the one this grant's session created: it reads the high-water znode (version
    /// `h`), then the worker znode with a watch (it must be ephemeral to this session and hold
    /// this grant's token and fence; version `v`), then commits `check_version(worker, v)` and
    /// `set_data(high water, h)` in one `multi`. Any other acquisition of the worker ID writes
    /// the high-water znode in its own `multi`, so it either came before the read of the
    /// high water (the worker znode read is then the other holder's) or after it (the `multi`
    /// fails on `h`, and the next attempt reads the other holder's znode). A deletion of the
    /// worker znode after its read fires the watch, whose event ZooKeeper delivers before the
    /// reply to the `multi`: a `multi` that succeeded with the watch fired does not count.
    /// A worker znode that is missing, or not this grant's, is [`LeaseError::Lost`], and the
    /// grant's session is closed. `Ok(false)`: the high water changed since read; read again.
    fn write_record(
        &self,
        what: &dyn Fn() -> String,
        namespace: &str,
        grant: &Grant,
        client: &zk::Client,
        high_water_ms: impl FnOnce(Option<i64>) -> i64,
    ) -> Result<bool, LeaseError> {
        let lost = || LeaseError::Lost { namespace: namespace.to_owned(), worker: grant.worker };
        let worker_path = self.worker_path(namespace, grant.worker);
        let high_water_path = self.high_water_path(namespace, grant.worker);
        let outcome = self.block_on(what, async {
            let (data, stat) = match client.get_data(&high_water_path).await {
                Ok(found) => found,
                Err(zk::Error::NoNode) => return Ok(Err(false)),
                Err(error) => return Err(error.into()),
            };
            let Some((fence, stored)) = parse_record(&data) else {
                return Ok(Err(true));
            };
            // After the high water: an acquisition that replaced the worker znode before this
            // read shows here; one after it changes the high water and fails the `multi`.
            let (lease, lease_stat, watcher) = match client.get_and_watch_data(&worker_path).await {
                Ok(found) => found,
                Err(zk::Error::NoNode) => return Ok(Err(false)),
                Err(error) => return Err(error.into()),
            };
            if !is_own_lease(&lease, lease_stat.ephemeral_owner, client.session_id().0, grant) {
                return Ok(Err(false));
            }
            let record = encode_record(fence, Some(high_water_ms(stored)));
            let mut multi = client.new_multi_writer();
            multi.add_check_version(&worker_path, lease_stat.version)?;
            multi.add_set_data(&high_water_path, record.as_bytes(), Some(stat.version))?;
            match multi.commit().await {
                // The worker znode deleted since it was read (and maybe made again by another
                // holder, at the same version): its event came before this reply.
                Ok(_) if fired(watcher) => Ok(Err(false)),
                Ok(_) => Ok(Ok(true)),
                Err(zk::MultiWriteError::OperationFailed { index: 1, source: zk::Error::BadVersion }) => Ok(Ok(false)),
                Err(zk::MultiWriteError::OperationFailed {
                    index: 0,
                    source: zk::Error::NoNode | zk::Error::BadVersion,
                }) => Ok(Err(false)),
                Err(error) => Err(zk::Error::from(error).into()),
            }
        });
        match outcome {
            Ok(Ok(written)) => Ok(written),
            // The worker znode is gone or another holder's, or the high water is gone: the
            // session, the ensemble's data or the znode itself was.
            Ok(Err(false)) => {
                lock(&self.held).remove(&grant.token);
                Err(lost())
            }
            Ok(Err(true)) => Err(LeaseError::store(
                &self.name,
                what(),
                UnexpectedReply(format!("high-water znode {high_water_path}")),
            )),
            Err(LeaseError::Store { source, .. })
                if matches!(
                    source.downcast_ref::<zk::Error>(),
                    Some(zk::Error::SessionExpired | zk::Error::ClientClosed)
                ) =>
            {
                lock(&self.held).remove(&grant.token);
                Err(lost())
            }
            Err(other) => Err(other),
        }
    }

    /// Closes the session of a released grant and waits, within the store's timeout, until
    /// the servers have closed it: they delete its ephemeral worker znode, never another
    /// session's. `client` must be the session's last client (the store's own was removed).
    /// Past the timeout the session still ends, later: the worker ID frees later, never
    /// earlier, and the release (whose record is written) does not fail for it.
    fn close_session(&self, what: &dyn Fn() -> String, client: zk::Client) {
        let mut state = client.state_watcher();
        drop(client);
        let _ = self.block_on(what, async {
            while !state.state().is_terminated() {
                state.changed().await;
            }
            Ok(())
        });
    }
}

/// Whether the watch has fired: its event, if any, is already delivered when a later reply
/// on the session is (the session task hands both over in the order they came).
fn fired(watcher: zk::OneshotWatcher) -> bool {
    let changed = std::pin::pin!(watcher.changed());
    let mut context = std::task::Context::from_waker(std::task::Waker::noop());
    changed.poll(&mut context).is_ready()
}

/// Whether a worker znode (its data, and the session it is ephemeral to) is this grant's:
/// ephemeral to `session` and holding the grant's token and fence.
fn is_own_lease(data: &[u8], owner: i64, session: i64, grant: &Grant) -> bool {
    let mut fields = data.splitn(3, |&byte| byte == b'|');
    let (token, fence) = (fields.next(), fields.next());
    let persistent = owner == 0;
    !persistent
        && owner == session
        && token == Some(grant.token.as_bytes())
        && fence == Some(grant.fence.to_string().as_bytes())
}

impl LeaseStore for ZooKeeperLeaseStore {
    fn acquire(&self, claim: &Claim<'_>) -> Result<Grant, LeaseError> {
        let Claim { namespace, space, ttl, prefer, fence_above, .. } = *claim;
        check_namespace(namespace)?;
        check_space(space)?;
        ttl_ms(ttl)?;
        let what = || acquiring(namespace);
        let token = new_token();
        let dirs = [self.dir(namespace, "workers"), self.dir(namespace, "high-water")];
        let client = self.block_on(&what, self.connect(ttl))?;
        if client.session_timeout() < ttl {
            return Err(LeaseError::BadSettings {
                reason: format!(
                    "the ZooKeeper servers {} give sessions at most {:?} (maxSessionTimeout), less than the lease's TTL {ttl:?}",
                    self.name,
                    client.session_timeout()
                ),
            });
        }
        // The namespace's znodes are made the first time (and again after the data was lost).
        let held: HashSet<String> = self.block_on(&what, async {
            match client.list_children(&dirs[0]).await {
                Ok(children) => Ok(children.into_iter().collect()),
                Err(zk::Error::NoNode) => {
                    Self::make_dirs(&client, &dirs).await?;
                    Ok(HashSet::new())
                }
                Err(error) => Err(error.into()),
            }
        })?;
        for worker in scan_order(space, prefer).flatten() {
            if held.contains(&worker.to_string()) {
                continue; // a live lease
            }
            let what = || doing("acquiring", namespace, worker);
            let worker_path = self.worker_path(namespace, worker);
            let high_water_path = self.high_water_path(namespace, worker);
            let attempt = || async {
                let found = match client.get_data(&high_water_path).await {
                    Ok((data, stat)) => Some((parse_record(&data), stat.version)),
                    Err(zk::Error::NoNode) => None,
                    Err(error) => return Err(error.into()),
                };
                if let Some((None, _)) = found {
                    return Ok(Err(()));
                }
                let last = found.and_then(|(record, _)| record);
                let mut fence = wall_us().max(fence_above.saturating_add(1));
                if let Some((last_fence, _)) = last {
                    fence = fence.max(last_fence.saturating_add(1));
                }
                let previous_high_water_ms = last.and_then(|(_, hw)| hw);
                let record = encode_record(fence, previous_high_water_ms);
                let value = format!("{token}|{fence}|{}", holder_name());
                let mut multi = client.new_multi_writer();
                multi.add_create(
                    &worker_path,
                    value.as_bytes(),
                    &zk::CreateMode::Ephemeral.with_acls(zk::Acls::anyone_all()),
                )?;
                match found {
                    Some((_, version)) => multi.add_set_data(&high_water_path, record.as_bytes(), Some(version))?,
                    None => multi.add_create(
                        &high_water_path,
                        record.as_bytes(),
                        &zk::CreateMode::Persistent.with_acls(zk::Acls::anyone_all()),
                    )?,
                }
                match multi.commit().await {
                    Ok(results) => {
                        let mut store_now_ms = match results.last() {
                            Some(
                                zk::MultiWriteResult::SetData { stat } | zk::MultiWriteResult::Create { stat, .. },
                            ) => stat.mtime,
                            _ => 0,
                        };
                        if store_now_ms <= 0 {
                            // The servers' stat of a `multi` may be empty (ZOOKEEPER-4026): read it.
                            // (Gone at once: not a missing directory to make and retry.)
                            let read = client.get_data(&high_water_path).await.map_err(|error| match error {
                                zk::Error::NoNode => zk::Error::UnexpectedError(format!("{high_water_path} vanished")),
                                other => other,
                            });
                            store_now_ms = read?.1.mtime;
                        }
                        Ok(Ok(Some(Grant {
                            worker,
                            token: token.clone(),
                            fence,
                            previous_high_water_ms,
                            store_now_ms,
                            namespace_since_ms: None,
                        })))
                    }
                    // Taken since the list was read, or its high water changed: on to the next.
                    Err(zk::MultiWriteError::OperationFailed {
                        source: zk::Error::NodeExists | zk::Error::BadVersion,
                        ..
                    }) => Ok(Ok(None)),
                    // The high-water directory is missing (deleted since the list was read).
                    Err(zk::MultiWriteError::OperationFailed { source: zk::Error::NoNode, .. }) => {
                        Err(Failure::Zk(zk::Error::NoNode))
                    }
                    Err(error) => Err(zk::Error::from(error).into()),
                }
            };
            let taken = self.block_on(&what, async {
                match attempt().await {
                    Err(Failure::Zk(zk::Error::NoNode)) => {
                        Self::make_dirs(&client, &dirs).await?;
                        attempt().await
                    }
                    other => other,
                }
            })?;
            match taken {
                Ok(Some(grant)) => {
                    let deadline = Instant::now() + ttl;
                    let held = Held { client, namespace: namespace.to_owned(), worker, fence: grant.fence, deadline };
                    lock(&self.held).insert(token.clone(), held);
                    self.watch_deadline(token);
                    return Ok(grant);
                }
                Ok(None) => {}
                Err(()) => {
                    return Err(LeaseError::store(
                        &self.name,
                        what(),
                        UnexpectedReply(format!("high-water znode {high_water_path}")),
                    ));
                }
            }
        }
        Err(LeaseError::NoFreeWorker { namespace: namespace.to_owned(), space })
    }

    fn renew(&self, namespace: &str, grant: &Grant, ttl: Duration, high_water_ms: i64) -> Result<(), LeaseError> {
        check_namespace(namespace)?;
        ttl_ms(ttl)?;
        let what = || doing("renewing", namespace, grant.worker);
        let began = Instant::now();
        let client = self.session(namespace, grant)?;
        if ttl > client.session_timeout() {
            return Err(LeaseError::BadSettings {
                reason: format!(
                    "a ZooKeeper lease keeps the session timeout it was acquired with ({:?}); a renewal asked for {ttl:?}",
                    client.session_timeout()
                ),
            });
        }
        for _ in 0..WRITE_ATTEMPTS {
            let raise = |stored: Option<i64>| stored.map_or(high_water_ms, |hw| hw.max(high_water_ms));
            if self.write_record(&what, namespace, grant, &client, raise)? {
                if let Some(session) = lock(&self.held).get_mut(&grant.token) {
                    session.deadline = began + ttl;
                }
                return Ok(());
            }
        }
        Err(LeaseError::Lost { namespace: namespace.to_owned(), worker: grant.worker })
    }

    fn release(&self, namespace: &str, grant: &Grant, high_water_ms: i64) -> Result<(), LeaseError> {
        check_namespace(namespace)?;
        let what = || doing("releasing", namespace, grant.worker);
        let client = self.session(namespace, grant)?;
        for _ in 0..WRITE_ATTEMPTS {
            if self.write_record(&what, namespace, grant, &client, |_| high_water_ms)? {
                // The worker znode goes with the session: ZooKeeper deletes this session's
                // ephemeral znode, never a znode of another holder's that replaced it.
                lock(&self.held).remove(&grant.token);
                self.close_session(&what, client);
                return Ok(());
            }
        }
        Err(LeaseError::Lost { namespace: namespace.to_owned(), worker: grant.worker })
    }

    fn now_ms(&self) -> Result<i64, LeaseError> {
        let what = || "reading the clock".to_owned();
        let path = format!("{}/snowflake/clock", self.prefix);
        let mtime = self.block_on(&what, async {
            let client = self.own_session().await?;
            match client.set_data(&path, b"", None).await {
                Ok(stat) if stat.mtime > 0 => return Ok(stat.mtime),
                Ok(_) => {}
                Err(zk::Error::NoNode) => {
                    Self::make_dirs(&client, std::slice::from_ref(&path)).await?;
                    client.set_data(&path, b"", None).await?;
                }
                Err(error) => return Err(error.into()),
            }
            // A reply without the znode's stat: read it.
            Ok(client.get_data(&path).await?.1.mtime)
        });
        if mtime.is_err() {
            // A new session next time.
            lock(&self.clock).take();
        }
        mtime
    }

    fn faults(&self) -> StoreFaults {
        StoreFaults::ZOOKEEPER
    }

    fn describe(&self) -> String {
        self.name.clone()
    }

    fn list(&self, namespace: &str) -> Result<Vec<WorkerRecord>, LeaseError> {
        check_namespace(namespace)?;
        let what = || listing(namespace);
        let dirs = [self.dir(namespace, "high-water"), self.dir(namespace, "workers")];
        // The data of every child of both directories whose name is a worker ID, in that order.
        let read = self.block_on(&what, async {
            let client = self.own_session().await?;
            let mut found: [Vec<(u64, Vec<u8>)>; 2] = Default::default();
            for (dir, found) in dirs.iter().zip(&mut found) {
                let children = match client.list_children(dir).await {
                    Ok(children) => children,
                    Err(zk::Error::NoNode) => Vec::new(),
                    Err(error) => return Err(error.into()),
                };
                for child in children {
                    let Some(worker) = worker_of_child(&child) else { continue };
                    match client.get_data(&format!("{dir}/{child}")).await {
                        Ok((data, _)) => found.push((worker, data)),
                        Err(zk::Error::NoNode) => {} // gone since the list
                        Err(error) => return Err(error.into()),
                    }
                }
            }
            Ok(found)
        });
        if read.is_err() {
            lock(&self.clock).take();
        }
        let [high_waters, leases] = read?;
        let unexpected = |reply: String| LeaseError::store(&self.name, what(), UnexpectedReply(reply));
        let mut records = std::collections::BTreeMap::new();
        for (worker, data) in high_waters {
            let (_, high_water) =
                parse_record(&data).ok_or_else(|| unexpected(format!("high-water znode of {worker}")))?;
            records.insert(worker, WorkerRecord::new(worker).high_water(high_water));
        }
        for (worker, data) in leases {
            let (fence, holder) = parse_lease(&data).ok_or_else(|| unexpected(format!("worker znode of {worker}")))?;
            let record = records.remove(&worker).unwrap_or_else(|| WorkerRecord::new(worker));
            // A lease lives as long as its holder's session: no time left to tell.
            records.insert(worker, record.leased_by(holder, fence, None));
        }
        Ok(records.into_values().collect())
    }
}

impl ZooKeeperLeaseStore {
    /// The store's own session (made again when it ended), which reads the clock and lists.
    async fn own_session(&self) -> Result<zk::Client, Failure> {
        let existing = lock(&self.clock).clone().filter(|client| !client.state().is_terminated());
        match existing {
            Some(client) => Ok(client),
            None => {
                let client = self.connect(CLOCK_SESSION).await?;
                lock(&self.clock).replace(client.clone());
                Ok(client)
            }
        }
    }
}

/// A worker znode's name as its worker ID: decimal digits only.
fn worker_of_child(name: &str) -> Option<u64> {
    let digits = !name.is_empty() && name.len() <= 7 && name.bytes().all(|b| b.is_ascii_digit());
    if digits { name.parse().ok() } else { None }
}

/// What a worker znode holds: its fence and holder name (`token|fence|name`, or `token|fence`
/// from a holder that recorded no name).
fn parse_lease(data: &[u8]) -> Option<(u64, Option<String>)> {
    let mut fields = std::str::from_utf8(data).ok()?.splitn(3, '|');
    let _token = fields.next()?;
    let fence = fields.next()?.parse().ok()?;
    Some((fence, fields.next().and_then(recorded_holder)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths() {
        let store = ZooKeeperLeaseStore::open("zk://127.0.0.1:1/apps").unwrap();
        assert_eq!(store.worker_path("shop", 7), "/apps/snowflake/shop/workers/7");
        assert_eq!(store.high_water_path("shop", 7), "/apps/snowflake/shop/high-water/7");
        let store = ZooKeeperLeaseStore::open("zk://127.0.0.1:1").unwrap();
        assert_eq!(store.worker_path("shop", 0), "/snowflake/shop/workers/0");
        assert_eq!(store.describe(), "zk://127.0.0.1:1/");
    }

    #[test]
    fn leases_and_children_are_read_back() {
        assert_eq!(parse_lease(b"00ff|42|web-1:77"), Some((42, Some("web-1:77".to_owned()))));
        assert_eq!(parse_lease(b"00ff|42"), Some((42, None)));
        // A name this crate could not have written is not shown.
        assert_eq!(parse_lease(b"00ff|42|<script>:1"), Some((42, None)));
        for bad in [&b""[..], b"00ff", b"00ff|x", b"00ff|-1|a:1", b"\xff|1"] {
            assert_eq!(parse_lease(bad), None, "{:?}", String::from_utf8_lossy(bad));
        }
        assert_eq!(worker_of_child("7"), Some(7));
        assert_eq!(worker_of_child("4194303"), Some(4_194_303));
        for bad in ["", "+7", "-1", "7a", "12345678", "clock"] {
            assert_eq!(worker_of_child(bad), None, "{bad}");
        }
    }

    #[test]
    fn a_worker_znode_is_the_grants_only_with_its_session_token_and_fence() {
        let grant = Grant {
            worker: 3,
            token: "00ff".into(),
            fence: 42,
            previous_high_water_ms: None,
            store_now_ms: 0,
            namespace_since_ms: None,
        };
        assert!(is_own_lease(b"00ff|42|web-1:77", 9, 9, &grant));
        assert!(is_own_lease(b"00ff|42", 9, 9, &grant));
        // Another session's znode, even one that holds the same data; another token or fence.
        assert!(!is_own_lease(b"00ff|42|web-1:77", 8, 9, &grant));
        assert!(!is_own_lease(b"00ff|42|web-1:77", 0, 0, &grant));
        for other in [&b"00fe|42|web-1:77"[..], b"00ff|43|web-1:77", b"00ff|042", b"00ff", b"", b"00ff|42x"] {
            assert!(!is_own_lease(other, 9, 9, &grant), "{:?}", String::from_utf8_lossy(other));
        }
    }

    #[test]
    fn records_round_trip() {
        assert_eq!(parse_record(encode_record(5, None).as_bytes()), Some((5, None)));
        assert_eq!(parse_record(encode_record(u64::MAX, Some(-2)).as_bytes()), Some((u64::MAX, Some(-2))));
        for bad in ["", "1", "x|", "1|x", "1|2|3"] {
            assert_eq!(parse_record(bad.as_bytes()), None, "{bad:?}");
        }
    }

    #[test]
    fn arguments_are_checked_before_anything_is_sent() {
        let store = ZooKeeperLeaseStore::open("zk://127.0.0.1:1").unwrap();
        let ttl = Duration::from_secs(1);
        assert!(matches!(store.acquire(&Claim::new("bad name", 32, ttl)), Err(LeaseError::BadNamespace { .. })));
        assert!(matches!(store.acquire(&Claim::new("shop", 0, ttl)), Err(LeaseError::BadSpace { space: 0 })));
        assert!(matches!(store.acquire(&Claim::new("shop", 32, Duration::ZERO)), Err(LeaseError::BadTtl { .. })));
        let grant = Grant {
            worker: 0,
            token: new_token(),
            fence: 1,
            previous_high_water_ms: None,
            store_now_ms: 0,
            namespace_since_ms: None,
        };
        // A grant this store did not hand out holds nothing here.
        assert!(matches!(store.renew("shop", &grant, ttl, 0), Err(LeaseError::Lost { .. })));
    }

    /// The reason of a refused URL; the URL shown never holds a password.
    fn refusal(url: &str) -> String {
        match ZooKeeperLeaseStore::open(url) {
            Err(error @ LeaseError::BadUrl { .. }) => {
                assert!(!error.to_string().contains("secret"), "{error}");
                let LeaseError::BadUrl { reason, .. } = error else { unreachable!() };
                reason
            }
            Err(other) => panic!("{url}: {other:?}"),
            Ok(store) => panic!("{url} opened {}", store.describe()),
        }
    }

    /// A CA file in a fresh directory: the certificate of the doc example.
    #[cfg(feature = "lease-zookeeper-tls")]
    fn ca_file(name: &str) -> (std::path::PathBuf, String) {
        let dir = std::env::temp_dir().join(format!("snowflake-zk-{}-{name}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("c a.pem");
        std::fs::write(&path, DOC_CA).unwrap();
        (dir, path.display().to_string().replace(' ', "%20"))
    }

    #[cfg(feature = "lease-zookeeper-tls")]
    const DOC_CA: &str = "-----BEGIN CERTIFICATE-----
MIIBiTCCAS+gAwIBAgIUXXlMvuxcqlo1uGlxBu0XimNfrpEwCgYIKoZIzj0EAwIw
GTEXMBUGA1UEAwwOZG9jIGV4YW1wbGUgQ0EwIBcNMjYxMjAxMjE0NTIzWhgPMjEy
NjExMDcyMTQ1MjNaMBkxFzAVBgNVBAMMDmRvYyBleGFtcGxlIENBMFkwEwYHKoZI
zj0CAQYIKoZIzj0DAQcDQgAElCH1fIb1k6fvB/fUqA9P7l2Swyas0wqIKQSg71KV
EbKKEA7MVlJ3Jj8DxKvKPZZ7IMi//QgrOM14taQB3GZATaNTMFEwHQYDVR0OBBYE
FBuJVL0ZMwdUwrwMNmxply+ZiBFqMB8GA1UdIwQYMBaAFBuJVL0ZMwdUwrwMNmxp
ly+ZiBFqMA8GA1UdEwEB/wQFMAMBAf8wCgYIKoZIzj0EAwIDSAAwRQIhALpmzbQl
b0S6dxxzpzIzH6BpGC0m7VNn5/hcNnypcm0aAiAzprIcBDgxUGEZ5C6SEk69jnKm
K95VBejuL6RS3ShTQw==
-----END CERTIFICATE-----
";

    #[test]
    #[cfg(feature = "lease-zookeeper-tls")]
    fn tls_urls() {
        let (dir, ca) = ca_file("forms");
        for (url, shown, servers) in [
            (format!("zks://zk1?ca={ca}"), "zks://zk1:2281/", "tcp+tls://zk1:2281"),
            (
                format!("ZKS://zk1:3000,[::1]/a/b/?ca={ca}"),
                "zks://zk1:3000,[::1]:2281/a/b",
                "tcp+tls://zk1:3000,tcp+tls://[::1]:2281",
            ),
            (
                format!("zk+tls://127.0.0.1,zk2:2282/apps?ca={ca}&"),
                "zks://127.0.0.1:2281,zk2:2282/apps",
                "tcp+tls://127.0.0.1:2281,tcp+tls://zk2:2282",
            ),
            ("zk://zk1,zk2:2182".to_owned(), "zk://zk1:2181,zk2:2182/", "zk1:2181,zk2:2182"),
        ] {
            let store = ZooKeeperLeaseStore::open(&url).unwrap_or_else(|e| panic!("{url}: {e}"));
            assert_eq!(store.describe(), shown, "{url}");
            assert_eq!(store.servers, servers, "{url}");
            assert_eq!(store.tls.is_some(), url.to_ascii_lowercase().starts_with("zks") || url.starts_with("zk+tls"));
        }
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    #[cfg(not(feature = "lease-zookeeper-tls"))]
    fn tls_urls_name_the_feature_they_need() {
        for url in ["zks://zk1/apps", "zk+tls://zk1?ca=/etc/ca.pem"] {
            let why = refusal(url);
            assert!(why.contains("enable the `lease-zookeeper-tls` feature of typed-snowflake"), "{url}: {why}");
        }
        assert!(refusal("zks://user:secret@zk1").contains("authentication is not supported"));
    }

    #[test]
    #[cfg(feature = "lease-zookeeper-tls")]
    fn hostile_urls_are_refused_clearly() {
        let (dir, ca) = ca_file("hostile");
        for (url, reason) in [
            ("zks://".to_owned(), "no host"),
            ("zks:///apps".to_owned(), "no host"),
            (format!("zks://?ca={ca}"), "no host"),
            ("zks://zk1,,zk2".to_owned(), "no host"),
            ("zks://zk1:0".to_owned(), "bad port"),
            ("zks://zk1:65536".to_owned(), "bad port"),
            ("zks://zk1:-1".to_owned(), "bad port"),
            ("zks://zk1:x".to_owned(), "bad port"),
            ("zks://zk 1".to_owned(), "not a host"),
            ("zks://zk1/../etc".to_owned(), "segments"),
            ("zks://zk1?ca=/no/such/dir/ca.pem".to_owned(), "the CA file \"/no/such/dir/ca.pem\" could not be read"),
            ("zks://zk1?ca=%2Fno%2Fsuch%2Fca.pem".to_owned(), "the CA file \"/no/such/ca.pem\" could not be read"),
            ("zks://zk1?ca=".to_owned(), "`ca=` names no file"),
            (format!("zks://zk1?ca={}", dir.display()), "could not be read"),
            ("zks://user:secret@zk1".to_owned(), "authentication is not supported"),
            ("zks://:secret@zk1/apps".to_owned(), "authentication is not supported"),
            ("zk://user:se?cret@zk1".to_owned(), "authentication is not supported"),
            ("zks://user@zk1".to_owned(), "authentication is not supported"),
            ("zks://zk1?ca=ca@2.pem".to_owned(), "write an `@` as `%40`"),
            ("zks://zk1?ca=ca%402.pem".to_owned(), "the CA file \"ca@2.pem\" could not be read"),
            ("zks://zk1?ca=ca%zz.pem".to_owned(), "the parameter ca=: bad percent-encoding"),
            ("zks://zk1?ca=ca%ff.pem".to_owned(), "the parameter ca=: not UTF-8 once percent-decoded"),
            (format!("zks://zk1?ca={ca}&timeout=5"), "unknown query parameter \"timeout\"; the parameters are ca="),
            (format!("zks://zk1?cafile={ca}"), "unknown query parameter \"cafile\""),
            ("zk://zk1?x=1".to_owned(), "unknown query parameter \"x\": none is supported"),
            (format!("zk://zk1?ca={ca}"), "`ca=` is for TLS: write zks://"),
            ("zks://zk1#frag".to_owned(), "a fragment"),
            (format!("zks://zk1?ca={ca}#frag"), "a fragment"),
            ("zkss://zk1".to_owned(), "zk:// or zks://"),
        ] {
            let why = refusal(&url);
            assert!(why.contains(reason), "{url}: {why}");
        }
        // A file without a certificate.
        let empty = dir.join("empty.pem");
        std::fs::write(&empty, "not a certificate\n").unwrap();
        let why = refusal(&format!("zks://zk1?ca={}", empty.display()));
        assert!(why.contains("holds no PEM certificate"), "{why}");
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn a_refused_connection_is_a_store_error() {
        // Nothing listens on port 1.
        let store = ZooKeeperLeaseStore::open("zk://127.0.0.1:1").unwrap().timeout(Duration::from_millis(500));
        let error = store.now_ms().unwrap_err();
        assert!(matches!(error, LeaseError::Store { .. } | LeaseError::Timeout { .. }), "{error:?}");
        assert!(error.to_string().starts_with("lease store zk://127.0.0.1:1/: reading the clock"), "{error}");
    }
}
