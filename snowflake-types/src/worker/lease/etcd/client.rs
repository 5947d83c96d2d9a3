//! A small blocking client of etcd's JSON API (`/v3/kv/txn` and the like): endpoints tried in
//! turn within one timeout, TLS, users. It knows etcd's wire format and nothing of leases.

use std::error::Error as StdError;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use serde_json::{Value, json};
use thiserror::Error;

use super::super::store::support::UnexpectedReply;
use super::super::store::{DEFAULT_STORE_TIMEOUT, LeaseError};
use super::super::url::StoreUrl;

/// Idle connections kept open to each etcd server, for the threads that share the store.
const IDLE_CONNECTIONS: usize = 16;

/// A client of one etcd cluster.
pub(super) struct EtcdClient {
    agent: ureq::Agent,
    endpoints: Vec<String>,
    /// The endpoint that answered last: the next call tries it first.
    current: AtomicUsize,
    timeout: Duration,
    /// The store's URL without the password, for messages.
    name: String,
    /// What the server certificates are checked against (for messages), over TLS.
    trust: Option<String>,
    auth: Option<Auth>,
}

/// etcd's user and password, and the token the last authentication gave.
struct Auth {
    user: String,
    password: String,
    /// `None` before the first authentication; empty when the server has authentication off.
    token: Mutex<Option<String>>,
}

super::super::store::support::store_debug!(EtcdClient);

/// A transaction's reply ([`EtcdClient::txn`]).
#[derive(Debug)]
pub(super) struct TxnReply {
    pub(super) succeeded: bool,
    pub(super) responses: Vec<Value>,
    /// The `cluster_id` of the reply's header, as etcd writes it (decimal).
    pub(super) cluster_id: String,
    pub(super) resent: bool,
}

impl EtcdClient {
    /// A client for the servers of `url`, named `name` in messages; a CA file is read now.
    pub(super) fn new(url: &StoreUrl, name: String) -> Result<Self, LeaseError> {
        let tls = url.is_tls();
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
        Ok(EtcdClient {
            agent: config.build().into(),
            endpoints: url.servers().iter().map(|server| format!("{scheme}://{server}")).collect(),
            current: AtomicUsize::new(0),
            timeout: DEFAULT_STORE_TIMEOUT,
            name,
            trust,
            auth: url.user().map(|user| Auth {
                user: user.to_owned(),
                password: url.password().unwrap_or_default().to_owned(),
                token: Mutex::new(None),
            }),
        })
    }

    /// Bounds every call, connecting included, by `timeout` (1 ms at least).
    pub(super) fn set_timeout(&mut self, timeout: Duration) {
        self.timeout = timeout.max(Duration::from_millis(1));
    }

    /// The store's URL without the password.
    pub(super) fn name(&self) -> &str {
        &self.name
    }

    /// Runs a transaction (`/v3/kv/txn`): `compare`, then `success` if every comparison
    /// held, `failure` if not. `resent`: the request was also sent to a member that did not
    /// answer in time, where it may apply too, or late ([`send`](Self::send)).
    pub(super) fn txn(
        &self,
        what: &dyn Fn() -> String,
        compare: Vec<Value>,
        success: Vec<Value>,
        failure: Vec<Value>,
    ) -> Result<TxnReply, LeaseError> {
        let mut request = json!({ "compare": compare, "success": success });
        if !failure.is_empty() {
            request["failure"] = Value::Array(failure);
        }
        let (reply, resent) = self.post(what, "/v3/kv/txn", &request)?;
        let outcome = txn_outcome(&reply).and_then(|(succeeded, responses)| {
            let cluster_id = header_cluster_id(&reply)?;
            Ok(TxnReply { succeeded, responses, cluster_id, resent })
        });
        outcome.map_err(|e| LeaseError::store(&self.name, what(), e))
    }

    /// Posts `request` to `path` within the timeout: the reply checked by [`reply`], and whether
    /// it was resent. With a user, it carries the last token; one etcd no longer takes is
    /// replaced by a new authentication, once, in the time left.
    fn post(&self, what: &dyn Fn() -> String, path: &str, request: &Value) -> Result<(Value, bool), LeaseError> {
        let deadline = Instant::now() + self.timeout;
        let request = request.to_string();
        let answered = |(reply, resent): (Result<Value, ReplyError>, bool)| {
            reply.map(|reply| (reply, resent)).map_err(|refusal| self.refused(what, refusal))
        };
        let Some(auth) = &self.auth else {
            return answered(self.send(what, path, &request, "", deadline)?);
        };
        let last = auth.token.lock().unwrap_or_else(PoisonError::into_inner).clone();
        let token = last.map_or_else(|| self.authenticate(what, auth, deadline), Ok)?;
        match self.send(what, path, &request, &token, deadline)? {
            (Err(refusal), resent) if refusal.asks_for_a_new_token() => {
                let token = self.authenticate(what, auth, deadline)?;
                let (reply, again) = self.send(what, path, &request, &token, deadline)?;
                answered((reply, resent || again))
            }
            sent => answered(sent),
        }
    }

    /// Authenticates as the URL's user: the token, kept for the next requests; empty when the
    /// server has authentication off (the requests then carry none, as etcd's own client does).
    fn authenticate(&self, what: &dyn Fn() -> String, auth: &Auth, deadline: Instant) -> Result<String, LeaseError> {
        let request = json!({ "name": auth.user, "password": auth.password }).to_string();
        let token = match self.send(what, "/v3/auth/authenticate", &request, "", deadline)?.0 {
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

    /// etcd's refusal as the store's error, saying so when it asks for a user the URL lacks.
    fn refused(&self, what: &dyn Fn() -> String, refusal: ReplyError) -> LeaseError {
        if self.auth.is_none() && refusal.says("user name is empty") {
            return LeaseError::store(&self.name, what(), AuthError::Missing { source: refusal });
        }
        LeaseError::store(&self.name, what(), refusal)
    }

    /// Sends `request` to `path` with `token` (if not empty) before `deadline`, trying the
    /// endpoints as `docs/etcd-zookeeper.md` ("Members") says: the outer error when no reply
    /// came, the inner one when etcd refused, and whether an endpoint tried did not answer in time.
    fn send(
        &self,
        what: &dyn Fn() -> String,
        path: &str,
        request: &str,
        token: &str,
        deadline: Instant,
    ) -> Result<(Result<Value, ReplyError>, bool), LeaseError> {
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
            // Half for the endpoint that answered last: the likeliest to answer, if slowly.
            let share = if i == 0 && count > 1 { 2 } else { u32::try_from(count - i).unwrap_or(u32::MAX) };
            match self.exchange(index, path, request, token, left / share) {
                Ok((status, body)) => {
                    self.current.store(index, Ordering::Relaxed);
                    return Ok((reply(status, &body), hung));
                }
                Err(error) if cannot_connect(&error) => unreachable = Some((error, index)),
                Err(error) if is_timeout(&error) => {
                    // The first endpoint tried hung: the next calls start at the next one, unless
                    // another thread moved on (or found this one answering) meanwhile.
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
}

/// Whether a round trip ran out of time: the server may have received the request.
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

/// The roots server certificates are checked against ([`StoreUrl::ca_file`], else the system's),
/// and how messages name them. A CA file that cannot be read or holds no certificate is refused.
fn trusted_roots(url: &StoreUrl) -> Result<(ureq::tls::RootCerts, String), LeaseError> {
    let Some((path, pem)) = url.read_ca_file()? else {
        // Certificates the system's store holds but rustls cannot parse are left out, as are
        // stores that cannot be read: a server is then refused as untrusted, naming its CA.
        let native = rustls_native_certs::load_native_certs();
        let roots = native.certs.iter().map(|der| ureq::tls::Certificate::from_der(der.as_ref()).to_owned());
        return Ok((roots.collect::<Vec<_>>().into(), "the system's trusted roots".into()));
    };

    let mut certificates = Vec::new();
    for item in ureq::tls::parse_pem(&pem) {
        match item {
            Ok(ureq::tls::PemItem::Certificate(certificate)) => certificates.push(certificate),
            Ok(_) => {} // a key beside the certificates
            Err(e) => return Err(url.bad(format!("the CA file {path:?} is not PEM: {e}"), Some(Arc::new(e)))),
        }
    }
    if certificates.is_empty() {
        return Err(url.bad(format!("the CA file {path:?} holds no PEM certificate"), None));
    }
    Ok((certificates.into(), format!("the CA file {path:?}")))
}

/// The TLS failure behind `error` (rustls's error, and whether it refused the server's
/// certificate), or `error` back.
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
    server: String,
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
    server: String,
    hint: &'static str,
    #[source]
    source: std::io::Error,
}

/// etcd refused the URL's user and password, or asks for a user the URL does not name.
#[derive(Debug, Error)]
enum AuthError {
    /// `/v3/auth/authenticate` refused the user name and password.
    #[error("etcd refused to authenticate user {user:?}: {source}")]
    Refused {
        user: String,
        #[source]
        source: ReplyError,
    },
    /// A request without a user was refused: the server has authentication on.
    #[error("etcd has authentication on; name a user and password in the URL (etcd://user:password@host…): {source}")]
    Missing {
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

    /// Whether a new authentication cures etcd's refusal: a token expired, unknown to this
    /// member or older than a change of users and roles, or none where authentication is on.
    fn asks_for_a_new_token(&self) -> bool {
        self.says("invalid auth token") || self.says("revision of auth store is old") || self.says("user name is empty")
    }
}

/// A key and its value, from a range reply.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct KeyValue {
    pub(super) key: Vec<u8>,
    /// Empty when the range asked for keys only.
    pub(super) value: Vec<u8>,
}

/// At most this much of an unexpected body is quoted in an error.
const QUOTED_BODY: usize = 200;

/// The reply of a request, from its HTTP status and body: the JSON object of a successful
/// reply (of a stream, the first message's `result`), or why it is not one. Every reply of
/// etcd's carries a `header`.
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
    let error = value.get("error").filter(|error| !error.is_null() && error.as_str() != Some(""));
    if status != 200 || error.is_some() {
        let message = [value.get("message"), error.and_then(|e| e.get("message")), error]
            .into_iter()
            .flatten()
            .find_map(|m| m.as_str().filter(|m| !m.is_empty()).map(str::to_owned))
            .unwrap_or_else(quoted);
        return Err(ReplyError::Refused { status, message });
    }
    let value = value.get("result").cloned().unwrap_or(value);
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
                (false, Some(_)) => Ok(KeyValue { key, value: bytes_field(kv, "value")? }),
                _ => Err(UnexpectedReply(format!("an entry without a key or a revision: {kv}"))),
            }
        })
        .collect()
}

/// Whether a transaction's comparisons held, and its operations' replies.
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

/// The `cluster_id` of a reply's header, in decimal (a JSON string, or a number).
fn header_cluster_id(reply: &Value) -> Result<String, UnexpectedReply> {
    let header = reply.get("header").unwrap_or(&Value::Null);
    match header.get("cluster_id") {
        Some(Value::String(id)) if !id.is_empty() && id.bytes().all(|b| b.is_ascii_digit()) => Ok(id.clone()),
        Some(Value::Number(id)) if id.is_u64() => Ok(id.to_string()),
        other => Err(UnexpectedReply(format!("a reply whose header has no cluster_id: {other:?}"))),
    }
}

/// A transaction's comparison: `key` holds exactly `value` (a missing key fails it).
pub(super) fn compare_value(key: &[u8], value: &[u8]) -> Value {
    json!({ "key": BASE64.encode(key), "target": "VALUE", "result": "EQUAL", "value": BASE64.encode(value) })
}

/// A transaction's comparison: `key` does not exist (never created, or deleted since).
pub(super) fn compare_absent(key: &[u8]) -> Value {
    json!({ "key": BASE64.encode(key), "target": "CREATE", "result": "EQUAL", "create_revision": "0" })
}

/// A transaction's read of `key`, or of the keys from `key` up to `end` (excluded).
pub(super) fn range_op(key: &[u8], end: Option<&[u8]>) -> Value {
    let mut range = json!({ "key": BASE64.encode(key) });
    if let Some(end) = end {
        range["range_end"] = Value::String(BASE64.encode(end));
    }
    json!({ "request_range": range })
}

/// A transaction's read of the last key from `key` up to `end` (excluded), its name only.
pub(super) fn last_op(key: &[u8], end: &[u8]) -> Value {
    json!({ "request_range": {
        "key": BASE64.encode(key),
        "range_end": BASE64.encode(end),
        "limit": "1",
        "sort_order": "DESCEND",
        "sort_target": "KEY",
        "keys_only": true,
    } })
}

/// A transaction's write of `value` into `key`.
pub(super) fn put_op(key: &[u8], value: &[u8]) -> Value {
    json!({ "request_put": { "key": BASE64.encode(key), "value": BASE64.encode(value) } })
}

/// The entries read by the range operation `index` of a transaction's `responses`.
pub(super) fn range_reply(responses: &[Value], index: usize) -> Result<Vec<KeyValue>, UnexpectedReply> {
    let response = responses.get(index).ok_or_else(|| {
        UnexpectedReply(format!("a transaction answered with {} replies, not {}", responses.len(), index + 1))
    })?;
    let range =
        response.get("response_range").ok_or_else(|| UnexpectedReply(format!("a read answered with {response}")))?;
    range_kvs(range)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A client of `url`.
    fn client(url: &str) -> EtcdClient {
        EtcdClient::new(&StoreUrl::parse(url).unwrap(), "etcd://test".into()).unwrap()
    }

    /// A read of one key.
    fn read(client: &EtcdClient) -> Result<TxnReply, LeaseError> {
        client.txn(&|| "reading".to_owned(), vec![], vec![range_op(b"/k", None)], vec![])
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
                KeyValue { key: b"/snowflake/shop/workers/0000007".to_vec(), value: b"tok|1|2".to_vec() },
                KeyValue { key: b"a".to_vec(), value: vec![] },
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
        assert_eq!(header_cluster_id(&granted).unwrap(), "14841639068965178418");
        let numeric = json!({ "header": { "cluster_id": 15_118_495_548_433_857_066_u64 } });
        assert_eq!(header_cluster_id(&numeric).unwrap(), "15118495548433857066");

        // A streamed reply: each message in `result`, one per line.
        let streamed = format!("{{\"result\":{{{HEADER},\"ID\":\"7\",\"TTL\":\"9\"}}}}\n");
        assert_eq!(int_field(&reply(200, &streamed).unwrap(), "TTL").unwrap(), Some(9));
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
        assert_eq!(unexpected(int_field(&with(r#""TTL":"9.5""#), "TTL")), r#"TTL is "9.5", not an integer"#);
        assert!(unexpected(header_cluster_id(&json!({ "header": {} }))).starts_with("a reply whose header has no"));
        assert!(unexpected(range_reply(&[], 0)).starts_with("a transaction answered with 0 replies"));
        assert!(unexpected(range_reply(&[json!({ "response_put": {} })], 0)).starts_with("a read answered with"));
        assert_eq!(
            unexpected(int_field(&with(r#""ID":"99999999999999999999""#), "ID")),
            r#"ID is "99999999999999999999", not an integer"#
        );
        assert_eq!(unexpected(int_field(&with(r#""ID":true"#), "ID")), "ID is true, not an integer");
    }

    #[test]
    fn requests_are_written_as_etcd_reads_them() {
        assert_eq!(
            compare_absent(b"/k"),
            json!({ "key": "L2s=", "target": "CREATE", "result": "EQUAL", "create_revision": "0" })
        );
        assert_eq!(
            compare_value(b"/k", b"v"),
            json!({ "key": "L2s=", "target": "VALUE", "result": "EQUAL", "value": "dg==" })
        );
        assert_eq!(put_op(b"/k", b"v"), json!({ "request_put": { "key": "L2s=", "value": "dg==" } }));
        assert_eq!(range_op(b"/k", None), json!({ "request_range": { "key": "L2s=" } }));
        assert_eq!(range_op(b"/k", Some(b"/l")), json!({ "request_range": { "key": "L2s=", "range_end": "L2w=" } }));
        assert_eq!(
            last_op(b"/k", b"/l"),
            json!({ "request_range": {
                "key": "L2s=", "range_end": "L2w=", "limit": "1", "sort_order": "DESCEND", "sort_target": "KEY",
                "keys_only": true,
            } })
        );
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
        let store = client(&format!("etcd://127.0.0.1:1,127.0.0.1:{port}"));
        assert!(!read(&store).unwrap().resent, "nothing reached the refusing endpoint");
        assert_eq!(store.current.load(Ordering::Relaxed), 1);
        read(&store).unwrap();
        server.join().unwrap();
    }

    /// A write sent again after a member did not answer, whose comparisons then failed, is
    /// judged by the slots its failed transaction read: applied (an earlier copy of it) only
    /// if every slot holds what it puts; one slot holding another value is a conflict.
    #[test]
    fn a_write_sent_again_is_applied_only_where_every_slot_holds_it() {
        use super::super::EtcdLeaseStore;
        use crate::worker::lease::store::{Cas, LeaseStore, Slot, Written};
        let kv = |key: &str, value: &str| {
            json!({ "response_range": { "kvs": [{
                "key": BASE64.encode(key), "value": BASE64.encode(value), "mod_revision": "8",
            }] } })
        };
        let (record, marker) = ("/snowflake/shop/records/0000003", "/snowflake/shop/marker");
        for (held, expected) in [(("new", "m"), Written::Done), (("new", "another's"), Written::Conflict)] {
            let reply = json!({ "succeeded": false, "responses": [kv(record, held.0), kv(marker, held.1)] });
            let body = format!("{{{HEADER},{}", &reply.to_string()[1..]);
            // Bound, never accepting: the write may have reached it, so the other endpoint's
            // failed comparisons may be this very write, applied there first.
            let hung = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
            let hung_port = hung.local_addr().unwrap().port();
            let (port, server) = fake_etcd(vec![(200, body)]);
            let store = EtcdLeaseStore::open(&format!("etcd://127.0.0.1:{hung_port},127.0.0.1:{port}"))
                .unwrap()
                .timeout(Duration::from_secs(2));
            let ops = [Cas::new(Slot::Worker(3), Some("old"), "new"), Cas::new(Slot::Marker, Some("m"), "m")];
            assert_eq!(store.write("shop", &ops).unwrap(), expected, "the slots hold {held:?}");
            assert_eq!(server.join().unwrap().len(), 1);
        }
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
        let mut store = client(&format!("etcd://127.0.0.1:{hung_port},127.0.0.1:{port}"));
        store.set_timeout(timeout);
        let began = Instant::now();
        // The request may have reached the hung endpoint: the reply says so.
        assert!(read(&store).unwrap().resent);
        let first = began.elapsed();
        // Half the timeout for the hung endpoint, the rest for the other.
        assert!(first >= timeout / 2 - Duration::from_millis(20) && first < timeout, "{first:?}");
        assert_eq!(store.current.load(Ordering::Relaxed), 1);
        for _ in 0..2 {
            let began = Instant::now();
            assert!(!read(&store).unwrap().resent);
            assert!(began.elapsed() < timeout / 4, "{:?}", began.elapsed());
        }
        assert_eq!(server.join().unwrap().len(), 3);
        // Alone, the hung endpoint has the whole timeout, and the call times out.
        let mut store = client(&format!("etcd://127.0.0.1:{hung_port}"));
        store.set_timeout(timeout);
        let began = Instant::now();
        let err = read(&store).unwrap_err();
        assert!(matches!(err, LeaseError::Timeout { .. }), "{err:?}");
        assert!(began.elapsed() >= timeout - Duration::from_millis(20), "{:?}", began.elapsed());
        // Two hung endpoints: the call times out, and the next one starts at the second, not
        // back at the first.
        let other = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let other_port = other.local_addr().unwrap().port();
        let mut store = client(&format!("etcd://127.0.0.1:{hung_port},127.0.0.1:{other_port}"));
        store.set_timeout(timeout);
        let err = read(&store).unwrap_err();
        assert!(matches!(err, LeaseError::Timeout { .. }), "{err:?}");
        assert_eq!(store.current.load(Ordering::Relaxed), 1);
        drop((hung, other));
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
        let store = client(&format!("etcd://root:pw@127.0.0.1:{port}"));
        read(&store).unwrap();
        read(&store).unwrap();
        let err = read(&store).unwrap_err();
        assert!(err.to_string().ends_with("(HTTP 401): etcdserver: invalid auth token"), "{err}");
        let seen = server.join().unwrap();
        let auth = ("/v3/auth/authenticate".to_owned(), String::new());
        let range = |t: &str| ("/v3/kv/txn".to_owned(), t.to_owned());
        assert_eq!(
            seen,
            [auth.clone(), range("t1"), range("t1"), auth.clone(), range("t2"), range("t2"), auth, range("t3")]
        );
    }
}
