//! Worker-ID leases in etcd (v3 API): the keys are described on [`EtcdLeaseStore`].

use std::future::Future;
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use etcd_client::{Client, Compare, CompareOp, ConnectOptions, GetOptions, KeyValue, PutOptions, Txn, TxnOp};
use tokio::runtime::Runtime;

use super::DEFAULT_CLOCK_TOLERANCE;
use super::cluster_url::ClusterUrl;
use super::store::support::{
    UnexpectedReply, acquiring, check_namespace, check_space, doing, new_token, scan_order, ttl_ms,
};
use super::store::{Claim, DEFAULT_STORE_TIMEOUT, Grant, LeaseError, LeaseStore};

/// Worker IDs are written with this many digits in keys, so that the keys of a range of worker
/// IDs are a range of keys: 4194303, the highest worker ID, has 7.
const WORKER_DIGITS: usize = 7;

/// How many times a renewal or a release reads and writes again when the high-water key
/// changed between the two (only an acquisition that took the worker ID meanwhile changes
/// it, and then the next read finds the lease lost).
const WRITE_ATTEMPTS: usize = 3;

/// Worker-ID leases in an etcd cluster (v3 API), through `etcd-client`.
///
/// URL: `etcd://host[:port][,host[:port]…][/prefix]` (or `etcd+http://`; port 2379 by
/// default): every key lives under `prefix`. TLS and etcd's user names are not supported yet.
///
/// Keys, for namespace `shop`, worker ID 7 and no prefix:
///
/// - `/snowflake/shop/workers/0000007`: the holder's token, fence and TTL in seconds, as
///   `token|fence|ttl`, attached to an etcd lease of that TTL. An acquisition creates it in a
///   transaction only if it is absent (`create_revision == 0`); a renewal is a keep-alive of
///   the etcd lease; when the lease expires, etcd deletes the key.
/// - `/snowflake/shop/high-water/0000007`: `fence|high water|written`, never expiring: the last
///   fencing number handed out for worker 7, the high water its holders recorded (Unix ms, empty
///   before the first renewal), and the writer's clock at its last write (Unix ms).
///
/// **Fencing numbers** are the local clock in microseconds, or one more than the last fence
/// of the worker ID (or than the claim's) when that is higher, written to the high-water key
/// in the acquisition's transaction, which succeeds only if that key has not changed since it
/// was read (`mod_revision`): a later holder of a worker ID always has a higher fence. etcd's
/// own revisions are not used: they start again at 1 when a cluster is rebuilt empty, and are
/// far below the clock anyway. An etcd that lost its data has no high-water key: the grant then
/// carries no high water, and the holder waits out every earlier holder (`clock + TTL +
/// tolerance`) before it issues.
///
/// **Clock.** etcd exposes no clock, so [`now_ms`](LeaseStore::now_ms) is the local clock and
/// the start-up comparison of the two clocks cannot fail. The clocks of the hosts are compared
/// through etcd instead: every write of the high-water key records its writer's clock, and an
/// acquisition refuses ([`LeaseError::ClockSkew`]) when the previous holder of the worker ID
/// wrote a time ahead of the local clock by more than the tolerance (default
/// [`DEFAULT_CLOCK_TOLERANCE`], the lease's default): the local clock is behind the other
/// host's. The hosts must run NTP: the tolerance is what covers the skew between the clocks of
/// two holders of a worker ID when the store has no record of it, and the lease's margin
/// covers the drift of one host's clock during a TTL.
///
/// **TTL.** etcd leases count whole seconds: a TTL is rounded up to the next second (and etcd
/// raises a TTL below its minimum, 2 s with the default election timeout), so a crashed
/// holder's worker ID frees up to a second or two late, never early. A renewal may not ask for
/// a longer TTL than its acquisition had.
///
/// The store runs its calls on a small tokio runtime of its own (one worker thread): its
/// methods must not be called from inside an async runtime. Each round trip is bounded by the
/// store's timeout (default [`DEFAULT_STORE_TIMEOUT`]).
///
/// ```no_run
/// use std::time::Duration;
/// use typed_snowflake::worker::lease::{Claim, EtcdLeaseStore, LeaseStore};
///
/// let store = EtcdLeaseStore::open("etcd://127.0.0.1:2379/apps")?.timeout(Duration::from_millis(500));
/// let grant = store.acquire(&Claim::new("shop", 32, Duration::from_secs(10)))?;
/// println!("worker {} leased from {}", grant.worker, store.describe());
/// store.release("shop", &grant, grant.store_now_ms)?;
/// Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct EtcdLeaseStore {
    runtime: Option<Runtime>,
    endpoints: Vec<String>,
    prefix: String,
    client: Mutex<Option<Client>>,
    timeout: Duration,
    tolerance: Duration,
    name: String,
}

impl std::fmt::Debug for EtcdLeaseStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EtcdLeaseStore").field("store", &self.name).field("timeout", &self.timeout).finish()
    }
}

impl Drop for EtcdLeaseStore {
    fn drop(&mut self) {
        // Not `drop(runtime)`: that blocks, and panics inside an async context.
        if let Some(runtime) = self.runtime.take() {
            runtime.shutdown_background();
        }
    }
}

/// What the high-water key holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Record {
    fence: u64,
    high_water_ms: Option<i64>,
    written_ms: i64,
}

impl Record {
    fn parse(value: &[u8]) -> Option<Record> {
        let text = std::str::from_utf8(value).ok()?;
        let mut fields = text.split('|');
        let fence = fields.next()?.parse().ok()?;
        let high_water_ms = match fields.next()? {
            "" => None,
            hw => Some(hw.parse().ok()?),
        };
        let written_ms = fields.next()?.parse().ok()?;
        fields.next().is_none().then_some(Record { fence, high_water_ms, written_ms })
    }

    fn encode(&self) -> String {
        let hw = self.high_water_ms.map(|hw| hw.to_string()).unwrap_or_default();
        format!("{}|{hw}|{}", self.fence, self.written_ms)
    }
}

impl EtcdLeaseStore {
    /// A store for the etcd cluster at `url` (`etcd://host[:port][,host[:port]…][/prefix]`).
    /// Nothing is sent until the first call.
    ///
    /// ```
    /// use typed_snowflake::worker::lease::{EtcdLeaseStore, LeaseError, LeaseStore};
    ///
    /// let store = EtcdLeaseStore::open("etcd://10.0.0.1,10.0.0.2:2380/apps")?;
    /// assert_eq!(store.describe(), "etcd://10.0.0.1:2379,10.0.0.2:2380/apps");
    /// assert!(matches!(EtcdLeaseStore::open("etcd://a/x?y=1"), Err(LeaseError::BadUrl { .. })));
    /// Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn open(url: &str) -> Result<Self, LeaseError> {
        let parsed = ClusterUrl::parse(url, &["etcd", "etcd+http"], 2379)?;
        let name = parsed.describe("etcd");
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name("snowflake-etcd")
            .enable_all()
            .build()
            .map_err(|e| LeaseError::store(&name, "starting the store's runtime", e))?;
        Ok(EtcdLeaseStore {
            runtime: Some(runtime),
            endpoints: parsed.servers.iter().map(|server| format!("http://{server}")).collect(),
            prefix: parsed.path,
            client: Mutex::new(None),
            timeout: DEFAULT_STORE_TIMEOUT,
            tolerance: DEFAULT_CLOCK_TOLERANCE,
            name,
        })
    }

    /// Bounds every round trip, with the connecting that may precede it, by `timeout` instead
    /// of [`DEFAULT_STORE_TIMEOUT`]. A zero timeout counts as 1 ms.
    ///
    /// ```
    /// use std::time::Duration;
    /// use typed_snowflake::worker::lease::EtcdLeaseStore;
    ///
    /// let store = EtcdLeaseStore::open("etcd://127.0.0.1:2379")?.timeout(Duration::from_millis(250));
    /// Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[must_use]
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout.max(Duration::from_millis(1));
        self
    }

    /// How far ahead of the local clock the time recorded by the previous holder of a worker
    /// ID may be before an acquisition refuses it as [`LeaseError::ClockSkew`] (default
    /// [`DEFAULT_CLOCK_TOLERANCE`]). Give it the lease's
    /// [`clock_tolerance`](super::WorkerLeaseBuilder::clock_tolerance).
    ///
    /// ```
    /// use std::time::Duration;
    /// use typed_snowflake::worker::lease::EtcdLeaseStore;
    ///
    /// let store = EtcdLeaseStore::open("etcd://127.0.0.1:2379")?.clock_tolerance(Duration::from_millis(500));
    /// Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[must_use]
    pub fn clock_tolerance(mut self, tolerance: Duration) -> Self {
        self.tolerance = tolerance;
        self
    }

    fn worker_key(&self, namespace: &str, worker: u64) -> String {
        format!("{}/snowflake/{namespace}/workers/{worker:0WORKER_DIGITS$}", self.prefix)
    }

    fn high_water_key(&self, namespace: &str, worker: u64) -> String {
        format!("{}/snowflake/{namespace}/high-water/{worker:0WORKER_DIGITS$}", self.prefix)
    }

    /// Runs `f` with a client on the store's runtime, within the timeout. The client is
    /// created on first use; etcd-client reconnects by itself.
    fn call<T, F, Fut>(&self, what: &dyn Fn() -> String, f: F) -> Result<T, LeaseError>
    where
        F: FnOnce(Client) -> Fut,
        Fut: Future<Output = Result<T, etcd_client::Error>>,
    {
        let runtime = self.runtime.as_ref().expect("the runtime lives until the store is dropped");
        let result = runtime.block_on(async {
            let existing = self.client.lock().unwrap_or_else(PoisonError::into_inner).clone();
            let client = match existing {
                Some(client) => client,
                None => {
                    let options = ConnectOptions::new().with_connect_timeout(self.timeout).with_timeout(self.timeout);
                    let client = tokio::time::timeout(self.timeout, Client::connect(&self.endpoints, Some(options)))
                        .await
                        .map_err(|_| None)?
                        .map_err(Some)?;
                    self.client.lock().unwrap_or_else(PoisonError::into_inner).get_or_insert(client).clone()
                }
            };
            tokio::time::timeout(self.timeout, f(client)).await.map_err(|_| None)?.map_err(Some)
        });
        result.map_err(|error| match error {
            None => LeaseError::Timeout { store: self.name.clone(), what: what(), after: self.timeout },
            Some(error) => LeaseError::store(&self.name, what(), error),
        })
    }

    /// The worker key and the high-water key of `worker`, read together.
    fn read(
        &self,
        what: &dyn Fn() -> String,
        namespace: &str,
        worker: u64,
    ) -> Result<(Option<KeyValue>, Option<KeyValue>), LeaseError> {
        let (worker_key, high_water_key) = (self.worker_key(namespace, worker), self.high_water_key(namespace, worker));
        let response = self.call(what, |mut client| async move {
            let txn = Txn::new().and_then([TxnOp::get(worker_key, None), TxnOp::get(high_water_key, None)]);
            client.txn(txn).await
        })?;
        let mut found = response.op_responses().into_iter().map(|op| match op {
            etcd_client::TxnOpResponse::Get(mut get) => get.take_kvs().into_iter().next(),
            _ => None,
        });
        Ok((found.next().flatten(), found.next().flatten()))
    }

    fn record(&self, what: &dyn Fn() -> String, kv: Option<&KeyValue>) -> Result<Option<Record>, LeaseError> {
        match kv {
            None => Ok(None),
            Some(kv) => Record::parse(kv.value()).map(Some).ok_or_else(|| {
                let value = String::from_utf8_lossy(kv.value()).into_owned();
                LeaseError::store(&self.name, what(), UnexpectedReply(format!("high-water record {value:?}")))
            }),
        }
    }

    /// Tries to take `worker`: `None` when another holder has it (or took it meanwhile).
    fn take(
        &self,
        claim: &Claim<'_>,
        worker: u64,
        token: &str,
        ttl_s: i64,
        lease: &mut Option<i64>,
    ) -> Result<Option<Grant>, LeaseError> {
        let namespace = claim.namespace;
        let what = || doing("acquiring", namespace, worker);
        let high_water_key = self.high_water_key(namespace, worker);
        let found = self.call(&what, |mut client| {
            let key = high_water_key.clone();
            async move { client.get(key, None).await }
        })?;
        let kv = found.kvs().first();
        let record = self.record(&what, kv)?;
        let revision = kv.map_or(0, KeyValue::mod_revision);
        let now_ms = local_now_ms();
        if let Some(written_ms) = record.map(|r| r.written_ms)
            && written_ms > now_ms.saturating_add(millis(self.tolerance))
        {
            return Err(LeaseError::ClockSkew {
                store: self.name.clone(),
                local_ms: now_ms,
                store_ms: written_ms,
                tolerance: self.tolerance,
            });
        }
        let mut fence = local_now_us().max(claim.fence_above.saturating_add(1));
        if let Some(last) = record.map(|r| r.fence) {
            fence = fence.max(last.saturating_add(1));
        }
        let lease_id = match *lease {
            Some(id) => id,
            None => {
                let granted = self.call(&what, |mut client| async move { client.lease_grant(ttl_s, None).await })?;
                *lease.insert(granted.id())
            }
        };
        let previous_high_water_ms = record.and_then(|r| r.high_water_ms);
        let written = Record { fence, high_water_ms: previous_high_water_ms, written_ms: now_ms };
        let worker_key = self.worker_key(namespace, worker);
        let value = format!("{token}|{fence}|{ttl_s}");
        let response = self.call(&what, |mut client| async move {
            let txn = Txn::new()
                .when([
                    Compare::create_revision(worker_key.clone(), CompareOp::Equal, 0),
                    Compare::mod_revision(high_water_key.clone(), CompareOp::Equal, revision),
                ])
                .and_then([
                    TxnOp::put(worker_key, value, Some(PutOptions::new().with_lease(lease_id))),
                    TxnOp::put(high_water_key, written.encode(), None),
                ]);
            client.txn(txn).await
        })?;
        if !response.succeeded() {
            return Ok(None);
        }
        Ok(Some(Grant { worker, token: token.to_owned(), fence, previous_high_water_ms, store_now_ms: now_ms }))
    }

    /// Reads the lease of `grant`: its etcd lease ID, TTL in seconds, and the revisions of the
    /// worker key and of the high-water key with the record. Not `grant`'s: `Lost`.
    fn ours(
        &self,
        what: &dyn Fn() -> String,
        namespace: &str,
        grant: &Grant,
    ) -> Result<(i64, i64, i64, i64, Option<Record>), LeaseError> {
        let lost = || LeaseError::Lost { namespace: namespace.to_owned(), worker: grant.worker };
        let (worker_kv, high_water_kv) = self.read(what, namespace, grant.worker)?;
        let worker_kv = worker_kv.ok_or_else(lost)?;
        let value = std::str::from_utf8(worker_kv.value()).unwrap_or("");
        let mut fields = value.rsplitn(2, '|');
        let ttl_s: i64 = fields.next().and_then(|ttl| ttl.parse().ok()).unwrap_or(0);
        if fields.next() != Some(format!("{}|{}", grant.token, grant.fence).as_str()) {
            return Err(lost());
        }
        let record = self.record(what, high_water_kv.as_ref())?;
        let high_water_revision = high_water_kv.map_or(0, |kv| kv.mod_revision());
        Ok((worker_kv.lease(), ttl_s, worker_kv.mod_revision(), high_water_revision, record))
    }

    /// Writes the high-water record if neither key changed since `ours` read them: `false`
    /// when one did. A release deletes the worker key in the same transaction.
    #[allow(clippy::too_many_arguments)]
    fn write_record(
        &self,
        what: &dyn Fn() -> String,
        namespace: &str,
        worker: u64,
        revisions: (i64, i64),
        record: Record,
        release: bool,
    ) -> Result<bool, LeaseError> {
        let (worker_key, high_water_key) = (self.worker_key(namespace, worker), self.high_water_key(namespace, worker));
        let response = self.call(what, |mut client| async move {
            let mut ops = vec![TxnOp::put(high_water_key.clone(), record.encode(), None)];
            if release {
                ops.push(TxnOp::delete(worker_key.clone(), None));
            }
            let txn = Txn::new()
                .when([
                    Compare::mod_revision(worker_key, CompareOp::Equal, revisions.0),
                    Compare::mod_revision(high_water_key, CompareOp::Equal, revisions.1),
                ])
                .and_then(ops);
            client.txn(txn).await
        })?;
        Ok(response.succeeded())
    }
}

impl LeaseStore for EtcdLeaseStore {
    fn acquire(&self, claim: &Claim<'_>) -> Result<Grant, LeaseError> {
        let Claim { namespace, space, ttl, prefer, .. } = *claim;
        check_namespace(namespace)?;
        check_space(space)?;
        let ttl_s = ttl_seconds(ttl)?;
        let what = || acquiring(namespace);
        let token = new_token();
        // One etcd lease for the acquisition, granted when a free worker ID is first tried.
        let mut lease = None;
        let result = (|| {
            for chunk in scan_order(space, prefer) {
                let (from, to) = (self.worker_key(namespace, chunk.start), self.worker_key(namespace, chunk.end));
                let held = self.call(&what, |mut client| async move {
                    client.get(from, Some(GetOptions::new().with_range(to).with_keys_only())).await
                })?;
                let held: std::collections::HashSet<Vec<u8>> = held.kvs().iter().map(|kv| kv.key().to_vec()).collect();
                for worker in chunk {
                    if held.contains(self.worker_key(namespace, worker).as_bytes()) {
                        continue; // a live lease
                    }
                    if let Some(grant) = self.take(claim, worker, &token, ttl_s, &mut lease)? {
                        return Ok(grant);
                    }
                    // Taken since the range was read: on to the next.
                }
            }
            Err(LeaseError::NoFreeWorker { namespace: namespace.to_owned(), space })
        })();
        if let (Err(_), Some(id)) = (&result, lease) {
            // Nothing is attached to it; it would expire by itself.
            let _ = self.call(&what, |mut client| async move { client.lease_revoke(id).await });
        }
        result
    }

    fn renew(&self, namespace: &str, grant: &Grant, ttl: Duration, high_water_ms: i64) -> Result<(), LeaseError> {
        check_namespace(namespace)?;
        let ttl_s = ttl_seconds(ttl)?;
        let what = || doing("renewing", namespace, grant.worker);
        let lost = || LeaseError::Lost { namespace: namespace.to_owned(), worker: grant.worker };
        for _ in 0..WRITE_ATTEMPTS {
            let (lease, granted_s, worker_revision, high_water_revision, record) =
                self.ours(&what, namespace, grant)?;
            if ttl_s > granted_s {
                return Err(LeaseError::BadSettings {
                    reason: format!(
                        "an etcd lease keeps the TTL it was acquired with ({granted_s} s); a renewal asked for {ttl:?}"
                    ),
                });
            }
            // The keep-alive fails when etcd no longer knows the lease: it expired.
            let kept = self.call(&what, |mut client| async move { client.lease_keep_alive(lease).await.map(drop) });
            match kept {
                Ok(()) => {}
                Err(LeaseError::Store { source, .. })
                    if matches!(
                        source.downcast_ref::<etcd_client::Error>(),
                        Some(etcd_client::Error::LeaseKeepAliveError(_))
                    ) =>
                {
                    return Err(lost());
                }
                Err(other) => return Err(other),
            }
            let stored = record.and_then(|r| r.high_water_ms);
            let written = Record {
                fence: record.map_or(grant.fence, |r| r.fence),
                high_water_ms: Some(stored.map_or(high_water_ms, |hw| hw.max(high_water_ms))),
                written_ms: local_now_ms(),
            };
            if self.write_record(
                &what,
                namespace,
                grant.worker,
                (worker_revision, high_water_revision),
                written,
                false,
            )? {
                return Ok(());
            }
        }
        Err(lost())
    }

    fn release(&self, namespace: &str, grant: &Grant, high_water_ms: i64) -> Result<(), LeaseError> {
        check_namespace(namespace)?;
        let what = || doing("releasing", namespace, grant.worker);
        for _ in 0..WRITE_ATTEMPTS {
            let (lease, _, worker_revision, high_water_revision, record) = self.ours(&what, namespace, grant)?;
            let written = Record {
                fence: record.map_or(grant.fence, |r| r.fence),
                high_water_ms: Some(high_water_ms),
                written_ms: local_now_ms(),
            };
            if self.write_record(
                &what,
                namespace,
                grant.worker,
                (worker_revision, high_water_revision),
                written,
                true,
            )? {
                // The key is gone; the etcd lease would expire by itself.
                let _ = self.call(&what, |mut client| async move { client.lease_revoke(lease).await });
                return Ok(());
            }
        }
        Err(LeaseError::Lost { namespace: namespace.to_owned(), worker: grant.worker })
    }

    fn now_ms(&self) -> Result<i64, LeaseError> {
        // etcd has no clock: see the type's docs for how skew is bounded instead.
        Ok(local_now_ms())
    }

    fn describe(&self) -> String {
        self.name.clone()
    }
}

/// A TTL in whole seconds, rounded up: etcd leases count seconds.
fn ttl_seconds(ttl: Duration) -> Result<i64, LeaseError> {
    let ms = ttl_ms(ttl)?;
    Ok((ms + 999) / 1000)
}

fn millis(duration: Duration) -> i64 {
    i64::try_from(duration.as_millis()).unwrap_or(i64::MAX)
}

fn local_now_ms() -> i64 {
    let since = SystemTime::now().duration_since(UNIX_EPOCH).unwrap_or_default();
    i64::try_from(since.as_millis()).unwrap_or(i64::MAX)
}

fn local_now_us() -> u64 {
    let since = SystemTime::now().duration_since(UNIX_EPOCH).unwrap_or_default();
    u64::try_from(since.as_micros()).unwrap_or(u64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_sort_as_worker_ids() {
        let store = EtcdLeaseStore::open("etcd://127.0.0.1:1/apps/x").unwrap();
        assert_eq!(store.worker_key("shop", 7), "/apps/x/snowflake/shop/workers/0000007");
        assert_eq!(store.high_water_key("shop", 4_194_303), "/apps/x/snowflake/shop/high-water/4194303");
        let store = EtcdLeaseStore::open("etcd+http://127.0.0.1:1").unwrap();
        assert_eq!(store.worker_key("shop", 0), "/snowflake/shop/workers/0000000");
        assert!(store.worker_key("shop", 999) < store.worker_key("shop", 1000));
        assert_eq!(store.describe(), "etcd://127.0.0.1:1/");
    }

    #[test]
    fn records_round_trip() {
        for record in [
            Record { fence: 1, high_water_ms: None, written_ms: 5 },
            Record { fence: u64::MAX, high_water_ms: Some(-3), written_ms: 1_700_000_000_000 },
        ] {
            assert_eq!(Record::parse(record.encode().as_bytes()), Some(record));
        }
        for bad in ["", "1", "1|2", "x|2|3", "1|2|3|4", "1|x|3"] {
            assert_eq!(Record::parse(bad.as_bytes()), None, "{bad:?}");
        }
    }

    #[test]
    fn ttls_round_up_to_seconds() {
        assert_eq!(ttl_seconds(Duration::from_millis(1)).unwrap(), 1);
        assert_eq!(ttl_seconds(Duration::from_millis(1000)).unwrap(), 1);
        assert_eq!(ttl_seconds(Duration::from_millis(1001)).unwrap(), 2);
        assert!(matches!(ttl_seconds(Duration::ZERO), Err(LeaseError::BadTtl { .. })));
    }

    #[test]
    fn arguments_are_checked_before_anything_is_sent() {
        let store = EtcdLeaseStore::open("etcd://127.0.0.1:1").unwrap();
        let ttl = Duration::from_secs(1);
        assert!(matches!(store.acquire(&Claim::new("bad name", 32, ttl)), Err(LeaseError::BadNamespace { .. })));
        assert!(matches!(store.acquire(&Claim::new("shop", 0, ttl)), Err(LeaseError::BadSpace { space: 0 })));
        assert!(matches!(store.acquire(&Claim::new("shop", 32, Duration::ZERO)), Err(LeaseError::BadTtl { .. })));
    }

    #[test]
    fn a_refused_connection_is_a_store_error() {
        // Nothing listens on port 1.
        let store = EtcdLeaseStore::open("etcd://127.0.0.1:1").unwrap();
        let error = store.acquire(&Claim::new("shop", 32, Duration::from_secs(1))).unwrap_err();
        assert!(matches!(error, LeaseError::Store { .. } | LeaseError::Timeout { .. }), "{error:?}");
        assert!(error.to_string().starts_with("lease store etcd://127.0.0.1:1/: acquiring"), "{error}");
    }
}
