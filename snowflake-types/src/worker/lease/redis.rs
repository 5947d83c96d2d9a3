//! Worker-ID leases in Redis: the keys are described on [`RedisLeaseStore`].

use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

use redis::{Connection, ConnectionAddr, IntoConnectionInfo, RedisError, Script, Value};

use super::store::support::{
    UnexpectedReply, acquiring, check_namespace, check_space, doing, holder_name, install_crypto_provider, listing,
    new_token, recorded_holder, scan_order, ttl_ms,
};
use super::store::{Claim, DEFAULT_STORE_TIMEOUT, Grant, LeaseError, LeaseStore, StoreFaults, WorkerRecord};

// `ssl_ca_certs` (redis-py's name) names a PEM file of CA certificates to trust instead of the
// system's; `min_replicas` how many replicas must acknowledge each grant and renewal (`WAIT`)
// before it counts: 1 by default under Sentinel, 0 (none asked) for one server.
use super::url::{MIN_REPLICAS_PARAM, REDIS_CA_PARAM as CA_PARAM, StoreKind, StoreUrl};

/// The default of [`MIN_REPLICAS_PARAM`] under Sentinel: a deployment of a master and one or
/// two replicas (see [`RedisLeaseStore`] for more).
const SENTINEL_MIN_REPLICAS: u16 = 1;

/// Raises `KEYS[2]` (the high water) to `ARGV[3]`, never lowering it. Lua numbers are
/// doubles: exact for Unix milliseconds until the year 287396.
macro_rules! raise_high_water {
    () => {
        "local stored = tonumber(redis.call('GET', KEYS[2]))
         if stored == nil or tonumber(ARGV[3]) > stored then redis.call('SET', KEYS[2], ARGV[3]) end"
    };
}

/// The server's replication ID (`master_replid`): a replica promoted to master, and a server
/// restarted, take a new one. Each high water is recorded with the ID of the server that
/// wrote it, so that a promoted replica, which may lack the last writes of its old master,
/// does not vouch for them.
macro_rules! replication_id {
    () => {
        "string.match(redis.call('INFO', 'replication'), 'master_replid:(%w+)')"
    };
}

/// KEYS: lease key, fence key, high-water key, the high water's server key, the last-grant key,
/// the namespace's marker. ARGV: our token, TTL in ms, a fence to exceed, our holder name. Nil
/// when the worker ID is leased; else the fence taken, the high water (false when the store
/// cannot vouch for it), `TIME`, and since when (Unix ms) this server has known the namespace
/// (its marker, rewritten now when missing or written by another server). One script, so the
/// fencing number and the lease are taken together: a later holder of a worker ID always has
/// a higher fence, however long a client paused.
///
/// The fence is the server's clock in microseconds, or one more than the last fence (or than
/// the one the client saw) when that is higher: it never goes backwards, even when the
/// server lost the counter. A lost counter also means the high water cannot be trusted: a key
/// that survived a partial loss may be older than what a holder issued since. So does a high
/// water written by another server (this one is a promoted replica, or restarted): the writes
/// that followed it may be lost. Lua numbers are doubles, exact for microseconds until the
/// year 2255; `%.0f` writes them without an exponent.
const TAKE: &str = concat!(
    "if redis.call('EXISTS', KEYS[1]) == 1 then return false end
     local id = ",
    replication_id!(),
    "
     local time = redis.call('TIME')
     local last = tonumber(redis.call('GET', KEYS[2]))
     local fence = math.max(tonumber(time[1]) * 1000000 + tonumber(time[2]), tonumber(ARGV[3]) + 1)
     if last ~= nil then fence = math.max(fence, last + 1) end
     local written = string.format('%.0f', fence)
     redis.call('SET', KEYS[2], written)
     local value = ARGV[1] .. '|' .. written .. '|' .. ARGV[4]
     redis.call('SET', KEYS[1], value, 'PX', ARGV[2])
     redis.call('SET', KEYS[5], value)
     local high_water = false
     if last ~= nil then
       local from = redis.call('GET', KEYS[4])
       if from == false or from == id then high_water = redis.call('GET', KEYS[3]) end
     end
     local now_ms = string.format('%.0f', tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000))
     local since = false
     local mark = redis.call('GET', KEYS[6])
     if mark then
       local ms, from = string.match(mark, '^(%d+)|(%w+)$')
       if from == id then since = ms end
     end
     if since == false then
       since = now_ms
       redis.call('SET', KEYS[6], now_ms .. '|' .. id)
     end
     return {written, high_water, time[1], time[2], since}"
);

/// KEYS: lease key, high-water key, the high water's server key, the last-grant key. ARGV: our
/// value, TTL in ms, high water. 1: renewed. A lease key that expired is written again when
/// this grant is still the worker ID's last one on this server (no one took it since, and the
/// server kept its records): the lease rides through an outage longer than its TTL.
const RENEW: &str = concat!(
    "local id = ",
    replication_id!(),
    "
     local current = redis.call('GET', KEYS[1])
     if current == false then
       if redis.call('GET', KEYS[4]) ~= ARGV[1] or redis.call('GET', KEYS[3]) ~= id then return 0 end
       redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
     elseif current ~= ARGV[1] then
       return 0
     else
       redis.call('PEXPIRE', KEYS[1], ARGV[2])
     end\n",
    raise_high_water!(),
    "\nredis.call('SET', KEYS[3], ",
    replication_id!(),
    ")\nreturn 1"
);

/// KEYS: lease key, high-water key, the high water's server key, the last-grant key. ARGV:
/// our value, unused, final high water. 1: released. The final value replaces the recorded one: the holder has
/// stopped issuing, and the fence deadline its renewals recorded lies beyond its last ID.
const RELEASE: &str = concat!(
    "if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
     redis.call('SET', KEYS[2], ARGV[3])
     redis.call('SET', KEYS[3], ",
    replication_id!(),
    ")
     redis.call('DEL', KEYS[1], KEYS[4])
     return 1"
);

/// KEYS: lease key, last-grant key. ARGV: the value a grant wrote. Deletes the lease key (and
/// the last-grant key) if it still holds that value, and nothing else: undoes a grant too few replicas acknowledged, without
/// touching the high water (a release would record its own).
const DROP: &str = "if redis.call('GET', KEYS[2]) == ARGV[1] then redis.call('DEL', KEYS[2]) end
     if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
     return 0";

/// Worker-ID leases in one Redis server: a script that takes a free lease key (`SET … PX`) and
/// its fencing number together, Lua compare-and-set on the holder's token to renew
/// and release, `TIME` for the clock.
/// An acquisition reads up to 1024 lease keys at once (`MGET`) from a random start, and tries
/// `SET … NX` only on those that were free, so a full space is told in few round trips.
///
/// The store keeps one connection, opened on first use and replaced on the call after any
/// error. Each round trip is bounded by the store's timeout (default
/// [`DEFAULT_STORE_TIMEOUT`]); a server that does not answer in time gives
/// [`LeaseError::Timeout`]. Calls from several threads take turns on the connection.
///
/// Keys, for namespace `shop` and worker ID 7 (the braces are a hash tag, so that in a Redis
/// Cluster every key of a namespace lives in one slot and the scripts may touch two of them):
///
/// - `snowflake:{shop}:fence`: the last fencing number handed out (the server's clock in
///   microseconds at the acquisition, or one more than the fence before); never expires. An
///   acquisition that finds it missing trusts no high water of the namespace.
/// - `snowflake:{shop}:worker:7`: the holder's token, fence and name (`host:pid`), as
///   `token|fence|name`; expires with the lease.
/// - `snowflake:{shop}:hw:7`: the high water recorded by holders of worker 7, in Unix ms; never
///   expires, because the next holder needs it most when the previous one crashed.
/// - `snowflake:{shop}:hw-server:7`: the replication ID (`master_replid`) of the server that
///   recorded it. A server with another ID (a replica promoted by a failover, which may lack
///   the last writes, or a restarted server) does not vouch for it: the grant says the store
///   has no record, and the holder waits out any earlier one, as after a data loss.
/// - `snowflake:{shop}:last:7`: the last grant of worker 7 (`token|fence|name`), deleted by its
///   release. A renewal whose lease key expired (an outage longer than the TTL) writes it
///   again while this still names its grant and the high water is this server's: no one took
///   the worker ID since.
/// - `snowflake:{shop}:since`: since when this server has known the namespace
///   (`<Unix ms>|<replication ID>`), written by the first acquisition that finds none of its
///   own. A worker ID without a high water in a namespace known for longer than the
///   reservation `W` starts at once ([`Grant::namespace_since_ms`]).
///
/// # Replicas and failovers (Redis Sentinel)
///
/// A master that Sentinel replaced may not know it yet: one that was frozen (a `SIGSTOP`, a
/// stalled VM) or cut off still says `master` and keeps its replication ID until the
/// sentinels convert it into a replica, and would go on granting and renewing leases that the
/// new master grants again. So a grant or a renewal counts only once `min_replicas` replicas
/// acknowledged its write (`WAIT`, on the same connection, within half the store's timeout):
/// the URL's query parameter `min_replicas=<n>`, 1 by default for `redis+sentinel://`, 0
/// (nothing asked) for `redis://` unless given. A renewal too few replicas acknowledged is a
/// store error (not [`LeaseError::Lost`]): the holder keeps the validity it had and fences
/// when it runs out. A grant too few replicas acknowledged is undone (its lease key deleted,
/// best effort) and the acquisition fails with a store error saying how many replicas
/// acknowledged. Either error drops the connection, so the next call asks the sentinels again.
///
/// What the operator must provide, for `k` replicas that Sentinel monitors:
///
/// - `min_replicas` greater than `(k - 1) / 2`: the master and `min_replicas` replicas are a
///   majority of the `k + 1` servers (`k` = 1 or 2: 1, the default; `k` = 3 or 4: 2). A
///   replica replicates one master at a time, so two masters (the old one, not yet converted,
///   and the one Sentinel promoted) can then never both see their writes acknowledged at once,
///   even while a replica the sentinels have not reconfigured yet still follows the old one.
///   A replica's acknowledgement means the write is in its memory.
/// - Liveness costs: while fewer than `min_replicas` replicas follow the master, no worker ID
///   is granted or renewed, and holders stop issuing when their validity runs out
///   (uniqueness over availability). With one replica, after a failover nothing is leased
///   until the sentinels convert the old master into the new one's replica (they wait about
///   10 s after it comes back); a dead old master never comes back, so run two replicas.
/// - Recommended besides: `min-replicas-to-write <min_replicas>` and a short
///   `min-replicas-max-lag` (e.g. 2 s) on every server, so that an isolated master refuses
///   the writes itself; replicas with `replica-serve-stale-data` as they like (the store
///   never reads a replica); the holders' clocks within the lease's clock tolerance of the
///   servers' (a grant's wait is measured by the server's `TIME` after `WAIT`).
///
/// ```no_run
/// use std::time::Duration;
/// use typed_snowflake::worker::lease::{Claim, LeaseStore, RedisLeaseStore};
///
/// let store = RedisLeaseStore::open("redis://127.0.0.1:6379")?.timeout(Duration::from_millis(500));
/// let grant = store.acquire(&Claim::new("shop", 32, Duration::from_secs(10)))?;
/// println!("worker {} leased from {}", grant.worker, store.describe());
/// store.release("shop", &grant, grant.store_now_ms)?;
/// Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct RedisLeaseStore {
    target: Target,
    connection: Mutex<Option<Connection>>,
    timeout: Duration,
    name: String,
    take: Script,
    renew: Script,
    release: Script,
    drop: Script,
    /// How many replicas must acknowledge a grant or a renewal (`WAIT`); 0: none asked.
    min_replicas: u16,
}

impl std::fmt::Debug for RedisLeaseStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedisLeaseStore").field("store", &self.name).field("timeout", &self.timeout).finish()
    }
}

impl RedisLeaseStore {
    /// A store for the server at `url`: `redis://[[user]:password@]host[:port][/db]`, or
    /// `rediss://…` for TLS (rustls), which checks the server's certificate and host name
    /// against the system's trusted roots, or against the CA certificates of the PEM file
    /// that the query parameter `ssl_ca_certs=<path>` or else the environment variable
    /// [`CA_ENV`](super::CA_ENV) names. The query parameter `min_replicas=<n>` (0 by default here, 1 for
    /// `redis+sentinel://…/<master-name>?min_replicas=<n>`) counts a grant or a renewal only once
    /// `n` replicas acknowledged it: see the type's docs. Nothing is sent until the first call.
    ///
    /// ```
    /// use typed_snowflake::worker::lease::{LeaseError, LeaseStore, RedisLeaseStore};
    ///
    /// let store = RedisLeaseStore::open("redis://:secret@127.0.0.1:6379/2")?;
    /// assert_eq!(store.describe(), "redis://127.0.0.1:6379/2");
    /// let store = RedisLeaseStore::open("rediss://cache.internal:6380")?;
    /// assert_eq!(store.describe(), "rediss://cache.internal:6380/0");
    /// assert!(RedisLeaseStore::open("http://127.0.0.1").is_err());
    /// let missing = RedisLeaseStore::open("rediss://cache.internal?ssl_ca_certs=/no/such/ca.pem");
    /// assert!(matches!(missing, Err(LeaseError::BadUrl { .. })));
    /// Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn open(url: &str) -> Result<Self, LeaseError> {
        Self::from_url(&StoreUrl::parse(url)?)
    }

    /// A store for a URL already parsed: `redis://`, `rediss://`, `valkey://`, `valkeys://`,
    /// `redis+sentinel://` or `rediss+sentinel://`, as [`open`](Self::open) takes them.
    ///
    /// ```
    /// use typed_snowflake::worker::lease::{LeaseStore, RedisLeaseStore, StoreUrl};
    ///
    /// let url = StoreUrl::parse("redis+sentinel://:secret@s1,s2/main?min_replicas=2")?;
    /// let store = RedisLeaseStore::from_url(&url)?;
    /// assert_eq!(store.describe(), "redis+sentinel://s1:26379,s2:26379/main/0");
    /// assert!(RedisLeaseStore::from_url(&StoreUrl::parse("etcd://h")?).is_err());
    /// Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn from_url(url: &StoreUrl) -> Result<Self, LeaseError> {
        let bad = |reason: String, source: Option<std::sync::Arc<dyn std::error::Error + Send + Sync>>| {
            LeaseError::BadUrl { url: url.to_string(), reason, source }
        };
        let min_replicas =
            url.param(MIN_REPLICAS_PARAM).map(super::url::min_replicas).transpose().map_err(|r| bad(r, None))?;
        let ca_file = || -> Result<Option<Vec<u8>>, LeaseError> {
            let Some(path) = url.ca_file().filter(|_| url.is_tls()) else { return Ok(None) };
            std::fs::read(&path)
                .map(Some)
                .map_err(|e| bad(format!("the CA file {path:?} could not be read: {e}"), Some(std::sync::Arc::new(e))))
        };
        let driver_refused = |e: RedisError| bad(e.to_string(), Some(std::sync::Arc::new(e)));
        let plain = if url.is_tls() { "rediss" } else { "redis" };
        match url.kind() {
            StoreKind::RedisSentinel => {
                install_crypto_provider();
                let tls = ca_file()?.map(|pem| redis::TlsCertificates { client_tls: None, root_cert: Some(pem) });
                let sentinel = Sentinel::new(url, plain, tls).map_err(driver_refused)?;
                let mut store = Self::with_target(Target::Sentinel(sentinel), url.describe_as(url.scheme()));
                store.min_replicas = min_replicas.unwrap_or(SENTINEL_MIN_REPLICAS);
                Ok(store)
            }
            StoreKind::Redis => {
                let text = url.driver_url(plain, &[CA_PARAM, MIN_REPLICAS_PARAM]);
                let info = text.as_str().into_connection_info().map_err(driver_refused)?;
                // No `CLIENT SETINFO` when connecting: it would add two replies to wait for,
                // each with a timeout of its own.
                let settings = info.redis_settings().clone().set_skip_set_lib_name();
                let info = info.set_redis_settings(settings);
                let client = match ca_file()? {
                    Some(pem) => {
                        let certificates = redis::TlsCertificates { client_tls: None, root_cert: Some(pem) };
                        redis::Client::build_with_tls(info, certificates).map_err(driver_refused)?
                    }
                    None => redis::Client::open(info).map_err(driver_refused)?,
                };
                install_crypto_provider();
                let mut store = Self::with_target(Target::Server(client), url.describe_as(plain));
                store.min_replicas = min_replicas.unwrap_or(0);
                Ok(store)
            }
            _ => Err(bad(
                "expected redis://, rediss://, valkey://, valkeys://, redis+sentinel:// or rediss+sentinel://".into(),
                None,
            )),
        }
    }

    /// A store for a client built by the caller. Whatever its connection info asks for when
    /// connecting (`AUTH`, `SELECT`, `CLIENT SETINFO`, which `open` leaves out) is waited for
    /// with one timeout per reply.
    ///
    /// ```
    /// use typed_snowflake::worker::lease::{LeaseStore, RedisLeaseStore};
    ///
    /// let store = RedisLeaseStore::new(redis::Client::open("redis://127.0.0.1:6379")?);
    /// assert_eq!(store.describe(), "redis://127.0.0.1:6379/0");
    /// Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn new(client: redis::Client) -> Self {
        install_crypto_provider();
        let name = describe(&client);
        Self::with_target(Target::Server(client), name)
    }

    fn with_target(target: Target, name: String) -> Self {
        Self {
            target,
            connection: Mutex::new(None),
            timeout: DEFAULT_STORE_TIMEOUT,
            name,
            take: Script::new(TAKE),
            renew: Script::new(RENEW),
            release: Script::new(RELEASE),
            drop: Script::new(DROP),
            min_replicas: 0,
        }
    }

    /// Bounds every round trip, with the connecting that may precede it, by `timeout` instead
    /// of [`DEFAULT_STORE_TIMEOUT`]. A zero timeout counts as 1 ms.
    ///
    /// ```
    /// use std::time::Duration;
    /// use typed_snowflake::worker::lease::RedisLeaseStore;
    ///
    /// let store = RedisLeaseStore::open("redis://127.0.0.1:6379")?.timeout(Duration::from_millis(250));
    /// Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[must_use]
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout.max(Duration::from_millis(1));
        self
    }

    /// Runs `f` on the connection, opening it first if there is none, within one timeout for
    /// both. Any error drops the connection (a reply may still be on its way), so the next
    /// call starts afresh.
    fn with_connection<T>(
        &self,
        what: &dyn Fn() -> String,
        f: impl FnOnce(&mut Connection) -> Result<T, RedisError>,
    ) -> Result<T, LeaseError> {
        let mut slot = self.connection.lock().unwrap_or_else(PoisonError::into_inner);
        let connecting = slot.is_none();
        let result = self.call(&mut slot, f);
        result.map_err(|error| {
            *slot = None;
            if error.is_timeout() {
                // A server that does not speak TLS on the port waits for more of the
                // handshake, as if it were a command: say so, it is the likely cause.
                let what = if connecting && self.name.starts_with("rediss") {
                    format!(
                        "{}, connecting over TLS (a server that does not speak TLS never answers the handshake),",
                        what()
                    )
                } else {
                    what()
                };
                LeaseError::Timeout { store: self.name.clone(), what, after: self.timeout }
            } else {
                LeaseError::store(&self.name, what(), error)
            }
        })
    }

    fn call<T>(
        &self,
        slot: &mut Option<Connection>,
        f: impl FnOnce(&mut Connection) -> Result<T, RedisError>,
    ) -> Result<T, RedisError> {
        let deadline = Instant::now() + self.timeout;
        let connection = match slot.take() {
            Some(connection) => connection,
            None => match &self.target {
                Target::Server(client) => client.get_connection_with_timeout(self.timeout)?,
                Target::Sentinel(sentinel) => sentinel.connect_to_master(deadline)?,
            },
        };
        let connection = slot.insert(connection);
        // What connecting left of the timeout bounds the command.
        let left = deadline.saturating_duration_since(Instant::now()).max(Duration::from_millis(1));
        connection.set_read_timeout(Some(left))?;
        connection.set_write_timeout(Some(left))?;
        f(connection)
    }
}

impl LeaseStore for RedisLeaseStore {
    fn acquire(&self, claim: &Claim<'_>) -> Result<Grant, LeaseError> {
        let Claim { namespace, space, ttl, prefer, fence_above, .. } = *claim;
        check_namespace(namespace)?;
        check_space(space)?;
        let ttl_ms = ttl_ms(ttl)?;
        let what = || acquiring(namespace);
        let token = new_token();
        for chunk in scan_order(space, prefer) {
            let keys: Vec<String> = chunk.clone().map(|worker| worker_key(namespace, worker)).collect();
            let values: Vec<Value> = self.with_connection(&what, |c| redis::cmd("MGET").arg(&keys).query(c))?;
            for ((worker, key), value) in chunk.zip(keys).zip(values) {
                if value != Value::Nil {
                    continue; // a live lease
                }
                // The fence is taken with the lease, so a scan that finds none takes no number.
                let taken: Option<(String, Option<String>, i64, i64, String)> = self.with_connection(&what, |c| {
                    let taken: Option<(String, Option<String>, i64, i64, String)> = self
                        .take
                        .key(&key)
                        .key(fence_key(namespace))
                        .key(high_water_key(namespace, worker))
                        .key(high_water_server_key(namespace, worker))
                        .key(last_key(namespace, worker))
                        .key(since_key(namespace))
                        .arg(&token)
                        .arg(ttl_ms)
                        .arg(fence_above)
                        .arg(holder_name())
                        .invoke(c)?;
                    let Some((fence, high_water, seconds, micros, since)) = taken else { return Ok(None) };
                    if self.min_replicas == 0 {
                        return Ok(Some((fence, high_water, seconds, micros, since)));
                    }
                    // The clock is read again once the replicas acknowledged: a grant without
                    // a record waits a TTL from then (see `acknowledged`).
                    let (acked, (seconds, micros)): (i64, (i64, i64)) =
                        redis::pipe().add_command(self.wait_command()).cmd("TIME").query(c)?;
                    if let Err(error) = self.acknowledged(acked) {
                        // Undone, so that the worker ID is free again on this server if it stays
                        // the master; on an old master that Sentinel replaced it does not matter.
                        let value = format!("{token}|{fence}|{}", holder_name());
                        let _: Result<i64, RedisError> =
                            self.drop.key(&key).key(last_key(namespace, worker)).arg(value).invoke(c);
                        return Err(error);
                    }
                    Ok(Some((fence, high_water, seconds, micros, since)))
                })?;
                if let Some((fence, high_water, seconds, micros, since)) = taken {
                    let what = || doing("acquiring", namespace, worker);
                    let unexpected = |reply: String| LeaseError::store(&self.name, what(), UnexpectedReply(reply));
                    let fence = fence.parse().map_err(|_| unexpected(format!("fence {fence:?}")))?;
                    let previous_high_water_ms = match high_water {
                        Some(text) => Some(text.parse().map_err(|_| unexpected(format!("high water {text:?}")))?),
                        None => None,
                    };
                    let store_now_ms =
                        unix_ms(seconds, micros).map_err(|reply| LeaseError::store(&self.name, what(), reply))?;
                    let namespace_since_ms = Some(since.parse().map_err(|_| unexpected(format!("since {since:?}")))?);
                    return Ok(Grant {
                        worker,
                        token,
                        fence,
                        previous_high_water_ms,
                        store_now_ms,
                        namespace_since_ms,
                    });
                }
                // Taken since MGET read it: on to the next.
            }
        }
        Err(LeaseError::NoFreeWorker { namespace: namespace.to_owned(), space })
    }

    fn renew(&self, namespace: &str, grant: &Grant, ttl: Duration, high_water_ms: i64) -> Result<(), LeaseError> {
        check_namespace(namespace)?;
        let ttl_ms = ttl_ms(ttl)?;
        self.compare_and_set(&self.renew, "renewing", namespace, grant, ttl_ms, high_water_ms, true)
    }

    fn release(&self, namespace: &str, grant: &Grant, high_water_ms: i64) -> Result<(), LeaseError> {
        check_namespace(namespace)?;
        // Not acknowledged: a release that a failover loses leaves a lease that expires, and a
        // high water that the new master does not vouch for.
        self.compare_and_set(&self.release, "releasing", namespace, grant, 0, high_water_ms, false)
    }

    fn now_ms(&self) -> Result<i64, LeaseError> {
        let what = || "reading the clock".to_owned();
        let (seconds, micros): (i64, i64) = self.with_connection(&what, |c| redis::cmd("TIME").query(c))?;
        unix_ms(seconds, micros).map_err(|reply| LeaseError::store(&self.name, what(), reply))
    }

    fn faults(&self) -> StoreFaults {
        match self.target {
            Target::Sentinel(_) => StoreFaults::REDIS_SENTINEL,
            _ => StoreFaults::REDIS,
        }
    }

    fn describe(&self) -> String {
        self.name.clone()
    }

    fn list(&self, namespace: &str) -> Result<Vec<WorkerRecord>, LeaseError> {
        check_namespace(namespace)?;
        let what = || listing(namespace);
        let mut workers = self.scan_workers(&what, &worker_key(namespace, 0))?;
        workers.extend(self.scan_workers(&what, &high_water_key(namespace, 0))?);
        let workers: Vec<u64> = workers.into_iter().collect();
        let mut records = Vec::with_capacity(workers.len());
        for chunk in workers.chunks(1024) {
            let leases: Vec<String> = chunk.iter().map(|&worker| worker_key(namespace, worker)).collect();
            let high_waters: Vec<String> = chunk.iter().map(|&worker| high_water_key(namespace, worker)).collect();
            let mut pttl = redis::pipe();
            for key in &leases {
                pttl.cmd("PTTL").arg(key);
            }
            type Read = (Vec<Option<String>>, Vec<Option<String>>, Vec<i64>);
            let (values, marks, ttls): Read = self.with_connection(&what, |c| {
                Ok((
                    redis::cmd("MGET").arg(&leases).query(c)?,
                    redis::cmd("MGET").arg(&high_waters).query(c)?,
                    pttl.query(c)?,
                ))
            })?;
            let unexpected = |reply: String| LeaseError::store(&self.name, what(), UnexpectedReply(reply));
            for (((&worker, value), mark), ttl) in chunk.iter().zip(values).zip(marks).zip(ttls) {
                let high_water_ms = match mark {
                    Some(text) => Some(text.parse().map_err(|_| unexpected(format!("high water {text:?}")))?),
                    None => None,
                };
                let mut record = WorkerRecord::new(worker).high_water(high_water_ms);
                if let Some(value) = value {
                    // `token|fence|name`, or `token|fence` from a holder that recorded no name.
                    let mut fields = value.splitn(3, '|');
                    let fence = fields.nth(1).and_then(|fence| fence.parse().ok());
                    let fence = fence.ok_or_else(|| unexpected(format!("lease {value:?}")))?;
                    let holder = fields.next().and_then(recorded_holder);
                    // PTTL: -2 when the key expired since MGET read it, -1 without a TTL.
                    let expires_in = u64::try_from(ttl).ok().map(Duration::from_millis);
                    if ttl != -2 {
                        record = record.leased_by(holder, fence, expires_in);
                    }
                }
                records.push(record);
            }
        }
        Ok(records)
    }
}

impl RedisLeaseStore {
    /// The worker IDs of the keys shaped like `example` (a key of worker 0), found with `SCAN`.
    fn scan_workers(
        &self,
        what: &dyn Fn() -> String,
        example: &str,
    ) -> Result<std::collections::BTreeSet<u64>, LeaseError> {
        let prefix = example.strip_suffix('0').expect("a key of worker 0 ends with its ID");
        let pattern = format!("{prefix}*");
        let mut workers = std::collections::BTreeSet::new();
        let mut cursor = 0u64;
        loop {
            let (next, keys): (u64, Vec<String>) = self.with_connection(what, |c| {
                redis::cmd("SCAN").arg(cursor).arg("MATCH").arg(&pattern).arg("COUNT").arg(1000).query(c)
            })?;
            // Keys of this shape that are not a worker ID's (none that this crate writes) are
            // passed over.
            workers.extend(keys.iter().filter_map(|key| key.strip_prefix(prefix)?.parse::<u64>().ok()));
            if next == 0 {
                return Ok(workers);
            }
            cursor = next;
        }
    }

    /// Runs the renew or release script: 1 when the lease was still `grant`'s. With `acked`,
    /// a change counts only once `min_replicas` replicas acknowledged it.
    #[allow(clippy::too_many_arguments)]
    fn compare_and_set(
        &self,
        script: &Script,
        verb: &str,
        namespace: &str,
        grant: &Grant,
        ttl_ms: i64,
        high_water_ms: i64,
        acked: bool,
    ) -> Result<(), LeaseError> {
        let what = || doing(verb, namespace, grant.worker);
        let ours: i64 = self.with_connection(&what, |c| {
            let ours: i64 = script
                .key(worker_key(namespace, grant.worker))
                .key(high_water_key(namespace, grant.worker))
                .key(high_water_server_key(namespace, grant.worker))
                .key(last_key(namespace, grant.worker))
                .arg(format!("{}|{}|{}", grant.token, grant.fence, holder_name()))
                .arg(ttl_ms)
                .arg(high_water_ms)
                .invoke(c)?;
            if ours == 1 && acked && self.min_replicas > 0 {
                // An error, not `Lost`: the holder keeps the validity it had from its last
                // counted renewal, and the connection is dropped (the next call asks the
                // sentinels which server is the master now).
                let count: i64 = self.wait_command().query(c)?;
                self.acknowledged(count)?;
            }
            Ok(ours)
        })?;
        if ours == 1 { Ok(()) } else { Err(LeaseError::Lost { namespace: namespace.to_owned(), worker: grant.worker }) }
    }
}

impl RedisLeaseStore {
    /// `WAIT min_replicas <half the store's timeout>`: how many replicas acknowledged every
    /// write of the connection so far. Never `WAIT … 0`, which would block for good.
    /// How long a `WAIT` for the replicas' acknowledgements may take: half the store's timeout.
    fn wait_ms(&self) -> u64 {
        u64::try_from((self.timeout / 2).as_millis()).unwrap_or(u64::MAX).max(1)
    }

    fn wait_command(&self) -> redis::Cmd {
        let mut command = redis::cmd("WAIT");
        command.arg(self.min_replicas).arg(self.wait_ms());
        command
    }

    /// Whether `count` replicas acknowledging a write is enough for it to count.
    ///
    /// Why this is safe, for the deployment the type's docs ask for (the master and
    /// `min_replicas` replicas are a majority of all the servers). Old master `M`, replica `R`
    /// that Sentinel promotes:
    ///
    /// - A replica follows one master at a time, and the sentinels move replicas from `M` to
    ///   `R`, never back. `M` and `R` can only be acknowledged by the other servers, and two
    ///   sets of `min_replicas` of them share a replica: a write `M` counts was acknowledged
    ///   by it before it left `M`, so before any grant `R` counts was acknowledged.
    /// - `R` vouches for no high water `M` wrote (another replication ID): its first grant of
    ///   each worker ID waits a TTL and the clock tolerance from its `TIME` read after the
    ///   `WAIT`, so past the validity of every renewal `M` counted (a TTL less the margin from
    ///   when the renewal was sent). A grant or a renewal `M` counted before the promotion
    ///   and `R` missed leaves `R` without that lease: its grant waits the same way.
    /// - A write `R` missed is never read back from `M` once it is `R`'s replica.
    ///
    /// What it still assumes: the servers' and the holders' clocks agree within the clock
    /// tolerance; an acknowledged write is in the replica's memory, and a replica restarted
    /// empty syncs again before anyone promotes it; no one points a replica back at an old
    /// master by hand; the operator counts every replica (one added later raises `k`).
    fn acknowledged(&self, count: i64) -> Result<(), RedisError> {
        if count >= i64::from(self.min_replicas) {
            return Ok(());
        }
        Err(RedisError::from((
            redis::ErrorKind::Client,
            "too few replicas acknowledged the write (the master may have been replaced, or lost its replicas)",
            format!(
                "{count} of the {} asked for (min_replicas={}) within {} ms",
                self.min_replicas,
                self.min_replicas,
                self.wait_ms()
            ),
        )))
    }
}

fn fence_key(namespace: &str) -> String {
    format!("snowflake:{{{namespace}}}:fence")
}

fn worker_key(namespace: &str, worker: u64) -> String {
    format!("snowflake:{{{namespace}}}:worker:{worker}")
}

fn high_water_key(namespace: &str, worker: u64) -> String {
    format!("snowflake:{{{namespace}}}:hw:{worker}")
}

fn high_water_server_key(namespace: &str, worker: u64) -> String {
    format!("snowflake:{{{namespace}}}:hw-server:{worker}")
}

/// The value of the worker ID's last grant (`token|fence|name`), kept after its lease key
/// expired, until a release: a renewal that finds its lease key expired renews it again only
/// while this still names its grant.
fn last_key(namespace: &str, worker: u64) -> String {
    format!("snowflake:{{{namespace}}}:last:{worker}")
}

/// The namespace's marker: `<Unix ms>|<replication ID>`, written by the first acquisition on
/// a server that has no marker from itself.
fn since_key(namespace: &str) -> String {
    format!("snowflake:{{{namespace}}}:since")
}

/// `TIME`'s seconds and microseconds as Unix milliseconds.
fn unix_ms(seconds: i64, micros: i64) -> Result<i64, UnexpectedReply> {
    (seconds.checked_mul(1000))
        .and_then(|ms| ms.checked_add(micros / 1000))
        .ok_or_else(|| UnexpectedReply(format!("TIME replied {seconds} {micros}")))
}

/// Where the store's connection goes: one server, or the master that Sentinel names.
enum Target {
    Server(redis::Client),
    Sentinel(Sentinel),
}

/// A master found through Redis Sentinel: `redis+sentinel://[[user]:password@]host[:port][,host[:port]…]/<master-name>[/db]`
/// (`rediss+sentinel://` for TLS to the sentinels and the master alike). The credentials and
/// the database are the master's; sentinels are asked without them. The port defaults to 26379.
/// Query parameters: `ssl_ca_certs` and `min_replicas` (1 unless given; see
/// [`RedisLeaseStore`]'s docs on replicas and failovers).
struct Sentinel {
    /// One client per sentinel, asked in turn.
    sentinels: Vec<redis::Client>,
    master_name: String,
    /// The master's URL with `{host}:{port}` to fill in.
    master_url: String,
    tls: Option<redis::TlsCertificates>,
}

impl Sentinel {
    /// The sentinels of `url` (a `redis+sentinel://` URL), each reached by `plain` (`redis`
    /// or `rediss`) and trusting `tls`'s CA.
    fn new(url: &StoreUrl, plain: &str, tls: Option<redis::TlsCertificates>) -> Result<Self, RedisError> {
        let mut parts = url.path().split('/').filter(|part| !part.is_empty());
        let (master_name, db) = (parts.next().unwrap_or_default(), parts.next().unwrap_or("0"));
        let mut sentinels = Vec::new();
        for server in url.servers() {
            let info = format!("{plain}://{server}").as_str().into_connection_info()?;
            let settings = info.redis_settings().clone().set_skip_set_lib_name();
            let info = info.set_redis_settings(settings);
            sentinels.push(match &tls {
                Some(certificates) => redis::Client::build_with_tls(info, certificates.clone())?,
                None => redis::Client::open(info)?,
            });
        }
        // The master's URL, the credentials and database its own; `{host}` and `{port}` to fill in
        // (the credentials are percent-encoded: no brace of theirs is left).
        let master_url = format!("{plain}://{}{{host}}:{{port}}/{db}", url.userinfo());
        Ok(Sentinel { sentinels, master_name: master_name.to_owned(), master_url, tls })
    }

    /// Asks the sentinels in turn for the master's address (`SENTINEL
    /// get-master-addr-by-name`), connects to it and checks that it is a master (`ROLE`), all
    /// before `deadline`. The first sentinel that answers names the master; a master that
    /// says it is not one (the sentinel has not seen the failover yet) sends the question to
    /// the next sentinel.
    fn connect_to_master(&self, deadline: Instant) -> Result<Connection, RedisError> {
        let left = || deadline.saturating_duration_since(Instant::now()).max(Duration::from_millis(1));
        let mut last_error = None;
        for sentinel in &self.sentinels {
            let asked = (|| {
                let mut connection = sentinel.get_connection_with_timeout(left())?;
                connection.set_read_timeout(Some(left()))?;
                connection.set_write_timeout(Some(left()))?;
                let address: Option<(String, u16)> = redis::cmd("SENTINEL")
                    .arg("get-master-addr-by-name")
                    .arg(&self.master_name)
                    .query(&mut connection)?;
                let Some((host, port)) = address else {
                    return Err(RedisError::from((
                        redis::ErrorKind::Client,
                        "the sentinel knows no master of that name",
                        self.master_name.clone(),
                    )));
                };
                let host = if host.contains(':') { format!("[{host}]") } else { host };
                let url = self.master_url.replace("{host}", &host).replace("{port}", &port.to_string());
                let info = url.as_str().into_connection_info()?;
                let settings = info.redis_settings().clone().set_skip_set_lib_name();
                let info = info.set_redis_settings(settings);
                let client = match &self.tls {
                    Some(certificates) => redis::Client::build_with_tls(info, certificates.clone())?,
                    None => redis::Client::open(info)?,
                };
                let mut master = client.get_connection_with_timeout(left())?;
                master.set_read_timeout(Some(left()))?;
                master.set_write_timeout(Some(left()))?;
                let role: Vec<Value> = redis::cmd("ROLE").query(&mut master)?;
                match role.first() {
                    Some(Value::BulkString(role)) if role == b"master" => Ok(master),
                    _ => Err(RedisError::from((
                        redis::ErrorKind::Client,
                        "the server the sentinel named is not a master (a failover is under way)",
                        format!("{host}:{port}"),
                    ))),
                }
            })();
            match asked {
                Ok(master) => return Ok(master),
                Err(error) => {
                    let timed_out = error.is_timeout();
                    last_error = Some(error);
                    if timed_out || Instant::now() >= deadline {
                        break;
                    }
                }
            }
        }
        Err(last_error.unwrap_or_else(|| RedisError::from((redis::ErrorKind::Client, "no sentinel to ask"))))
    }
}

/// The server's address for messages: scheme, user, host, port and database, never the
/// password.
fn describe(client: &redis::Client) -> String {
    let info = client.get_connection_info();
    let settings = info.redis_settings();
    let user = settings.username().map(|user| format!("{user}@")).unwrap_or_default();
    let db = settings.db();
    match info.addr() {
        ConnectionAddr::Tcp(host, port) => format!("redis://{user}{host}:{port}/{db}"),
        ConnectionAddr::TcpTls { host, port, .. } => format!("rediss://{user}{host}:{port}/{db}"),
        ConnectionAddr::Unix(path) => format!("redis+unix://{user}{}?db={db}", path.display()),
        // `ConnectionAddr` is non-exhaustive: later kinds of address print as redis does.
        #[allow(unreachable_patterns)]
        other => format!("redis://{user}{other}/{db}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_share_a_hash_tag() {
        assert_eq!(fence_key("shop"), "snowflake:{shop}:fence");
        assert_eq!(worker_key("shop", 7), "snowflake:{shop}:worker:7");
        assert_eq!(high_water_key("shop", 7), "snowflake:{shop}:hw:7");
        assert_eq!(high_water_server_key("shop", 7), "snowflake:{shop}:hw-server:7");
        assert_eq!(last_key("shop", 7), "snowflake:{shop}:last:7");
        assert_eq!(since_key("shop"), "snowflake:{shop}:since");
    }

    #[test]
    fn each_form_declares_its_faults() -> Result<(), Box<dyn std::error::Error>> {
        assert_eq!(RedisLeaseStore::open("redis://127.0.0.1:6379")?.faults(), StoreFaults::REDIS);
        let sentinel = RedisLeaseStore::open("redis+sentinel://127.0.0.1:26379/ids")?;
        assert_eq!(sentinel.faults(), StoreFaults::REDIS_SENTINEL);
        Ok(())
    }

    #[test]
    fn descriptions_hide_passwords() -> Result<(), Box<dyn std::error::Error>> {
        for (url, shown) in [
            ("redis://127.0.0.1:6379", "redis://127.0.0.1:6379/0"),
            ("redis://:secret@127.0.0.1:6380/3", "redis://127.0.0.1:6380/3"),
            ("redis://app:secret@cache.internal/1", "redis://app@cache.internal:6379/1"),
        ] {
            assert_eq!(RedisLeaseStore::open(url)?.describe(), shown);
        }
        let err = RedisLeaseStore::open("redis://:secret@127.0.0.1:notaport").unwrap_err();
        assert!(matches!(err, LeaseError::BadUrl { .. }), "{err}");
        assert!(!err.to_string().contains("secret"), "{err}");
        Ok(())
    }

    #[test]
    fn a_bad_url_keeps_the_drivers_error_as_its_source() {
        use std::error::Error as _;
        // A URL this crate reads whole, with a parameter of redis-rs's that redis-rs refuses.
        let err = RedisLeaseStore::open("redis://:secret@127.0.0.1/0?protocol=resp9").unwrap_err();
        let LeaseError::BadUrl { reason, source: Some(driver), .. } = &err else { panic!("{err:?}") };
        assert!(driver.downcast_ref::<RedisError>().is_some(), "{driver:?}");
        // `source()` walks from the lease error to the driver's, which the message also names.
        let cause = err.source().expect("the driver's error as the source");
        assert_eq!(cause.to_string(), *reason);
        assert!(err.to_string().ends_with(reason.as_str()), "{err}");
        assert!(!err.to_string().contains("secret"), "{err}");
    }

    #[test]
    fn a_ca_file_is_taken_from_the_url() {
        let url = StoreUrl::parse("rediss://:pw@cache:6380/2?ssl_ca_certs=%2Fetc%2Fca.pem&protocol=resp3").unwrap();
        assert_eq!(url.ca_file().as_deref(), Some("/etc/ca.pem"));
        // Neither of this crate's parameters reaches the driver; the driver's own do.
        assert_eq!(
            url.driver_url("rediss", &[CA_PARAM, MIN_REPLICAS_PARAM]),
            "rediss://:pw@cache:6380/2?protocol=resp3"
        );
        // A `%` that starts no escape is kept as written, as redis-rs keeps it.
        assert_eq!(
            StoreUrl::parse("rediss://cache/?ssl_ca_certs=/ca%zz.pem").unwrap().ca_file().as_deref(),
            Some("/ca%zz.pem")
        );
        // A CA file that cannot be read is refused before anything is sent, naming the file.
        let err = RedisLeaseStore::open("rediss://:secret@cache?ssl_ca_certs=/no/such/ca.pem").unwrap_err();
        let LeaseError::BadUrl { reason, .. } = &err else { panic!("{err:?}") };
        assert!(reason.starts_with("the CA file \"/no/such/ca.pem\" could not be read: "), "{reason}");
        assert!(!err.to_string().contains("secret"), "{err}");
        // A plain-text URL has no use for it.
        assert!(RedisLeaseStore::open("redis://cache?ssl_ca_certs=/no/such/ca.pem").is_ok());
    }

    #[test]
    fn min_replicas_defaults_to_one_under_sentinel_and_none_for_one_server() -> Result<(), LeaseError> {
        assert_eq!(RedisLeaseStore::open("redis+sentinel://127.0.0.1:26379/main")?.min_replicas, 1);
        assert_eq!(RedisLeaseStore::open("redis://127.0.0.1:6379")?.min_replicas, 0);
        assert_eq!(RedisLeaseStore::new(redis::Client::open("redis://127.0.0.1:6379").unwrap()).min_replicas, 0);
        for (url, expected) in [
            ("redis+sentinel://127.0.0.1:26379/main?min_replicas=2", 2),
            ("redis+sentinel://127.0.0.1:26379/main/3?min_replicas=0", 0),
            ("rediss+sentinel://:pw@h1,h2/main?min_replicas=65535", 65535),
            ("redis+sentinel://127.0.0.1:26379/main?min_replicas=%32", 2),
            ("redis://127.0.0.1:6379/2?min_replicas=1", 1),
            ("redis://127.0.0.1:6379?protocol=resp3&min_replicas=3", 3),
            ("redis://127.0.0.1:6379?min_replicas=007", 7),
        ] {
            let store = RedisLeaseStore::open(url).unwrap_or_else(|e| panic!("{url}: {e}"));
            assert_eq!(store.min_replicas, expected, "{url}");
        }
        // The parameter is not passed on to the driver, nor shown.
        let store = RedisLeaseStore::open("redis://127.0.0.1:6379/2?min_replicas=1")?;
        assert_eq!(store.describe(), "redis://127.0.0.1:6379/2");
        let store = RedisLeaseStore::open("redis+sentinel://127.0.0.1:26379/main?min_replicas=2")?;
        assert_eq!(store.describe(), "redis+sentinel://127.0.0.1:26379/main/0");
        Ok(())
    }

    #[test]
    fn a_min_replicas_that_is_no_count_is_a_bad_url() {
        for value in [
            "",
            "-1",
            "x",
            "1.5",
            "1e3",
            " 1",
            "1 ",
            "+1",
            "0x2",
            "65536",
            "99999999999999999999999999",
            "%",
            "%zz",
            "١",
        ] {
            let encoded = value.replace(' ', "%20");
            for url in [
                format!("redis+sentinel://:secret@127.0.0.1:26379/main?min_replicas={encoded}"),
                format!("redis://:secret@127.0.0.1:6379?min_replicas={encoded}"),
            ] {
                let error = RedisLeaseStore::open(&url).expect_err(&url);
                let LeaseError::BadUrl { reason, .. } = &error else { panic!("{url}: {error:?}") };
                assert!(reason.starts_with("min_replicas="), "{url}: {reason}");
                assert!(reason.contains("a whole number from 0 to 65535"), "{url}: {reason}");
                assert!(!error.to_string().contains("secret"), "{error}");
            }
        }
    }

    #[test]
    fn too_few_acknowledgements_say_how_many_of_how_many() {
        let store = RedisLeaseStore::open("redis+sentinel://127.0.0.1:26379/main?min_replicas=2")
            .unwrap()
            .timeout(Duration::from_millis(800));
        assert!(store.acknowledged(2).is_ok() && store.acknowledged(3).is_ok());
        let error = store.acknowledged(1).unwrap_err().to_string();
        assert!(error.contains("too few replicas acknowledged the write"), "{error}");
        assert!(error.contains("1 of the 2 asked for (min_replicas=2) within 400 ms"), "{error}");
        let args = store.wait_command().get_packed_command();
        assert!(String::from_utf8_lossy(&args).ends_with("WAIT\r\n$1\r\n2\r\n$3\r\n400\r\n"), "{args:?}");
    }

    #[test]
    fn arguments_are_checked_before_anything_is_sent() {
        // Port 1 refuses connections: only a check that runs first can answer.
        let store = RedisLeaseStore::open("redis://127.0.0.1:1").unwrap();
        let ttl = Duration::from_secs(1);
        assert!(matches!(store.acquire(&Claim::new("bad name", 32, ttl)), Err(LeaseError::BadNamespace { .. })));
        assert!(matches!(store.acquire(&Claim::new("shop", 0, ttl)), Err(LeaseError::BadSpace { space: 0 })));
        assert!(matches!(store.acquire(&Claim::new("shop", 32, Duration::ZERO)), Err(LeaseError::BadTtl { .. })));
    }

    #[test]
    fn a_refused_connection_names_its_cause_once() {
        // Nothing listens on port 1.
        let store = RedisLeaseStore::open("redis://127.0.0.1:1").unwrap();
        let error = store.now_ms().unwrap_err();
        assert!(
            error.to_string().starts_with("lease store redis://127.0.0.1:1/0: reading the clock failed: "),
            "{error}"
        );
        super::super::store::assert_refusal_named_once(&error);
        let grant = Grant {
            worker: 0,
            token: new_token(),
            fence: 1,
            previous_high_water_ms: None,
            store_now_ms: 0,
            namespace_since_ms: None,
        };
        let error = store.renew("shop", &grant, Duration::from_secs(1), 0).unwrap_err();
        assert!(error.to_string().contains("renewing worker ID 0 in namespace \"shop\" failed: "), "{error}");
        super::super::store::assert_refusal_named_once(&error);
    }

    #[test]
    fn clock_replies() {
        assert_eq!(unix_ms(1_700_000_000, 123_999).ok(), Some(1_700_000_000_123));
        assert!(unix_ms(i64::MAX, 0).is_err());
    }
}
