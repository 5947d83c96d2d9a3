//! The lease stores over TLS, against servers of the test's own with a CA and certificates
//! made for the run: a TLS-only `redis-server` (PostgreSQL and MariaDB: `lease_tls_sql.rs`).
//! For each: the right CA works (the conformance
//! checks that are cheap), a wrong CA is refused naming the certificate problem, a plain-text
//! server asked for TLS is refused, and the zero-code path (`SNOWFLAKE_WORKER_LEASE` with the
//! CA in `SNOWFLAKE_LEASE_CA`) leases a worker ID in a fresh process.

use crate::child;
use crate::lease_store;
use crate::servers;
use crate::tls;

use std::time::Duration;

use lease_store::{HIGH_WATER, TTL, unique};
use typed_snowflake::worker::lease::{CA_ENV, Claim, LeaseError, LeaseStore, RedisLeaseStore};
use typed_snowflake::{Registry, SnowflakeId};

type TestResult = Result<(), Box<dyn std::error::Error>>;

/// Five worker bits: workers 0..=31.
#[derive(SnowflakeId, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
#[layout(time = 42, worker = 5, seq = 16, epoch = "2021-05-05")]
struct TlsId(i64);

/// Acquires, renews and releases one worker ID: the store works.
fn one_cycle(store: &dyn LeaseStore, namespace: &str) {
    let grant = store.acquire(&Claim::new(namespace, 32, TTL)).unwrap_or_else(|e| panic!("acquiring: {e}"));
    store.renew(namespace, &grant, TTL, HIGH_WATER).unwrap_or_else(|e| panic!("renewing: {e}"));
    store.release(namespace, &grant, HIGH_WATER + 1).unwrap_or_else(|e| panic!("releasing: {e}"));
}

/// A store error's whole text: its message names its cause.
fn refused(result: Result<impl std::fmt::Debug, LeaseError>) -> String {
    match result {
        Err(error) => error.to_string(),
        Ok(other) => panic!("expected a refusal, got {other:?}"),
    }
}

/// The message of a server whose certificate the trusted CA did not sign.
fn assert_unknown_issuer(message: &str) {
    assert!(message.contains("invalid peer certificate") && message.contains("UnknownIssuer"), "{message}");
}

/// The zero-code path in a fresh process: `SNOWFLAKE_WORKER_LEASE=<url>` (and the CA in
/// `SNOWFLAKE_LEASE_CA` when given) leases a worker ID at the first `generate()`.
fn zero_code(url: &str, ca: Option<&std::path::Path>, namespace: &str) {
    let mut command = child::command("env_lease");
    command
        .env("SNOWFLAKE_WORKER_LEASE", url)
        .env("SNOWFLAKE_NAMESPACE", namespace)
        .env("SNOWFLAKE_LEASE_TTL", "2s")
        .env("SNOWFLAKE_LEASE_RESERVATION", "2s")
        .env("SNOWFLAKE_LEASE_WAIT", "0")
        .env_remove("SNOWFLAKE_WORKER_ID")
        .env_remove("SNOWFLAKE_WORKER_SPACE")
        .env_remove(CA_ENV);
    if let Some(ca) = ca {
        command.env(CA_ENV, ca);
    }
    let output = command.output().expect("running the child");
    child::check("env_lease", &output, &url.replace(tls::PASSWORD, "…"));
}

#[test]
#[ignore = "the entry point of the child processes: the other tests run it"]
fn child() -> TestResult {
    let Some(scenario) = child::scenario() else { return Ok(()) };
    assert_eq!(scenario, "env_lease");
    let _shutdown = Registry::shutdown_guard();
    let first = TlsId::try_generate()?;
    let second = TlsId::try_generate()?;
    assert!(second > first, "{second:?} after {first:?}");
    let worker = Registry::worker_id()?;
    assert_eq!(first.worker(), worker);
    assert!(worker < 32, "worker {worker}");
    child::done(&scenario);
    Ok(())
}

// ---------------------------------------------------------------------------------------
// Redis
// ---------------------------------------------------------------------------------------

#[test]
fn redis_over_tls() {
    let Some(certificates) = tls::Certificates::make() else { return };
    let Some(server) = tls::TlsRedis::start(&certificates) else { return };
    let ca = certificates.ca().display().to_string();
    let url = format!("{}?ssl_ca_certs={ca}", server.url());

    // The right CA, named in the URL: the password is read from the URL, never shown.
    let store = RedisLeaseStore::open(&url).expect("a rediss:// URL");
    assert_eq!(store.describe(), format!("rediss://127.0.0.1:{}/0", server.port()));
    let namespace = unique("redis_tls");
    one_cycle(&store, &namespace);
    let stores: Vec<RedisLeaseStore> = (0..4).map(|_| RedisLeaseStore::open(&url).expect("a URL")).collect();
    lease_store::thirty_two_holders_share_a_five_bit_space(&stores, &unique("redis_tls_32"));
    lease_store::a_stale_token_is_lost(&store, &unique("redis_tls_stale"));
    lease_store::the_store_clock_is_close(&store, &unique("redis_tls_clock"));

    // A wrong CA, or none (the system's roots do not know the test CA), is refused.
    let wrong = format!("{}?ssl_ca_certs={}", server.url(), certificates.wrong_ca().display());
    let message = refused(RedisLeaseStore::open(&wrong).expect("a URL").now_ms());
    assert_unknown_issuer(&message);
    assert!(!message.contains(tls::PASSWORD), "{message}");
    assert_unknown_issuer(&refused(RedisLeaseStore::open(&server.url()).expect("a URL").now_ms()));
    // A wrong password is the server's refusal, after the handshake.
    let bad_password = url.replace(tls::PASSWORD, "not-it");
    let message = refused(RedisLeaseStore::open(&bad_password).expect("a URL").now_ms());
    assert!(message.contains("Password authentication failed"), "{message}");

    // Plain text where TLS was asked for: refused, saying the handshake failed.
    let Some(plain) = servers::PrivateRedis::start() else { return };
    let plain_url = format!("rediss://127.0.0.1:{}?ssl_ca_certs={ca}", plain.port());
    let store = RedisLeaseStore::open(&plain_url).expect("a URL").timeout(Duration::from_secs(2));
    let message = refused(store.now_ms());
    eprintln!("a plain-text Redis asked for TLS: {message}");
    assert!(message.contains("TLS"), "{message}");

    // The zero-code path, the CA from the environment.
    zero_code(&server.url(), Some(&certificates.ca()), &unique("redis_tls_env"));
}
