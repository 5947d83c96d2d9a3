//! The ZooKeeper lease store against real servers: each test starts a private standalone
//! ZooKeeper (Debian's `zookeeper`) on a free loopback port and stops it after. The
//! conformance checks every store passes, a session that expires on the server (the holder's
//! network cut off), a holder whose renewals are cut off, a server rebuilt empty under a
//! holder, and processes configured by `SNOWFLAKE_WORKER_LEASE=zk://…` alone. Over TLS
//! (`zks://`), a ZooKeeper with a secure client port and a CA and certificate made for the
//! run: the right CA (in the URL or the environment) works, a wrong CA, a name the
//! certificate is not for, a plain port asked for TLS and a TLS port asked for plain text are
//! refused within the store's timeout.

#[path = "common/child.rs"]
mod child;
#[path = "common/faults.rs"]
mod faults;
#[path = "common/lease_cluster.rs"]
mod lease_cluster;
#[path = "common/lease_store.rs"]
mod lease_store;
#[path = "common/servers.rs"]
mod servers;
#[path = "common/tls.rs"]
mod tls;

use std::net::TcpListener;
use std::sync::Arc;
use std::time::{Duration, Instant};

use lease_cluster::TestResult;
use lease_store::{HIGH_WATER, TTL, timed_out};
use typed_snowflake::worker::lease::{CA_ENV, Claim, LeaseError, LeaseStore, ZooKeeperLeaseStore, open_store};

fn store(url: &str) -> ZooKeeperLeaseStore {
    ZooKeeperLeaseStore::open(url).expect("a ZooKeeper URL")
}

fn shared(url: &str) -> Arc<dyn LeaseStore> {
    Arc::new(store(url).timeout(Duration::from_millis(300)))
}

/// A private server and a namespace; `None` to skip.
fn setup() -> Option<(servers::PrivateZooKeeper, String)> {
    let zookeeper = servers::PrivateZooKeeper::start()?;
    Some((zookeeper, "shop".to_owned()))
}

#[test]
fn thirty_two_holders_share_a_five_bit_space() {
    let Some((zookeeper, namespace)) = setup() else { return };
    // One store: a grant's session lives in the store that acquired it, and the check releases
    // some grants through another store than the one that acquired them.
    lease_store::thirty_two_holders_share_a_five_bit_space(&[store(&zookeeper.url())], &namespace);
}

#[test]
fn fences_follow_the_clock_and_the_claim() {
    let Some((zookeeper, namespace)) = setup() else { return };
    lease_store::fences_follow_the_clock_and_the_claim(&store(&zookeeper.url()), &namespace);
}

/// The server rebuilt from nothing (killed, its data deleted, started again). The conformance
/// check renews the old grant at once and expects `Lost`; ZooKeeper's servers instead refuse
/// the old session's client (it has seen more of the history than they have), so its renewals
/// fail, and never succeed, until the store closes the session a TTL after its last renewal;
/// then they are `Lost`. The store vouches for no high water, and fences go on above.
#[test]
fn a_store_that_lost_its_data_vouches_for_nothing() {
    let Some((mut zookeeper, namespace)) = setup() else { return };
    let store = store(&zookeeper.url()).timeout(Duration::from_millis(500));
    let ttl = Duration::from_secs(2);
    let first = store.acquire(&Claim::new(&namespace, 1, ttl)).expect("acquiring");
    assert_eq!(first.previous_high_water_ms, None, "never leased before");
    store.renew(&namespace, &first, ttl, HIGH_WATER).expect("renewing");
    zookeeper.restart_empty();
    let began = Instant::now();
    loop {
        match store.renew(&namespace, &first, ttl, HIGH_WATER) {
            Err(LeaseError::Lost { worker: 0, .. }) => break,
            Err(LeaseError::Timeout { .. } | LeaseError::Store { .. }) => {
                assert!(began.elapsed() < Duration::from_secs(20), "never lost");
            }
            other => panic!("expected the renewal to fail, got {other:?}"),
        }
    }
    let second = store.acquire(&Claim::new(&namespace, 1, TTL)).expect("the lost lease is free");
    assert_eq!(second.previous_high_water_ms, None, "after the loss the store vouches for nothing");
    assert!(second.fence > first.fence, "the fence never goes backwards: {} <= {}", second.fence, first.fence);
    store.release(&namespace, &second, HIGH_WATER + 5).expect("releasing");
    let third = store.acquire(&Claim::new(&namespace, 1, TTL)).expect("acquiring");
    assert_eq!(third.previous_high_water_ms, Some(HIGH_WATER + 5), "recorded since the loss");
    assert!(third.fence > second.fence);
    store.release(&namespace, &third, HIGH_WATER).expect("releasing");
}

#[test]
fn the_leases_are_listed() {
    let Some((zookeeper, namespace)) = setup() else { return };
    lease_store::the_leases_are_listed(&store(&zookeeper.url()), &namespace, false);
}

#[test]
fn high_water_rises_until_the_release() {
    let Some((zookeeper, namespace)) = setup() else { return };
    lease_store::high_water_rises_until_the_release(&store(&zookeeper.url()), &namespace);
}

#[test]
fn a_stale_token_is_lost() {
    let Some((zookeeper, namespace)) = setup() else { return };
    lease_store::a_stale_token_is_lost(&store(&zookeeper.url()), &namespace);
}

#[test]
fn an_expired_lease_is_taken_over() {
    let Some((zookeeper, namespace)) = setup() else { return };
    let (old, new) = (store(&zookeeper.url()), store(&zookeeper.url()));
    lease_store::an_expired_lease_is_taken_over_within(
        &old,
        &new,
        &namespace,
        Duration::from_millis(300),
        Duration::from_secs(10),
    );
}

#[test]
fn the_store_clock_is_close() {
    let Some((zookeeper, namespace)) = setup() else { return };
    lease_store::the_store_clock_is_close(&store(&zookeeper.url()), &namespace);
}

#[test]
fn bad_arguments_are_refused() {
    let Some((zookeeper, namespace)) = setup() else { return };
    lease_store::bad_arguments_are_refused(&store(&zookeeper.url()), &namespace);
}

#[test]
fn namespaces_differ_by_case() {
    let Some((zookeeper, namespace)) = setup() else { return };
    lease_store::namespaces_differ_by_case(&store(&zookeeper.url()), &namespace);
}

/// A TTL longer than the servers' longest session (a minute here) is refused, naming it.
#[test]
fn a_ttl_beyond_the_servers_sessions_is_refused() {
    let Some((zookeeper, namespace)) = setup() else { return };
    let err = store(&zookeeper.url()).acquire(&Claim::new(&namespace, 1, Duration::from_secs(120))).unwrap_err();
    assert!(matches!(err, LeaseError::BadSettings { .. }), "{err:?}");
    assert!(err.to_string().contains("maxSessionTimeout"), "{err}");
}

/// The holder's network is cut off (a proxy stalls) for longer than the TTL: the server
/// expires its session and deletes the worker znode, so another process takes the worker
/// ID while the first is still cut off, above its fence and high water; once the network is
/// back, the first holder's renewal is `Lost`.
#[test]
fn a_session_that_expires_on_the_server_frees_the_worker_id() {
    let Some((zookeeper, namespace)) = setup() else { return };
    let proxy = faults::Proxy::start(zookeeper.address()).expect("a proxy");
    let cut_off = store(&format!("zk://127.0.0.1:{}", proxy.port())).timeout(Duration::from_millis(300));
    let ttl = Duration::from_secs(1);
    let first = cut_off.acquire(&Claim::new(&namespace, 1, ttl)).expect("acquiring");
    cut_off.renew(&namespace, &first, ttl, HIGH_WATER).expect("renewing");
    proxy.stall();
    let stalled = Instant::now();
    let other = store(&zookeeper.url());
    let second = loop {
        match other.acquire(&Claim::new(&namespace, 1, TTL)) {
            Ok(grant) => break grant,
            Err(LeaseError::NoFreeWorker { .. }) => {
                assert!(stalled.elapsed() < Duration::from_secs(20), "the session never expired");
                std::thread::sleep(Duration::from_millis(50));
            }
            Err(e) => panic!("acquiring: {e}"),
        }
    };
    assert!(stalled.elapsed() >= ttl, "taken {:?} after the cut, before the TTL", stalled.elapsed());
    assert!(second.fence > first.fence);
    assert_eq!(second.previous_high_water_ms, Some(HIGH_WATER));
    proxy.resume();
    match cut_off.renew(&namespace, &first, ttl, HIGH_WATER + 1) {
        Err(LeaseError::Lost { worker: 0, .. }) => {}
        other => panic!("expected the lease to be lost, got {other:?}"),
    }
    other.release(&namespace, &second, HIGH_WATER + 2).expect("the new holder releases");
}

#[test]
fn a_server_that_never_answers_times_out() {
    // A socket that accepts connections and never replies.
    let silent = TcpListener::bind("127.0.0.1:0").expect("binding");
    let url = format!("zk://{}", silent.local_addr().expect("an address"));
    let bound = Duration::from_millis(300);
    let store = store(&url).timeout(bound);
    let began = Instant::now();
    timed_out(store.acquire(&Claim::new("shop", 32, TTL)), began, bound);
    let began = Instant::now();
    timed_out(store.now_ms(), began, bound);
}

#[test]
fn renewals_cut_off_fence_the_holder_before_its_ttl_ends() -> TestResult {
    let Some((zookeeper, _)) = setup() else { return Ok(()) };
    lease_cluster::renewals_cut_off_fence_the_holder_before_its_ttl_ends(zookeeper.address(), "zk", &shared)
}

#[test]
fn a_new_holder_starts_above_the_last_even_with_a_clock_an_hour_back() -> TestResult {
    let Some((zookeeper, _)) = setup() else { return Ok(()) };
    lease_cluster::a_new_holder_starts_above_the_last_even_with_a_clock_an_hour_back(&zookeeper.url(), &shared)
}

#[test]
fn a_store_restarted_empty_makes_the_holder_wait_out_earlier_ones() -> TestResult {
    let Some((mut zookeeper, _)) = setup() else { return Ok(()) };
    let url = zookeeper.url();
    lease_cluster::a_store_restarted_empty_makes_the_holder_wait_out_earlier_ones(&url, &shared, &mut || {
        zookeeper.restart_empty()
    })
}

#[test]
fn churn() -> TestResult {
    let Some((zookeeper, _)) = setup() else { return Ok(()) };
    lease_cluster::churn(&shared, &zookeeper.url())
}

#[test]
fn acquisition_latency() {
    let Some((zookeeper, _)) = setup() else { return };
    lease_cluster::acquisition_latency(&store(&zookeeper.url()), "zookeeper");
}

#[test]
#[ignore = "the entry point of the child processes: the other tests run it"]
fn child() -> TestResult {
    lease_cluster::child_main()
}

#[test]
fn processes_configured_by_the_environment_never_share_an_id() -> TestResult {
    let Some((zookeeper, _)) = setup() else { return Ok(()) };
    lease_cluster::processes_configured_by_the_environment_never_share_an_id(&zookeeper.url(), 4)
}

#[test]
fn open_store_opens_zookeeper_urls() {
    let store = open_store("zk://127.0.0.1:2181,127.0.0.1:2182/apps").expect("a ZooKeeper URL");
    assert_eq!(store.describe(), "zk://127.0.0.1:2181,127.0.0.1:2182/apps");
}

/// ZooKeeper over TLS (feature `lease-zookeeper-tls`).
#[cfg(feature = "lease-zookeeper-tls")]
mod over_tls {
    use super::*;

    #[test]
    fn open_store_opens_zookeeper_tls_urls() {
        let store = open_store("zks://127.0.0.1,127.0.0.1:3281/apps?ca=/no/such/ca.pem");
        let Err(LeaseError::BadUrl { reason, .. }) = store else { panic!("a missing CA file must be refused") };
        assert!(reason.contains("\"/no/such/ca.pem\" could not be read"), "{reason}");
        let Some(certificates) = tls::Certificates::make() else { return };
        let ca = certificates.ca().display().to_string();
        for scheme in ["zks", "zk+tls"] {
            let store = open_store(&format!("{scheme}://127.0.0.1,127.0.0.1:3281/apps?ca={ca}")).expect("a zks:// URL");
            assert_eq!(store.describe(), "zks://127.0.0.1:2281,127.0.0.1:3281/apps");
        }
    }

    // ---------------------------------------------------------------------------------------
    // TLS
    // ---------------------------------------------------------------------------------------

    /// The store's timeout in the TLS tests, and the slack a refusal may take beyond it.
    const TLS_TIMEOUT: Duration = Duration::from_secs(2);
    const SLACK: Duration = Duration::from_millis(500);

    /// A ZooKeeper with a secure client port, and the certificates; `None` to skip.
    fn tls_setup() -> Option<(tls::Certificates, servers::PrivateZooKeeper)> {
        let certificates = tls::Certificates::make()?;
        let zookeeper = servers::PrivateZooKeeper::start_tls(
            &certificates.server_cert(),
            &certificates.server_key(),
            &certificates.ca(),
        )?;
        Some((certificates, zookeeper))
    }

    /// The error of `store`'s first call (reading the clock), which must come within the timeout,
    /// and its whole chain of sources as text.
    fn refusal(store: &ZooKeeperLeaseStore) -> (LeaseError, String) {
        let began = Instant::now();
        let error = store.now_ms().expect_err("a refusal");
        let took = began.elapsed();
        assert!(took < TLS_TIMEOUT + SLACK, "refused after {took:?}: {error}");
        let mut chain = error.to_string();
        let mut source = std::error::Error::source(&error);
        while let Some(cause) = source {
            chain.push_str(" / ");
            chain.push_str(&cause.to_string());
            source = cause.source();
        }
        eprintln!("refused after {took:?}: {chain}");
        (error, chain)
    }

    #[test]
    fn zookeeper_over_tls() {
        let Some((certificates, zookeeper)) = tls_setup() else { return };
        let ca = certificates.ca().display().to_string();
        let port = zookeeper.tls_port();

        // The right CA, named in the URL: the store works.
        let url = format!("zks://127.0.0.1:{port}/tls?ca={ca}");
        let began = Instant::now();
        let secure = store(&url).timeout(TLS_TIMEOUT);
        assert_eq!(secure.describe(), format!("zks://127.0.0.1:{port}/tls"));
        lease_store::the_leases_are_listed(&secure, "tls_listed", false);
        let grant = secure.acquire(&Claim::new("tls", 32, TTL)).expect("acquiring over TLS");
        secure.renew("tls", &grant, TTL, HIGH_WATER).expect("renewing over TLS");
        let listed = secure.list("tls").expect("listing over TLS");
        assert!(listed.iter().any(|record| record.worker == grant.worker && record.leased), "{listed:?}");
        secure.release("tls", &grant, HIGH_WATER + 1).expect("releasing over TLS");
        let listed = secure.list("tls").expect("listing over TLS");
        assert!(listed.iter().all(|record| !record.leased), "{listed:?}");
        lease_store::the_store_clock_is_close(&secure, "tls_clock");
        eprintln!("acquire, renew, list and release over TLS: {:?}", began.elapsed());
        // What TLS costs here (printed, not asserted): each acquisition opens a session, so a
        // connection and, over TLS, a handshake; a renewal is one round trip on it.
        let plain = store(&zookeeper.url()).timeout(TLS_TIMEOUT);
        for (name, store) in [("plain", &plain), ("TLS", &secure)] {
            let (mut acquiring, mut renewing) = (Vec::new(), Vec::new());
            for _ in 0..20 {
                let began = Instant::now();
                let grant = store.acquire(&Claim::new("tls_cost", 32, TTL)).expect("acquiring");
                acquiring.push(began.elapsed());
                let began = Instant::now();
                store.renew("tls_cost", &grant, TTL, HIGH_WATER).expect("renewing");
                renewing.push(began.elapsed());
                store.release("tls_cost", &grant, HIGH_WATER).expect("releasing");
            }
            acquiring.sort();
            renewing.sort();
            eprintln!(
                "{name}: 20 cycles, acquire p50 {:?} max {:?}, renew p50 {:?}",
                acquiring[10], acquiring[19], renewing[10]
            );
        }
        // `zk+tls://` and a host name (the certificate is for `localhost` too), the path's
        // percent-encoded slashes decoded.
        let encoded = ca.replace('/', "%2F");
        let by_name = store(&format!("zk+tls://localhost:{port}/tls?ca={encoded}")).timeout(TLS_TIMEOUT);
        assert_eq!(by_name.describe(), format!("zks://localhost:{port}/tls"));
        by_name.now_ms().expect("reading the clock over TLS, by host name");

        // A wrong CA: the certificate was not trusted, said by the message and its source.
        let wrong =
            store(&format!("zks://127.0.0.1:{port}?ca={}", certificates.wrong_ca().display())).timeout(TLS_TIMEOUT);
        let (error, chain) = refusal(&wrong);
        assert!(matches!(error, LeaseError::Store { .. }), "{error:?}");
        assert!(error.to_string().contains("the server's certificate was not trusted"), "{error}");
        assert!(chain.contains("invalid peer certificate") && chain.contains("UnknownIssuer"), "{chain}");

        // A host name the certificate is not for (127.0.0.2 reaches the same server).
        let other_name = store(&format!("zks://127.0.0.2:{port}?ca={ca}")).timeout(TLS_TIMEOUT);
        let (error, chain) = refusal(&other_name);
        assert!(error.to_string().contains("the server's certificate is not valid for the host name"), "{error}");
        assert!(chain.contains("not valid for name \"127.0.0.2\""), "{chain}");

        // No CA named: the system's roots, which do not know the test CA.
        if std::env::var_os(CA_ENV).is_none() {
            let (_, chain) = refusal(&store(&format!("zks://127.0.0.1:{port}")).timeout(TLS_TIMEOUT));
            assert!(chain.contains("the server's certificate was not trusted"), "{chain}");
        }

        // TLS asked of the plain port: refused within the timeout, naming the handshake.
        let plain = store(&format!("zks://127.0.0.1:{}?ca={ca}", zookeeper.port())).timeout(TLS_TIMEOUT);
        let (_, chain) = refusal(&plain);
        assert!(chain.contains("TLS handshake"), "{chain}");

        // Plain text asked of the TLS port: refused within the timeout.
        let (error, _) = refusal(&store(&format!("zk://127.0.0.1:{port}")).timeout(TLS_TIMEOUT));
        assert!(matches!(error, LeaseError::Store { .. } | LeaseError::Timeout { .. }), "{error:?}");
    }

    /// The zero-code path: processes configured by `SNOWFLAKE_WORKER_LEASE=zks://…?ca=…` alone,
    /// then one with the CA in `SNOWFLAKE_LEASE_CA`.
    #[test]
    fn processes_configured_by_the_environment_lease_over_tls() -> TestResult {
        let Some((certificates, zookeeper)) = tls_setup() else { return Ok(()) };
        let port = zookeeper.tls_port();
        let url = format!("zks://127.0.0.1:{port}/env?ca={}", certificates.ca().display());
        lease_cluster::processes_configured_by_the_environment_never_share_an_id(&url, 2)?;

        let out = tempfile::NamedTempFile::new()?;
        let url = format!("zks://127.0.0.1:{port}/env-ca");
        let output = child::command("environment")
            .env("SNOWFLAKE_WORKER_LEASE", &url)
            .env(CA_ENV, certificates.ca())
            .env("SNOWFLAKE_NAMESPACE", "environment")
            .env("SNOWFLAKE_LEASE_TTL", "2s")
            .env_remove("SNOWFLAKE_WORKER_ID")
            .env_remove("SNOWFLAKE_WORKER_SPACE")
            .env("LEASE_TEST_COUNT", "1000")
            .env("LEASE_TEST_OUT", out.path())
            .output()?;
        child::check("environment", &output, &url);
        assert_eq!(std::fs::read(out.path())?.len(), 8 * 1000);
        Ok(())
    }
}
