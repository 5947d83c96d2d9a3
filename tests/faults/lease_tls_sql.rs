//! The SQL lease store over TLS, against servers of the test's own with a CA and certificates
//! made for the run: a PostgreSQL that takes TCP logins over TLS only, a MariaDB whose user
//! must use TLS. For each: the right CA works (conformance cases that need no fault), a wrong
//! CA is refused naming the certificate problem, a plain-text server asked for TLS is refused,
//! and the zero-code path (`SNOWFLAKE_WORKER_LEASE` with the CA in `SNOWFLAKE_LEASE_CA`)
//! leases a worker ID in a fresh process.

use crate::child;
use crate::conformance::{CASES, Faults, Subject};
use crate::faults::unique;
use crate::servers;
use crate::tls;

use std::sync::Arc;
use std::time::Duration;

use typed_snowflake::SnowflakeId;
use typed_snowflake::worker::lease::store::{Query, Slot};
use typed_snowflake::worker::lease::{LeaseError, LeaseStore, SqlLeaseStore};

type TestResult = Result<(), Box<dyn std::error::Error>>;

/// Five worker bits: workers 0..=31.
#[derive(SnowflakeId, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
#[layout(time = 42, worker = 5, seq = 16, epoch = "2021-05-05")]
struct TlsId(i64);

/// The cases run over TLS: the ones that hurt nothing from outside.
const OVER_TLS: &[&str] = &[
    "a_slot_is_created_only_if_absent",
    "two_slots_are_written_together_or_not_at_all",
    "the_clock_is_close",
    "holders_share_the_space",
];

/// No fault is injected over TLS.
struct NoFaults;

impl Faults for NoFaults {
    fn delete(&self, _: &str, _: Slot) {
        unreachable!("no case run over TLS deletes a slot")
    }
}

/// Runs [`OVER_TLS`] on stores that `open` makes.
fn cases_pass(name: &str, open: &(dyn Fn() -> Arc<dyn LeaseStore> + Sync)) {
    let subject = Subject { name, open, faults: &NoFaults, prefix: unique(name), has_clock: true };
    for (case_name, case) in CASES.iter().filter(|(case_name, _)| OVER_TLS.contains(case_name)) {
        case(&subject).unwrap_or_else(|failure| panic!("{name}: {case_name}: {failure}"));
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

/// A store whose calls may take 10 s: the cases open many, each with a TLS handshake, on a
/// machine that may be loaded.
fn patient(url: &str) -> Result<SqlLeaseStore, LeaseError> {
    SqlLeaseStore::builder(url).timeout(Duration::from_secs(10)).connect()
}

/// A store that answers a read.
fn reads(store: &SqlLeaseStore) {
    store.read("tls", &Query::workers(0..1)).unwrap_or_else(|e| panic!("reading: {e}"));
}

#[cfg(feature = "lease-postgres")]
#[test]
fn postgres_over_tls() {
    let Some(certificates) = tls::Certificates::make() else { return };
    let Some(server) = tls::TlsPostgres::start(&certificates) else { return };
    let ca = certificates.ca().display().to_string();
    let wrong_ca = certificates.wrong_ca().display().to_string();
    let connect = |query: &str| SqlLeaseStore::connect(&server.url(query));

    // The right CA, host name checked; the password from the URL.
    let store = connect(&format!("sslmode=verify-full&sslrootcert={ca}")).expect("connecting over TLS");
    assert!(!store.describe().contains(tls::PASSWORD), "{}", store.describe());
    reads(&store);
    let full = server.url(&format!("sslmode=verify-full&sslrootcert={ca}"));
    cases_pass("postgres-tls", &|| {
        Arc::new(SqlLeaseStore::connect(&full).expect("verify-full")) as Arc<dyn LeaseStore>
    });
    reads(&connect(&format!("sslmode=verify-ca&sslrootcert={ca}")).expect("verify-ca"));
    // `require` encrypts without checking the certificate.
    reads(&connect("sslmode=require").expect("sslmode=require"));
    // The server takes TCP logins over TLS only: without it, it refuses.
    let message = tls::refused(connect("sslmode=disable"));
    assert!(message.contains("no encryption") || message.contains("pg_hba.conf"), "{message}");

    // A wrong CA is refused, naming the certificate problem.
    for mode in ["verify-ca", "verify-full"] {
        let message = tls::refused(connect(&format!("sslmode={mode}&sslrootcert={wrong_ca}")));
        tls::assert_unknown_issuer(&message);
        assert!(!message.contains(tls::PASSWORD), "{message}");
    }

    // The zero-code path, the CA from the environment.
    tls::zero_code(&server.url("sslmode=verify-full"), Some(&certificates.ca()), &unique("pg-tls-env"), tls::PASSWORD);

    // Plain text where TLS was asked for: refused.
    server.restart_without_tls();
    let message = tls::refused(connect(&format!("sslmode=verify-full&sslrootcert={ca}")));
    eprintln!("a plain-text PostgreSQL asked for TLS: {message}");
    assert!(message.contains("TLS"), "{message}");
}

#[cfg(feature = "lease-mysql")]
#[test]
fn mariadb_over_tls() {
    let Some(certificates) = tls::Certificates::make() else { return };
    let Some(server) = tls::TlsMariaDb::start(&certificates, true) else { return };
    let ca = certificates.ca().display().to_string();
    let wrong_ca = certificates.wrong_ca().display().to_string();
    let connect = |query: &str| SqlLeaseStore::connect(&server.url(query));

    let store = connect(&format!("ssl-mode=VERIFY_IDENTITY&ssl-ca={ca}")).expect("connecting over TLS");
    assert!(!store.describe().contains(tls::PASSWORD), "{}", store.describe());
    reads(&store);
    let identity = server.url(&format!("ssl-mode=VERIFY_IDENTITY&ssl-ca={ca}"));
    cases_pass("mariadb-tls", &|| Arc::new(patient(&identity).expect("VERIFY_IDENTITY")) as Arc<dyn LeaseStore>);
    reads(&connect(&format!("ssl-mode=VERIFY_CA&ssl-ca={ca}")).expect("VERIFY_CA"));
    reads(&connect("ssl-mode=REQUIRED").expect("ssl-mode=REQUIRED"));
    // The user must use TLS: without it, the server refuses.
    let message = tls::refused(connect("ssl-mode=DISABLED"));
    assert!(message.contains("Access denied"), "{message}");

    for mode in ["VERIFY_CA", "VERIFY_IDENTITY"] {
        let message = tls::refused(connect(&format!("ssl-mode={mode}&ssl-ca={wrong_ca}")));
        tls::assert_unknown_issuer(&message);
        assert!(!message.contains(tls::PASSWORD), "{message}");
    }

    tls::zero_code(
        &server.url("ssl-mode=VERIFY_IDENTITY").replacen("mysql://", "mariadb://", 1),
        Some(&certificates.ca()),
        &unique("my-tls-env"),
        tls::PASSWORD,
    );

    // Plain text where TLS was asked for: the machine's MariaDB, which has no TLS.
    let Some(plain) = servers::mysql_url() else { return };
    let message = tls::refused(SqlLeaseStore::connect(&format!("{plain}?ssl-mode=REQUIRED")));
    eprintln!("a plain-text MariaDB asked for TLS: {message}");
    assert!(message.contains("TLS"), "{message}");
}
