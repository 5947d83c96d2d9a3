//! The Redis lease store over TLS, against a TLS-only `redis-server` of the test's own with a
//! CA and certificates made for the run (PostgreSQL and MariaDB: `lease_tls_sql.rs`): the right CA works (the conformance
//! checks that are cheap), a wrong CA is refused naming the certificate problem, a plain-text
//! server asked for TLS is refused, and the zero-code path (`SNOWFLAKE_WORKER_LEASE` with the
//! CA in `SNOWFLAKE_LEASE_CA`) leases a worker ID in a fresh process.

use crate::child;
use crate::conformance::{Faults, Subject, run_all};
use crate::faults::unique;
use crate::servers;
use crate::tls;

use std::sync::Arc;
use std::time::Duration;

use typed_snowflake::SnowflakeId;
use typed_snowflake::worker::lease::store::{Cas, Query, Slot, Written};
use typed_snowflake::worker::lease::{LeaseStore, RedisLeaseStore};

type TestResult = Result<(), Box<dyn std::error::Error>>;

/// Five worker bits: workers 0..=31.
#[derive(SnowflakeId, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
#[layout(time = 42, worker = 5, seq = 16, epoch = "2021-05-05")]
struct TlsId(i64);

/// Creates a worker ID's record, updates it and reads it back: the store works.
fn one_cycle(store: &dyn LeaseStore, namespace: &str) {
    let write = |expect, value| store.write(namespace, &[Cas::new(Slot::Worker(3), expect, value)]);
    assert_eq!(write(None, "r1").unwrap_or_else(|e| panic!("creating: {e}")), Written::Done);
    assert_eq!(write(Some("r1"), "r2").unwrap_or_else(|e| panic!("updating: {e}")), Written::Done);
    let read = store.read(namespace, &Query::workers(0..32)).unwrap_or_else(|e| panic!("reading: {e}"));
    assert_eq!(read.record(3), Some("r2"));
}

/// Deletes one key of a TLS `redis-server`, as an operator's `DEL` would.
struct TlsDel {
    client: redis::Client,
}

impl Faults for TlsDel {
    fn delete(&self, namespace: &str, slot: Slot) {
        let key = match slot {
            Slot::Marker => format!("snowflake:{{{namespace}}}:marker"),
            Slot::Worker(worker) => format!("snowflake:{{{namespace}}}:worker:{worker}"),
        };
        let mut connection = self.client.get_connection().expect("connecting over TLS");
        let deleted: i64 = redis::cmd("DEL").arg(&key).query(&mut connection).expect("DEL");
        assert_eq!(deleted, 1, "{key} was not there to delete");
    }
}

#[test]
#[ignore = "the entry point of the child processes: the other tests run it"]
fn child() -> TestResult {
    let Some(scenario) = child::scenario() else { return Ok(()) };
    assert_eq!(scenario, "env_lease");
    tls::env_lease::<TlsId>()?;
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
    one_cycle(&store, &unique("redis_tls"));
    // The store contract over TLS.
    let open = || Arc::new(RedisLeaseStore::open(&url).expect("a URL")) as Arc<dyn LeaseStore>;
    let pem = std::fs::read(certificates.ca()).expect("the CA file");
    let certificates_of_test = redis::TlsCertificates { client_tls: None, root_cert: Some(pem) };
    let client = redis::Client::build_with_tls(server.url(), certificates_of_test).expect("a TLS client");
    let faults = TlsDel { client };
    let subject = Subject {
        name: "redis over TLS",
        open: &open,
        faults: &faults,
        prefix: unique("redis_tls_suite"),
        has_clock: true,
    };
    run_all(&subject).unwrap_or_else(|failures| panic!("{failures}"));

    // A wrong CA, or none (the system's roots do not know the test CA), is refused.
    let wrong = format!("{}?ssl_ca_certs={}", server.url(), certificates.wrong_ca().display());
    let probe = |url: &str| RedisLeaseStore::open(url).expect("a URL").read("probe", &Query::workers(0..1));
    let message = tls::refused(probe(&wrong));
    tls::assert_unknown_issuer(&message);
    assert!(!message.contains(tls::PASSWORD), "{message}");
    tls::assert_unknown_issuer(&tls::refused(probe(&server.url())));
    // A wrong password is the server's refusal, after the handshake.
    let bad_password = url.replace(tls::PASSWORD, "not-it");
    let message = tls::refused(probe(&bad_password));
    assert!(message.contains("Password authentication failed"), "{message}");

    // Plain text where TLS was asked for: refused, saying the handshake failed.
    let Some(plain) = servers::PrivateRedis::start() else { return };
    let plain_url = format!("rediss://127.0.0.1:{}?ssl_ca_certs={ca}", plain.port());
    let store = RedisLeaseStore::open(&plain_url).expect("a URL").timeout(Duration::from_secs(2));
    let message = tls::refused(store.read("probe", &Query::workers(0..1)));
    eprintln!("a plain-text Redis asked for TLS: {message}");
    assert!(message.contains("TLS"), "{message}");

    // The zero-code path, the CA from the environment.
    tls::zero_code(&server.url(), Some(&certificates.ca()), &unique("redis_tls_env"), tls::PASSWORD);
}
