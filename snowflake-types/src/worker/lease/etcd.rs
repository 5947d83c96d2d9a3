//! Worker-ID leases in etcd: see [`EtcdLeaseStore`]; the client it talks through is `client.rs`.

mod client;

use std::time::Duration;

use self::client::{EtcdClient, KeyValue, compare_absent, compare_value, last_op, put_op, range_op, range_reply};
use super::store::support::{UnexpectedReply, check_query, check_write, reading, writing};
use super::store::{Cas, LeaseError, LeaseStore, Query, Slot, Snapshot, Written};
use super::url::{StoreKind, StoreUrl};

/// Digits of a worker ID in keys, so that a range of worker IDs is a range of keys (4194304,
/// the end of the leasable space, has 7).
const WORKER_DIGITS: usize = 7;

/// Worker-ID leases in an etcd cluster (v3 API), through the JSON API that every etcd since
/// 3.4 serves on its client port. The keys, the read and write transactions, the incarnation
/// (`etcd-<cluster ID>`; a read's [`Snapshot::now_ms`] is `None`), TLS, users and how calls move
/// between members: `docs/etcd-zookeeper.md`. Calls block, each bounded by [`timeout`](Self::timeout).
///
/// ```no_run
/// use std::time::Duration;
/// use typed_snowflake::worker::lease::{EtcdLeaseStore, LeaseStore, WorkerLease};
/// use typed_snowflake::worker::lease::store::{Cas, Query, Slot};
///
/// let store = EtcdLeaseStore::open("etcd://127.0.0.1:2379/apps")?.timeout(Duration::from_millis(500));
/// let read = store.read("shop", &Query::workers(0..32))?;
/// println!("{} records in {}", read.records.len(), store.describe());
///
/// // Over TLS, the server checked against a CA of the company's, as etcd's user `ids`.
/// let store = EtcdLeaseStore::open("etcds://ids:s3cret@etcd-1.internal,etcd-2.internal/apps?ca=/etc/ssl/etcd-ca.pem")?;
/// let lease = WorkerLease::builder(store).namespace("shop").acquire()?;
/// Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct EtcdLeaseStore {
    client: EtcdClient,
    prefix: String,
}

impl EtcdLeaseStore {
    /// A store for the etcd cluster at `url` (the forms: `docs/stores.md`). A CA file is read
    /// now; nothing is sent until the first call.
    ///
    /// ```
    /// use typed_snowflake::worker::lease::{EtcdLeaseStore, LeaseError, LeaseStore};
    ///
    /// let store = EtcdLeaseStore::open("etcd://10.0.0.1,10.0.0.2:2380/apps")?;
    /// assert_eq!(store.describe(), "etcd://10.0.0.1:2379,10.0.0.2:2380/apps");
    /// assert!(matches!(EtcdLeaseStore::open("etcd://a/x?y=1"), Err(LeaseError::BadUrl { .. })));
    ///
    /// // TLS with the system's roots, as user `ids`, whose password holds a `/`: shown without it.
    /// let store = EtcdLeaseStore::open("etcds://ids:s3cr%2Ft@etcd-1.internal,etcd-2.internal:2380/apps")?;
    /// assert_eq!(store.describe(), "etcds://ids@etcd-1.internal:2379,etcd-2.internal:2380/apps");
    /// let store = EtcdLeaseStore::open("etcd+https://etcd.internal")?;
    /// assert_eq!(store.describe(), "etcds://etcd.internal:2379/");
    ///
    /// // A CA file that cannot be read is refused at once, naming the file, not the password.
    /// let missing = EtcdLeaseStore::open("etcds://ids:s3cret@etcd.internal?ca=/no/such/ca.pem");
    /// let Err(LeaseError::BadUrl { reason, .. }) = &missing else { panic!("{missing:?}") };
    /// assert!(reason.starts_with("the CA file \"/no/such/ca.pem\" could not be read"), "{reason}");
    /// assert!(!missing.unwrap_err().to_string().contains("s3cret"));
    /// Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn open(url: &str) -> Result<Self, LeaseError> {
        Self::from_url(&StoreUrl::parse(url)?)
    }

    /// A store for a URL already parsed, as [`open`](Self::open) takes them.
    ///
    /// ```
    /// use typed_snowflake::worker::lease::{EtcdLeaseStore, LeaseStore, StoreUrl};
    ///
    /// let url = StoreUrl::parse("etcd+http://10.0.0.1/apps")?;
    /// assert_eq!(EtcdLeaseStore::from_url(&url)?.describe(), "etcd://10.0.0.1:2379/apps");
    /// assert!(EtcdLeaseStore::from_url(&StoreUrl::parse("zk://h")?).is_err());
    /// Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn from_url(url: &StoreUrl) -> Result<Self, LeaseError> {
        if url.kind() != StoreKind::Etcd {
            return Err(url.bad("expected etcd://, etcd+http://, etcds:// or etcd+https://", None));
        }
        let name = url.describe_as(if url.is_tls() { "etcds" } else { "etcd" });
        Ok(EtcdLeaseStore { client: EtcdClient::new(url, name)?, prefix: url.path().to_owned() })
    }

    /// Bounds every round trip, connecting included, by `timeout` instead of
    /// [`DEFAULT_STORE_TIMEOUT`](super::DEFAULT_STORE_TIMEOUT) (1 ms at least).
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
        self.client.set_timeout(timeout);
        self
    }

    /// `<prefix>/snowflake/<namespace>/`: every key of the namespace starts with it.
    fn namespace_key(&self, namespace: &str) -> String {
        format!("{}/snowflake/{namespace}/", self.prefix)
    }

    fn slot_key(&self, namespace: &str, slot: Slot) -> String {
        match slot {
            Slot::Marker => format!("{}marker", self.namespace_key(namespace)),
            Slot::Worker(worker) => self.record_key(namespace, worker),
        }
    }

    fn record_key(&self, namespace: &str, worker: u64) -> String {
        format!("{}records/{worker:0WORKER_DIGITS$}", self.namespace_key(namespace))
    }

    /// The first key after every record key of `namespace`: `records0` (`0` follows `/`).
    fn records_end(&self, namespace: &str) -> String {
        format!("{}records0", self.namespace_key(namespace))
    }

    fn unexpected(&self, what: &dyn Fn() -> String, reason: String) -> LeaseError {
        LeaseError::store(self.client.name(), what(), UnexpectedReply(reason))
    }

    /// A value read back: the text the protocol wrote.
    fn text(&self, what: &dyn Fn() -> String, kv: KeyValue) -> Result<String, LeaseError> {
        String::from_utf8(kv.value).map_err(|e| self.unexpected(what, format!("a value that is not UTF-8: {e}")))
    }
}

impl LeaseStore for EtcdLeaseStore {
    fn read(&self, namespace: &str, query: &Query) -> Result<Snapshot, LeaseError> {
        check_query(namespace, query)?;
        let what = || reading(namespace, query);
        let workers = &query.workers;
        let mut ops = vec![range_op(self.slot_key(namespace, Slot::Marker).as_bytes(), None)];
        if !workers.is_empty() {
            let (from, to) = (self.record_key(namespace, workers.start), self.record_key(namespace, workers.end));
            ops.push(range_op(from.as_bytes(), Some(to.as_bytes())));
        }
        if query.highest {
            let (from, to) = (format!("{}records/", self.namespace_key(namespace)), self.records_end(namespace));
            ops.push(last_op(from.as_bytes(), to.as_bytes()));
        }
        let reply = self.client.txn(&what, Vec::new(), ops, Vec::new())?;
        let range = |index: usize| range_reply(&reply.responses, index).map_err(|e| self.unexpected(&what, e.0));
        let marker = range(0)?.into_iter().next().map(|kv| self.text(&what, kv)).transpose()?;
        let mut records = Vec::new();
        if !workers.is_empty() {
            for kv in range(1)? {
                let Some(worker) = worker_of_key(&kv.key) else {
                    let key = String::from_utf8_lossy(&kv.key).into_owned();
                    return Err(self.unexpected(&what, format!("a record key {key:?}")));
                };
                records.push((worker, self.text(&what, kv)?));
            }
        }
        let highest = if query.highest {
            let last = range(if workers.is_empty() { 1 } else { 2 })?;
            last.first().and_then(|kv| worker_of_key(&kv.key))
        } else {
            None
        };
        let incarnation = format!("etcd-{}", reply.cluster_id);
        Ok(Snapshot::new(None, incarnation).with_marker(marker).with_records(records).with_highest(highest))
    }

    fn write(&self, namespace: &str, ops: &[Cas<'_>]) -> Result<Written, LeaseError> {
        check_write(namespace, ops)?;
        let what = || writing(namespace, ops);
        let keys: Vec<String> = ops.iter().map(|op| self.slot_key(namespace, op.slot)).collect();
        let compare = |(op, key): (&Cas<'_>, &String)| match op.expect {
            Some(expect) => compare_value(key.as_bytes(), expect.as_bytes()),
            None => compare_absent(key.as_bytes()),
        };
        let compare = ops.iter().zip(&keys).map(compare).collect();
        let success = ops.iter().zip(&keys).map(|(op, key)| put_op(key.as_bytes(), op.value.as_bytes())).collect();
        // On failure, the slots as they are: a copy of this very write may have applied on a
        // member that did not answer in time (`EtcdClient::txn`).
        let failure = keys.iter().map(|key| range_op(key.as_bytes(), None)).collect();
        let reply = self.client.txn(&what, compare, success, failure)?;
        if reply.succeeded {
            return Ok(Written::Done);
        }
        if reply.resent {
            let mut ours = true;
            for (index, op) in ops.iter().enumerate() {
                let kvs = range_reply(&reply.responses, index).map_err(|e| self.unexpected(&what, e.0))?;
                ours &= kvs.first().is_some_and(|kv| kv.value == op.value.as_bytes());
            }
            if ours {
                // Every slot holds what this write puts: an earlier copy of it applied.
                return Ok(Written::Done);
            }
        }
        Ok(Written::Conflict)
    }

    fn describe(&self) -> String {
        self.client.name().to_owned()
    }
}

/// The worker ID a record key ends with (`…/0000007`).
fn worker_of_key(key: &[u8]) -> Option<u64> {
    let digits = key.rsplit(|&b| b == b'/').next()?;
    if digits.len() != WORKER_DIGITS || !digits.iter().all(u8::is_ascii_digit) {
        return None;
    }
    std::str::from_utf8(digits).ok()?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_sort_as_worker_ids() {
        let store = EtcdLeaseStore::open("etcd://127.0.0.1:1/apps/x").unwrap();
        assert_eq!(store.slot_key("shop", Slot::Worker(7)), "/apps/x/snowflake/shop/records/0000007");
        assert_eq!(store.slot_key("shop", Slot::Marker), "/apps/x/snowflake/shop/marker");
        assert_eq!(store.record_key("shop", 4_194_304), "/apps/x/snowflake/shop/records/4194304");
        let store = EtcdLeaseStore::open("etcd+http://127.0.0.1:1").unwrap();
        assert_eq!(store.record_key("shop", 0), "/snowflake/shop/records/0000000");
        assert!(store.record_key("shop", 999) < store.record_key("shop", 1000));
        assert!(store.record_key("shop", 4_194_304) < store.records_end("shop"));
        assert!(store.slot_key("shop", Slot::Marker) < store.record_key("shop", 0));
        assert_eq!(store.describe(), "etcd://127.0.0.1:1/");
        assert_eq!(worker_of_key(b"/a/snowflake/shop/records/0000007"), Some(7));
        assert_eq!(worker_of_key(b"/snowflake/shop/records/4194303"), Some(4_194_303));
        for bad in [&b""[..], b"/snowflake/shop/records/7", b"/snowflake/shop/records/00000x7", b"/s/w/+000007"] {
            assert_eq!(worker_of_key(bad), None, "{:?}", String::from_utf8_lossy(bad));
        }
    }

    #[test]
    fn tls_and_credentials_are_read_from_the_url() {
        let dir = std::env::temp_dir().join(format!("typed-snowflake-etcd-ca-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        // Not a certificate of any use, but PEM: the URL is read, nothing is sent.
        let pem = dir.join("ca file.pem");
        std::fs::write(&pem, "-----BEGIN CERTIFICATE-----\nMAA=\n-----END CERTIFICATE-----\n").unwrap();
        let encoded = pem.display().to_string().replace('%', "%25").replace(' ', "%20");
        let store =
            EtcdLeaseStore::open(&format!("etcds://root:s%2Fcr%40t@10.0.0.1,[::1]:2380/apps?ca={encoded}")).unwrap();
        assert_eq!(store.describe(), "etcds://root@10.0.0.1:2379,[::1]:2380/apps");
        assert!(!format!("{store:?}").contains("cr"), "{store:?}");
        let store = EtcdLeaseStore::open(&format!("ETCD+HTTPS://h?ca={encoded}")).unwrap();
        assert_eq!(store.describe(), "etcds://h:2379/");
        // In plain text, a CA file is of no use, and not read.
        let store = EtcdLeaseStore::open("etcd://u:p@h?ca=/no/such/ca.pem").unwrap();
        assert_eq!(store.describe(), "etcd://u@h:2379/");

        // A CA file that cannot be read, or holds no certificate: refused before anything is
        // sent, naming the file, never the password.
        let err = EtcdLeaseStore::open("etcds://root:secret@h?ca=/no/such/ca.pem").unwrap_err();
        let LeaseError::BadUrl { reason, source, url } = &err else { panic!("{err:?}") };
        assert!(reason.starts_with("the CA file \"/no/such/ca.pem\" could not be read: "), "{reason}");
        assert!(source.is_some());
        assert_eq!(url, "etcds://root@h:2379?ca=/no/such/ca.pem");
        assert!(!err.to_string().contains("secret"), "{err}");
        let empty = dir.join("empty.pem");
        std::fs::write(&empty, "no certificate here\n").unwrap();
        let err = EtcdLeaseStore::open(&format!("etcds://h?ca={}", empty.display())).unwrap_err();
        assert!(err.to_string().contains("holds no PEM certificate"), "{err}");
        let err = EtcdLeaseStore::open("etcds://h?ca=").unwrap_err();
        assert!(err.to_string().contains("`ca=` names no file"), "{err}");
        std::fs::remove_dir_all(&dir).unwrap();

        let store = super::super::open_store("etcd+https://u:secret@h:1/x").unwrap();
        assert_eq!(store.describe(), "etcds://u@h:1/x");
    }

    #[test]
    fn arguments_are_checked_before_anything_is_sent() {
        // Nothing listens on port 1: a call that got past its checks would fail otherwise.
        let store = EtcdLeaseStore::open("etcd://127.0.0.1:1").unwrap();
        let bad = |e: &LeaseError| matches!(e, LeaseError::BadNamespace { .. } | LeaseError::BadSettings { .. });
        assert!(bad(&store.read("bad name", &Query::workers(0..1)).unwrap_err()));
        assert!(bad(&store.read("shop", &Query::workers(0..2000)).unwrap_err()));
        assert!(bad(&store.write("shop", &[]).unwrap_err()));
        assert!(bad(&store.write("shop", &[Cas::new(Slot::Marker, None, "a\nb")]).unwrap_err()));
    }

    #[test]
    fn a_refused_connection_is_a_store_error() {
        // Nothing listens on port 1.
        let store = EtcdLeaseStore::open("etcd://127.0.0.1:1").unwrap();
        let error = store.read("shop", &Query::workers(0..32)).unwrap_err();
        assert!(matches!(error, LeaseError::Store { .. } | LeaseError::Timeout { .. }), "{error:?}");
        assert!(
            error.to_string().starts_with("lease store etcd://127.0.0.1:1/: reading worker IDs 0..32 of namespace"),
            "{error}"
        );
    }

    #[test]
    fn a_refused_authentication_names_the_user_never_the_password() {
        use std::io::{Read, Write};
        let refused = r#"{"error":"etcdserver: authentication failed, invalid user ID or password","code":3,"message":"etcdserver: authentication failed, invalid user ID or password"}"#;
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let server = std::thread::spawn(move || {
            let (mut stream, _) = listener.accept().unwrap();
            let mut request = Vec::new();
            let mut buf = [0; 4096];
            while !String::from_utf8_lossy(&request).contains("\"password\"") {
                let n = stream.read(&mut buf).unwrap();
                request.extend_from_slice(&buf[..n]);
            }
            write!(
                stream,
                "HTTP/1.1 400 X\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{refused}",
                refused.len()
            )
            .unwrap();
        });
        let store = EtcdLeaseStore::open(&format!("etcd://root:s3cr3t@127.0.0.1:{port}/apps")).unwrap();
        let err = store.write("shop", &[Cas::new(Slot::Marker, None, "m")]).unwrap_err();
        let message = err.to_string();
        assert_eq!(
            message,
            format!(
                "lease store etcd://root@127.0.0.1:{port}/apps: writing the marker of namespace \"shop\" failed: \
                 etcd refused to authenticate user \"root\": etcd refused the request (HTTP 400): etcdserver: \
                 authentication failed, invalid user ID or password"
            )
        );
        assert!(!message.contains("s3cr3t") && !format!("{err:?}").contains("s3cr3t"), "{err:?}");
        server.join().unwrap();
    }
}
