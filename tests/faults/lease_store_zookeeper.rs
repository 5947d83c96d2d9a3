//! The ZooKeeper store against real servers, each test with a private ZooKeeper of its own
//! (Debian's `zookeeper`) on a free loopback port: the faults of a store that keeps the
//! leases' values (`docs/stores.md` lists them), each shown with holders in processes of
//! their own issuing as fast as they can and every ID counted for duplicates: a worker ID's
//! znode deleted under its holder (the marker kept), the marker deleted alone, the data
//! directory restored from a snapshot taken earlier (then fenced, as the docs say; and put
//! back under live holders, unfenced, while a newcomer acquires), and the server paused for
//! twice the TTL. An ensemble of one that elects itself in a new epoch at
//! each start shows the incarnation change (and the bug planted to keep it constant). Over
//! TLS (`zks://`), a server with a secure client port and a CA and certificate made for the
//! run: the right CA (in the URL or the environment) works, a wrong CA, a name the
//! certificate is not for, a plain port asked for TLS and a TLS port asked for plain text are
//! refused within the store's timeout.

use crate::faults;
use crate::planted::{Bug, Planted};
use crate::servers;

use std::net::TcpListener;
use std::sync::Arc;
use std::time::{Duration, Instant};

use faults::{
    HOLDER_LAYOUT, HolderRun, HolderSpec, Holders, Proxy, check_workers, count_duplicates, segments_of, unique, wall_ms,
};
use typed_snowflake::worker::lease::admin::{create_namespace, fence_namespace};
use typed_snowflake::worker::lease::store::{Cas, Query, Slot, Written};
use typed_snowflake::worker::lease::{LeaseError, LeaseStore, ZooKeeperLeaseStore, open_store};

type TestResult = Result<(), Box<dyn std::error::Error>>;

/// The holders' settings: a TTL of 2 s, a margin of 500 ms and a reservation `W` of 6 s.
const TTL: Duration = Duration::from_secs(2);
const MARGIN: Duration = Duration::from_millis(500);
const RESERVATION: Duration = Duration::from_secs(6);

fn store(url: &str) -> ZooKeeperLeaseStore {
    ZooKeeperLeaseStore::open(url).expect("a ZooKeeper URL")
}

#[test]
#[ignore = "the entry point of the child processes: the other tests run it"]
fn child() -> TestResult {
    faults::child_main()
}

/// A namespace of this run, declared new (its holders issue at once).
fn namespace(url: &str, test: &str) -> String {
    let namespace = unique(test);
    // A first connection on a loaded machine (over TLS, the server's first handshake) may
    // take seconds: the set-up is given longer than the holders.
    create_namespace(&store(url).timeout(Duration::from_secs(15)), &namespace).expect("declaring the namespace");
    namespace
}

fn spec(url: &str, namespace: &str) -> HolderSpec {
    HolderSpec {
        url: url.to_owned(),
        namespace: namespace.to_owned(),
        space: 2,
        ttl: TTL,
        margin: MARGIN,
        reservation: Some(RESERVATION),
    }
}

/// Holders a and b issue on a space of two worker IDs; c waits for one to free up.
fn three_holders(spec: &HolderSpec) -> Result<Holders, Box<dyn std::error::Error>> {
    let mut holders = Holders::new(Duration::from_secs(120))?;
    holders.spawn_holder("a", spec)?;
    holders.spawn_holder("b", spec)?;
    if !holders.wait_for(Duration::from_secs(30), |h| h.count_issuing_since(0) == 2) {
        return Err(format!("the two holders never both issued:\n{}", holders.describe()).into());
    }
    holders.spawn_holder("c", spec)?;
    if !holders.wait_for(Duration::from_secs(30), |h| h.events("c").iter().any(|e| e.kind == "acquire-failed")) {
        return Err(format!("c never waited for a free worker ID:\n{}", holders.describe()).into());
    }
    Ok(holders)
}

/// The holders' IDs: no duplicate, each worker ID's holders one after another; the runs.
fn no_duplicates(tag: &str, holders: Holders) -> Result<Vec<HolderRun>, Box<dyn std::error::Error>> {
    let runs = holders.finish()?;
    let (total, duplicates) = count_duplicates(runs.iter().map(|run| run.ids.as_slice()));
    let findings = check_workers(&segments_of(&runs, &HOLDER_LAYOUT));
    eprintln!("{tag}: {total} IDs, {duplicates} duplicates");
    for run in &runs {
        let events: Vec<String> = run.events.iter().map(|e| format!("{} {}", e.at_ms, e.kind)).collect();
        eprintln!("{tag}: {}: {} IDs, events {events:?}", run.name, run.ids.len());
    }
    assert_eq!(duplicates, 0, "{tag}: {duplicates} duplicate IDs in {total}; {findings:#?}");
    assert!(findings.is_empty(), "{tag}: {findings:#?}");
    assert!(runs.iter().filter(|run| run.ids.len() > 1_000).count() >= 2, "{tag}: the holders issued almost nothing");
    Ok(runs)
}

/// One worker ID's znode deleted while its holder issues (the marker kept), then the other's,
/// with a third holder waiting for a free worker ID: no ID is issued twice.
#[test]
fn a_worker_znode_deleted_under_its_holder_duplicates_nothing() -> TestResult {
    let Some(zookeeper) = servers::PrivateZooKeeper::start() else { return Ok(()) };
    let url = zookeeper.url();
    let namespace = namespace(&url, "worker-deleted");
    let holders = three_holders(&spec(&url, &namespace))?;
    for worker in [0, 1] {
        zookeeper.delete(&format!("/snowflake/ns-{namespace}/workers/{worker}"));
        std::thread::sleep(RESERVATION + TTL);
    }
    no_duplicates("worker znode deleted", holders)?;
    Ok(())
}

/// The namespace's marker deleted alone while the holders issue: no ID is issued twice.
#[test]
fn the_marker_deleted_alone_duplicates_nothing() -> TestResult {
    let Some(zookeeper) = servers::PrivateZooKeeper::start() else { return Ok(()) };
    let url = zookeeper.url();
    let namespace = namespace(&url, "marker-deleted");
    let holders = three_holders(&spec(&url, &namespace))?;
    zookeeper.delete(&format!("/snowflake/ns-{namespace}/marker"));
    std::thread::sleep(RESERVATION + TTL);
    let read = store(&url).read(&namespace, &Query::workers(0..0))?;
    eprintln!("marker deleted: the marker after {:?}", read.marker);
    no_duplicates("marker deleted", holders)?;
    Ok(())
}

/// The data directory restored from a copy taken a few seconds earlier, while the holders
/// issue: a standalone server cannot tell (its incarnation is empty), so the namespace is
/// fenced before the holders reach the restored server again, as `docs/stores.md` says. The
/// holders reach it through a proxy, which drops them during the restore and the fence.
#[test]
fn a_snapshot_restored_then_fenced_duplicates_nothing() -> TestResult {
    let Some(mut zookeeper) = servers::PrivateZooKeeper::start() else { return Ok(()) };
    let url = zookeeper.url();
    let proxy = Proxy::start(zookeeper.address())?;
    let proxied = format!("zk://127.0.0.1:{}", proxy.port());
    let namespace = namespace(&url, "restored");
    let holders = three_holders(&spec(&proxied, &namespace))?;
    let snapshot = zookeeper.snapshot();
    // The holders renew, their records move on past the copy.
    std::thread::sleep(RESERVATION);
    proxy.drop_all();
    let latest = store(&url).read(&namespace, &Query::workers(0..2))?;
    zookeeper.restore(&snapshot);
    let restored = store(&url);
    let read = restored.read(&namespace, &Query::workers(0..2))?;
    eprintln!("restored: records {:?}, before the restore {:?}", read.records, latest.records);
    assert_eq!(read.incarnation, "", "a standalone server tells no restore");
    assert_ne!(read.records, latest.records, "the records were rolled back");
    fence_namespace(&restored, &namespace)?;
    proxy.resume();
    let back_ms = wall_ms();
    std::thread::sleep(RESERVATION + TTL);
    let runs = no_duplicates("snapshot restored and fenced", holders)?;
    let issuing = runs.iter().filter(|run| run.ids.len() > 1_000 && run.resumed_after(back_ms).is_some()).count();
    eprintln!("restored: {issuing} holders issued again after the fence");
    Ok(())
}

/// The data directory put back from a copy taken `W` and a second earlier (a standalone server
/// cannot tell) under two live holders while a newcomer waits for a free worker ID, and nobody
/// fences: the newcomer takes a live holder's worker ID at once on the records put back, and
/// every holder stops at its next renewal (see `faults::restore_under_live_holders`). IDs are
/// issued twice only within one renewal interval and its read; every stop names the rollback;
/// the holders issue again.
#[test]
fn a_data_directory_put_back_under_live_holders_unfenced_costs_at_most_one_renewal() -> TestResult {
    let Some(zookeeper) = servers::PrivateZooKeeper::start() else { return Ok(()) };
    let url = zookeeper.url();
    let proxy = Proxy::start(zookeeper.address())?;
    let proxied = format!("zk://127.0.0.1:{}", proxy.port());
    let namespace = namespace(&url, "restored-live");
    let zookeeper = std::cell::RefCell::new(zookeeper);
    let copy = std::cell::RefCell::new(None);
    // The holders ride through the time the store is out of their reach: the server's restart
    // (a JVM) and the newcomer's acquisition. Within `W` less the margin, so that they stop for
    // the rollback and not for their reservation: 6 s was once too short on a loaded 2-core
    // machine (b stopped unrenewed, 5.5 s after its last renewal); 10 s leaves 9.5 s.
    let reservation = Some(Duration::from_secs(10));
    faults::restore_under_live_holders(faults::LiveRestore {
        label: "zookeeper data directory put back under live holders, unfenced",
        proxy: &proxy,
        holders: &HolderSpec { reservation, ..spec(&proxied, &namespace) },
        newcomer: &HolderSpec { reservation, ..spec(&url, &namespace) },
        // A renewal every TTL / 3, its read bounded by the store's timeout (2 s).
        notice: TTL / 3 + Duration::from_secs(2),
        copy: &mut || {
            *copy.borrow_mut() = Some(zookeeper.borrow().snapshot());
            Ok(())
        },
        put_back: &mut || {
            let copy = copy.borrow();
            zookeeper.borrow_mut().restore(copy.as_ref().ok_or("no copy")?);
            Ok(())
        },
        fence: None,
    })
}

/// The server paused (`SIGSTOP`) for twice the TTL, less than `W` minus the margin: no
/// holder stops issuing, and none issues an ID twice.
#[test]
fn zookeeper_paused_for_twice_the_ttl_stops_no_holder() -> TestResult {
    let Some(zookeeper) = servers::PrivateZooKeeper::start() else { return Ok(()) };
    let url = zookeeper.url();
    let namespace = namespace(&url, "paused");
    let mut holders = Holders::new(Duration::from_secs(120))?;
    for name in ["a", "b"] {
        holders.spawn_holder(name, &spec(&url, &namespace))?;
    }
    if !holders.wait_for(Duration::from_secs(30), |h| h.count_issuing_since(0) == 2) {
        return Err(format!("the two holders never both issued:\n{}", holders.describe()).into());
    }
    std::thread::sleep(TTL);
    let paused_ms = wall_ms();
    zookeeper.stop();
    std::thread::sleep(TTL * 2);
    zookeeper.cont();
    std::thread::sleep(TTL * 2);
    let runs = no_duplicates("paused", holders)?;
    let stops: Vec<Vec<i64>> = runs.iter().map(|run| run.stops_since(paused_ms)).collect();
    eprintln!("paused: stops since the pause (ms): {stops:?}");
    assert!(stops.iter().all(Vec::is_empty), "a holder stopped: {stops:?}");
    Ok(())
}

/// An ensemble restarted elects a leader in a new epoch: the incarnation changes, and
/// records written before are not vouched for. With `incarnation-constant` planted in front
/// of the store, it does not change.
#[test]
fn an_ensemble_restarted_has_a_new_incarnation() {
    let Some(mut zookeeper) = servers::PrivateZooKeeper::start_ensemble_of_one() else { return };
    let url = zookeeper.url();
    let incarnation = |store: &dyn LeaseStore| {
        // The first calls after a start may find no leader yet.
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            match store.read("epoch", &Query::workers(0..1)) {
                Ok(read) => return read.incarnation,
                Err(e) if Instant::now() < deadline => eprintln!("waiting for a leader: {e}"),
                Err(e) => panic!("{e}"),
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    };
    let first = incarnation(&store(&url));
    assert!(first.starts_with("epoch-"), "{first:?}");
    let written = store(&url).write("epoch", &[Cas::new(Slot::Worker(0), None, "kept")]).expect("a write");
    assert_eq!(written, Written::Done);
    let planted = Planted::new(Arc::new(store(&url)), Bug::IncarnationConstant);
    let constant = incarnation(&planted);
    zookeeper.restart();
    let second = incarnation(&store(&url));
    eprintln!("ensemble of one: {first:?}, restarted: {second:?}");
    assert!(second.starts_with("epoch-") && second != first, "{first:?} then {second:?}");
    let read = store(&url).read("epoch", &Query::workers(0..1)).expect("a read");
    assert_eq!(read.record(0), Some("kept"), "an ensemble restarted keeps its data");
    let after = incarnation(&planted);
    assert_eq!(after, constant, "with incarnation-constant planted the restart is not told");
    eprintln!("planted incarnation-constant: the restart reads {after:?}, not {second:?}: the bug shows");
}

#[test]
fn a_server_that_never_answers_times_out() {
    // A socket that accepts connections and never replies.
    let silent = TcpListener::bind("127.0.0.1:0").expect("binding");
    let url = format!("zk://{}", silent.local_addr().expect("an address"));
    let bound = Duration::from_millis(300);
    let store = store(&url).timeout(bound);
    for _ in 0..2 {
        let began = Instant::now();
        let error = store.read("shop", &Query::workers(0..32)).expect_err("no answer");
        assert!(matches!(error, LeaseError::Timeout { .. }), "{error:?}");
        assert!(began.elapsed() < bound + Duration::from_millis(500), "{:?}", began.elapsed());
    }
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
    use crate::tls;
    use typed_snowflake::worker::lease::CA_ENV;

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

    /// The error of `store`'s first call (a read), which must come within the timeout,
    /// and its whole chain of sources as text.
    fn refusal(store: &ZooKeeperLeaseStore) -> (LeaseError, String) {
        let began = Instant::now();
        let error = store.read("tls", &Query::workers(0..1)).expect_err("a refusal");
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
        // A first TLS connection on a loaded machine may take seconds (the server's first
        // handshake): this store is given longer.
        let secure = store(&url).timeout(Duration::from_secs(15));
        assert_eq!(secure.describe(), format!("zks://127.0.0.1:{port}/tls"));
        let op = Cas::new(Slot::Worker(3), None, "over TLS");
        assert_eq!(secure.write("tls", &[op]).expect("writing over TLS"), Written::Done);
        eprintln!("the first write over TLS: {:?}", began.elapsed());
        let read = secure.read("tls", &Query::workers(0..4)).expect("reading over TLS");
        assert_eq!(read.record(3), Some("over TLS"));
        let now = wall_ms();
        assert!(read.now_ms.is_some_and(|ms| (ms - now).abs() < 1_000), "{:?} against {now}", read.now_ms);
        eprintln!("a write and a read over TLS: {:?}", began.elapsed());
        // What TLS costs here (printed, not asserted): a read is two requests on the session.
        let plain = store(&zookeeper.url()).timeout(TLS_TIMEOUT);
        for (name, store) in [("plain", &plain), ("TLS", &secure)] {
            let mut reading = Vec::new();
            for _ in 0..20 {
                let began = Instant::now();
                store.read("tls_cost", &Query::workers(0..32)).expect("reading");
                reading.push(began.elapsed());
            }
            reading.sort();
            eprintln!("{name}: 20 reads of 32 worker IDs, p50 {:?} max {:?}", reading[10], reading[19]);
        }
        // `zk+tls://` and a host name (the certificate is for `localhost` too), the path's
        // percent-encoded slashes decoded.
        let encoded = ca.replace('/', "%2F");
        let by_name = store(&format!("zk+tls://localhost:{port}/tls?ca={encoded}")).timeout(TLS_TIMEOUT);
        assert_eq!(by_name.describe(), format!("zks://localhost:{port}/tls"));
        by_name.read("tls", &Query::workers(0..1)).expect("reading over TLS, by host name");

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

    /// Holders in processes of their own, on `zks://…?ca=…`: no ID issued twice.
    #[test]
    fn holders_over_tls_never_share_an_id() -> TestResult {
        let Some((certificates, zookeeper)) = tls_setup() else { return Ok(()) };
        let port = zookeeper.tls_port();
        let url = format!("zks://127.0.0.1:{port}/env?ca={}", certificates.ca().display());
        let namespace = namespace(&url, "tls");
        let mut holders = Holders::new(Duration::from_secs(60))?;
        for name in ["a", "b"] {
            holders.spawn_holder(name, &spec(&url, &namespace))?;
        }
        if !holders.wait_for(Duration::from_secs(30), |h| h.count_issuing_since(0) == 2) {
            return Err(format!("the two holders never both issued over TLS:\n{}", holders.describe()).into());
        }
        std::thread::sleep(TTL * 2);
        no_duplicates("over TLS", holders)?;
        Ok(())
    }
}
