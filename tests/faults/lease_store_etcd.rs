//! The etcd lease store against real etcd servers: each test starts a private one (Debian's
//! `etcd-server`; `etcd-client`'s `etcdctl` for snapshots) on free loopback ports and stops it
//! after. The conformance suite every store passes, with each bug planted in front of the
//! adapter failing its case; a server that never answers; a member of a three-member cluster that
//! hangs; and the faults of a store under running holders, each counted for duplicate IDs:
//! one worker ID's record deleted, the marker deleted, the server paused for less than
//! `W - margin`, rebuilt empty, and restored from a snapshot taken earlier (under running
//! holders; after they stopped, then fenced; and as the same cluster, unfenced, while a
//! newcomer acquires).

use crate::conformance::{Faults, Subject, run_all};
use crate::faults;
use crate::planted::{Bug, Planted};
use crate::servers;

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use faults::{
    HOLDER_LAYOUT, HolderSpec, Holders, Proxy, check_workers, count_duplicates, report, segments_of, unique, wall_ms,
};
use typed_snowflake::Generator;
use typed_snowflake::worker::lease::admin::{create_namespace, fence_namespace};
use typed_snowflake::worker::lease::store::{Cas, Query, Slot, Written};
use typed_snowflake::worker::lease::{EtcdLeaseStore, LeaseError, LeaseStore, WorkerLease, open_store};

type TestResult = Result<(), Box<dyn std::error::Error>>;

fn store(url: &str) -> EtcdLeaseStore {
    EtcdLeaseStore::open(url).expect("an etcd URL")
}

/// Posts `body` to the plain etcd on `port` as another client would (etcd's JSON API): the
/// reply, which must come with status 200.
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

fn base64(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::new();
    for chunk in bytes.chunks(3) {
        let n = chunk.iter().enumerate().fold(0u32, |n, (i, &b)| n | u32::from(b) << (16 - 8 * i));
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(char::from(ALPHABET[(n >> (18 - 6 * i) & 63) as usize]));
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// The key of `slot` in `namespace` under `prefix`, as the store lays them out.
fn key(prefix: &str, namespace: &str, slot: Slot) -> String {
    match slot {
        Slot::Marker => format!("{prefix}/snowflake/{namespace}/marker"),
        Slot::Worker(worker) => format!("{prefix}/snowflake/{namespace}/records/{worker:07}"),
    }
}

/// Deletes the key of `slot` (no prefix), as an operator's `etcdctl del` would.
fn delete(port: u16, namespace: &str, slot: Slot) {
    Deleter { port, prefix: String::new() }.delete(namespace, slot);
}

/// Deletes keys of a private etcd from outside, under a prefix.
struct Deleter {
    port: u16,
    prefix: String,
}

impl Faults for Deleter {
    fn delete(&self, namespace: &str, slot: Slot) {
        let body = format!(r#"{{"key":"{}"}}"#, base64(key(&self.prefix, namespace, slot).as_bytes()));
        let reply = etcd_post(self.port, "/v3/kv/deleterange", &body);
        assert!(reply.contains(r#""deleted":"1""#), "deleting {slot:?} of {namespace}: {reply}");
    }
}

fn subject<'a>(open: &'a (dyn Fn() -> Arc<dyn LeaseStore> + Sync), faults: &'a Deleter) -> Subject<'a> {
    Subject { name: "etcd", open, faults, prefix: format!("t{}", std::process::id()), has_clock: false }
}

#[test]
fn the_etcd_store_passes_the_conformance_suite() {
    let Some(etcd) = servers::PrivateEtcd::start() else { return };
    // Without a prefix, and under one of the URL's.
    for prefix in ["", "/apps/x"] {
        let url = format!("{}{prefix}", etcd.url());
        let open = move || Arc::new(store(&url)) as Arc<dyn LeaseStore>;
        let deleter = Deleter { port: etcd.port(), prefix: prefix.to_owned() };
        run_all(&subject(&open, &deleter)).unwrap_or_else(|failures| panic!("{failures}"));
    }
}

#[test]
fn each_planted_bug_fails_its_case() {
    let Some(etcd) = servers::PrivateEtcd::start() else { return };
    let url = etcd.url();
    let open = move || Arc::new(store(&url)) as Arc<dyn LeaseStore>;
    let deleter = Deleter { port: etcd.port(), prefix: String::new() };
    let bugs = [
        (Bug::CasIgnoresExpect, "a_write_is_compare_and_set"),
        (Bug::CasIgnoresExpect, "a_slot_is_created_only_if_absent"),
        (Bug::WriteNotAtomic, "two_slots_are_written_together_or_not_at_all"),
        (Bug::HighestAscending, "reads_take_ranges_and_say_the_highest"),
        (Bug::RangeEndInclusive, "reads_take_ranges_and_say_the_highest"),
    ];
    crate::conformance::planted_bugs_fail(&subject(&open, &deleter), &bugs).unwrap_or_else(|e| panic!("{e}"));
}

/// Keys live under the URL's prefix: two prefixes are two stores.
#[test]
fn prefixes_separate_stores() {
    let Some(etcd) = servers::PrivateEtcd::start() else { return };
    let a = store(&format!("{}/apps/a", etcd.url()));
    let b = store(&format!("{}/apps/b", etcd.url()));
    let op = [Cas::new(Slot::Worker(0), None, "x")];
    assert_eq!(a.write("shop", &op).unwrap(), Written::Done);
    assert_eq!(b.write("shop", &op).unwrap(), Written::Done);
    assert_eq!(a.write("shop", &op).unwrap(), Written::Conflict);
    let plain = store(&etcd.url());
    assert_eq!(plain.read("shop", &Query::workers(0..1).with_highest()).unwrap().highest, None);
}

#[test]
fn a_server_that_never_answers_times_out() {
    // A socket that accepts connections and never replies.
    let silent = TcpListener::bind("127.0.0.1:0").expect("binding");
    let url = format!("etcd://{}", silent.local_addr().expect("an address"));
    let bound = Duration::from_millis(300);
    let store = store(&url).timeout(bound);
    let began = Instant::now();
    let result = store.read("shop", &Query::workers(0..32));
    let took = began.elapsed();
    assert!(matches!(result, Err(LeaseError::Timeout { .. })), "{result:?}");
    assert!(took >= bound && took < bound + Duration::from_millis(500), "{took:?}");
}

#[test]
fn open_store_opens_etcd_urls() {
    let store = open_store("etcd+http://127.0.0.1:2379,127.0.0.1:22379/apps").expect("an etcd URL");
    assert_eq!(store.describe(), "etcd://127.0.0.1:2379,127.0.0.1:22379/apps");
}

// ---------------------------------------------------------------------------------------
// The cluster ID: the incarnation, across snapshot restores
// ---------------------------------------------------------------------------------------

/// A snapshot restored with a new `--initial-cluster-token` is a new cluster: its ID, and so
/// the store's incarnation, changes. Restored with the member's name, URLs and token as
/// before, etcd derives the same cluster ID: the restore cannot be told, which is why the
/// docs ask for `snowflake leases fence` after it. A store with the bug
/// `incarnation-constant` planted in front of it tells neither.
#[test]
fn a_snapshot_restored_as_a_new_cluster_is_a_new_incarnation() {
    let Some(mut etcd) = servers::PrivateEtcd::start() else { return };
    let dir = tempfile::tempdir().expect("a temporary directory");
    let snapshot = dir.path().join("snapshot.db");
    // A store of its own for each read: the connections of one made before a restart are gone.
    let url = etcd.url();
    let read = || store(&url).read("shop", &Query::workers(0..1)).expect("reading");
    let first = read().incarnation;
    assert!(first.starts_with("etcd-") && first.len() > 5, "{first}");
    store(&url).write("shop", &[Cas::new(Slot::Worker(0), None, "before")]).unwrap();
    etcd.snapshot(&snapshot);
    store(&url).write("shop", &[Cas::new(Slot::Worker(0), Some("before"), "after")]).unwrap();

    etcd.restore(&snapshot, None);
    let restored = read();
    assert_eq!(restored.record(0), Some("before"), "rolled back");
    assert_eq!(restored.incarnation, first, "the same name, URLs and token: the same cluster ID");

    etcd.restore(&snapshot, Some("restored-1"));
    let restored = read();
    assert_eq!(restored.record(0), Some("before"), "rolled back");
    assert_ne!(restored.incarnation, first, "a new token: a new cluster ID");
    let planted = || {
        let planted = Planted::new(Arc::new(store(&url)), Bug::IncarnationConstant);
        planted.read("shop", &Query::workers(0..1)).expect("reading").incarnation
    };
    let seen = planted();
    etcd.restore(&snapshot, Some("restored-2"));
    assert_eq!(planted(), seen, "the planted bug hides the new cluster");
    assert_ne!(read().incarnation, restored.incarnation, "a new token: a new cluster ID");
}

// ---------------------------------------------------------------------------------------
// A three-member cluster
// ---------------------------------------------------------------------------------------

/// One three-member cluster at a time: three etcd processes each, on a machine that runs the
/// other tests' servers too.
static CLUSTERS: Mutex<()> = Mutex::new(());

/// A member of three that hangs (`SIGSTOP`: its kernel still accepts connections, nothing
/// answers), the one the store talks to: the first read after it hung costs at most one
/// timeout, and the next ones go to a member that answers, at once; every one succeeds.
#[test]
fn a_hung_member_of_three_costs_at_most_one_timeout() {
    let _turn = CLUSTERS.lock().unwrap_or_else(PoisonError::into_inner);
    let Some(cluster) = servers::PrivateEtcdCluster::start() else { return };
    // A follower: the two others keep a leader, and answer at once.
    let hung = cluster.follower();
    let timeout = Duration::from_secs(1);
    let store = store(&cluster.url_from(hung)).timeout(timeout);
    store.write("hung", &[Cas::new(Slot::Worker(0), None, "0")]).expect("writing");
    cluster.stop(hung);
    let mut took = Vec::new();
    let mut results = Vec::new();
    for n in 0..10 {
        let began = Instant::now();
        let (expect, value) = (n.to_string(), (n + 1).to_string());
        results.push(store.write("hung", &[Cas::new(Slot::Worker(0), Some(&expect), &value)]));
        took.push(began.elapsed());
    }
    cluster.cont(hung);
    let _ = writeln!(std::io::stderr(), "writes with member {hung} of 3 stopped took {took:?}");
    for (n, result) in results.into_iter().enumerate() {
        match result {
            Ok(Written::Done) => {}
            other => panic!("write {n} with a member stopped: {other:?} after {:?}", took[n]),
        }
    }
    assert!(took[0] < timeout + Duration::from_millis(250), "the first write took {:?}", took[0]);
    for (n, took) in took.iter().enumerate().skip(1) {
        assert!(*took < timeout, "write {n} took {took:?}, the timeout is {timeout:?}");
    }
    let read = store.read("hung", &Query::workers(0..1)).expect("reading");
    assert_eq!(read.record(0), Some("10"));
}

/// A lease (TTL 4 s) on a three-member cluster keeps issuing while the member its store talks
/// to is stopped for twice the TTL, a follower or the leader (the two others elect another
/// within about a second): never fenced, never lost.
#[test]
fn a_lease_keeps_issuing_while_a_member_or_the_leader_is_stopped() -> TestResult {
    let _turn = CLUSTERS.lock().unwrap_or_else(PoisonError::into_inner);
    let Some(cluster) = servers::PrivateEtcdCluster::start() else { return Ok(()) };
    for leader in [false, true] {
        let hung = if leader { cluster.agreed_leader() } else { cluster.follower() };
        let store = Arc::new(store(&cluster.url_from(hung)).timeout(Duration::from_millis(500)));
        let namespace = if leader { "hung-leader" } else { "hung-lease" };
        create_namespace(&*store, namespace)?;
        let ttl = Duration::from_secs(4);
        let lease = WorkerLease::builder_shared(store)
            .namespace(namespace)
            .space(2)
            .ttl(ttl)
            .reservation(ttl)
            .margin(Duration::from_secs(1))
            .renew_every(Duration::from_millis(500))
            .acquire()?;
        let generator = Generator::builder(HOLDER_LAYOUT).lease(lease.clone()).build()?;
        let began = Instant::now();
        let mut last = generator.next_raw()?;
        let stopped_for = 2 * ttl;
        let mut stopped = None;
        let mut issued = 0_u64;
        while stopped.is_none_or(|at: Instant| at.elapsed() < stopped_for) {
            if stopped.is_none() && began.elapsed() >= Duration::from_secs(1) {
                cluster.stop(hung);
                stopped = Some(Instant::now());
            }
            match generator.next_raw() {
                Ok(id) => {
                    assert!(id > last, "{id} after {last}");
                    last = id;
                    issued += 1;
                }
                Err(e) => {
                    cluster.cont(hung);
                    let after = stopped.map(|at| at.elapsed());
                    return Err(
                        format!("fenced {after:?} after member {hung} stopped: {e}; {:?}", lease.status()).into()
                    );
                }
            }
            std::thread::sleep(Duration::from_millis(1));
        }
        cluster.cont(hung);
        let stats = lease.stats();
        let _ =
            writeln!(std::io::stderr(), "issued {issued} IDs with member {hung} (leader: {leader}) stopped; {stats:?}");
        assert!(lease.is_valid());
        assert!(!stats.lost, "{stats:?}");
        if !leader {
            assert_eq!(stats.failed_renewals, 0, "{stats:?}");
        }
        assert!(stats.renewals >= 10, "{stats:?}");
        // The member just continued may still be catching up with its cluster and answer the
        // release after its 500 ms timeout (seen once with eight tests at a time): the worker
        // ID then frees when the TTL runs out, as `release` says. What this test is about
        // ended above.
        match lease.release() {
            Ok(()) | Err(LeaseError::Timeout { .. }) => {}
            Err(e) => return Err(e.into()),
        }
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------
// Store faults under running holders
// ---------------------------------------------------------------------------------------

/// The settings: the defaults scaled down (TTL 3 s, `W` 9 s, margin 500 ms), so that a run
/// takes seconds.
const TTL: Duration = Duration::from_secs(3);
const RESERVATION: Duration = Duration::from_secs(9);
const MARGIN: Duration = Duration::from_millis(500);
/// Longer than the TTL, shorter than `W - margin`.
const OUTAGE: Duration = Duration::from_secs(6);

/// One test of holder processes at a time.
static HOLDERS: Mutex<()> = Mutex::new(());

fn turn() -> MutexGuard<'static, ()> {
    HOLDERS.lock().unwrap_or_else(PoisonError::into_inner)
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

#[test]
#[ignore = "the entry point of the child processes: the other tests run it"]
fn child() -> TestResult {
    faults::child_main()
}

/// Holders `names` issue on a namespace declared new; `fault` hurts the store (given the
/// namespace) while they run; they issue `after` more. No duplicate, no worker ID's IDs
/// interleaved between holders; each holder's stops since the fault, in ms.
fn under_fault(
    tag: &str,
    url: &str,
    names: &[&str],
    fault: &mut dyn FnMut(&str) -> TestResult,
    after: Duration,
) -> Result<Vec<Vec<i64>>, Box<dyn std::error::Error>> {
    let namespace = unique(tag);
    create_namespace(&store(url), &namespace)?;
    let spec = spec(url, &namespace);
    let mut holders = Holders::new(Duration::from_secs(120))?;
    for name in names {
        holders.spawn_holder(name, &spec)?;
    }
    if !holders.wait_for(Duration::from_secs(30), |h| h.count_issuing_since(0) == names.len()) {
        return Err(format!("{tag}: the holders never all issued:\n{}", holders.describe()).into());
    }
    std::thread::sleep(Duration::from_millis(500));
    let from_ms = wall_ms();
    fault(&namespace)?;
    std::thread::sleep(after);
    let (_, stops) = holders.finish_unique(tag, from_ms)?;
    Ok(stops)
}

/// One worker ID's record deleted (the marker kept) while its holder runs, twice: the holder
/// finds its record gone at its next renewal, keeps issuing on what it reserved, and takes a
/// worker ID again. No duplicate.
#[test]
fn a_record_deleted_under_its_holder_costs_no_duplicate() -> TestResult {
    let _turn = turn();
    let Some(etcd) = servers::PrivateEtcd::start() else { return Ok(()) };
    let port = etcd.port();
    under_fault(
        "etcd-record-deleted",
        &etcd.url(),
        &["a", "b"],
        &mut |namespace| {
            for _ in 0..2 {
                delete(port, namespace, Slot::Worker(0));
                std::thread::sleep(TTL);
            }
            Ok(())
        },
        TTL,
    )?;
    Ok(())
}

/// The namespace's marker deleted alone while two holders run: the next renewal writes it
/// afresh beside its own record, and every other record written before it waits out `W`. No
/// duplicate. The holders race to write it: the first goes on, and a holder whose renewal
/// finds a new marker under its record stops as under a fence (it cannot tell one from the
/// other) and issues again by itself, on a grant that waits out `W`: a stop shorter than `W`.
#[test]
fn the_marker_deleted_under_running_holders_costs_no_duplicate() -> TestResult {
    let _turn = turn();
    let Some(etcd) = servers::PrivateEtcd::start() else { return Ok(()) };
    let port = etcd.port();
    let stops = under_fault(
        "etcd-marker-deleted",
        &etcd.url(),
        &["a", "b"],
        &mut |namespace| {
            delete(port, namespace, Slot::Marker);
            Ok(())
        },
        2 * TTL,
    )?;
    assert!(stops.iter().any(Vec::is_empty), "both holders stopped: {stops:?}");
    let w = i64::try_from(RESERVATION.as_millis())?;
    assert!(stops.iter().flatten().all(|&ms| ms < w), "a holder stopped for W or longer: {stops:?}");
    Ok(())
}

/// etcd paused (`SIGSTOP`) for longer than the TTL but less than `W - margin`: no holder
/// stops issuing, no duplicate.
#[test]
fn etcd_paused_for_less_than_the_reservation_stops_no_holder() -> TestResult {
    let _turn = turn();
    let Some(etcd) = servers::PrivateEtcd::start() else { return Ok(()) };
    let stops = under_fault(
        "etcd-paused",
        &etcd.url(),
        &["a", "b"],
        &mut |_| {
            etcd.stop();
            std::thread::sleep(OUTAGE);
            etcd.cont();
            Ok(())
        },
        TTL,
    )?;
    assert!(stops.iter().all(Vec::is_empty), "a holder stopped: {stops:?}");
    Ok(())
}

/// etcd rebuilt empty (killed, its data deleted, started again as the same cluster) under two
/// running holders: the marker is gone, they take worker IDs again, and no duplicate.
#[test]
fn etcd_rebuilt_empty_under_running_holders_costs_no_duplicate() -> TestResult {
    let _turn = turn();
    let Some(mut etcd) = servers::PrivateEtcd::start() else { return Ok(()) };
    let url = etcd.url();
    under_fault(
        "etcd-empty",
        &url,
        &["a", "b"],
        &mut |_| {
            etcd.restart_empty();
            Ok(())
        },
        2 * TTL,
    )?;
    Ok(())
}

/// etcd's data restored from a snapshot taken 4 s earlier while two holders run, with the
/// cluster ID it had (nothing tells the restore): each holder reads its own record back with
/// a value it did not write, stops at once, writes the marker afresh and acquires again. No
/// duplicate.
#[test]
fn a_snapshot_restored_under_running_holders_costs_no_duplicate() -> TestResult {
    let _turn = turn();
    let Some(mut etcd) = servers::PrivateEtcd::start() else { return Ok(()) };
    let url = etcd.url();
    let dir = tempfile::tempdir()?;
    let snapshot = dir.path().join("snapshot.db");
    under_fault(
        "etcd-restored",
        &url,
        &["a", "b"],
        &mut |_| {
            etcd.snapshot(&snapshot);
            std::thread::sleep(Duration::from_secs(4));
            etcd.restore(&snapshot, None);
            Ok(())
        },
        RESERVATION + TTL,
    )?;
    Ok(())
}

/// etcd restored from a snapshot taken `W` and a second earlier, as the same cluster (the same
/// member name, URLs and token: the cluster ID, and so the incarnation, stays), under two live
/// holders while a newcomer waits for a free worker ID, and nobody fences: the newcomer takes
/// a live holder's worker ID at once on the restored records, and every holder stops at its
/// next renewal (see `faults::restore_under_live_holders`). IDs are issued twice only within
/// one renewal interval and its read; every stop names the rollback; the holders issue again.
#[test]
fn a_snapshot_restored_as_the_same_cluster_under_live_holders_unfenced_costs_at_most_one_renewal() -> TestResult {
    let _turn = turn();
    let Some(etcd) = servers::PrivateEtcd::start() else { return Ok(()) };
    let url = etcd.url();
    let proxy = Proxy::start(std::net::SocketAddr::from(([127, 0, 0, 1], etcd.port())))?;
    let proxied = format!("etcd://127.0.0.1:{}", proxy.port());
    let namespace = unique("etcd-restored-live");
    create_namespace(&store(&url), &namespace)?;
    let dir = tempfile::tempdir()?;
    let snapshot = dir.path().join("snapshot.db");
    let etcd = std::cell::RefCell::new(etcd);
    faults::restore_under_live_holders(faults::LiveRestore {
        label: "etcd restored as the same cluster under live holders, unfenced",
        proxy: &proxy,
        holders: &spec(&proxied, &namespace),
        newcomer: &spec(&url, &namespace),
        // A renewal every TTL / 3, its read bounded by the store's timeout (2 s).
        notice: TTL / 3 + Duration::from_secs(2),
        copy: &mut || {
            etcd.borrow().snapshot(&snapshot);
            Ok(())
        },
        put_back: &mut || {
            etcd.borrow_mut().restore(&snapshot, None);
            Ok(())
        },
        fence: None,
    })
}

/// The holders of a namespace stop cleanly after a snapshot was taken, and issue for longer
/// than `W` first; etcd is restored from the snapshot, as its records were before. Restored
/// as a new cluster (a new `--initial-cluster-token`), the new incarnation makes the next
/// holders wait out `W`; restored as the same cluster, `fence_namespace` (`snowflake leases
/// fence`) does, as the docs ask. No duplicate either way.
#[test]
fn a_snapshot_restored_after_its_holders_stopped_costs_no_duplicate() -> TestResult {
    let _turn = turn();
    let Some(mut etcd) = servers::PrivateEtcd::start() else { return Ok(()) };
    let url = etcd.url();
    let dir = tempfile::tempdir()?;
    let snapshot = dir.path().join("snapshot.db");
    // The first restore makes a new cluster (a token of its own); the second restores that
    // cluster as it was (the token it was started with).
    for (round, new_cluster) in [(1, true), (2, false)] {
        let tag = format!("etcd-restored-stopped-{round}");
        let namespace = unique(&tag);
        create_namespace(&store(&url), &namespace)?;
        let spec = spec(&url, &namespace);
        let mut holders = Holders::new(Duration::from_secs(120))?;
        for name in ["a", "b"] {
            holders.spawn_holder(name, &spec)?;
        }
        if !holders.wait_for(Duration::from_secs(30), |h| h.count_issuing_since(0) == 2) {
            return Err(format!("{tag}: the holders never both issued:\n{}", holders.describe()).into());
        }
        etcd.snapshot(&snapshot);
        std::thread::sleep(RESERVATION + Duration::from_secs(1));
        for name in ["a", "b"] {
            assert!(holders.release(name)?, "{tag}: {name} did not stop cleanly:\n{}", holders.describe());
        }
        let before = store(&url).read(&namespace, &Query::workers(0..0))?.incarnation;
        etcd.restore(&snapshot, Some("restored"));
        let after = store(&url).read(&namespace, &Query::workers(0..0))?.incarnation;
        if new_cluster {
            assert_ne!(before, after, "{tag}: a new cluster, a new incarnation");
        } else {
            assert_eq!(before, after, "{tag}: the same cluster ID");
            fence_namespace(&store(&url), &namespace)?;
        }
        let restarted_ms = wall_ms();
        for name in ["c", "d"] {
            holders.spawn_holder(name, &spec)?;
        }
        let issued = holders.wait_for(RESERVATION * 2 + Duration::from_secs(10), |h| {
            h.issues_since("c", restarted_ms) && h.issues_since("d", restarted_ms)
        });
        std::thread::sleep(TTL);
        let runs = holders.finish()?;
        let (ids, duplicates) = count_duplicates(runs.iter().map(|r| r.ids.as_slice()));
        let findings = check_workers(&segments_of(&runs, &HOLDER_LAYOUT));
        report(&format!("{tag}: {ids} IDs, {duplicates} duplicates"));
        assert!(issued, "{tag}: the holders after the restore never issued");
        assert_eq!(duplicates, 0, "{tag}: duplicates");
        assert!(findings.is_empty(), "{tag}: {findings:?}");
    }
    Ok(())
}

/// A holder stopped cleanly (its lease released), started again at once: the new process
/// issues without waiting out the reservation. The time to its first ID is printed.
#[test]
fn a_holder_restarted_after_its_release_issues_without_waiting() -> TestResult {
    let _turn = turn();
    let Some(etcd) = servers::PrivateEtcd::start() else { return Ok(()) };
    let url = etcd.url();
    let tag = "etcd-released";
    let namespace = unique(tag);
    create_namespace(&store(&url), &namespace)?;
    let spec = spec(&url, &namespace);
    let mut holders = Holders::new(Duration::from_secs(120))?;
    holders.spawn_holder("b", &spec)?;
    if !holders.wait_for(Duration::from_secs(30), |h| h.count_issuing_since(0) == 1) {
        return Err(format!("{tag}: the holder never issued:\n{}", holders.describe()).into());
    }
    std::thread::sleep(Duration::from_millis(500));
    assert!(holders.release("b")?, "{tag}: b did not stop cleanly:\n{}", holders.describe());
    holders.restart_issues_at_once(tag, "b2", &spec, 2 * RESERVATION, RESERVATION)
}
