//! Worker-ID leases in ZooKeeper: see [`ZooKeeperLeaseStore`].

use std::future::Future;
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use tokio::runtime::Runtime;
use zookeeper_client as zk;

use super::store::support::{check_query, check_write, reading, writing};
use super::store::{
    Cas, DEFAULT_STORE_TIMEOUT, LeaseError, LeaseStore, MAX_WORKER_SPACE, Query, Slot, Snapshot, Written,
};
use super::url::{StoreKind, StoreUrl};
#[cfg(feature = "lease-zookeeper-tls")]
use tls::{Tls, TlsHandshakeFailed};

#[cfg(feature = "lease-zookeeper-tls")]
mod tls;

/// The session timeout: nothing the leases keep is tied to it (every znode is persistent).
const SESSION_TIMEOUT: Duration = Duration::from_secs(10);

/// How many times a write reads and commits again when a slot's version moved in between.
const WRITE_ATTEMPTS: usize = 8;

/// Worker-ID leases in a ZooKeeper ensemble, through `zookeeper-client` (the znodes, clock,
/// incarnation, write and TLS, and why a restore must be fenced: `docs/etcd-zookeeper.md`). A
/// URL with a user name or password is refused. Its calls block on a tokio runtime of the
/// store's own (one thread): never make them from inside an async runtime.
///
/// ```no_run
/// use std::time::Duration;
/// use typed_snowflake::worker::lease::{LeaseStore, ZooKeeperLeaseStore};
/// use typed_snowflake::worker::lease::store::{Cas, Query, Slot};
///
/// let store = ZooKeeperLeaseStore::open("zk://127.0.0.1:2181/apps")?.timeout(Duration::from_millis(500));
/// store.write("shop", &[Cas::new(Slot::Worker(7), None, "r1|…")])?;
/// let read = store.read("shop", &Query::workers(0..32))?;
/// println!("{} at {:?}: {:?}", store.describe(), read.now_ms, read.record(7));
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
    /// The store's session, made again when it ended or a call failed.
    session: Mutex<Option<zk::Client>>,
    timeout: Duration,
    name: String,
}

super::store::support::store_debug!(ZooKeeperLeaseStore);

impl Drop for ZooKeeperLeaseStore {
    fn drop(&mut self) {
        // The session closes with its client.
        lock(&self.session).take();
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

impl From<zk::MultiWriteError> for Failure {
    fn from(error: zk::MultiWriteError) -> Self {
        Failure::Zk(error.into())
    }
}

impl ZooKeeperLeaseStore {
    /// A store for the ZooKeeper ensemble at `url` (the forms: `docs/stores.md`). A CA file is
    /// read now; nothing is sent until the first call.
    ///
    /// ```
    /// use typed_snowflake::worker::lease::{LeaseError, LeaseStore, ZooKeeperLeaseStore};
    ///
    /// let store = ZooKeeperLeaseStore::open("zk://zk1,zk2:2182/apps")?;
    /// assert_eq!(store.describe(), "zk://zk1:2181,zk2:2182/apps");
    /// assert!(matches!(ZooKeeperLeaseStore::open("zk://user:pw@zk1"), Err(LeaseError::BadUrl { .. })));
    ///
    /// // TLS, on ZooKeeper's secure client port unless the URL names another.
    /// # let ca = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/doc-ca.pem");
    /// let url = format!("zks://zk1,zk2:3281/apps?ca={ca}");
    /// let store = ZooKeeperLeaseStore::open(&url)?;
    /// assert_eq!(store.describe(), "zks://zk1:2281,zk2:3281/apps");
    /// let missing = ZooKeeperLeaseStore::open("zks://zk1?ca=/no/such/ca.pem");
    /// assert!(matches!(missing, Err(LeaseError::BadUrl { .. })));
    /// Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn open(url: &str) -> Result<Self, LeaseError> {
        Self::from_url(&StoreUrl::parse(url)?)
    }

    /// A store for a URL already parsed, as [`open`](Self::open) takes them.
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
        if url.kind() != StoreKind::ZooKeeper {
            return Err(url.bad("expected zk://, zks:// or zk+tls://", None));
        }
        let secure = url.is_tls();
        let name = url.describe_as(if secure { "zks" } else { "zk" });
        #[cfg(feature = "lease-zookeeper-tls")]
        let tls = if secure { Some(Tls::new(url)?) } else { None };
        #[cfg(not(feature = "lease-zookeeper-tls"))]
        if secure {
            return Err(url.bad(
                format!(
                    "this build has no {} lease store: enable the `lease-zookeeper-tls` feature of typed-snowflake \
                     (the environment's CA file would be {})",
                    url.scheme(),
                    super::CA_ENV
                ),
                None,
            ));
        }
        let tls_prefix = if secure { "tcp+tls://" } else { "" };
        let servers = url.servers().iter().map(|server| format!("{tls_prefix}{server}")).collect::<Vec<_>>().join(",");
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
            session: Mutex::new(None),
            timeout: DEFAULT_STORE_TIMEOUT,
            name,
        })
    }

    /// Bounds every call, and each connection of a new session, by `timeout` instead of
    /// [`DEFAULT_STORE_TIMEOUT`] (1 ms at least).
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

    /// The znode of `namespace`, parent of its marker and its `workers`.
    fn namespace_path(&self, namespace: &str) -> String {
        // `ns-`: a namespace may be `.` or `..`, which ZooKeeper refuses as a path's element.
        format!("{}/snowflake/ns-{namespace}", self.prefix)
    }

    fn workers_path(&self, namespace: &str) -> String {
        format!("{}/workers", self.namespace_path(namespace))
    }

    fn slot_path(&self, namespace: &str, slot: Slot) -> String {
        match slot {
            Slot::Marker => format!("{}/marker", self.namespace_path(namespace)),
            Slot::Worker(worker) => format!("{}/{worker}", self.workers_path(namespace)),
        }
    }

    fn clock_path(&self) -> String {
        format!("{}/snowflake/clock", self.prefix)
    }

    /// Runs `future` on the store's runtime within the timeout; a failed call drops the session.
    fn block_on<T>(
        &self,
        what: &dyn Fn() -> String,
        future: impl Future<Output = Result<T, Failure>>,
    ) -> Result<T, LeaseError> {
        let runtime = self.runtime.as_ref().expect("the runtime lives until the store is dropped");
        let _spawner = spawns_core::enter(&TokioSpawner);
        let timeout = self.timeout;
        let result = runtime
            .block_on(async move { tokio::time::timeout(timeout, future).await.unwrap_or(Err(Failure::Timeout)) });
        result.map_err(|failure| {
            lock(&self.session).take();
            match failure {
                Failure::Timeout => LeaseError::Timeout { store: self.name.clone(), what: what(), after: self.timeout },
                Failure::Zk(error) => LeaseError::store(&self.name, what(), error),
                #[cfg(feature = "lease-zookeeper-tls")]
                Failure::Tls(error) => LeaseError::store(&self.name, what(), error),
            }
        })
    }

    /// The store's session, made when there is none or it ended.
    async fn session(&self) -> Result<zk::Client, Failure> {
        let existing = lock(&self.session).clone().filter(|client| !client.state().is_terminated());
        if let Some(client) = existing {
            return Ok(client);
        }
        let client = self.connect().await?;
        lock(&self.session).replace(client.clone());
        Ok(client)
    }

    /// A new session.
    async fn connect(&self) -> Result<zk::Client, Failure> {
        let began = Instant::now();
        // The store's timeout bounds the whole; the client's own, longer, does not cut it short.
        #[cfg_attr(not(feature = "lease-zookeeper-tls"), allow(unused_mut))]
        let mut connector = zk::Client::connector()
            .with_session_timeout(SESSION_TIMEOUT)
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
    async fn make_dirs(client: &zk::Client, path: &str) -> Result<(), zk::Error> {
        let options = zk::CreateMode::Persistent.with_acls(zk::Acls::anyone_all());
        match client.mkdir(path, &options).await {
            Ok(()) | Err(zk::Error::NodeExists) => Ok(()),
            Err(error) => Err(error),
        }
    }

    /// The incarnation a zxid tells: `epoch-<n>`, or empty for epoch 0 (a standalone server).
    fn incarnation(&self, zxid: i64) -> String {
        let epoch = zxid >> 32;
        if epoch == 0 { String::new() } else { format!("epoch-{epoch}") }
    }

    /// The clock's write and the read of `paths` (and of `children`'s children), sent together.
    async fn read_after_clock(
        &self,
        client: &zk::Client,
        paths: &[String],
        children: Option<&str>,
    ) -> Result<(zk::Stat, Vec<zk::MultiReadResult>), Failure> {
        let clock = self.clock_path();
        let read = || -> Result<_, zk::Error> {
            let mut reader = client.new_multi_reader();
            for path in paths {
                reader.add_get_data(path)?;
            }
            if let Some(path) = children {
                reader.add_get_children(path)?;
            }
            Ok(reader.commit())
        };
        // Both requests are on the wire before either answer is awaited, in this order.
        let tick = client.set_data(&clock, b"", None);
        let results = read()?;
        match tick.await {
            Ok(stat) => Ok((stat, results.await?)),
            Err(zk::Error::NoNode) => {
                let _ = results.await;
                Self::make_dirs(client, &clock).await?;
                let tick = client.set_data(&clock, b"", None);
                let results = read()?;
                let stat = tick.await?;
                Ok((stat, results.await?))
            }
            Err(error) => Err(error.into()),
        }
    }

    /// One attempt of a write: the slots read, compared, and written in one `multi`; `None` to
    /// try again (a version moved, or a parent was missing and is now made).
    async fn attempt(&self, client: &zk::Client, namespace: &str, ops: &[Cas<'_>]) -> Result<Option<Written>, Failure> {
        let paths: Vec<String> = ops.iter().map(|op| self.slot_path(namespace, op.slot)).collect();
        let mut reader = client.new_multi_reader();
        for path in &paths {
            reader.add_get_data(path)?;
        }
        let mut current: Vec<Option<(Vec<u8>, i32)>> = Vec::with_capacity(ops.len());
        for result in reader.commit().await? {
            current.push(match result {
                zk::MultiReadResult::Data { data, stat } => Some((data, stat.version)),
                zk::MultiReadResult::Error { err: zk::Error::NoNode } => None,
                zk::MultiReadResult::Error { err } => return Err(err.into()),
                other => return Err(zk::Error::UnexpectedError(format!("a read answered {other:?}")).into()),
            });
        }
        let holds = ops.iter().zip(&current).all(|(op, current)| match (op.expect, current) {
            (None, None) => true,
            (Some(expect), Some((data, _))) => data == expect.as_bytes(),
            _ => false,
        });
        if !holds {
            return Ok(Some(Written::Conflict));
        }
        let options = zk::CreateMode::Persistent.with_acls(zk::Acls::anyone_all());
        let mut writer = client.new_multi_writer();
        for ((op, current), path) in ops.iter().zip(&current).zip(&paths) {
            match current {
                None => writer.add_create(path, op.value.as_bytes(), &options)?,
                Some((_, version)) => {
                    writer.add_set_data(path, op.value.as_bytes(), Some(*version))?;
                }
            }
        }
        match writer.commit().await {
            Ok(_) => Ok(Some(Written::Done)),
            // A create without its parents (a first write, or its znodes deleted): made, then again.
            Err(zk::MultiWriteError::OperationFailed { index, source: zk::Error::NoNode })
                if current.get(index).is_some_and(Option::is_none) =>
            {
                let parent = paths[index].rsplit_once('/').map_or("/", |(parent, _)| parent);
                Self::make_dirs(client, parent).await?;
                Ok(None)
            }
            // Changed since read: created, written or deleted meanwhile.
            Err(zk::MultiWriteError::OperationFailed {
                source: zk::Error::NodeExists | zk::Error::BadVersion | zk::Error::NoNode,
                ..
            }) => Ok(None),
            Err(error) => Err(error.into()),
        }
    }
}

/// A child of `workers` as its worker ID: decimal digits only, below the leasable space.
fn worker_of_child(name: &str) -> Option<u64> {
    let digits = !name.is_empty() && name.len() <= 7 && name.bytes().all(|b| b.is_ascii_digit());
    let worker: u64 = if digits { name.parse().ok()? } else { return None };
    (worker < MAX_WORKER_SPACE).then_some(worker)
}

/// A znode's data as a value: the protocol judges what it holds.
fn value_of(data: Vec<u8>) -> String {
    String::from_utf8(data).unwrap_or_else(|error| String::from_utf8_lossy(error.as_bytes()).into_owned())
}

impl LeaseStore for ZooKeeperLeaseStore {
    fn read(&self, namespace: &str, query: &Query) -> Result<Snapshot, LeaseError> {
        check_query(namespace, query)?;
        let what = || reading(namespace, query);
        let workers = query.workers.clone();
        let mut paths = vec![self.slot_path(namespace, Slot::Marker)];
        paths.extend(workers.clone().map(|worker| self.slot_path(namespace, Slot::Worker(worker))));
        let children = query.highest.then(|| self.workers_path(namespace));
        let (clock, results) = self.block_on(&what, async {
            let client = self.session().await?;
            self.read_after_clock(&client, &paths, children.as_deref()).await
        })?;
        let unexpected =
            |reply: String| LeaseError::store(&self.name, what(), super::store::support::UnexpectedReply(reply));
        if results.len() != paths.len() + usize::from(children.is_some()) {
            return Err(unexpected(format!("{} results for {} reads", results.len(), paths.len())));
        }
        let mut results = results.into_iter();
        let mut value = |path: &str| match results.next() {
            Some(zk::MultiReadResult::Data { data, .. }) => Ok(Some(value_of(data))),
            Some(zk::MultiReadResult::Error { err: zk::Error::NoNode }) => Ok(None),
            Some(zk::MultiReadResult::Error { err }) => Err(LeaseError::store(&self.name, what(), err)),
            other => Err(unexpected(format!("{other:?} for {path}"))),
        };
        let marker = value(&paths[0])?;
        let mut records = Vec::new();
        for (worker, path) in workers.zip(&paths[1..]) {
            if let Some(record) = value(path)? {
                records.push((worker, record));
            }
        }
        let highest = match results.next() {
            None => None,
            Some(zk::MultiReadResult::Children { children }) => {
                children.iter().filter_map(|child| worker_of_child(child)).max()
            }
            Some(zk::MultiReadResult::Error { err: zk::Error::NoNode }) => None,
            Some(zk::MultiReadResult::Error { err }) => return Err(LeaseError::store(&self.name, what(), err)),
            Some(other) => return Err(unexpected(format!("{other:?} for the children of workers"))),
        };
        Ok(Snapshot::new(Some(clock.mtime), self.incarnation(clock.mzxid))
            .with_marker(marker)
            .with_records(records)
            .with_highest(highest))
    }

    fn write(&self, namespace: &str, ops: &[Cas<'_>]) -> Result<Written, LeaseError> {
        check_write(namespace, ops)?;
        let what = || writing(namespace, ops);
        self.block_on(&what, async {
            let client = self.session().await?;
            for _ in 0..WRITE_ATTEMPTS {
                if let Some(written) = self.attempt(&client, namespace, ops).await? {
                    return Ok(written);
                }
            }
            // Changed under every attempt: as if another write had come first.
            Ok(Written::Conflict)
        })
    }

    fn describe(&self) -> String {
        self.name.clone()
    }

    fn warnings(&self) -> Result<Vec<String>, LeaseError> {
        let read = self.read("snowflake-warnings", &Query::workers(0..0))?;
        if read.incarnation.is_empty() {
            return Ok(vec![format!(
                "the ZooKeeper at {} is a standalone server (its zxid epoch is 0), which cannot tell a restore \
                 of its data directory: after restoring one, run `snowflake leases fence` on each namespace \
                 before the holders use it (docs/stores.md)",
                self.name
            )]);
        }
        Ok(Vec::new())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths() {
        let store = ZooKeeperLeaseStore::open("zk://127.0.0.1:1/apps").unwrap();
        assert_eq!(store.slot_path("shop", Slot::Worker(7)), "/apps/snowflake/ns-shop/workers/7");
        assert_eq!(store.slot_path("shop", Slot::Marker), "/apps/snowflake/ns-shop/marker");
        assert_eq!(store.clock_path(), "/apps/snowflake/clock");
        let store = ZooKeeperLeaseStore::open("zk://127.0.0.1:1").unwrap();
        assert_eq!(store.slot_path("..", Slot::Worker(0)), "/snowflake/ns-../workers/0");
        assert_eq!(store.describe(), "zk://127.0.0.1:1/");
    }

    #[test]
    fn children_and_incarnations_are_read_back() {
        assert_eq!(worker_of_child("7"), Some(7));
        assert_eq!(worker_of_child("4194303"), Some(4_194_303));
        for bad in ["", "+7", "-1", "7a", "12345678", "4194304", "clock"] {
            assert_eq!(worker_of_child(bad), None, "{bad}");
        }
        let store = ZooKeeperLeaseStore::open("zk://127.0.0.1:1").unwrap();
        assert_eq!(store.incarnation(0x0000_0000_0000_0fff), "");
        assert_eq!(store.incarnation(0x0000_0003_0000_0001), "epoch-3");
        assert_eq!(value_of(b"r1|a b".to_vec()), "r1|a b");
        assert_eq!(value_of(b"\xffx".to_vec()), "\u{fffd}x");
    }

    #[test]
    fn arguments_are_checked_before_anything_is_sent() {
        let store = ZooKeeperLeaseStore::open("zk://127.0.0.1:1").unwrap();
        let bad_ns = store.read("bad name", &Query::workers(0..1));
        assert!(matches!(bad_ns, Err(LeaseError::BadNamespace { .. })), "{bad_ns:?}");
        let empty = store.write("shop", &[]);
        assert!(matches!(empty, Err(LeaseError::BadSettings { .. })), "{empty:?}");
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
        let error = store.read("shop", &Query::workers(0..1)).unwrap_err();
        assert!(matches!(error, LeaseError::Store { .. } | LeaseError::Timeout { .. }), "{error:?}");
        assert!(error.to_string().starts_with("lease store zk://127.0.0.1:1/: reading worker ID 0"), "{error}");
    }
}
