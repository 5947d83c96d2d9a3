//! Worker-ID leases in etcd (v3 API): the keys are described on [`EtcdLeaseStore`].

use std::error::Error as StdError;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use serde_json::{Value, json};
use thiserror::Error;

use super::store::support::{
    SCAN_CHUNK, UnexpectedReply, acquiring, check_namespace, check_space, doing, holder_name, listing, new_token,
    recorded_holder, scan_order, ttl_ms,
};
use super::store::{
    Claim, DEFAULT_CLOCK_TOLERANCE, DEFAULT_STORE_TIMEOUT, Grant, LeaseError, LeaseStore, StoreFaults, WorkerRecord,
};
use super::url::{StoreKind, StoreUrl};
use crate::clock::{Clock, MonotonicClock, wall_us};

/// Worker IDs are written with this many digits in keys, so that the keys of a range of worker
/// IDs are a range of keys: 4194303, the highest worker ID, has 7.
const WORKER_DIGITS: usize = 7;

/// How many times a renewal or a release reads and writes again when the high-water key
/// changed between the two (only an acquisition that took the worker ID meanwhile changes
/// it, and then the next read finds the lease lost).
const WRITE_ATTEMPTS: usize = 3;

/// How many worker keys an acquisition reads first; each later read takes twice as many, up
/// to a scan chunk. etcd's JSON gateway answers 1024 keys in ~17 ms on the test machine and 64
/// in ~2 ms, and a space with free worker IDs usually has one among the first few read.
const FIRST_RANGE: u64 = 32;

/// `chunk` cut into consecutive ranges of `size` worker IDs, `size` doubling (up to a scan
/// chunk) after each, and carried over to the next chunk.
fn ranges(chunk: std::ops::Range<u64>, size: &mut u64) -> Vec<std::ops::Range<u64>> {
    let mut out = Vec::new();
    let mut lo = chunk.start;
    while lo < chunk.end {
        let hi = lo.saturating_add(*size).min(chunk.end);
        out.push(lo..hi);
        *size = size.saturating_mul(2).min(SCAN_CHUNK);
        lo = hi;
    }
    out
}

/// Idle connections kept open to each etcd server, for the threads that share the store.
const IDLE_CONNECTIONS: usize = 16;

/// Worker-ID leases in an etcd cluster (v3 API), through the JSON API that every etcd since
/// 3.4 serves on its client port (its gRPC gateway, `/v3/kv/txn` and the like).
///
/// URL: `etcd://[user:password@]host[:port][,host[:port]…][/prefix]` (or `etcd+http://`;
/// port 2379 by default): every key lives under `prefix`.
///
/// - **TLS**: `etcds://…` (or `etcd+https://`) for etcd's `https://` client URLs, through rustls
///   (ring; no OpenSSL). The server's certificate and host name are checked against the CA
///   certificates of the PEM file that the query parameter `ca=<path>` (percent-encoded where
///   needed) or else the environment variable [`CA_ENV`](super::CA_ENV) names, or else against the system's
///   trusted roots. A CA file that cannot be read is refused by `open`
///   ([`LeaseError::BadUrl`]); a certificate the roots do not vouch for fails the first call,
///   saying the certificate was not trusted, with rustls's error as the last cause. Client
///   certificates are not supported.
/// - **Users**: `user:password@` (each percent-encoded where needed: `%40` for `@`, `%2F` for
///   `/`) logs in through etcd's `/v3/auth/authenticate`; every request carries the token it
///   gives, and a token etcd no longer accepts (expired after `--auth-token-ttl` unused, or
///   older than a change of users and roles) is replaced by a new authentication, once, within
///   the same call. The password is never shown: [`describe`](LeaseStore::describe), `Debug`
///   and every error name the user alone. The user needs a role with `readwrite` permission
///   on the keys under `<prefix>/snowflake/` (which also lets it revoke the etcd leases
///   attached to them). Over `etcd://` the password crosses the network in clear text: use
///   `etcds://` wherever it leaves the host.
///
/// Keys, for namespace `shop`, worker ID 7 and no prefix:
///
/// - `/snowflake/shop/workers/0000007`: the holder's token, fence, TTL in seconds and name
///   (`host:pid`), as `token|fence|ttl|name`, attached to an etcd lease of that TTL. An acquisition creates it in a
///   transaction only if it is absent (`create_revision == 0`); a renewal is a keep-alive of
///   the etcd lease; when the lease expires, etcd deletes the key.
/// - `/snowflake/shop/high-water/0000007`: `fence|high water|written`, never expiring: the last
///   fencing number handed out for worker 7, the high water its holders recorded (Unix ms, empty
///   before the first renewal), and the writer's clock at its last write (Unix ms).
///
/// **Fencing numbers** are the wall clock in microseconds, or one more than the last fence
/// of the worker ID (or than the claim's) when that is higher, written to the high-water key
/// in the acquisition's transaction, which succeeds only if that key has not changed since it
/// was read (`mod_revision`): a later holder of a worker ID always has a higher fence. etcd's
/// own revisions are not used: they start again at 1 when a cluster is rebuilt empty, and are
/// far below the clock anyway. An etcd that lost its data has no high-water key: the grant then
/// carries no high water, and the holder waits out every earlier holder (`clock + TTL +
/// tolerance`) before it issues.
///
/// **Clock.** etcd exposes no clock, so [`now_ms`](LeaseStore::now_ms) is the local clock: the
/// process's [`MonotonicClock`] (read precisely), the lease's default clock, so that the
/// lease's comparison of its clock with the store's compares one clock with itself and cannot
/// fail. Not the raw wall clock: after the wall clock steps back (an NTP correction),
/// `MonotonicClock` stays ahead of it by the step until the process restarts, and a store
/// reading the wall would look behind by the step, so that every acquisition, and with it
/// every recovery of a lost lease, would be refused as a skew. The times recorded in the
/// high-water keys and the grants' `store_now_ms` are readings of the same clock. The clocks
/// of the hosts are compared through etcd instead: every write of the high-water key records
/// its writer's clock, and an acquisition refuses ([`LeaseError::ClockSkew`]) when the
/// previous holder of the worker ID wrote a time ahead of the local clock by more than the
/// tolerance (default [`DEFAULT_CLOCK_TOLERANCE`], the lease's default): the local clock is
/// behind the other host's (a time this process recorded before its wall clock stepped back
/// is not ahead of its clock, which did not step back). The hosts must run NTP: the tolerance
/// is what covers the skew between the clocks of two holders of a worker ID when the store has
/// no record of it, and the lease's margin covers the drift of one host's clock during a TTL.
///
/// **TTL.** etcd leases count whole seconds: a TTL is rounded up to the next second (and etcd
/// raises a TTL below its minimum, 2 s with the default election timeout), so a crashed
/// holder's worker ID frees up to a second or two late, never early. A renewal may not ask for
/// a longer TTL than its acquisition had.
///
/// The store's calls are blocking HTTP requests, made on the calling thread over a few
/// kept-alive connections; no async runtime is involved. Each call, with the connecting that
/// may precede it, is bounded by the store's timeout (default [`DEFAULT_STORE_TIMEOUT`]). It
/// goes to the server of the URL that answered last; one that refuses the connection is
/// passed over for the next one at once, and one that does not answer (a member stopped or
/// cut off) once its share of the timeout is up (half of it for the server that answered
/// last, the rest shared equally among the others), the next calls then starting at the next
/// server: one hung member costs half of one call's timeout, not every call's whole timeout.
///
/// ```no_run
/// use std::time::Duration;
/// use typed_snowflake::worker::lease::{Claim, EtcdLeaseStore, LeaseStore};
///
/// let store = EtcdLeaseStore::open("etcd://127.0.0.1:2379/apps")?.timeout(Duration::from_millis(500));
/// let grant = store.acquire(&Claim::new("shop", 32, Duration::from_secs(10)))?;
/// println!("worker {} leased from {}", grant.worker, store.describe());
/// store.release("shop", &grant, grant.store_now_ms)?;
///
/// // Over TLS, the server checked against a CA of the company's, as etcd's user `ids`.
/// let store = EtcdLeaseStore::open("etcds://ids:s3cret@etcd-1.internal,etcd-2.internal/apps?ca=/etc/ssl/etcd-ca.pem")?;
/// let grant = store.acquire(&Claim::new("shop", 32, Duration::from_secs(10)))?;
/// Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct EtcdLeaseStore {
    agent: ureq::Agent,
    endpoints: Vec<String>,
    /// The endpoint that answered last: the next call tries it first.
    current: AtomicUsize,
    prefix: String,
    timeout: Duration,
    tolerance: Duration,
    /// The local clock: [`now_ms`](LeaseStore::now_ms), the times recorded in the high-water
    /// keys and the grants' `store_now_ms` are its readings. [`MonotonicClock`], the lease's
    /// default, so that the lease compares readings of one clock with readings of the same.
    clock: Arc<dyn Clock>,
    name: String,
    /// What the server certificates are checked against (for messages), over TLS.
    trust: Option<String>,
    /// etcd's user and password, when the URL names them.
    auth: Option<Auth>,
}

/// etcd's user and password, and the token the last authentication gave.
struct Auth {
    user: String,
    password: String,
    /// `None` before the first authentication; empty when the server has authentication off.
    token: Mutex<Option<String>>,
}

impl std::fmt::Debug for EtcdLeaseStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EtcdLeaseStore").field("store", &self.name).field("timeout", &self.timeout).finish()
    }
}

/// What a worker key holds: `token|fence|ttl|name`, or `token|fence|ttl` from a holder that
/// recorded no name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct LeaseValue<'a> {
    token: &'a str,
    fence: u64,
    ttl_s: i64,
    holder: Option<&'a str>,
}

impl<'a> LeaseValue<'a> {
    fn parse(value: &'a [u8]) -> Option<Self> {
        let mut fields = std::str::from_utf8(value).ok()?.splitn(4, '|');
        let token = fields.next()?;
        let fence = fields.next()?.parse().ok()?;
        let ttl_s = fields.next()?.parse().ok()?;
        Some(LeaseValue { token, fence, ttl_s, holder: fields.next() })
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
    /// A store for the etcd cluster at `url`:
    /// `etcd://[user:password@]host[:port][,host[:port]…][/prefix]`, or `etcds://…[?ca=<path>]`
    /// for TLS (see the type's docs for the CA and the credentials). A CA file is read now;
    /// nothing is sent until the first call.
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

    /// A store for a URL already parsed: `etcd://`, `etcd+http://`, `etcds://` or
    /// `etcd+https://`, as [`open`](Self::open) takes them.
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
            return Err(LeaseError::BadUrl {
                url: url.to_string(),
                reason: "expected etcd://, etcd+http://, etcds:// or etcd+https://".into(),
                source: None,
            });
        }
        let tls = url.is_tls();
        let name = url.describe_as(if tls { "etcds" } else { "etcd" });
        // Every status is read as a reply (etcd's error objects come with 4xx and 5xx), no
        // proxy from the environment stands between the store and etcd, and a redirect is an
        // error, not a request replayed elsewhere.
        let mut config = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .proxy(None)
            .max_redirects(0)
            .max_idle_connections(IDLE_CONNECTIONS * url.servers().len())
            .max_idle_connections_per_host(IDLE_CONNECTIONS);
        let mut trust = None;
        if tls {
            let (roots, trusted) = trusted_roots(url)?;
            // rustls with ring, handed to ureq: the process's default provider is neither
            // needed nor changed.
            let provider = Arc::new(rustls::crypto::ring::default_provider());
            let tls_config = ureq::tls::TlsConfig::builder()
                .provider(ureq::tls::TlsProvider::Rustls)
                .root_certs(roots)
                .unversioned_rustls_crypto_provider(provider)
                .build();
            config = config.tls_config(tls_config);
            trust = Some(trusted);
        }
        let scheme = if tls { "https" } else { "http" };
        Ok(EtcdLeaseStore {
            agent: config.build().into(),
            endpoints: url.servers().iter().map(|server| format!("{scheme}://{server}")).collect(),
            current: AtomicUsize::new(0),
            prefix: url.path().to_owned(),
            timeout: DEFAULT_STORE_TIMEOUT,
            tolerance: DEFAULT_CLOCK_TOLERANCE,
            clock: Arc::new(MonotonicClock),
            name,
            trust,
            auth: url.user().map(|user| Auth {
                user: user.to_owned(),
                password: url.password().unwrap_or_default().to_owned(),
                token: Mutex::new(None),
            }),
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

    /// The worker ID's last grant (`token|fence`), written with it and deleted by its
    /// release: a renewal whose etcd lease expired writes its worker key again only while this
    /// still names its grant.
    fn last_key(&self, namespace: &str, worker: u64) -> String {
        format!("{}/snowflake/{namespace}/last/{worker:0WORKER_DIGITS$}", self.prefix)
    }

    /// Posts `request` to the JSON API's `path` (`/v3/kv/txn`…) and returns the reply, checked
    /// by [`reply`], within the timeout. With a user and password, the request carries the
    /// token of the last authentication (the first call authenticates); when etcd answers that
    /// the token is no longer valid (expired, or older than a change of users and roles), the
    /// store authenticates again and sends the request once more, in the time left.
    fn post(&self, what: &dyn Fn() -> String, path: &str, request: &Value) -> Result<Value, LeaseError> {
        let deadline = Instant::now() + self.timeout;
        let request = request.to_string();
        let Some(auth) = &self.auth else {
            return self.send(what, path, &request, "", deadline)?.map_err(|e| self.refused(what, e));
        };
        let last = auth.token.lock().unwrap_or_else(PoisonError::into_inner).clone();
        let token = match last {
            Some(token) => token,
            None => self.authenticate(what, auth, deadline)?,
        };
        match self.send(what, path, &request, &token, deadline)? {
            Err(refusal) if refusal.asks_for_a_new_token() => {
                let token = self.authenticate(what, auth, deadline)?;
                self.send(what, path, &request, &token, deadline)?.map_err(|e| self.refused(what, e))
            }
            reply => reply.map_err(|e| self.refused(what, e)),
        }
    }

    /// Authenticates as the URL's user (`/v3/auth/authenticate`): the token, kept for the
    /// next requests; empty when the server has authentication off (the requests then carry
    /// none, as etcd's own client does).
    fn authenticate(&self, what: &dyn Fn() -> String, auth: &Auth, deadline: Instant) -> Result<String, LeaseError> {
        let request = json!({ "name": auth.user, "password": auth.password }).to_string();
        let token = match self.send(what, "/v3/auth/authenticate", &request, "", deadline)? {
            Ok(reply) => match reply.get("token") {
                Some(Value::String(token)) if !token.is_empty() => token.clone(),
                _ => {
                    let unexpected = UnexpectedReply("an authentication without a token".into());
                    return Err(LeaseError::store(&self.name, what(), unexpected));
                }
            },
            Err(refusal) if refusal.says("authentication is not enabled") => String::new(),
            Err(refusal) => {
                let refused = AuthError::Refused { user: auth.user.clone(), source: refusal };
                return Err(LeaseError::store(&self.name, what(), refused));
            }
        };
        *auth.token.lock().unwrap_or_else(PoisonError::into_inner) = Some(token.clone());
        Ok(token)
    }

    /// etcd's refusal of a request as the store's error: one that asks for a user the URL
    /// does not name says so.
    fn refused(&self, what: &dyn Fn() -> String, refusal: ReplyError) -> LeaseError {
        if self.auth.is_none() && refusal.says("user name is empty") {
            return LeaseError::store(&self.name, what(), AuthError::Missing { source: refusal });
        }
        LeaseError::store(&self.name, what(), refusal)
    }

    /// Sends `request` to `path` with `token` (if not empty) as its `Authorization`, and reads
    /// the reply by [`reply`], before `deadline`: the outer error when no reply came, the inner
    /// one when etcd refused. The endpoint that answered last is tried first, with half the
    /// time left (all of it when it is the only one), then the others, each with an equal
    /// share of the time left among those not tried yet. One that cannot be connected to
    /// (refused, unreachable, unknown host) is passed over for the next at once: nothing was
    /// sent to it. One that does not answer within its share (a member that hangs: stopped, or
    /// cut off behind a kernel that still accepts its connections) is passed over for the next
    /// in the time left; when it was the first tried, the next calls start past it, so a hung
    /// member costs half of one call's timeout, not every call's whole timeout. (Only the
    /// first: a call that times out everywhere leaves the next calls one endpoint further on,
    /// not back at the first.)
    ///
    /// Sending again to another member after a timeout is safe because every request of the
    /// store may be applied twice, or late, without harm: reads read; a keep-alive refreshes
    /// a lease, and granting a lease that is never used leaks nothing (it expires); a revoke
    /// of a revoked lease is refused; and every write of a key is a transaction that compares
    /// the revisions it read (`create_revision == 0` for a worker key, `mod_revision` for the
    /// others), so once one copy applied, another fails its comparison and writes nothing.
    /// [`take`](Self::take) then reads its own write in the failed transaction's reply and
    /// keeps the grant; a renewal reads and writes again.
    fn send(
        &self,
        what: &dyn Fn() -> String,
        path: &str,
        request: &str,
        token: &str,
        deadline: Instant,
    ) -> Result<Result<Value, ReplyError>, LeaseError> {
        let timed_out = || LeaseError::Timeout { store: self.name.clone(), what: what(), after: self.timeout };
        let server = |index: usize| {
            let endpoint = &self.endpoints[index];
            endpoint.split_once("://").map_or(endpoint.as_str(), |(_, server)| server).to_owned()
        };
        let failed = |error: ureq::Error, index: usize| match error {
            error if is_timeout(&error) => timed_out(),
            // A server that closed or reset the connection: one that serves TLS does so on a
            // request in plain text, and one that does not, on a TLS handshake.
            ureq::Error::Io(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::UnexpectedEof
                        | std::io::ErrorKind::ConnectionReset
                        | std::io::ErrorKind::ConnectionAborted
                ) =>
            {
                let hint = if self.trust.is_some() {
                    "if it does not serve TLS on this port, the URL is etcd://…"
                } else {
                    "if it serves TLS, the URL is etcds://…"
                };
                LeaseError::store(&self.name, what(), Disconnected { server: server(index), hint, source: e })
            }
            error => match &self.trust {
                Some(trust) => match tls_failure(error) {
                    Ok((cause, certificate)) => {
                        LeaseError::store(&self.name, what(), TlsFailed::new(server(index), trust, certificate, cause))
                    }
                    Err(error) => LeaseError::store(&self.name, what(), error),
                },
                None => LeaseError::store(&self.name, what(), error),
            },
        };
        let count = self.endpoints.len();
        let first = self.current.load(Ordering::Relaxed);
        let (mut unreachable, mut hung) = (None, false);
        for i in 0..count {
            let index = (first + i) % count;
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(timed_out());
            }
            // Half for the endpoint that answered last: on a loaded cluster it may be slow
            // without being hung, and it is the likeliest to answer.
            let share = if i == 0 && count > 1 { 2 } else { u32::try_from(count - i).unwrap_or(u32::MAX) };
            match self.exchange(index, path, request, token, left / share) {
                Ok((status, body)) => {
                    self.current.store(index, Ordering::Relaxed);
                    return Ok(reply(status, &body));
                }
                Err(error) if cannot_connect(&error) => unreachable = Some((error, index)),
                Err(error) if is_timeout(&error) => {
                    // The next calls start at the next endpoint, unless another thread
                    // moved on (or found this one answering) meanwhile.
                    if i == 0 {
                        let next = (index + 1) % count;
                        let _ = self.current.compare_exchange(index, next, Ordering::Relaxed, Ordering::Relaxed);
                    }
                    hung = true;
                }
                Err(error) => return Err(failed(error, index)),
            }
        }
        match unreachable {
            Some((error, index)) if !hung => Err(failed(error, index)),
            _ => Err(timed_out()),
        }
    }

    /// One round trip with endpoint `index`, within `budget`: the reply's status and body.
    fn exchange(
        &self,
        index: usize,
        path: &str,
        request: &str,
        token: &str,
        budget: Duration,
    ) -> Result<(u16, String), ureq::Error> {
        let mut post = self.agent.post(format!("{}{path}", self.endpoints[index])).content_type("application/json");
        if !token.is_empty() {
            post = post.header("Authorization", token);
        }
        let mut response = post.config().timeout_global(Some(budget)).build().send(request)?;
        let status = response.status().as_u16();
        let body = response.body_mut().read_to_string()?;
        Ok((status, body))
    }

    /// Reads `key`: its entry, if any.
    fn get(&self, what: &dyn Fn() -> String, key: &str) -> Result<Option<KeyValue>, LeaseError> {
        let reply = self.post(what, "/v3/kv/range", &json!({ "key": BASE64.encode(key) }))?;
        let first = range_kvs(&reply).map(|kvs| kvs.into_iter().next());
        first.map_err(|e| LeaseError::store(&self.name, what(), e))
    }

    /// Runs a transaction: whether its comparisons held, and the replies of its operations
    /// (`success`'s when they held, `failure`'s when not).
    fn txn(
        &self,
        what: &dyn Fn() -> String,
        compare: Vec<Value>,
        success: Vec<Value>,
        failure: Vec<Value>,
    ) -> Result<(bool, Vec<Value>), LeaseError> {
        let mut request = json!({ "compare": compare, "success": success });
        if !failure.is_empty() {
            request["failure"] = Value::Array(failure);
        }
        let reply = self.post(what, "/v3/kv/txn", &request)?;
        txn_outcome(&reply).map_err(|e| LeaseError::store(&self.name, what(), e))
    }

    /// The worker key and the high-water key of `worker`, read together.
    fn read(
        &self,
        what: &dyn Fn() -> String,
        namespace: &str,
        worker: u64,
    ) -> Result<(Option<KeyValue>, Option<KeyValue>), LeaseError> {
        let (worker_key, high_water_key) = (self.worker_key(namespace, worker), self.high_water_key(namespace, worker));
        let (_, responses) = self.txn(what, vec![], vec![range_op(&worker_key), range_op(&high_water_key)], vec![])?;
        let found = |index: usize| -> Result<Option<KeyValue>, UnexpectedReply> {
            let response = responses.get(index).ok_or_else(|| {
                UnexpectedReply(format!("a transaction of 2 reads answered with {} replies", responses.len()))
            })?;
            let range = response
                .get("response_range")
                .ok_or_else(|| UnexpectedReply(format!("a read answered with {response}")))?;
            Ok(range_kvs(range)?.into_iter().next())
        };
        let both = found(0).and_then(|worker_kv| Ok((worker_kv, found(1)?)));
        both.map_err(|e| LeaseError::store(&self.name, what(), e))
    }

    fn record(&self, what: &dyn Fn() -> String, kv: Option<&KeyValue>) -> Result<Option<Record>, LeaseError> {
        match kv {
            None => Ok(None),
            Some(kv) => Record::parse(&kv.value).map(Some).ok_or_else(|| {
                let value = String::from_utf8_lossy(&kv.value).into_owned();
                LeaseError::store(&self.name, what(), UnexpectedReply(format!("high-water record {value:?}")))
            }),
        }
    }

    /// Grants an etcd lease of `ttl_s` seconds: its ID.
    fn grant_lease(&self, what: &dyn Fn() -> String, ttl_s: i64) -> Result<i64, LeaseError> {
        let reply = self.post(what, "/v3/lease/grant", &json!({ "TTL": ttl_s.to_string() }))?;
        let id = int_field(&reply, "ID").and_then(|id| {
            id.filter(|&id| id != 0).ok_or_else(|| UnexpectedReply(format!("a lease grant without an ID: {reply}")))
        });
        id.map_err(|e| LeaseError::store(&self.name, what(), e))
    }

    /// Revokes an etcd lease, deleting the keys attached to it.
    fn revoke_lease(&self, what: &dyn Fn() -> String, id: i64) -> Result<(), LeaseError> {
        self.post(what, "/v3/lease/revoke", &json!({ "ID": id.to_string() })).map(drop)
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
        let kv = self.get(&what, &high_water_key)?;
        let record = self.record(&what, kv.as_ref())?;
        let revision = kv.map_or(0, |kv| kv.mod_revision);
        let now_ms = self.clock.now_ms();
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
        let mut fence = wall_us().max(claim.fence_above.saturating_add(1));
        if let Some(last) = record.map(|r| r.fence) {
            fence = fence.max(last.saturating_add(1));
        }
        let lease_id = match *lease {
            Some(id) => id,
            None => *lease.insert(self.grant_lease(&what, ttl_s)?),
        };
        let previous_high_water_ms = record.and_then(|r| r.high_water_ms);
        let written = Record { fence, high_water_ms: previous_high_water_ms, written_ms: now_ms };
        let worker_key = self.worker_key(namespace, worker);
        let value = format!("{token}|{fence}|{ttl_s}|{}", holder_name());
        let (succeeded, failed) = self.txn(
            &what,
            vec![compare_revision(&worker_key, "CREATE", 0), compare_revision(&high_water_key, "MOD", revision)],
            vec![
                put_op(&worker_key, &value, Some(lease_id)),
                put_op(&high_water_key, &written.encode(), None),
                put_op(&self.last_key(namespace, worker), &format!("{token}|{fence}"), None),
            ],
            vec![range_op(&worker_key)],
        )?;
        // When the comparisons failed, the worker key may hold this very value: a copy of this
        // transaction, sent to a member that did not answer within its share of the timeout,
        // applied there (see `send`). The token is this acquisition's own, so the grant is.
        if !succeeded && !self.holds(&what, &failed, &value)? {
            return Ok(None);
        }
        Ok(Some(Grant {
            worker,
            token: token.to_owned(),
            fence,
            previous_high_water_ms,
            store_now_ms: now_ms,
            namespace_since_ms: None,
        }))
    }

    /// Whether the failed transaction's read of a worker key (its only reply) found `value`.
    fn holds(&self, what: &dyn Fn() -> String, replies: &[Value], value: &str) -> Result<bool, LeaseError> {
        let Some(range) = replies.first().and_then(|reply| reply.get("response_range")) else {
            return Ok(false);
        };
        let kvs = range_kvs(range).map_err(|e| LeaseError::store(&self.name, what(), e))?;
        Ok(kvs.first().is_some_and(|kv| kv.value == value.as_bytes()))
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
        let lease = LeaseValue::parse(&worker_kv.value).ok_or_else(lost)?;
        if lease.token != grant.token || lease.fence != grant.fence {
            return Err(lost());
        }
        let ttl_s = lease.ttl_s;
        let record = self.record(what, high_water_kv.as_ref())?;
        let high_water_revision = high_water_kv.map_or(0, |kv| kv.mod_revision);
        Ok((worker_kv.lease, ttl_s, worker_kv.mod_revision, high_water_revision, record))
    }

    /// Writes the lease of `grant` again after its etcd lease expired (an outage longer than
    /// the TTL): only while its worker key is gone and the worker ID's last grant is still this
    /// one (no acquisition and no release since), unchanged since read, in one transaction.
    /// Whether it did.
    fn revive(
        &self,
        what: &dyn Fn() -> String,
        namespace: &str,
        grant: &Grant,
        ttl_s: i64,
        high_water_ms: i64,
    ) -> Result<bool, LeaseError> {
        let last_key = self.last_key(namespace, grant.worker);
        let Some(last) =
            self.get(what, &last_key)?.filter(|kv| kv.value == format!("{}|{}", grant.token, grant.fence).as_bytes())
        else {
            return Ok(false);
        };
        let (worker_kv, high_water_kv) = self.read(what, namespace, grant.worker)?;
        if worker_kv.is_some() {
            return Ok(false);
        }
        let Some(high_water_kv) = high_water_kv else { return Ok(false) };
        let Some(record) = self.record(what, Some(&high_water_kv))? else { return Ok(false) };
        let lease_id = self.grant_lease(what, ttl_s)?;
        let (worker_key, high_water_key) =
            (self.worker_key(namespace, grant.worker), self.high_water_key(namespace, grant.worker));
        let value = format!("{}|{}|{ttl_s}|{}", grant.token, grant.fence, holder_name());
        let written = Record {
            fence: record.fence,
            high_water_ms: Some(record.high_water_ms.map_or(high_water_ms, |hw| hw.max(high_water_ms))),
            written_ms: self.clock.now_ms(),
        };
        let (revived, _) = self.txn(
            what,
            vec![
                compare_revision(&worker_key, "CREATE", 0),
                compare_revision(&high_water_key, "MOD", high_water_kv.mod_revision),
                compare_revision(&last_key, "MOD", last.mod_revision),
            ],
            vec![put_op(&worker_key, &value, Some(lease_id)), put_op(&high_water_key, &written.encode(), None)],
            vec![],
        )?;
        if !revived {
            let _ = self.revoke_lease(what, lease_id);
        }
        Ok(revived)
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
        let mut ops = vec![put_op(&high_water_key, &record.encode(), None)];
        if release {
            ops.push(json!({ "request_delete_range": { "key": BASE64.encode(&worker_key) } }));
            let last_key = self.last_key(namespace, worker);
            ops.push(json!({ "request_delete_range": { "key": BASE64.encode(&last_key) } }));
        }
        let compare = vec![
            compare_revision(&worker_key, "MOD", revisions.0),
            compare_revision(&high_water_key, "MOD", revisions.1),
        ];
        Ok(self.txn(what, compare, ops, vec![])?.0)
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
            let mut size = FIRST_RANGE;
            for chunk in scan_order(space, prefer).flat_map(|chunk| ranges(chunk, &mut size)) {
                let (from, to) = (self.worker_key(namespace, chunk.start), self.worker_key(namespace, chunk.end));
                let request = json!({ "key": BASE64.encode(from), "range_end": BASE64.encode(to), "keys_only": true });
                let reply = self.post(&what, "/v3/kv/range", &request)?;
                let held = range_kvs(&reply).map_err(|e| LeaseError::store(&self.name, what(), e))?;
                let held: std::collections::HashSet<Vec<u8>> = held.into_iter().map(|kv| kv.key).collect();
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
            let _ = self.revoke_lease(&what, id);
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
                match self.ours(&what, namespace, grant) {
                    Ok(ours) => ours,
                    Err(LeaseError::Lost { .. }) if self.revive(&what, namespace, grant, ttl_s, high_water_ms)? => {
                        return Ok(());
                    }
                    Err(error) => return Err(error),
                };
            if ttl_s > granted_s {
                return Err(LeaseError::BadSettings {
                    reason: format!(
                        "an etcd lease keeps the TTL it was acquired with ({granted_s} s); a renewal asked for {ttl:?}"
                    ),
                });
            }
            // The keep-alive answers a TTL of 0 when etcd no longer knows the lease: it expired.
            let reply = self.post(&what, "/v3/lease/keepalive", &json!({ "ID": lease.to_string() }))?;
            if keep_alive_ttl(&reply).map_err(|e| LeaseError::store(&self.name, what(), e))? <= 0 {
                // Expired: its worker key goes with it; the next attempt may revive it.
                continue;
            }
            let stored = record.and_then(|r| r.high_water_ms);
            let written = Record {
                fence: record.map_or(grant.fence, |r| r.fence),
                high_water_ms: Some(stored.map_or(high_water_ms, |hw| hw.max(high_water_ms))),
                written_ms: self.clock.now_ms(),
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
        // The record of the last write sent: a write that timed out on one member may have
        // applied there before it was sent again to the next, whose comparison then fails.
        let mut sent: Option<Record> = None;
        for _ in 0..WRITE_ATTEMPTS {
            let (lease, _, worker_revision, high_water_revision, record) = match self.ours(&what, namespace, grant) {
                Ok(ours) => ours,
                Err(LeaseError::Lost { .. }) if sent.is_some() => {
                    // The worker key is gone: released by our own earlier write if the
                    // high-water key still holds exactly what it wrote (a later holder's
                    // acquisition rewrites it).
                    let key = self.high_water_key(namespace, grant.worker);
                    let kv = self.get(&what, &key)?;
                    if self.record(&what, kv.as_ref())? == sent {
                        return Ok(());
                    }
                    return Err(LeaseError::Lost { namespace: namespace.to_owned(), worker: grant.worker });
                }
                Err(other) => return Err(other),
            };
            let written = Record {
                fence: record.map_or(grant.fence, |r| r.fence),
                high_water_ms: Some(high_water_ms),
                written_ms: self.clock.now_ms(),
            };
            sent = Some(written);
            if self.write_record(
                &what,
                namespace,
                grant.worker,
                (worker_revision, high_water_revision),
                written,
                true,
            )? {
                // The key is gone; the etcd lease would expire by itself.
                let _ = self.revoke_lease(&what, lease);
                return Ok(());
            }
        }
        Err(LeaseError::Lost { namespace: namespace.to_owned(), worker: grant.worker })
    }

    fn now_ms(&self) -> Result<i64, LeaseError> {
        // etcd has no clock: see the type's docs for how skew is bounded instead.
        Ok(self.clock.now_ms())
    }

    fn faults(&self) -> StoreFaults {
        StoreFaults::ETCD
    }

    fn describe(&self) -> String {
        self.name.clone()
    }

    fn list(&self, namespace: &str) -> Result<Vec<WorkerRecord>, LeaseError> {
        check_namespace(namespace)?;
        let what = || listing(namespace);
        let unexpected = |reply: String| LeaseError::store(&self.name, what(), UnexpectedReply(reply));
        let mut records = std::collections::BTreeMap::new();
        for kv in self.range_under(&what, &format!("{}/snowflake/{namespace}/high-water/", self.prefix))? {
            let Some(worker) = worker_of_key(&kv.key) else { continue };
            let record = self.record(&what, Some(&kv))?.and_then(|r| r.high_water_ms);
            records.insert(worker, WorkerRecord::new(worker).high_water(record));
        }
        for kv in self.range_under(&what, &format!("{}/snowflake/{namespace}/workers/", self.prefix))? {
            let Some(worker) = worker_of_key(&kv.key) else { continue };
            let lease = LeaseValue::parse(&kv.value)
                .ok_or_else(|| unexpected(format!("lease {:?}", String::from_utf8_lossy(&kv.value))))?;
            // What is left of the etcd lease: -1 when it expired since the range read it.
            let left = match kv.lease {
                0 => None,
                id => {
                    let reply = self.post(&what, "/v3/lease/timetolive", &json!({ "ID": id.to_string() }))?;
                    let ttl = int_field(&reply, "TTL").map_err(|e| LeaseError::store(&self.name, what(), e))?;
                    match ttl {
                        Some(ttl) if ttl < 0 => continue,
                        ttl => Some(Duration::from_secs(ttl.unwrap_or(0).unsigned_abs())),
                    }
                }
            };
            let record = records.remove(&worker).unwrap_or_else(|| WorkerRecord::new(worker));
            let holder = lease.holder.and_then(recorded_holder);
            records.insert(worker, record.leased_by(holder, lease.fence, left));
        }
        Ok(records.into_values().collect())
    }
}

impl EtcdLeaseStore {
    /// Every key under `prefix`, in key order.
    fn range_under(&self, what: &dyn Fn() -> String, prefix: &str) -> Result<Vec<KeyValue>, LeaseError> {
        // The range ends before the first key that does not start with the prefix: its last
        // byte, `/`, plus one.
        let mut end = prefix.as_bytes().to_vec();
        if let Some(last) = end.last_mut() {
            *last += 1;
        }
        let reply =
            self.post(what, "/v3/kv/range", &json!({ "key": BASE64.encode(prefix), "range_end": BASE64.encode(end) }))?;
        range_kvs(&reply).map_err(|e| LeaseError::store(&self.name, what(), e))
    }
}

/// The worker ID a worker or high-water key ends with (`…/0000007`).
fn worker_of_key(key: &[u8]) -> Option<u64> {
    let digits = key.rsplit(|&b| b == b'/').next()?;
    if digits.len() != WORKER_DIGITS || !digits.iter().all(u8::is_ascii_digit) {
        return None;
    }
    std::str::from_utf8(digits).ok()?.parse().ok()
}

/// Whether `error` is the end of the time a round trip had (connecting, sending or reading):
/// the server may have received the request.
fn is_timeout(error: &ureq::Error) -> bool {
    match error {
        ureq::Error::Timeout(_) => true,
        ureq::Error::Io(e) => matches!(e.kind(), std::io::ErrorKind::TimedOut | std::io::ErrorKind::WouldBlock),
        _ => false,
    }
}

/// Whether `error` happened before anything was sent: the next endpoint may be tried.
fn cannot_connect(error: &ureq::Error) -> bool {
    use std::io::ErrorKind;
    match error {
        ureq::Error::ConnectionFailed | ureq::Error::HostNotFound => true,
        ureq::Error::Io(e) => matches!(
            e.kind(),
            ErrorKind::ConnectionRefused
                | ErrorKind::HostUnreachable
                | ErrorKind::NetworkUnreachable
                | ErrorKind::NetworkDown
                | ErrorKind::AddrNotAvailable
        ),
        _ => false,
    }
}

/// The roots a TLS store checks server certificates against: the CA certificates of the PEM
/// file that `ca=` or else [`CA_ENV`](super::CA_ENV) names, or the system's trusted roots; and how messages
/// name them. A CA file that cannot be read, or holds no certificate, makes the URL unusable.
fn trusted_roots(url: &StoreUrl) -> Result<(ureq::tls::RootCerts, String), LeaseError> {
    let bad = |reason: String, source: Option<Arc<dyn StdError + Send + Sync>>| LeaseError::BadUrl {
        url: url.to_string(),
        reason,
        source,
    };
    let Some(path) = url.ca_file() else {
        // Certificates the system's store holds but rustls cannot parse are left out, as are
        // stores that cannot be read: a server is then refused as untrusted, naming its CA.
        let native = rustls_native_certs::load_native_certs();
        let roots = native.certs.iter().map(|der| ureq::tls::Certificate::from_der(der.as_ref()).to_owned());
        return Ok((roots.collect::<Vec<_>>().into(), "the system's trusted roots".into()));
    };
    let pem = std::fs::read(&path)
        .map_err(|e| bad(format!("the CA file {path:?} could not be read: {e}"), Some(Arc::new(e))))?;
    let mut certificates = Vec::new();
    for item in ureq::tls::parse_pem(&pem) {
        match item {
            Ok(ureq::tls::PemItem::Certificate(certificate)) => certificates.push(certificate),
            Ok(_) => {} // a key beside the certificates
            Err(e) => return Err(bad(format!("the CA file {path:?} is not PEM: {e}"), Some(Arc::new(e)))),
        }
    }
    if certificates.is_empty() {
        return Err(bad(format!("the CA file {path:?} holds no PEM certificate"), None));
    }
    Ok((certificates.into(), format!("the CA file {path:?}")))
}

/// The TLS failure behind `error`, if it is one: rustls's error (the handshake, the
/// certificate), and whether the server's certificate was refused. Any other error is given
/// back.
fn tls_failure(error: ureq::Error) -> Result<(Box<dyn StdError + Send + Sync>, bool), ureq::Error> {
    let certificate = |e: &rustls::Error| {
        matches!(
            e,
            rustls::Error::InvalidCertificate(_)
                | rustls::Error::NoCertificatesPresented
                | rustls::Error::InvalidCertRevocationList(_)
        )
    };
    match error {
        ureq::Error::Rustls(e) => {
            let refused = certificate(&e);
            Ok((Box::new(e), refused))
        }
        ureq::Error::Io(e) if e.get_ref().is_some_and(|inner| inner.is::<rustls::Error>()) => {
            let inner = e.into_inner().expect("an error inside");
            let refused = inner.downcast_ref::<rustls::Error>().is_some_and(certificate);
            Ok((inner, refused))
        }
        error => Err(error),
    }
}

/// A TLS connection to an etcd server that could not be made.
#[derive(Debug, Error)]
#[error("TLS with {server} failed: {hint}: {source}")]
struct TlsFailed {
    /// `host:port`.
    server: String,
    /// What went wrong, in the store's words.
    hint: String,
    /// rustls's error, or the system's.
    #[source]
    source: Box<dyn StdError + Send + Sync>,
}

impl TlsFailed {
    fn new(server: String, trust: &str, certificate: bool, source: Box<dyn StdError + Send + Sync>) -> Self {
        let hint = if certificate {
            format!("the server's certificate was not trusted (checked against {trust})")
        } else {
            "the handshake did not complete (does the server serve TLS on this port? etcd does on its https:// \
             client URLs)"
                .to_owned()
        };
        TlsFailed { server, hint, source }
    }
}

/// A server that closed or reset the connection instead of replying.
#[derive(Debug, Error)]
#[error("{server} hung up without a reply ({hint}): {source}")]
struct Disconnected {
    /// `host:port`.
    server: String,
    /// What may be the cause.
    hint: &'static str,
    /// The system's error.
    #[source]
    source: std::io::Error,
}

/// etcd refused the URL's user and password, or asks for a user the URL does not name.
#[derive(Debug, Error)]
enum AuthError {
    /// `/v3/auth/authenticate` refused the user name and password.
    #[error("etcd refused to authenticate user {user:?}: {source}")]
    Refused {
        /// The user name.
        user: String,
        /// etcd's refusal.
        #[source]
        source: ReplyError,
    },
    /// A request without a user was refused: the server has authentication on.
    #[error("etcd has authentication on; name a user and password in the URL (etcd://user:password@host…): {source}")]
    Missing {
        /// etcd's refusal.
        #[source]
        source: ReplyError,
    },
}

// The JSON API: requests and replies. etcd writes its int64 fields as JSON strings, bytes
// (keys, values) in base64, and leaves out every field that holds its zero value (a `false`,
// an empty list, a 0).

/// etcd refused a request: its error object, or an HTTP status without one.
#[derive(Debug, Error)]
enum ReplyError {
    /// An error reply (`{"error": …, "code": …, "message": …}`) or a status other than 200.
    #[error("etcd refused the request (HTTP {status}): {message}")]
    Refused {
        /// The HTTP status.
        status: u16,
        /// etcd's message, or the start of the body when it is not an error object.
        message: String,
    },
    /// A reply that is not what the request asks for.
    #[error(transparent)]
    Unexpected(#[from] UnexpectedReply),
}

impl ReplyError {
    /// Whether etcd refused the request with a message that contains `words`.
    fn says(&self, words: &str) -> bool {
        matches!(self, ReplyError::Refused { message, .. } if message.contains(words))
    }

    /// Whether etcd refused the request's token (or its lack of one) in a way a new
    /// authentication cures: the token expired or is unknown to this member, it predates a
    /// change of users or roles, or none was sent to a server that turned authentication on.
    fn asks_for_a_new_token(&self) -> bool {
        self.says("invalid auth token") || self.says("revision of auth store is old") || self.says("user name is empty")
    }
}

/// A key and what etcd keeps with it, from a range reply.
#[derive(Clone, Debug, PartialEq, Eq)]
struct KeyValue {
    key: Vec<u8>,
    /// Empty when the range asked for keys only.
    value: Vec<u8>,
    mod_revision: i64,
    /// The etcd lease the key is attached to; 0 for none.
    lease: i64,
}

/// At most this much of an unexpected body is quoted in an error.
const QUOTED_BODY: usize = 200;

/// The reply of a request, from its HTTP status and body: the JSON object of a successful
/// reply (for the keep-alive, which etcd streams, the first message's `result`), or why it is
/// not one. Every reply of etcd's carries a `header` (its cluster, member and revision).
fn reply(status: u16, body: &str) -> Result<Value, ReplyError> {
    let quoted = || {
        let end = (0..=QUOTED_BODY.min(body.len())).rev().find(|&i| body.is_char_boundary(i)).unwrap_or(0);
        format!("{:?}{}", &body[..end], if end < body.len() { "…" } else { "" })
    };
    // A streamed reply is a sequence of objects: the first is the answer.
    let parsed = serde_json::Deserializer::from_str(body).into_iter::<Value>().next();
    let value = match parsed {
        Some(Ok(value)) if value.is_object() => value,
        _ if status != 200 => return Err(ReplyError::Refused { status, message: quoted() }),
        _ => return Err(UnexpectedReply(format!("not a JSON object: {}", quoted())).into()),
    };
    // `{"error": "…", "message": "…", "code": 3}`, or `{"error": {"message": …}}` in a stream.
    let error = match value.get("error") {
        None | Some(Value::Null) => None,
        Some(Value::String(error)) if error.is_empty() => None,
        Some(error) => Some(error),
    };
    if status != 200 || error.is_some() {
        let message = [value.get("message"), error.and_then(|e| e.get("message")), error]
            .into_iter()
            .flatten()
            .find_map(|m| m.as_str().filter(|m| !m.is_empty()).map(str::to_owned))
            .unwrap_or_else(quoted);
        return Err(ReplyError::Refused { status, message });
    }
    let value = match value.get("result") {
        Some(result) => result.clone(),
        None => value,
    };
    if !value.get("header").is_some_and(Value::is_object) {
        return Err(UnexpectedReply(format!("a reply without a header: {}", quoted())).into());
    }
    Ok(value)
}

/// An int64 field (a JSON string, or a number): `None` when it is left out (0).
fn int_field(object: &Value, name: &str) -> Result<Option<i64>, UnexpectedReply> {
    let bad = |value: &Value| UnexpectedReply(format!("{name} is {value}, not an integer"));
    match object.get(name) {
        None | Some(Value::Null) => Ok(None),
        Some(value @ Value::String(text)) => text.parse().map(Some).map_err(|_| bad(value)),
        Some(value @ Value::Number(number)) => number.as_i64().map(Some).ok_or_else(|| bad(value)),
        Some(value) => Err(bad(value)),
    }
}

/// A bytes field (base64): empty when it is left out.
fn bytes_field(object: &Value, name: &str) -> Result<Vec<u8>, UnexpectedReply> {
    match object.get(name) {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(Value::String(text)) => {
            BASE64.decode(text).map_err(|e| UnexpectedReply(format!("{name} {text:?} is not base64: {e}")))
        }
        Some(value) => Err(UnexpectedReply(format!("{name} is {value}, not base64"))),
    }
}

/// The entries of a range reply, in key order.
fn range_kvs(range: &Value) -> Result<Vec<KeyValue>, UnexpectedReply> {
    let kvs = match range.get("kvs") {
        None | Some(Value::Null) => return Ok(Vec::new()),
        Some(Value::Array(kvs)) => kvs,
        Some(other) => return Err(UnexpectedReply(format!("kvs is {other}, not a list"))),
    };
    kvs.iter()
        .map(|kv| {
            let key = bytes_field(kv, "key")?;
            // An entry always has a key and a revision that modified it.
            let mod_revision = int_field(kv, "mod_revision")?.filter(|&r| r > 0);
            match (key.is_empty(), mod_revision) {
                (false, Some(mod_revision)) => Ok(KeyValue {
                    key,
                    value: bytes_field(kv, "value")?,
                    mod_revision,
                    lease: int_field(kv, "lease")?.unwrap_or(0),
                }),
                _ => Err(UnexpectedReply(format!("an entry without a key or a revision: {kv}"))),
            }
        })
        .collect()
}

/// A transaction's reply: whether its comparisons held, and its operations' replies.
fn txn_outcome(reply: &Value) -> Result<(bool, Vec<Value>), UnexpectedReply> {
    let succeeded = match reply.get("succeeded") {
        None | Some(Value::Null) => false,
        Some(Value::Bool(succeeded)) => *succeeded,
        Some(other) => return Err(UnexpectedReply(format!("succeeded is {other}, not a boolean"))),
    };
    let responses = match reply.get("responses") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Array(responses)) => responses.clone(),
        Some(other) => return Err(UnexpectedReply(format!("responses is {other}, not a list"))),
    };
    Ok((succeeded, responses))
}

/// The TTL a keep-alive's reply grants, in seconds: 0 (left out) when etcd does not know the
/// lease any more.
fn keep_alive_ttl(reply: &Value) -> Result<i64, UnexpectedReply> {
    Ok(int_field(reply, "TTL")?.unwrap_or(0))
}

/// A transaction's comparison: `key`'s `target` revision (`CREATE` or `MOD`) equals `revision`.
fn compare_revision(key: &str, target: &str, revision: i64) -> Value {
    let field = if target == "CREATE" { "create_revision" } else { "mod_revision" };
    json!({ "key": BASE64.encode(key), "target": target, "result": "EQUAL", field: revision.to_string() })
}

/// A transaction's read of `key`.
fn range_op(key: &str) -> Value {
    json!({ "request_range": { "key": BASE64.encode(key) } })
}

/// A transaction's write of `key`, attached to the etcd lease `lease` if any.
fn put_op(key: &str, value: &str, lease: Option<i64>) -> Value {
    let mut put = json!({ "key": BASE64.encode(key), "value": BASE64.encode(value) });
    if let Some(lease) = lease {
        put["lease"] = Value::String(lease.to_string());
    }
    json!({ "request_put": put })
}

/// A TTL in whole seconds, rounded up: etcd leases count seconds.
fn ttl_seconds(ttl: Duration) -> Result<i64, LeaseError> {
    let ms = ttl_ms(ttl)?;
    Ok((ms + 999) / 1000)
}

fn millis(duration: Duration) -> i64 {
    i64::try_from(duration.as_millis()).unwrap_or(i64::MAX)
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
    fn lease_values_and_keys_are_read_back() {
        let value = LeaseValue::parse(b"00ff|42|10|web-1:77").unwrap();
        assert_eq!(value, LeaseValue { token: "00ff", fence: 42, ttl_s: 10, holder: Some("web-1:77") });
        // Written by a holder that recorded no name.
        assert_eq!(LeaseValue::parse(b"00ff|42|10").unwrap().holder, None);
        for bad in [&b""[..], b"00ff", b"00ff|x|10", b"00ff|42", b"00ff|42|ten|a:1", b"00ff|-1|10", b"\xff|1|1"] {
            assert_eq!(LeaseValue::parse(bad), None, "{:?}", String::from_utf8_lossy(bad));
        }
        assert_eq!(worker_of_key(b"/a/snowflake/shop/workers/0000007"), Some(7));
        assert_eq!(worker_of_key(b"/snowflake/shop/high-water/4194303"), Some(4_194_303));
        for bad in [&b""[..], b"/snowflake/shop/workers/7", b"/snowflake/shop/workers/00000x7", b"/s/w/+000007"] {
            assert_eq!(worker_of_key(bad), None, "{:?}", String::from_utf8_lossy(bad));
        }
    }

    #[test]
    fn it_declares_a_hung_member_and_no_clock() {
        let store = EtcdLeaseStore::open("etcd://127.0.0.1:2379,127.0.0.1:2380").unwrap();
        assert_eq!(store.faults(), StoreFaults::ETCD);
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
        assert_eq!(store.endpoints, ["https://10.0.0.1:2379", "https://[::1]:2380"]);
        assert_eq!(store.trust.as_deref(), Some(format!("the CA file {:?}", pem.display().to_string()).as_str()));
        let auth = store.auth.as_ref().unwrap();
        assert_eq!((auth.user.as_str(), auth.password.as_str()), ("root", "s/cr@t"));
        assert!(!format!("{store:?}").contains("cr"), "{store:?}");
        let store = EtcdLeaseStore::open(&format!("ETCD+HTTPS://h?ca={encoded}")).unwrap();
        assert_eq!((store.describe().as_str(), store.endpoints[0].as_str()), ("etcds://h:2379/", "https://h:2379"));
        // In plain text, a CA file is of no use, and not read.
        let store = EtcdLeaseStore::open("etcd://u:p@h?ca=/no/such/ca.pem").unwrap();
        assert_eq!((store.describe().as_str(), store.endpoints[0].as_str()), ("etcd://u@h:2379/", "http://h:2379"));
        assert!(store.trust.is_none());

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
    fn acquisitions_read_small_ranges_first_and_cover_the_chunk_once() {
        let mut size = FIRST_RANGE;
        let first = ranges(0..1024, &mut size);
        assert_eq!(first[..3], [0..32, 32..96, 96..224]);
        assert_eq!(first.last(), Some(&(992..1024)));
        assert_eq!(size, 1024);
        // The preferred worker ID's chunk of one does not shrink the ranges after it.
        let mut size = FIRST_RANGE;
        assert_eq!(ranges(7..8, &mut size), vec![std::ops::Range { start: 7, end: 8 }]);
        assert_eq!(ranges(0..1024, &mut size)[0], 0..64);
        for (chunk, size) in [(0..1024, 32), (5..6, 32), (0..3, 1), (100..1100, 700), (7..7, 32)] {
            let mut size = size;
            let cut = ranges(chunk.clone(), &mut size);
            let covered: Vec<u64> = cut.iter().flat_map(Clone::clone).collect();
            assert_eq!(covered, chunk.clone().collect::<Vec<_>>(), "{chunk:?}");
            assert!(cut.iter().all(|r| !r.is_empty()), "{cut:?}");
        }
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

    /// A reply etcd 3.4 and 3.5 write, with their header.
    const HEADER: &str = r#""header":{"cluster_id":"14841639068965178418","member_id":"10276657743932975437","revision":"7","raft_term":"2"}"#;

    fn refused(result: Result<Value, ReplyError>) -> (u16, String) {
        match result {
            Err(ReplyError::Refused { status, message }) => (status, message),
            other => panic!("expected a refusal, got {other:?}"),
        }
    }

    fn unexpected<T: std::fmt::Debug>(result: Result<T, impl Into<ReplyError>>) -> String {
        match result.map_err(Into::into) {
            Err(ReplyError::Unexpected(UnexpectedReply(reason))) => reason,
            other => panic!("expected an unexpected reply, got {other:?}"),
        }
    }

    #[test]
    fn replies_of_etcd_are_read() {
        let body = format!(
            r#"{{{HEADER},"kvs":[{{"key":"L3Nub3dmbGFrZS9zaG9wL3dvcmtlcnMvMDAwMDAwNw==","create_revision":"5","mod_revision":"6","version":"2","value":"dG9rfDF8Mg==","lease":"7587876543210"}},{{"key":"YQ==","mod_revision":"3"}}],"count":"2"}}"#
        );
        let kvs = range_kvs(&reply(200, &body).unwrap()).unwrap();
        assert_eq!(
            kvs,
            [
                KeyValue {
                    key: b"/snowflake/shop/workers/0000007".to_vec(),
                    value: b"tok|1|2".to_vec(),
                    mod_revision: 6,
                    lease: 7_587_876_543_210,
                },
                KeyValue { key: b"a".to_vec(), value: vec![], mod_revision: 3, lease: 0 },
            ]
        );
        // No entry: `kvs` is left out.
        assert_eq!(range_kvs(&reply(200, &format!("{{{HEADER}}}")).unwrap()).unwrap(), []);

        let txn = reply(200, &format!(r#"{{{HEADER},"succeeded":true,"responses":[{{"response_put":{{}}}}]}}"#));
        assert_eq!(txn_outcome(&txn.unwrap()).unwrap(), (true, vec![json!({ "response_put": {} })]));
        // A failed comparison: `succeeded` is left out.
        assert_eq!(txn_outcome(&reply(200, &format!("{{{HEADER}}}")).unwrap()).unwrap(), (false, vec![]));

        let granted = reply(200, &format!(r#"{{{HEADER},"ID":"7587876543210","TTL":"2"}}"#)).unwrap();
        assert_eq!(int_field(&granted, "ID").unwrap(), Some(7_587_876_543_210));

        // The keep-alive is streamed: each message in `result`, one per line.
        let kept = format!("{{\"result\":{{{HEADER},\"ID\":\"7\",\"TTL\":\"9\"}}}}\n");
        assert_eq!(keep_alive_ttl(&reply(200, &kept).unwrap()).unwrap(), 9);
        let expired = format!("{{\"result\":{{{HEADER},\"ID\":\"7\"}}}}\n");
        assert_eq!(keep_alive_ttl(&reply(200, &expired).unwrap()).unwrap(), 0);
    }

    #[test]
    fn error_objects_are_refusals() {
        let body = r#"{"error":"etcdserver: requested lease not found","code":5,"message":"etcdserver: requested lease not found"}"#;
        assert_eq!(refused(reply(404, body)), (404, "etcdserver: requested lease not found".to_owned()));
        // In a stream, with a status of 200.
        let body = r#"{"error":{"grpc_code":5,"http_code":404,"message":"etcdserver: requested lease not found","http_status":"Not Found"}}"#;
        assert_eq!(refused(reply(200, body)), (200, "etcdserver: requested lease not found".to_owned()));
        // A lease grant's own `error` field.
        let body = format!(r#"{{{HEADER},"ID":"5","error":"lease already exists"}}"#);
        assert_eq!(refused(reply(200, &body)).1, "lease already exists");
        // An empty `error` is no error.
        assert!(reply(200, &format!(r#"{{{HEADER},"ID":"5","error":""}}"#)).is_ok());
        // A status without an error object: the body is quoted, cut short.
        let (status, message) = refused(reply(502, &"<html>bad gateway</html>".repeat(20)));
        assert_eq!(status, 502);
        assert!(message.starts_with("\"<html>bad gateway</html>") && message.ends_with('…'), "{message}");
        assert_eq!(refused(reply(503, r#"{"code":14}"#)).1, r#""{\"code\":14}""#);
    }

    #[test]
    fn hostile_replies_are_unexpected() {
        assert!(unexpected(reply(200, "")).starts_with("not a JSON object"));
        assert_eq!(unexpected(reply(200, "<html>hello</html>")), r#"not a JSON object: "<html>hello</html>""#);
        assert!(unexpected(reply(200, "[1,2]")).starts_with("not a JSON object"));
        assert!(unexpected(reply(200, "\"é\"")).starts_with("not a JSON object"));
        // Cut short inside a character: quoted up to the character before.
        let long = "é".repeat(150);
        assert!(unexpected(reply(200, &long)).ends_with("é\"…"));
        assert!(unexpected(reply(200, "{}")).starts_with("a reply without a header"));
        assert!(unexpected(reply(200, r#"{"result":{"TTL":"9"}}"#)).starts_with("a reply without a header"));

        let with = |fields: &str| reply(200, &format!("{{{HEADER},{fields}}}")).unwrap();
        assert_eq!(unexpected(range_kvs(&with(r#""kvs":{}"#))), "kvs is {}, not a list");
        assert!(unexpected(range_kvs(&with(r#""kvs":[{"mod_revision":"3"}]"#))).starts_with("an entry without a key"));
        assert!(unexpected(range_kvs(&with(r#""kvs":[{"key":"YQ=="}]"#))).starts_with("an entry without a key"));
        assert_eq!(
            unexpected(range_kvs(&with(r#""kvs":[{"key":"YQ==","mod_revision":"x"}]"#))),
            r#"mod_revision is "x", not an integer"#
        );
        assert!(
            unexpected(range_kvs(&with(r#""kvs":[{"key":"!!","mod_revision":"3"}]"#)))
                .starts_with("key \"!!\" is not base64")
        );
        assert_eq!(
            unexpected(range_kvs(&with(r#""kvs":[{"key":"YQ==","mod_revision":"3","value":7}]"#))),
            "value is 7, not base64"
        );
        assert_eq!(unexpected(txn_outcome(&with(r#""succeeded":"yes""#))), r#"succeeded is "yes", not a boolean"#);
        assert_eq!(unexpected(txn_outcome(&with(r#""responses":5"#))), "responses is 5, not a list");
        assert_eq!(unexpected(keep_alive_ttl(&with(r#""TTL":"9.5""#))), r#"TTL is "9.5", not an integer"#);
        assert_eq!(
            unexpected(int_field(&with(r#""ID":"99999999999999999999""#), "ID")),
            r#"ID is "99999999999999999999", not an integer"#
        );
        assert_eq!(unexpected(int_field(&with(r#""ID":true"#), "ID")), "ID is true, not an integer");
    }

    #[test]
    fn requests_are_written_as_etcd_reads_them() {
        assert_eq!(
            compare_revision("/k", "CREATE", 0),
            json!({ "key": "L2s=", "target": "CREATE", "result": "EQUAL", "create_revision": "0" })
        );
        assert_eq!(
            compare_revision("/k", "MOD", 12),
            json!({ "key": "L2s=", "target": "MOD", "result": "EQUAL", "mod_revision": "12" })
        );
        assert_eq!(
            put_op("/k", "v", Some(-5)),
            json!({ "request_put": { "key": "L2s=", "value": "dg==", "lease": "-5" } })
        );
        assert_eq!(put_op("/k", "v", None), json!({ "request_put": { "key": "L2s=", "value": "dg==" } }));
        assert_eq!(range_op("/k"), json!({ "request_range": { "key": "L2s=" } }));
    }

    /// Endpoints that refuse connections are passed over; the one that answered last is tried
    /// first.
    #[test]
    fn refused_endpoints_are_passed_over() {
        use std::io::{Read, Write};
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let server = std::thread::spawn(move || {
            for _ in 0..2 {
                let (mut stream, _) = listener.accept().unwrap();
                let mut request = Vec::new();
                let mut buf = [0; 4096];
                // Up to the end of the body (the request is small: one read, or a few).
                while !String::from_utf8_lossy(&request).contains("\"key\"") {
                    let n = stream.read(&mut buf).unwrap();
                    request.extend_from_slice(&buf[..n]);
                }
                let body = format!("{{{HEADER}}}");
                write!(
                    stream,
                    "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                    body.len()
                )
                .unwrap();
            }
        });
        // Nothing listens on port 1.
        let store = EtcdLeaseStore::open(&format!("etcd://127.0.0.1:1,127.0.0.1:{port}")).unwrap();
        let what = || "reading".to_owned();
        assert_eq!(store.get(&what, "/k").unwrap(), None);
        assert_eq!(store.current.load(Ordering::Relaxed), 1);
        assert_eq!(store.get(&what, "/k").unwrap(), None);
        server.join().unwrap();
    }

    /// An endpoint that accepts connections and never answers (a stopped member: its kernel
    /// still accepts) is passed over once its share of the timeout is up, within the same
    /// call, and the next calls go to the endpoint that answered, at once.
    #[test]
    fn a_hung_endpoint_costs_one_share_of_one_call() {
        // Bound, never accepting: connections complete in the kernel's backlog, and requests
        // are never read.
        let hung = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let hung_port = hung.local_addr().unwrap().port();
        let empty = || (200, format!("{{{HEADER}}}"));
        let (port, server) = fake_etcd(vec![empty(), empty(), empty()]);
        // Long enough that the answering endpoint's half is never too short on a loaded
        // machine (a debug build, the other tests beside it).
        let timeout = Duration::from_secs(2);
        let store =
            EtcdLeaseStore::open(&format!("etcd://127.0.0.1:{hung_port},127.0.0.1:{port}")).unwrap().timeout(timeout);
        let what = || "reading".to_owned();
        let began = Instant::now();
        assert_eq!(store.get(&what, "/k").unwrap(), None);
        let first = began.elapsed();
        // Half the timeout for the hung endpoint, the rest for the other.
        assert!(first >= timeout / 2 - Duration::from_millis(20) && first < timeout, "{first:?}");
        assert_eq!(store.current.load(Ordering::Relaxed), 1);
        for _ in 0..2 {
            let began = Instant::now();
            assert_eq!(store.get(&what, "/k").unwrap(), None);
            assert!(began.elapsed() < timeout / 4, "{:?}", began.elapsed());
        }
        assert_eq!(server.join().unwrap().len(), 3);
        // Alone, the hung endpoint has the whole timeout, and the call times out.
        let store = EtcdLeaseStore::open(&format!("etcd://127.0.0.1:{hung_port}")).unwrap().timeout(timeout);
        let began = Instant::now();
        let err = store.get(&what, "/k").unwrap_err();
        assert!(matches!(err, LeaseError::Timeout { .. }), "{err:?}");
        assert!(began.elapsed() >= timeout - Duration::from_millis(20), "{:?}", began.elapsed());
        // Two hung endpoints: the call times out, and the next one starts at the second, not
        // back at the first.
        let other = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let other_port = other.local_addr().unwrap().port();
        let store = EtcdLeaseStore::open(&format!("etcd://127.0.0.1:{hung_port},127.0.0.1:{other_port}"))
            .unwrap()
            .timeout(timeout);
        let err = store.get(&what, "/k").unwrap_err();
        assert!(matches!(err, LeaseError::Timeout { .. }), "{err:?}");
        assert_eq!(store.current.load(Ordering::Relaxed), 1);
        drop((hung, other));
    }

    /// A release whose write applied on a member that did not answer in time, and failed its
    /// comparison when sent again to the next, finds the worker key gone and the high water it
    /// wrote: released, not lost. Had a later holder taken the worker ID since (the high-water
    /// key rewritten), it is lost.
    #[test]
    fn a_release_that_applied_before_it_was_sent_again_is_a_release() {
        let local = 1_700_000_000_000;
        let grant = Grant {
            worker: 0,
            token: "tok".into(),
            fence: 5,
            previous_high_water_ms: None,
            store_now_ms: 0,
            namespace_since_ms: None,
        };
        let kv = |key: &str, value: &str, revision: u32| {
            format!(
                r#"{{"key":"{}","value":"{}","mod_revision":"{revision}","lease":"99"}}"#,
                BASE64.encode(key),
                BASE64.encode(value)
            )
        };
        let (worker_key, high_water_key) = ("/snowflake/shop/workers/0000000", "/snowflake/shop/high-water/0000000");
        let range = |kvs: Option<String>| match kvs {
            Some(kv) => format!(r#"{{"response_range":{{{HEADER},"kvs":[{kv}]}}}}"#),
            None => format!(r#"{{"response_range":{{{HEADER}}}}}"#),
        };
        for (found, released) in [(format!("5|1234|{local}"), true), (format!("6||{local}"), false)] {
            let (port, server) = fake_etcd(vec![
                // The holder's keys, read.
                (
                    200,
                    format!(
                        r#"{{{HEADER},"succeeded":true,"responses":[{},{}]}}"#,
                        range(Some(kv(worker_key, "tok|5|2|web:1", 3))),
                        range(Some(kv(high_water_key, "5|1000|1", 4)))
                    ),
                ),
                // The release's write, sent again: its comparison fails.
                (200, format!(r#"{{{HEADER},"succeeded":false}}"#)),
                // Read again: the worker key is gone.
                (
                    200,
                    format!(
                        r#"{{{HEADER},"succeeded":true,"responses":[{},{}]}}"#,
                        range(None),
                        range(Some(kv(high_water_key, &found, 6)))
                    ),
                ),
                // The high-water key.
                (200, format!(r#"{{{HEADER},"kvs":[{}]}}"#, kv(high_water_key, &found, 6))),
            ]);
            let mut store = EtcdLeaseStore::open(&format!("etcd://127.0.0.1:{port}")).unwrap();
            store.clock = Arc::new(crate::clock::ManualClock::new(local));
            let result = store.release("shop", &grant, 1234);
            if released {
                assert_eq!(result, Ok(()));
            } else {
                assert_eq!(result, Err(LeaseError::Lost { namespace: "shop".into(), worker: 0 }));
            }
            assert_eq!(server.join().unwrap().len(), 4, "read, write, read again, the high water");
        }
    }

    /// The store's time is the lease's default clock, `MonotonicClock`, not the wall clock:
    /// after the wall clock steps back, the two differ by the step, and the lease compares
    /// its clock with the store's. The times the store records and compares are that clock's.
    #[test]
    fn the_store_reads_the_monotonic_clock() {
        let mut store = EtcdLeaseStore::open("etcd://127.0.0.1:1").unwrap();
        assert_eq!(format!("{:?}", store.clock), "MonotonicClock");
        let before = MonotonicClock.now_ms();
        let now = store.now_ms().unwrap();
        assert!(before <= now && now <= MonotonicClock.now_ms(), "{before} {now}");

        // A clock of the test's: what `now_ms` reads, and what the previous holder's record is
        // compared with.
        let local = 1_700_000_000_000;
        store.clock = Arc::new(crate::clock::ManualClock::new(local));
        assert_eq!(store.now_ms().unwrap(), local);
        let ahead = local + 3_000;
        let record = BASE64.encode(format!("5|{ahead}|{ahead}"));
        let key = BASE64.encode("/snowflake/shop/high-water/0000000");
        let (port, server) = fake_etcd(vec![
            // The range of worker keys: none held.
            (200, format!("{{{HEADER}}}")),
            // The high-water key of worker 0.
            (200, format!(r#"{{{HEADER},"kvs":[{{"key":"{key}","mod_revision":"4","value":"{record}"}}]}}"#)),
        ]);
        let store = EtcdLeaseStore { endpoints: vec![format!("http://127.0.0.1:{port}")], ..store };
        match store.acquire(&Claim::new("shop", 1, Duration::from_secs(1))) {
            Err(LeaseError::ClockSkew { local_ms, store_ms, .. }) => assert_eq!((local_ms, store_ms), (local, ahead)),
            other => panic!("expected a clock skew, got {other:?}"),
        }
        server.join().unwrap();
    }

    /// A fake etcd with authentication on: it answers `replies` in turn, and returns each
    /// request's path and `Authorization` header.
    fn fake_etcd(replies: Vec<(u16, String)>) -> (u16, std::thread::JoinHandle<Vec<(String, String)>>) {
        use std::io::{Read, Write};
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let server = std::thread::spawn(move || {
            let mut seen = Vec::new();
            for (status, body) in replies {
                let (mut stream, _) = listener.accept().unwrap();
                let mut request = Vec::new();
                let mut buf = [0; 4096];
                // Up to the end of the body: the headers, then Content-Length bytes.
                let (head, length) = loop {
                    let n = stream.read(&mut buf).unwrap();
                    request.extend_from_slice(&buf[..n]);
                    let text = String::from_utf8_lossy(&request).into_owned();
                    if let Some((head, rest)) = text.split_once("\r\n\r\n") {
                        let length = head
                            .lines()
                            .find_map(|l| l.to_ascii_lowercase().strip_prefix("content-length: ").map(str::to_owned))
                            .map_or(0, |n| n.trim().parse::<usize>().unwrap());
                        if rest.len() >= length {
                            break (head.to_owned(), length);
                        }
                    }
                };
                assert!(length > 0);
                let path = head.split(' ').nth(1).unwrap().to_owned();
                let token = head
                    .lines()
                    .find_map(|l| l.strip_prefix("authorization: ").or_else(|| l.strip_prefix("Authorization: ")))
                    .unwrap_or("")
                    .to_owned();
                seen.push((path, token));
                write!(
                    stream,
                    "HTTP/1.1 {status} X\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                    body.len()
                )
                .unwrap();
            }
            seen
        });
        (port, server)
    }

    /// The first request authenticates; a token etcd no longer knows is replaced once, and
    /// the request sent again with the new one; a second refusal of the token is the error.
    #[test]
    fn an_invalid_token_is_replaced_once() {
        let token = |t: &str| (200, format!(r#"{{{HEADER},"token":"{t}"}}"#));
        let invalid = || {
            (
                401,
                r#"{"error":"etcdserver: invalid auth token","code":16,"message":"etcdserver: invalid auth token"}"#
                    .to_owned(),
            )
        };
        let empty = || (200, format!("{{{HEADER}}}"));
        let (port, server) =
            fake_etcd(vec![token("t1"), empty(), invalid(), token("t2"), empty(), invalid(), token("t3"), invalid()]);
        let store = EtcdLeaseStore::open(&format!("etcd://root:pw@127.0.0.1:{port}")).unwrap();
        let what = || "reading".to_owned();
        assert_eq!(store.get(&what, "/k").unwrap(), None);
        assert_eq!(store.get(&what, "/k").unwrap(), None);
        let err = store.get(&what, "/k").unwrap_err();
        assert!(err.to_string().ends_with("(HTTP 401): etcdserver: invalid auth token"), "{err}");
        let seen = server.join().unwrap();
        let auth = ("/v3/auth/authenticate".to_owned(), String::new());
        let range = |t: &str| ("/v3/kv/range".to_owned(), t.to_owned());
        assert_eq!(
            seen,
            [auth.clone(), range("t1"), range("t1"), auth.clone(), range("t2"), range("t2"), auth, range("t3")]
        );
    }

    #[test]
    fn a_refused_authentication_names_the_user_never_the_password() {
        let refused = r#"{"error":"etcdserver: authentication failed, invalid user ID or password","code":3,"message":"etcdserver: authentication failed, invalid user ID or password"}"#;
        let (port, server) = fake_etcd(vec![(400, refused.to_owned())]);
        let store = EtcdLeaseStore::open(&format!("etcd://root:s3cr3t@127.0.0.1:{port}/apps")).unwrap();
        let err = store.acquire(&Claim::new("shop", 32, Duration::from_secs(1))).unwrap_err();
        let message = err.to_string();
        assert_eq!(
            message,
            format!(
                "lease store etcd://root@127.0.0.1:{port}/apps: acquiring a worker ID in namespace \"shop\" failed: \
                 etcd refused to authenticate user \"root\": etcd refused the request (HTTP 400): etcdserver: \
                 authentication failed, invalid user ID or password"
            )
        );
        assert!(!message.contains("s3cr3t") && !format!("{err:?}").contains("s3cr3t"), "{err:?}");
        server.join().unwrap();
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
