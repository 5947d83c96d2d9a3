//! Worker-ID leases in Redis (and Valkey, and under Sentinel): see [`RedisLeaseStore`].

use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

use redis::{Connection, ConnectionAddr, IntoConnectionInfo, RedisError, Script, Value};

use super::store::support::{UnexpectedReply, check_query, check_write, install_crypto_provider, reading, writing};
use super::store::{Cas, DEFAULT_STORE_TIMEOUT, LeaseError, LeaseStore, Query, Slot, Snapshot, Written};
use super::url::{MIN_REPLICAS_PARAM, REDIS_CA_PARAM as CA_PARAM, StoreKind, StoreUrl};

/// The default of [`MIN_REPLICAS_PARAM`] under Sentinel (a master and one or two replicas).
const SENTINEL_MIN_REPLICAS: u16 = 1;

/// The store's clock, its incarnation, the marker and records in one script (`ReadReply`).
/// KEYS: the marker, the index, the range's records. ARGV: `1` to find the highest worker ID
/// with a record (from the index, whose entries outlive a record deleted alone; a `SCAN` when
/// the index itself is gone), a record key's prefix.
const READ: &str = r"
local time = redis.call('TIME')
local run_id = string.match(redis.call('INFO', 'server'), 'run_id:(%w+)')
local replid = string.match(redis.call('INFO', 'replication'), 'master_replid:(%w+)')
local records = {}
if #KEYS > 2 then records = redis.call('MGET', unpack(KEYS, 3)) end
local highest = false
if ARGV[1] == '1' then
  if redis.call('EXISTS', KEYS[2]) == 1 then
    local from = 0
    while not highest do
      local batch = redis.call('ZREVRANGE', KEYS[2], from, from + 99)
      if #batch == 0 then break end
      for _, worker in ipairs(batch) do
        if redis.call('EXISTS', ARGV[2] .. worker) == 1 then highest = worker break end
      end
      from = from + 100
    end
  else
    local cursor = '0'
    repeat
      local found = redis.call('SCAN', cursor, 'MATCH', ARGV[2] .. '*', 'COUNT', 1000)
      cursor = found[1]
      for _, key in ipairs(found[2]) do
        local worker = string.match(string.sub(key, #ARGV[2] + 1), '^%d+$')
        if worker and (not highest or tonumber(worker) > tonumber(highest)) then highest = worker end
      end
    until cursor == '0'
  end
end
return {time[1], time[2], run_id or '', replid or '', redis.call('GET', KEYS[1]), records, highest}
";

/// Compare-and-set of one or two slots, all or nothing. KEYS: the slots, then the index. ARGV,
/// four per slot: `1` if it must hold the next value (`0`: nothing), that value, its new value,
/// its worker ID (empty for the marker). Replies 1 (written) or 0 (a conflict, nothing written).
const WRITE: &str = r"
local slots = #KEYS - 1
for i = 1, slots do
  local current = redis.call('GET', KEYS[i])
  if ARGV[i * 4 - 3] == '1' then
    if current ~= ARGV[i * 4 - 2] then return 0 end
  elseif current then
    return 0
  end
end
for i = 1, slots do
  redis.call('SET', KEYS[i], ARGV[i * 4 - 1])
  local worker = ARGV[i * 4]
  if worker ~= '' then redis.call('ZADD', KEYS[#KEYS], worker, worker) end
end
return 1
";

/// The store contract in one Redis server, or in the master that Redis Sentinel names: the
/// keys (no TTL), the two scripts, the incarnation, eviction, and what Sentinel asks of the
/// operator (`min_replicas`): `docs/stores.md` ("Redis (and Valkey)", "Redis Sentinel").
///
/// One connection, which threads take turns on, opened on first use and replaced after any
/// error; each round trip is bounded by the store's timeout ([`DEFAULT_STORE_TIMEOUT`]).
///
/// ```no_run
/// use std::time::Duration;
/// use typed_snowflake::worker::lease::{LeaseStore, RedisLeaseStore};
/// use typed_snowflake::worker::lease::store::{Cas, Query, Slot, Written};
///
/// let store = RedisLeaseStore::open("redis://127.0.0.1:6379")?.timeout(Duration::from_millis(500));
/// let created = store.write("shop", &[Cas::new(Slot::Worker(3), None, "a record")])?;
/// assert_eq!(created, Written::Done);
/// let read = store.read("shop", &Query::workers(0..32))?;
/// println!("{:?} at {:?} on {}", read.record(3), read.now_ms, store.describe());
/// Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct RedisLeaseStore {
    target: Target,
    connection: Mutex<Option<Connection>>,
    timeout: Duration,
    name: String,
    read: Script,
    write: Script,
    /// How many replicas must acknowledge a read or a write (`WAIT`); 0: none asked.
    min_replicas: u16,
}

super::store::support::store_debug!(RedisLeaseStore);

impl RedisLeaseStore {
    /// A store for the server at `url` (the forms, TLS and `min_replicas`: `docs/stores.md`).
    /// Nothing is sent until the first call.
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

    /// A store for a URL already parsed, as [`open`](Self::open) takes them.
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
        let min_replicas =
            url.param(MIN_REPLICAS_PARAM).map(super::url::min_replicas).transpose().map_err(|r| url.bad(r, None))?;
        let tls = || -> Result<Option<redis::TlsCertificates>, LeaseError> {
            let ca = if url.is_tls() { url.read_ca_file()? } else { None };
            Ok(ca.map(|(_, pem)| redis::TlsCertificates { client_tls: None, root_cert: Some(pem) }))
        };
        let driver_refused = |e: RedisError| url.bad(e.to_string(), Some(std::sync::Arc::new(e)));
        let plain = if url.is_tls() { "rediss" } else { "redis" };
        match url.kind() {
            StoreKind::RedisSentinel => {
                install_crypto_provider();
                let sentinel = Sentinel::new(url, plain, tls()?).map_err(driver_refused)?;
                let replicas = min_replicas.unwrap_or(SENTINEL_MIN_REPLICAS);
                Ok(Self::with_target(Target::Sentinel(sentinel), url.describe_as(url.scheme()), replicas))
            }
            StoreKind::Redis => {
                let text = url.driver_url(plain, &[CA_PARAM, MIN_REPLICAS_PARAM]);
                let client = client(&text, tls()?.as_ref()).map_err(driver_refused)?;
                install_crypto_provider();
                Ok(Self::with_target(Target::Server(client), url.describe_as(plain), min_replicas.unwrap_or(0)))
            }
            _ => Err(url.bad(
                "expected redis://, rediss://, valkey://, valkeys://, redis+sentinel:// or rediss+sentinel://",
                None,
            )),
        }
    }

    /// A store for a client built by the caller: what its connection info asks for when
    /// connecting (`AUTH`, `SELECT`, `CLIENT SETINFO`) is waited for with one timeout per reply.
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
        Self::with_target(Target::Server(client), name, 0)
    }

    fn with_target(target: Target, name: String, min_replicas: u16) -> Self {
        Self {
            target,
            connection: Mutex::new(None),
            timeout: DEFAULT_STORE_TIMEOUT,
            name,
            read: Script::new(READ),
            write: Script::new(WRITE),
            min_replicas,
        }
    }

    /// Bounds every round trip, connecting included, by `timeout` instead of
    /// [`DEFAULT_STORE_TIMEOUT`] (1 ms at least).
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

    /// Runs `f` on the connection, opened first if there is none, within one timeout for both.
    /// Any error drops the connection (a reply may still be on its way).
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
                // A server that does not speak TLS waits for more of the handshake: the likely cause.
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
        bound(connection, deadline)?;
        f(connection)
    }
}

/// What `READ` replies: `TIME`, `run_id`, `master_replid`, the marker, the records of the
/// range, the highest worker ID with a record.
type ReadReply = (String, String, String, String, Option<String>, Vec<Option<String>>, Option<String>);

impl LeaseStore for RedisLeaseStore {
    fn read(&self, namespace: &str, query: &Query) -> Result<Snapshot, LeaseError> {
        check_query(namespace, query)?;
        let what = || reading(namespace, query);
        let keys = Keys::new(namespace);
        let workers = query.workers.clone();
        let mut invocation = self.read.prepare_invoke();
        invocation.key(&keys.marker).key(&keys.index);
        for worker in workers.clone() {
            invocation.key(keys.worker(worker));
        }
        invocation.arg(if query.highest { "1" } else { "0" }).arg(&keys.worker_prefix);
        let (seconds, micros, run_id, replid, marker, values, highest): ReadReply = self.invoke(&what, &invocation)?;
        let unexpected = |reply: String| LeaseError::store(&self.name, what(), UnexpectedReply(reply));
        let (Ok(seconds), Ok(micros)) = (seconds.parse::<i64>(), micros.parse::<i64>()) else {
            return Err(unexpected(format!("TIME replied {seconds} {micros}")));
        };
        let now_ms = unix_ms(seconds, micros).map_err(|reply| LeaseError::store(&self.name, what(), reply))?;
        if values.len() as u64 != workers.end - workers.start {
            return Err(unexpected(format!("{} records for {} worker IDs", values.len(), workers.end - workers.start)));
        }
        let records = workers.zip(values).filter_map(|(worker, value)| value.map(|value| (worker, value))).collect();
        let highest = highest
            .map(|text| text.parse::<u64>().map_err(|_| unexpected(format!("highest worker ID {text:?}"))))
            .transpose()?;
        let incarnation = format!("{run_id}-{replid}");
        Ok(Snapshot::new(Some(now_ms), incarnation).with_marker(marker).with_records(records).with_highest(highest))
    }

    fn write(&self, namespace: &str, ops: &[Cas<'_>]) -> Result<Written, LeaseError> {
        check_write(namespace, ops)?;
        let what = || writing(namespace, ops);
        let keys = Keys::new(namespace);
        let mut invocation = self.write.prepare_invoke();
        for op in ops {
            invocation.key(keys.slot(op.slot));
        }
        invocation.key(&keys.index);
        for op in ops {
            let worker = match op.slot {
                Slot::Worker(worker) => worker.to_string(),
                Slot::Marker => String::new(),
            };
            let held = if op.expect.is_some() { "1" } else { "0" };
            invocation.arg(held).arg(op.expect.unwrap_or_default()).arg(op.value).arg(worker);
        }
        match self.invoke::<i64>(&what, &invocation)? {
            1 => Ok(Written::Done),
            0 => Ok(Written::Conflict),
            other => Err(LeaseError::store(&self.name, what(), UnexpectedReply(format!("the write replied {other}")))),
        }
    }

    fn describe(&self) -> String {
        self.name.clone()
    }

    /// A warning when `maxmemory-policy` may evict the leases' keys (`INFO memory`).
    fn warnings(&self) -> Result<Vec<String>, LeaseError> {
        let what = || "reading the eviction policy (INFO memory)".to_owned();
        let info: String = self.with_connection(&what, |c| redis::cmd("INFO").arg("memory").query(c))?;
        let field = |name: &str| {
            info.lines().find_map(|line| line.strip_prefix(name)?.strip_prefix(':')).map(str::trim).unwrap_or_default()
        };
        let maxmemory = field("maxmemory").parse::<u64>().unwrap_or(0);
        Ok(eviction_warning(maxmemory, field("maxmemory_policy")).into_iter().collect())
    }
}

impl RedisLeaseStore {
    /// Runs a script, counted once `min_replicas` replicas acknowledged the connection's writes.
    fn invoke<T: redis::FromRedisValue>(
        &self,
        what: &dyn Fn() -> String,
        invocation: &redis::ScriptInvocation<'_>,
    ) -> Result<T, LeaseError> {
        self.with_connection(what, |c| {
            let reply = invocation.invoke(c)?;
            if self.min_replicas > 0 {
                self.acknowledged(self.wait_command().query(c)?)?;
            }
            Ok(reply)
        })
    }
}

/// The warning for a `maxmemory` policy that may evict keys without a TTL, as the leases' are.
fn eviction_warning(maxmemory: u64, policy: &str) -> Option<String> {
    if maxmemory == 0 || policy == "noeviction" || policy.starts_with("volatile-") {
        return None;
    }
    Some(format!(
        "maxmemory-policy is {policy} with maxmemory {maxmemory} bytes: Redis may evict the leases' keys, which have \
         no TTL, and every eviction costs the holders a wait (docs/lease-rules.md); set maxmemory-policy to \
         noeviction or a volatile-* policy"
    ))
}

/// The keys of one namespace.
struct Keys {
    marker: String,
    index: String,
    /// A record's key without its worker ID.
    worker_prefix: String,
}

impl Keys {
    fn new(namespace: &str) -> Self {
        Keys {
            marker: format!("snowflake:{{{namespace}}}:marker"),
            index: format!("snowflake:{{{namespace}}}:workers"),
            worker_prefix: format!("snowflake:{{{namespace}}}:worker:"),
        }
    }

    fn worker(&self, worker: u64) -> String {
        format!("{}{worker}", self.worker_prefix)
    }

    fn slot(&self, slot: Slot) -> String {
        match slot {
            Slot::Marker => self.marker.clone(),
            Slot::Worker(worker) => self.worker(worker),
        }
    }
}

/// `TIME`'s seconds and microseconds as Unix milliseconds.
fn unix_ms(seconds: i64, micros: i64) -> Result<i64, UnexpectedReply> {
    (seconds.checked_mul(1000))
        .and_then(|ms| ms.checked_add(micros / 1000))
        .ok_or_else(|| UnexpectedReply(format!("TIME replied {seconds} {micros}")))
}

impl RedisLeaseStore {
    /// Half the store's timeout, for `WAIT`: never 0, which would block for good.
    fn wait_ms(&self) -> u64 {
        u64::try_from((self.timeout / 2).as_millis()).unwrap_or(u64::MAX).max(1)
    }

    /// `WAIT min_replicas <wait_ms>`: how many replicas acknowledged the connection's writes.
    fn wait_command(&self) -> redis::Cmd {
        let mut command = redis::cmd("WAIT");
        command.arg(self.min_replicas).arg(self.wait_ms());
        command
    }

    /// Whether `count` acknowledgements let a call count (why: `docs/stores.md`, "Redis
    /// Sentinel"). Assumed besides: a replica restarted empty syncs before it is promoted, and
    /// nobody points a replica back at an old master.
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

/// Where the store's connection goes: one server, or the master that Sentinel names.
enum Target {
    Server(redis::Client),
    Sentinel(Sentinel),
}

/// A master found through Redis Sentinel (`redis+sentinel://`, `docs/stores.md`): the
/// credentials and database are the master's, the sentinels are asked without them.
struct Sentinel {
    /// One client per sentinel, asked in turn.
    sentinels: Vec<redis::Client>,
    master_name: String,
    /// The master's URL with `{host}:{port}` to fill in.
    master_url: String,
    tls: Option<redis::TlsCertificates>,
}

impl Sentinel {
    /// The sentinels of `url`, each reached by `plain` (`redis` or `rediss`) trusting `tls`.
    fn new(url: &StoreUrl, plain: &str, tls: Option<redis::TlsCertificates>) -> Result<Self, RedisError> {
        let mut parts = url.path().split('/').filter(|part| !part.is_empty());
        let (master_name, db) = (parts.next().unwrap_or_default(), parts.next().unwrap_or("0"));
        let sentinels = url
            .servers()
            .iter()
            .map(|server| client(&format!("{plain}://{server}"), tls.as_ref()))
            .collect::<Result<_, _>>()?;
        // The credentials are percent-encoded: no brace of theirs is left to fill in.
        let master_url = format!("{plain}://{}{{host}}:{{port}}/{db}", url.userinfo());
        Ok(Sentinel { sentinels, master_name: master_name.to_owned(), master_url, tls })
    }

    /// Asks the sentinels in turn for the master and connects to it, before `deadline`, as
    /// `docs/stores.md` ("Redis Sentinel") says: a server that says it is not the master sends
    /// the question on to the next sentinel.
    fn connect_to_master(&self, deadline: Instant) -> Result<Connection, RedisError> {
        let mut last_error = None;
        for sentinel in &self.sentinels {
            let asked = (|| {
                let mut connection = sentinel.get_connection_with_timeout(left(deadline))?;
                bound(&mut connection, deadline)?;
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
                let mut master = client(&url, self.tls.as_ref())?.get_connection_with_timeout(left(deadline))?;
                bound(&mut master, deadline)?;
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
                Err(error) if error.is_timeout() || Instant::now() >= deadline => return Err(error),
                Err(error) => last_error = Some(error),
            }
        }
        Err(last_error.unwrap_or_else(|| RedisError::from((redis::ErrorKind::Client, "no sentinel to ask"))))
    }
}

/// A client for `url` trusting `tls`'s CA, without `CLIENT SETINFO` when connecting (two more
/// replies to wait for, each with a timeout of its own).
fn client(url: &str, tls: Option<&redis::TlsCertificates>) -> Result<redis::Client, RedisError> {
    let info = url.into_connection_info()?;
    let settings = info.redis_settings().clone().set_skip_set_lib_name();
    let info = info.set_redis_settings(settings);
    match tls {
        Some(certificates) => redis::Client::build_with_tls(info, certificates.clone()),
        None => redis::Client::open(info),
    }
}

/// What is left until `deadline`, 1 ms at least (a zero timeout would mean none).
fn left(deadline: Instant) -> Duration {
    deadline.saturating_duration_since(Instant::now()).max(Duration::from_millis(1))
}

/// Bounds the connection's reads and writes by what is [`left`] until `deadline`.
fn bound(connection: &mut Connection, deadline: Instant) -> Result<(), RedisError> {
    connection.set_read_timeout(Some(left(deadline)))?;
    connection.set_write_timeout(Some(left(deadline)))
}

/// The server's address for messages, without the password.
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
        let keys = Keys::new("Shop");
        assert_eq!(keys.marker, "snowflake:{Shop}:marker");
        assert_eq!(keys.index, "snowflake:{Shop}:workers");
        assert_eq!(keys.slot(Slot::Worker(7)), "snowflake:{Shop}:worker:7");
        assert_eq!(keys.slot(Slot::Marker), keys.marker);
    }

    #[test]
    fn a_policy_that_may_evict_the_keys_is_named() {
        assert_eq!(eviction_warning(0, "allkeys-lru"), None, "without maxmemory nothing is evicted");
        assert_eq!(eviction_warning(1 << 20, "noeviction"), None);
        assert_eq!(eviction_warning(1 << 20, "volatile-lru"), None);
        for policy in ["allkeys-lru", "allkeys-lfu", "allkeys-random"] {
            let warning = eviction_warning(1 << 20, policy).expect("a warning");
            assert!(
                warning.starts_with(&format!("maxmemory-policy is {policy} with maxmemory 1048576 bytes")),
                "{warning}"
            );
            assert!(warning.ends_with("set maxmemory-policy to noeviction or a volatile-* policy"), "{warning}");
        }
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
        let bad_namespace = store.read("bad name", &Query::workers(0..1));
        assert!(matches!(bad_namespace, Err(LeaseError::BadNamespace { .. })), "{bad_namespace:?}");
        let too_many = store.read("shop", &Query::workers(0..super::super::store::MAX_READ + 1));
        assert!(matches!(too_many, Err(LeaseError::BadSettings { .. })), "{too_many:?}");
        let bad_value = store.write("shop", &[Cas::new(Slot::Worker(1), None, "a\nb")]);
        assert!(matches!(bad_value, Err(LeaseError::BadSettings { .. })), "{bad_value:?}");
    }

    #[test]
    fn a_refused_connection_names_its_cause_once() {
        // Nothing listens on port 1.
        let store = RedisLeaseStore::open("redis://127.0.0.1:1").unwrap();
        let error = store.read("shop", &Query::workers(0..32)).unwrap_err();
        assert!(
            error.to_string().starts_with(
                "lease store redis://127.0.0.1:1/0: reading worker IDs 0..32 of namespace \"shop\" failed: "
            ),
            "{error}"
        );
        super::super::testing::assert_refusal_named_once(&error);
        let error = store.write("shop", &[Cas::new(Slot::Worker(0), None, "r")]).unwrap_err();
        assert!(error.to_string().contains("writing worker ID 0 of namespace \"shop\" failed: "), "{error}");
        super::super::testing::assert_refusal_named_once(&error);
    }

    #[test]
    fn clock_replies() {
        assert_eq!(unix_ms(1_700_000_000, 123_999).ok(), Some(1_700_000_000_123));
        assert!(unix_ms(i64::MAX, 0).is_err());
    }
}
