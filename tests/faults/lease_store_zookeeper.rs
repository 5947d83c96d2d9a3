//! The ZooKeeper lease store against real servers: each test starts a private standalone
//! ZooKeeper (Debian's `zookeeper`) on a free loopback port and stops it after. The
//! conformance checks every store passes, a session that expires on the server (the holder's
//! network cut off), a holder whose renewals are cut off, a server rebuilt empty under a
//! holder, a worker znode deleted behind its holder's back (an operator's `deleteall`), and
//! processes configured by `SNOWFLAKE_WORKER_LEASE=zk://…` alone. Over TLS
//! (`zks://`), a ZooKeeper with a secure client port and a CA and certificate made for the
//! run: the right CA (in the URL or the environment) works, a wrong CA, a name the
//! certificate is not for, a plain port asked for TLS and a TLS port asked for plain text are
//! refused within the store's timeout.

use crate::child;
use crate::faults;
use crate::lease_cluster;
use crate::lease_store;
use crate::servers;
use crate::tls;

use std::net::TcpListener;
use std::sync::Arc;
use std::time::{Duration, Instant};

use faults::{HOLDER_LAYOUT, HolderSpec, Holders, check_workers, count_duplicates, segments_of, wall_ms};
use lease_cluster::TestResult;
use lease_store::{HIGH_WATER, TTL, timed_out};
use typed_snowflake::worker::lease::{CA_ENV, Claim, Grant, LeaseError, LeaseStore, ZooKeeperLeaseStore, open_store};
use zookeeper_client as zk;

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
    // The store's default timeout: the first session with a server just started, and the one
    // after its restart, may take more than half a second on a loaded machine.
    let store = store(&zookeeper.url());
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
    match std::env::var(child::SCENARIO).as_deref() {
        Ok("holder" | "registry") => faults::child_main(),
        _ => lease_cluster::child_main(),
    }
}

/// Spawns zookeeper-client's tasks onto the tokio runtime of the thread.
struct TokioSpawner;

impl spawns_core::Spawn for TokioSpawner {
    fn spawn(&self, task: spawns_core::Task) {
        tokio::spawn(Box::into_pin(task.future));
    }
}

/// Another client of the ensemble, as an operator's `zkCli.sh` or a buggy cleanup job: it
/// deletes and reads znodes behind the holders' backs.
struct Operator {
    runtime: tokio::runtime::Runtime,
    client: zk::Client,
}

impl Operator {
    fn connect(zookeeper: &servers::PrivateZooKeeper) -> Operator {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .on_thread_start(|| std::mem::forget(spawns_core::enter(&TokioSpawner)))
            .enable_all()
            .build()
            .expect("a runtime");
        let address = zookeeper.address().to_string();
        let client = Self::run(&runtime, async {
            zk::Client::connector().with_session_timeout(Duration::from_secs(10)).connect(&address).await
        })
        .expect("connecting to the private ZooKeeper");
        Operator { runtime, client }
    }

    fn run<T>(runtime: &tokio::runtime::Runtime, future: impl Future<Output = T>) -> T {
        let _spawner = spawns_core::enter(&TokioSpawner);
        runtime.block_on(async move { tokio::time::timeout(Duration::from_secs(10), future).await.expect("in time") })
    }

    /// The worker znode of `worker` in `namespace` (no chroot in the tests' URLs).
    fn worker_path(namespace: &str, worker: u64) -> String {
        format!("/snowflake/{namespace}/workers/{worker}")
    }

    /// Deletes the worker znode of `worker`, whoever holds it, as `deleteall` would.
    fn delete_worker(&self, namespace: &str, worker: u64) {
        let path = Self::worker_path(namespace, worker);
        Self::run(&self.runtime, self.client.delete(&path, None)).unwrap_or_else(|e| panic!("deleting {path}: {e}"));
    }

    /// The worker znode's data (`token|fence|name`) and its session, if it exists.
    fn worker(&self, namespace: &str, worker: u64) -> Option<(String, i64)> {
        let path = Self::worker_path(namespace, worker);
        match Self::run(&self.runtime, self.client.get_data(&path)) {
            Ok((data, stat)) => Some((String::from_utf8_lossy(&data).into_owned(), stat.ephemeral_owner)),
            Err(zk::Error::NoNode) => None,
            Err(e) => panic!("reading {path}: {e}"),
        }
    }
}

fn expect_lost(result: Result<(), LeaseError>, what: &str) {
    match result {
        Err(LeaseError::Lost { worker: 0, .. }) => {}
        other => panic!("{what}: expected the lease on worker 0 to be lost, got {other:?}"),
    }
}

/// The worker znode holds `grant`'s token and fence.
fn held_by(operator: &Operator, namespace: &str, grant: &Grant) -> bool {
    let found = operator.worker(namespace, grant.worker);
    found.is_some_and(|(data, owner)| owner != 0 && data.starts_with(&format!("{}|{}|", grant.token, grant.fence)))
}

/// An operator deletes the holder's worker znode while its session lives, and another
/// holder creates it afresh (at the same version, 0): the first holder's renewal and release
/// are `Lost`, its release leaves the new znode alone, and the new holder starts above the
/// first one's high water.
#[test]
fn a_worker_znode_deleted_behind_its_holder_is_lost_to_the_next_holder() {
    let Some((zookeeper, namespace)) = setup() else { return };
    let operator = Operator::connect(&zookeeper);
    let (first_store, next_store) = (store(&zookeeper.url()), store(&zookeeper.url()));
    let claim = Claim::new(&namespace, 1, TTL);

    // The renewal.
    let first = first_store.acquire(&claim).expect("acquiring");
    first_store.renew(&namespace, &first, TTL, HIGH_WATER).expect("renewing");
    operator.delete_worker(&namespace, 0);
    let next = next_store.acquire(&claim).expect("the deleted worker ID is free");
    assert_eq!(next.worker, 0);
    assert!(next.fence > first.fence, "{} <= {}", next.fence, first.fence);
    assert_eq!(next.previous_high_water_ms, Some(HIGH_WATER), "above the first holder's high water");
    expect_lost(first_store.renew(&namespace, &first, TTL, HIGH_WATER + 1), "the first holder's renewal");
    expect_lost(first_store.release(&namespace, &first, HIGH_WATER + 1), "the first holder's release");
    assert!(held_by(&operator, &namespace, &next), "{:?}", operator.worker(&namespace, 0));
    next_store.renew(&namespace, &next, TTL, HIGH_WATER + 2).expect("the next holder renews");
    next_store.release(&namespace, &next, HIGH_WATER + 2).expect("the next holder releases");
    assert_eq!(operator.worker(&namespace, 0), None, "released");

    // The release, first thing after the znode was replaced: it never deletes the new one.
    let first = first_store.acquire(&claim).expect("acquiring");
    first_store.renew(&namespace, &first, TTL, HIGH_WATER + 3).expect("renewing");
    operator.delete_worker(&namespace, 0);
    let next = next_store.acquire(&claim).expect("the deleted worker ID is free");
    assert_eq!(next.previous_high_water_ms, Some(HIGH_WATER + 3));
    expect_lost(first_store.release(&namespace, &first, HIGH_WATER), "the first holder's release");
    assert!(held_by(&operator, &namespace, &next), "{:?}", operator.worker(&namespace, 0));
    let listed = next_store.list(&namespace).expect("listing");
    assert!(listed.iter().any(|r| r.worker == 0 && r.leased && r.fence == Some(next.fence)), "{listed:?}");
    next_store.renew(&namespace, &next, TTL, HIGH_WATER + 4).expect("the next holder renews");
    next_store.release(&namespace, &next, HIGH_WATER + 4).expect("the next holder releases");
    let third = first_store.acquire(&claim).expect("acquiring after the release");
    assert_eq!(third.previous_high_water_ms, Some(HIGH_WATER + 4), "the release of the holder that held it");
    first_store.release(&namespace, &third, HIGH_WATER).expect("releasing");
}

/// The worker znode deleted with no holder after it: the renewal and the release are `Lost`.
#[test]
fn a_worker_znode_deleted_with_no_successor_is_lost() {
    let Some((zookeeper, namespace)) = setup() else { return };
    let operator = Operator::connect(&zookeeper);
    let store = store(&zookeeper.url());
    let claim = Claim::new(&namespace, 1, TTL);
    let grant = store.acquire(&claim).expect("acquiring");
    store.renew(&namespace, &grant, TTL, HIGH_WATER).expect("renewing");
    operator.delete_worker(&namespace, 0);
    expect_lost(store.renew(&namespace, &grant, TTL, HIGH_WATER + 1), "the renewal");
    let grant = store.acquire(&claim).expect("free again");
    operator.delete_worker(&namespace, 0);
    expect_lost(store.release(&namespace, &grant, HIGH_WATER + 1), "the release");
}

/// Holders in processes of their own, on a one-ID space: the issuing holder's (a's) worker
/// znode is deleted while the other (c) waits for a free worker ID, which c then takes; later
/// c's znode is deleted in turn, and c stops and releases. No ID is issued twice, the worker
/// ID is never held by two at once, each holder stops when its znode is deleted, and each
/// issues again by itself once the worker ID is free.
#[test]
fn worker_znodes_deleted_under_issuing_processes_never_duplicate_an_id() -> TestResult {
    let Some((zookeeper, namespace)) = setup() else { return Ok(()) };
    let operator = Operator::connect(&zookeeper);
    let spec = HolderSpec {
        url: zookeeper.url(),
        namespace: namespace.clone(),
        space: 1,
        ttl: Duration::from_secs(2),
        margin: Duration::from_millis(500),
        reservation: None,
    };
    let bound = Duration::from_secs(15);
    // Apart, so that c can be stopped alone.
    let mut group_a = Holders::new(Duration::from_secs(90))?;
    let mut group_c = Holders::new(Duration::from_secs(90))?;
    group_a.spawn_holder("a", &spec)?;
    assert!(group_a.wait_for(bound, |h| h.issues_since("a", 0)), "a never issued:\n{}", group_a.describe());
    group_c.spawn_holder("c", &spec)?;
    assert!(
        group_c.wait_for(bound, |h| h.events("c").iter().any(|e| e.kind == "acquire-failed")),
        "c never waited for a free worker ID:\n{}",
        group_c.describe()
    );
    std::thread::sleep(Duration::from_millis(500));

    // c polls every 20 ms; a may still win the freed worker ID again if its renewal comes
    // right after the deletion: then the deletion is repeated.
    let first_fault = wall_ms();
    let mut c_took_over = false;
    for _ in 0..5 {
        operator.delete_worker(&namespace, 0);
        let fault = wall_ms();
        if group_c.wait_for(Duration::from_secs(5), |h| h.issues_since("c", fault)) {
            c_took_over = true;
            break;
        }
    }
    // Were a's renewals to go on succeeding, both would issue from here on: let them a while.
    std::thread::sleep(Duration::from_secs(3));

    let second_fault = wall_ms();
    operator.delete_worker(&namespace, 0);
    // Either takes it again; then c stops and releases, and a is left alone.
    let deadline = Instant::now() + bound;
    let taken_again = loop {
        if group_a.issues_since("a", second_fault) || group_c.issues_since("c", second_fault) {
            break true;
        }
        if Instant::now() >= deadline {
            break false;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    std::thread::sleep(Duration::from_millis(500));
    let mut runs = group_c.finish()?;
    let c_gone = wall_ms();
    // a took the worker ID at the second deletion, or does now that it is alone.
    let a_took_over = group_a.wait_for(bound, |h| h.issues_since("a", second_fault));
    std::thread::sleep(Duration::from_millis(500));
    runs.splice(0..0, group_a.finish()?);

    let (total, duplicates) = count_duplicates(runs.iter().map(|run| run.ids.as_slice()));
    let findings = check_workers(&segments_of(&runs, &HOLDER_LAYOUT));
    eprintln!("{total} IDs, {duplicates} duplicates");
    for run in &runs {
        let events: Vec<String> = run.events.iter().map(|e| format!("{} {}", e.at_ms, e.kind)).collect();
        eprintln!("{}: {} IDs, events {events:?}", run.name, run.ids.len());
    }
    assert_eq!(duplicates, 0, "{duplicates} duplicate IDs in {total}; {findings:#?}");
    assert!(findings.is_empty(), "{findings:#?}");
    let [a, c] = [&runs[0], &runs[1]];
    assert!(c_took_over, "c never issued on the worker ID freed under a");
    assert!(a.stop_after(first_fault).is_some_and(|stop| stop.at_ms < second_fault), "a went on issuing");
    assert!(c.stop_after(second_fault).is_some_and(|stop| stop.at_ms < c_gone), "c went on issuing");
    assert!(taken_again, "nobody took the worker ID freed under c");
    assert!(a_took_over, "a never issued again, even once c was gone");
    Ok(())
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
            .env("SNOWFLAKE_LEASE_RESERVATION", "2s")
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
