//! The etcd lease store over TLS and with etcd's user/password authentication, against
//! private etcd servers (Debian's `etcd-server`) with a CA and certificates made for the run:
//! an etcd that serves TLS only on its client port, and a plain one with authentication
//! turned on through the JSON API. The right CA works (named in the URL or in
//! `SNOWFLAKE_LEASE_CA`), a wrong CA is refused naming the certificate problem, TLS against a
//! plain etcd and plain text against the TLS one are refused within the store's timeout; the
//! right password works (also after its token expired), a wrong one and none are refused
//! naming authentication; and `SNOWFLAKE_WORKER_LEASE=etcds://…` or `etcd://user:…@…` alone
//! leases a worker ID in a fresh process.

use crate::child;
use crate::servers;
use crate::tls;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::sync::Arc;
use std::time::{Duration, Instant};

use typed_snowflake::SnowflakeId;
use typed_snowflake::worker::lease::admin::create_namespace;
use typed_snowflake::worker::lease::store::{Cas, Query, Slot, Written};
use typed_snowflake::worker::lease::{CA_ENV, EtcdLeaseStore, LeaseError, LeaseStore, WorkerLease, open_store};

type TestResult = Result<(), Box<dyn std::error::Error>>;

/// Five worker bits: workers 0..=31.
#[derive(SnowflakeId, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
#[layout(time = 42, worker = 5, seq = 16, epoch = "2021-05-05")]
struct EtcdId(i64);

/// The password of etcd's `root` user in the authentication tests: every character a URL
/// must percent-encode, and a few more.
const PASSWORD: &str = "p@ss:w/rd?#%&= é";

/// How long a refusal may take beyond nothing: the store's timeout in these tests.
const BOUND: Duration = Duration::from_secs(2);

/// Creates, updates and reads back one record and the marker: the store works.
fn one_cycle(store: &dyn LeaseStore, namespace: &str) {
    let write = |ops: &[Cas<'_>]| store.write(namespace, ops).unwrap_or_else(|e| panic!("writing: {e}"));
    assert_eq!(write(&[Cas::new(Slot::Worker(3), None, "a"), Cas::new(Slot::Marker, None, "m")]), Written::Done);
    assert_eq!(write(&[Cas::new(Slot::Worker(3), Some("a"), "b")]), Written::Done);
    assert_eq!(write(&[Cas::new(Slot::Worker(3), Some("a"), "c")]), Written::Conflict);
    let read = store.read(namespace, &Query::workers(0..32).with_highest()).unwrap_or_else(|e| panic!("reading: {e}"));
    assert_eq!((read.record(3), read.marker.as_deref(), read.highest), (Some("b"), Some("m"), Some(3)));
}

/// Leases a worker ID of a namespace declared new, issues, and releases it.
fn one_lease(store: EtcdLeaseStore, namespace: &str) {
    create_namespace(&store, namespace).unwrap_or_else(|e| panic!("creating the namespace: {e}"));
    let lease = WorkerLease::builder_shared(Arc::new(store))
        .namespace(namespace)
        .space(32)
        .acquire()
        .unwrap_or_else(|e| panic!("acquiring: {e}"));
    assert!(lease.is_valid());
    lease.release().unwrap_or_else(|e| panic!("releasing: {e}"));
}

/// The error of a read that must fail, within the store's timeout.
fn refused(store: &EtcdLeaseStore) -> LeaseError {
    let began = Instant::now();
    let result = store.read("shop", &Query::workers(0..32));
    let took = began.elapsed();
    assert!(took < BOUND + Duration::from_millis(500), "the refusal took {took:?}");
    match result {
        Err(error) => error,
        Ok(read) => panic!("expected a refusal, got {read:?}"),
    }
}

/// The last cause of `error`'s chain.
fn deepest(error: &LeaseError) -> String {
    let mut cause: &dyn std::error::Error = error;
    while let Some(inner) = cause.source() {
        cause = inner;
    }
    cause.to_string()
}

/// Everything a URL does not leave as it is, as `%XX`.
fn percent_encode(text: &str) -> String {
    text.bytes()
        .map(|b| {
            if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
                char::from(b).to_string()
            } else {
                format!("%{b:02X}")
            }
        })
        .collect()
}

#[test]
#[ignore = "the entry point of the child processes: the other tests run it"]
fn child() -> TestResult {
    let Some(scenario) = child::scenario() else { return Ok(()) };
    match scenario.as_str() {
        // A store opened on a URL that names no CA: the one of the environment is trusted.
        "env_ca" => {
            let url = std::env::var("LEASE_TEST_URL")?;
            let store = EtcdLeaseStore::open(&url)?.timeout(BOUND);
            one_cycle(&store, "env_ca");
        }
        "env_lease" => tls::env_lease::<EtcdId>()?,
        other => panic!("unknown scenario {other}"),
    }
    child::done(&scenario);
    Ok(())
}

// ---------------------------------------------------------------------------------------
// TLS
// ---------------------------------------------------------------------------------------

#[test]
fn etcd_over_tls() {
    let Some(certificates) = tls::Certificates::make() else { return };
    let (cert, key) = (certificates.server_cert(), certificates.server_key());
    let Some(server) = servers::PrivateEtcd::start_with(Some((&cert, &key)), &[]) else { return };
    let ca = certificates.ca().display().to_string();
    let open = |url: &str| EtcdLeaseStore::open(url).expect("an etcds:// URL").timeout(BOUND);
    assert_eq!(server.url(), format!("etcds://127.0.0.1:{}", server.port()));

    // The right CA, named in the URL (percent-encoded or not): certificate and host name check.
    let store = open(&format!("{}?ca={}", server.url(), percent_encode(&ca)));
    assert_eq!(store.describe(), format!("etcds://127.0.0.1:{}/", server.port()));
    one_cycle(&store, "tls_param");
    let store = open(&format!("etcd+https://localhost:{}/apps?ca={ca}", server.port()));
    assert_eq!(store.describe(), format!("etcds://localhost:{}/apps", server.port()));
    one_cycle(&store, "tls_https_scheme");
    one_lease(open(&format!("{}?ca={ca}", server.url())).timeout(Duration::from_secs(10)), "tls_lease");

    // The right CA from the environment, in a fresh process.
    let output = child::command("env_ca")
        .env("LEASE_TEST_URL", server.url())
        .env(CA_ENV, &ca)
        .output()
        .expect("running the child");
    child::check("env_ca", &output, &server.url());

    // A wrong CA, or none (the system's roots do not know the test CA): refused, saying the
    // certificate was not trusted, rustls's error as the last cause.
    let wrong = format!("{}?ca={}", server.url(), certificates.wrong_ca().display());
    for (url, trust) in [(wrong, "the CA file"), (server.url(), "the system's trusted roots")] {
        let error = refused(&open(&url));
        let message = error.to_string();
        eprintln!("a wrong CA: {message}");
        assert!(matches!(error, LeaseError::Store { .. }), "{error:?}");
        assert!(message.contains("the server's certificate was not trusted"), "{message}");
        assert!(message.contains(trust), "{message}");
        let cause = deepest(&error);
        assert!(cause.contains("invalid peer certificate") && cause.contains("UnknownIssuer"), "{cause}");
        assert!(message.ends_with(&cause), "the message names its cause: {message}");
    }

    // Plain text against the TLS etcd: it hangs up, and the message says TLS may be why.
    let error = refused(&open(&format!("etcd://127.0.0.1:{}", server.port())));
    eprintln!("plain text against a TLS etcd: {error}");
    assert!(error.to_string().contains("hung up without a reply (if it serves TLS, the URL is etcds://"), "{error}");

    // TLS against a plain etcd: it hangs up on the handshake, and the message says TLS may be
    // why.
    let Some(plain) = servers::PrivateEtcd::start() else { return };
    let error = refused(&open(&format!("etcds://127.0.0.1:{}?ca={ca}", plain.port())));
    eprintln!("TLS against a plain etcd: {error}");
    assert!(matches!(error, LeaseError::Store { .. }), "{error:?}");
    let message = error.to_string();
    assert!(message.contains("hung up without a reply (if it does not serve TLS on this port"), "{message}");

    // The zero-code path, the CA from the environment.
    tls::zero_code(&server.url(), Some(&certificates.ca()), "zero_code", &percent_encode(PASSWORD));
}

// ---------------------------------------------------------------------------------------
// Users and passwords
// ---------------------------------------------------------------------------------------

/// Posts `body` to the plain etcd on `port` (`/v3/auth/…`), as etcd's own tools would: the
/// reply's body, which must come with status 200.
fn etcd_post(port: u16, path: &str, body: &str) -> String {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).expect("connecting to etcd");
    write!(
        stream,
        "POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
    .expect("sending");
    let mut reply = String::new();
    stream.read_to_string(&mut reply).expect("reading the reply");
    assert!(reply.starts_with("HTTP/1.1 200"), "{path}: {reply}");
    reply
}

/// Turns authentication on: user `root` with [`PASSWORD`], granted the role `root`.
fn enable_auth(port: u16) {
    let password = serde_json::to_string(PASSWORD).expect("a JSON string");
    etcd_post(port, "/v3/auth/user/add", &format!(r#"{{"name":"root","password":{password}}}"#));
    etcd_post(port, "/v3/auth/user/grant", r#"{"user":"root","role":"root"}"#);
    etcd_post(port, "/v3/auth/enable", "{}");
}

#[test]
fn etcd_with_a_password() {
    // Tokens expire after 1 s unused; passwords hashed cheaply, for a quick test.
    let Some(server) = servers::PrivateEtcd::start_with(None, &["--auth-token-ttl", "1", "--bcrypt-cost", "4"]) else {
        return;
    };
    enable_auth(server.port());
    let url = format!("etcd://root:{}@127.0.0.1:{}/apps", percent_encode(PASSWORD), server.port());
    let open = |url: &str| EtcdLeaseStore::open(url).expect("an etcd URL").timeout(BOUND);

    // The right password: the store works, and shows the user, never the password.
    let store = open(&url);
    assert_eq!(store.describe(), format!("etcd://root@127.0.0.1:{}/apps", server.port()));
    assert!(!format!("{store:?}").contains("ss:w"), "{store:?}");
    one_cycle(&store, "password");
    one_lease(open(&url), "password_lease");
    // Its token expires unused: the store authenticates again and goes on.
    store.write("expiry", &[Cas::new(Slot::Marker, None, "m1")]).expect("writing");
    std::thread::sleep(Duration::from_millis(2500));
    store.read("expiry", &Query::workers(0..1)).expect("reading with an expired token");
    std::thread::sleep(Duration::from_millis(2500));
    let written = store.write("expiry", &[Cas::new(Slot::Marker, Some("m1"), "m2")]);
    assert_eq!(written.expect("writing with an expired token"), Written::Done);

    // A wrong password: refused, naming the authentication, without the password.
    let wrong = url.replace(&percent_encode(PASSWORD), "not-it");
    let error = refused(&open(&wrong));
    let message = error.to_string();
    eprintln!("a wrong password: {message}");
    assert!(message.contains("etcd refused to authenticate user \"root\""), "{message}");
    assert!(message.contains("authentication failed"), "{message}");
    assert!(!message.contains("not-it"), "{message}");

    // No user: refused, saying that the server asks for one.
    let error = refused(&open(&format!("etcd://127.0.0.1:{}/apps", server.port())));
    let message = error.to_string();
    eprintln!("no user: {message}");
    assert!(message.contains("etcd has authentication on"), "{message}");
    assert!(message.contains("user name is empty"), "{message}");

    // A user without a password: the URL is refused before anything is sent.
    let err = EtcdLeaseStore::open(&format!("etcd://root@127.0.0.1:{}", server.port())).unwrap_err();
    assert!(matches!(err, LeaseError::BadUrl { .. }), "{err:?}");

    // The zero-code path, the password in the URL.
    let store = open_store(&url).expect("an etcd URL");
    assert!(!store.describe().contains("ss:w"), "{}", store.describe());
    tls::zero_code(&url, None, "zero_code", &percent_encode(PASSWORD));
}
