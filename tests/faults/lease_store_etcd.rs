//! The etcd lease store against real etcd servers: each test starts a private one (Debian's
//! `etcd-server`) on free loopback ports and stops it after. The conformance checks every
//! store passes, the clock comparison through the recorded times, a server that never
//! answers, a holder whose renewals are cut off, a server rebuilt empty under a holder,
//! processes configured by `SNOWFLAKE_WORKER_LEASE=etcd://…` alone, a member of a three-member
//! cluster that hangs, and a holder whose wall clock steps back (libfaketime) before its lease
//! is lost.

use crate::child;
use crate::lease_cluster;
use crate::lease_store;
use crate::servers;

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use lease_cluster::TestResult;
use lease_store::{TTL, timed_out};
use typed_snowflake::clock::MonotonicClock;
use typed_snowflake::worker::lease::{Claim, EtcdLeaseStore, LeaseError, LeaseStore, WorkerLease, open_store};
use typed_snowflake::{Clock, Generator};

fn store(url: &str) -> EtcdLeaseStore {
    EtcdLeaseStore::open(url).expect("an etcd URL")
}

fn shared(url: &str) -> Arc<dyn LeaseStore> {
    Arc::new(store(url).timeout(Duration::from_millis(300)))
}

/// A private server and a namespace; `None` to skip.
fn setup() -> Option<(servers::PrivateEtcd, String)> {
    let etcd = servers::PrivateEtcd::start()?;
    Some((etcd, "shop".to_owned()))
}

/// Puts `key` = `value` through etcd's JSON gateway (`/v3/kv/put`), as another client would.
fn put(port: u16, key: &str, value: &str) {
    let body = format!(r#"{{"key":"{}","value":"{}"}}"#, base64(key.as_bytes()), base64(value.as_bytes()));
    let mut stream = TcpStream::connect(("127.0.0.1", port)).expect("connecting to etcd");
    // One write: the request whole.
    let request = format!(
        "POST /v3/kv/put HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    stream.write_all(request.as_bytes()).expect("sending");
    let mut reply = String::new();
    stream.read_to_string(&mut reply).expect("reading the reply");
    assert!(reply.starts_with("HTTP/1.1 200"), "{reply}");
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

#[test]
fn thirty_two_holders_share_a_five_bit_space() {
    let Some((etcd, namespace)) = setup() else { return };
    let stores: Vec<EtcdLeaseStore> = (0..8).map(|_| store(&etcd.url())).collect();
    lease_store::thirty_two_holders_share_a_five_bit_space(&stores, &namespace);
}

#[test]
fn fences_follow_the_clock_and_the_claim() {
    let Some((etcd, namespace)) = setup() else { return };
    lease_store::fences_follow_the_clock_and_the_claim(&store(&etcd.url()), &namespace);
}

/// The server rebuilt from nothing (killed, its data deleted, started again): revisions start
/// again at 1, and no high water is vouched for.
#[test]
fn a_store_that_lost_its_data_vouches_for_nothing() {
    let Some((etcd, namespace)) = setup() else { return };
    let url = etcd.url();
    let etcd = Mutex::new(etcd);
    let lose = || etcd.lock().unwrap().restart_empty();
    lease_store::a_store_that_lost_its_data_vouches_for_nothing(&store(&url), &namespace, lose);
}

#[test]
fn the_leases_are_listed() {
    let Some((etcd, namespace)) = setup() else { return };
    lease_store::the_leases_are_listed(&store(&etcd.url()), &namespace, true);
}

#[test]
fn high_water_rises_until_the_release() {
    let Some((etcd, namespace)) = setup() else { return };
    lease_store::high_water_rises_until_the_release(&store(&etcd.url()), &namespace);
}

#[test]
fn a_stale_token_is_lost() {
    let Some((etcd, namespace)) = setup() else { return };
    lease_store::a_stale_token_is_lost(&store(&etcd.url()), &namespace);
}

#[test]
fn an_expired_lease_is_taken_over() {
    let Some((etcd, namespace)) = setup() else { return };
    let (old, new) = (store(&etcd.url()), store(&etcd.url()));
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
    let Some((etcd, namespace)) = setup() else { return };
    lease_store::the_store_clock_is_close(&store(&etcd.url()), &namespace);
}

#[test]
fn bad_arguments_are_refused() {
    let Some((etcd, namespace)) = setup() else { return };
    lease_store::bad_arguments_are_refused(&store(&etcd.url()), &namespace);
}

#[test]
fn namespaces_differ_by_case() {
    let Some((etcd, namespace)) = setup() else { return };
    lease_store::namespaces_differ_by_case(&store(&etcd.url()), &namespace);
}

/// Keys live under the URL's prefix: two prefixes are two stores.
#[test]
fn prefixes_separate_stores() {
    let Some((etcd, namespace)) = setup() else { return };
    let a = store(&format!("{}/apps/a", etcd.url()));
    let b = store(&format!("{}/apps/b", etcd.url()));
    let first = a.acquire(&Claim::new(&namespace, 1, TTL)).expect("acquiring under one prefix");
    let second = b.acquire(&Claim::new(&namespace, 1, TTL)).expect("acquiring under the other");
    assert_eq!((first.worker, second.worker), (0, 0));
    assert!(matches!(a.acquire(&Claim::new(&namespace, 1, TTL)), Err(LeaseError::NoFreeWorker { .. })));
}

/// The previous holder of a worker ID recorded a time an hour ahead of this host's clock:
/// this host's clock is behind, and the acquisition is refused, naming both times.
#[test]
fn a_clock_behind_the_previous_holders_is_refused() {
    let Some((etcd, namespace)) = setup() else { return };
    let ahead = lease_store::HIGH_WATER + 10 * 365 * 86_400_000;
    put(etcd.port(), &format!("/snowflake/{namespace}/high-water/0000000"), &format!("5|{ahead}|{ahead}"));
    let store = store(&etcd.url());
    match store.acquire(&Claim::new(&namespace, 1, TTL)) {
        Err(LeaseError::ClockSkew { store_ms, tolerance, .. }) => {
            assert_eq!(store_ms, ahead);
            assert_eq!(tolerance, Duration::from_secs(1));
        }
        other => panic!("expected a clock skew, got {other:?}"),
    }
    // A record written within the tolerance is taken over, above its fence and high water.
    let now = lease_store::HIGH_WATER;
    put(etcd.port(), &format!("/snowflake/{namespace}/high-water/0000000"), &format!("5|{now}|{now}"));
    let grant = store.acquire(&Claim::new(&namespace, 1, TTL)).expect("acquiring");
    assert_eq!(grant.previous_high_water_ms, Some(now));
    assert!(grant.fence > 5);
}

/// A record that no store of ours wrote is refused, never read as a number.
#[test]
fn foreign_data_is_refused() {
    let Some((etcd, namespace)) = setup() else { return };
    put(etcd.port(), &format!("/snowflake/{namespace}/high-water/0000000"), "not a record");
    let err = store(&etcd.url()).acquire(&Claim::new(&namespace, 1, TTL)).unwrap_err();
    assert!(matches!(err, LeaseError::Store { .. }), "{err:?}");
    assert!(err.to_string().contains("unexpected reply: high-water record \"not a record\""), "{err}");
}

#[test]
fn a_server_that_never_answers_times_out() {
    // A socket that accepts connections and never replies.
    let silent = TcpListener::bind("127.0.0.1:0").expect("binding");
    let url = format!("etcd://{}", silent.local_addr().expect("an address"));
    let bound = Duration::from_millis(300);
    let store = store(&url).timeout(bound);
    let began = Instant::now();
    timed_out(store.acquire(&Claim::new("shop", 32, TTL)), began, bound);
}

#[test]
fn renewals_cut_off_fence_the_holder_before_its_ttl_ends() -> TestResult {
    let Some((etcd, _)) = setup() else { return Ok(()) };
    let server = std::net::SocketAddr::from(([127, 0, 0, 1], etcd.port()));
    lease_cluster::renewals_cut_off_fence_the_holder_before_its_ttl_ends(server, "etcd", &shared)
}

#[test]
fn a_new_holder_starts_above_the_last_even_with_a_clock_an_hour_back() -> TestResult {
    let Some((etcd, _)) = setup() else { return Ok(()) };
    lease_cluster::a_new_holder_starts_above_the_last_even_with_a_clock_an_hour_back(&etcd.url(), &shared)
}

#[test]
fn a_store_restarted_empty_makes_the_holder_wait_out_earlier_ones() -> TestResult {
    let Some((mut etcd, _)) = setup() else { return Ok(()) };
    let url = etcd.url();
    lease_cluster::a_store_restarted_empty_makes_the_holder_wait_out_earlier_ones(&url, &shared, &mut || {
        etcd.restart_empty()
    })
}

#[test]
fn churn() -> TestResult {
    let Some((etcd, _)) = setup() else { return Ok(()) };
    lease_cluster::churn(&shared, &etcd.url())
}

#[test]
fn acquisition_latency() {
    let Some((etcd, _)) = setup() else { return };
    lease_cluster::acquisition_latency(&store(&etcd.url()), "etcd");
}

#[test]
#[ignore = "the entry point of the child processes: the other tests run it"]
fn child() -> TestResult {
    if std::env::var(child::SCENARIO).as_deref() == Ok(CLOCK_STEP) {
        return clock_step_child();
    }
    lease_cluster::child_main()
}

#[test]
fn processes_configured_by_the_environment_never_share_an_id() -> TestResult {
    let Some((etcd, _)) = setup() else { return Ok(()) };
    lease_cluster::processes_configured_by_the_environment_never_share_an_id(&etcd.url(), 4)
}

#[test]
fn open_store_opens_etcd_urls() {
    let store = open_store("etcd+http://127.0.0.1:2379,127.0.0.1:22379/apps").expect("an etcd URL");
    assert_eq!(store.describe(), "etcd://127.0.0.1:2379,127.0.0.1:22379/apps");
}

/// Unix milliseconds of the wall clock.
fn wall_ms() -> i64 {
    let since = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).expect("a clock after 1970");
    i64::try_from(since.as_millis()).expect("milliseconds in an i64")
}

/// One three-member cluster at a time: three etcd processes each, on a machine that runs the
/// other tests' servers too.
static CLUSTERS: Mutex<()> = Mutex::new(());

/// Starts a three-member cluster once no other test of this file runs one; `None` to skip.
fn cluster() -> Option<(std::sync::MutexGuard<'static, ()>, servers::PrivateEtcdCluster)> {
    let turn = CLUSTERS.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    Some((turn, servers::PrivateEtcdCluster::start()?))
}

/// A member of three that hangs (`SIGSTOP`: its kernel still accepts connections, nothing
/// answers), the one the store talks to: the first renewal after it hung costs at most one
/// timeout, and the next ones go to a member that answers, at once; every one succeeds.
#[test]
fn a_hung_member_of_three_costs_at_most_one_timeout() {
    let Some((_turn, cluster)) = cluster() else { return };
    // A follower: the two others keep a leader, and answer at once.
    let hung = cluster.follower();
    let timeout = Duration::from_secs(1);
    let store = store(&cluster.url_from(hung)).timeout(timeout);
    let namespace = "hung";
    let grant = store.acquire(&Claim::new(namespace, 4, TTL)).expect("acquiring");
    cluster.stop(hung);
    let mut took = Vec::new();
    let mut results = Vec::new();
    for _ in 0..10 {
        let began = Instant::now();
        results.push(store.renew(namespace, &grant, TTL, wall_ms()));
        took.push(began.elapsed());
    }
    cluster.cont(hung);
    let _ = writeln!(std::io::stderr(), "renewals with member {hung} of 3 stopped took {took:?}");
    for (n, result) in results.into_iter().enumerate() {
        if let Err(e) = result {
            panic!("renewal {n} with a member stopped failed after {:?}: {e}", took[n]);
        }
    }
    assert!(took[0] < timeout + Duration::from_millis(250), "the first renewal took {:?}", took[0]);
    for (n, took) in took.iter().enumerate().skip(1) {
        assert!(*took < timeout, "renewal {n} took {took:?}, the timeout is {timeout:?}");
    }
    store.release(namespace, &grant, wall_ms()).expect("releasing");
}

/// A lease (TTL 4 s) on a three-member cluster keeps issuing while the member its store talks
/// to, a follower, is stopped for twice the TTL: never fenced, no renewal failed, never lost.
#[test]
fn a_lease_keeps_issuing_while_a_member_is_stopped() -> TestResult {
    keeps_issuing_with_a_member_stopped(false)
}

/// The same with the leader stopped: the two others elect another within about a second
/// (election timeout 500 ms), which the TTL minus the margin (3 s) covers; a renewal may
/// fail meanwhile, but the lease is never fenced nor lost.
#[test]
fn a_lease_keeps_issuing_while_the_leader_is_stopped() -> TestResult {
    keeps_issuing_with_a_member_stopped(true)
}

fn keeps_issuing_with_a_member_stopped(leader: bool) -> TestResult {
    let Some((_turn, cluster)) = cluster() else { return Ok(()) };
    let hung = if leader { cluster.agreed_leader() } else { cluster.follower() };
    let store = Arc::new(store(&cluster.url_from(hung)).timeout(Duration::from_millis(500)));
    let ttl = Duration::from_secs(4);
    let lease = WorkerLease::builder_shared(store)
        .namespace(if leader { "hung-leader" } else { "hung-lease" })
        .space(4)
        .ttl(ttl)
        .reservation(ttl)
        .margin(Duration::from_secs(1))
        .renew_every(Duration::from_millis(500))
        .acquire()?;
    let generator = Generator::builder(lease_cluster::Narrow::LAYOUT).lease(lease.clone()).build()?;
    let began = Instant::now();
    let mut last = generator.next_raw()?;
    // Issuing for a second first, then for twice the TTL with the member stopped.
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
                return Err(format!("fenced {after:?} after member {hung} stopped: {e}; {:?}", lease.status()).into());
            }
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    cluster.cont(hung);
    let stats = lease.stats();
    let _ = writeln!(std::io::stderr(), "issued {issued} IDs with member {hung} stopped; {stats:?}");
    assert!(lease.is_valid());
    assert_eq!((stats.late_renewals, stats.recoveries, stats.lost), (0, 0, false), "{stats:?}");
    if !leader {
        assert_eq!(stats.failed_renewals, 0, "{stats:?}");
    }
    assert!(stats.renewals >= 10, "{stats:?}");
    lease.release()?;
    Ok(())
}

/// The scenario of the holder whose wall clock steps back.
const CLOCK_STEP: &str = "clock-step";
const CLOCK_STEP_NAMESPACE: &str = "clock-step";
const CLOCK_STEP_SPACE: u64 = 2;
const CLOCK_STEP_TTL: Duration = Duration::from_secs(4);

/// libfaketime, as Debian's `faketime` installs it.
const LIBFAKETIME: &str = "/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1";

/// A holder in a child process under libfaketime: its wall clock steps back 5 s (an NTP
/// correction; its `MonotonicClock` stays 5 s ahead of the wall), then etcd hangs 6 s, longer
/// than the TTL, so its lease is lost. It must acquire again and issue within one TTL of
/// etcd's return: the store's time is read on the lease's clock, so the step back is not
/// taken for a skew between the store and the host.
#[test]
fn a_wall_clock_stepped_back_does_not_block_recovery() -> TestResult {
    use std::io::BufRead;
    if !std::path::Path::new(LIBFAKETIME).exists() {
        assert!(!servers::under_ci(), "{LIBFAKETIME} is missing; under CI it must be installed (Debian's faketime)");
        let _ = writeln!(std::io::stderr(), "skipped: {LIBFAKETIME} is missing (Debian package faketime)");
        return Ok(());
    }
    let Some(etcd) = servers::PrivateEtcd::start() else { return Ok(()) };
    let url = etcd.url();
    // Every worker ID with a record, as in a namespace in use: a new grant starts at once
    // instead of waiting out a TTL, whichever worker ID it gets.
    let seeding = store(&url);
    let claim = Claim::new(CLOCK_STEP_NAMESPACE, CLOCK_STEP_SPACE, CLOCK_STEP_TTL);
    let grants = (0..CLOCK_STEP_SPACE).map(|_| seeding.acquire(&claim)).collect::<Result<Vec<_>, _>>()?;
    for grant in &grants {
        seeding.release(CLOCK_STEP_NAMESPACE, grant, wall_ms())?;
    }

    let dir = tempfile::tempdir()?;
    let offset = dir.path().join("faketime");
    std::fs::write(&offset, "+0\n")?;
    let stderr = dir.path().join("stderr");
    let mut process = child::command(CLOCK_STEP)
        .env("LD_PRELOAD", LIBFAKETIME)
        .env("FAKETIME_TIMESTAMP_FILE", &offset)
        .env("FAKETIME_NO_CACHE", "1")
        .env("FAKETIME_DONT_FAKE_MONOTONIC", "1")
        .env("LEASE_TEST_URL", &url)
        .stdout(std::process::Stdio::piped())
        .stderr(std::fs::File::create(&stderr)?)
        .spawn()?;
    let stdout = process.stdout.take().ok_or("the child's stdout")?;
    let (lines, heard) = std::sync::mpsc::channel();
    let reader = std::thread::spawn(move || {
        let mut all = Vec::new();
        for line in std::io::BufReader::new(stdout).lines().map_while(Result::ok) {
            let _ = lines.send((line.clone(), Instant::now()));
            all.push(line);
        }
        all
    });
    let wait_for = |what: &str| -> Result<Instant, String> {
        let deadline = Instant::now() + Duration::from_secs(40);
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match heard.recv_timeout(left) {
                Ok((line, at)) if line.contains(what) => return Ok(at),
                Ok(_) => {}
                Err(e) => return Err(format!("the child never said {what:?} ({e})")),
            }
        }
    };
    let outcome = (|| -> TestResult {
        wait_for("issuing")?;
        // The wall clock steps back 5 s; renewals go on meanwhile.
        std::fs::write(&offset, "-5\n")?;
        std::thread::sleep(Duration::from_millis(1500));
        etcd.stop();
        std::thread::sleep(Duration::from_secs(6));
        etcd.cont();
        let back = Instant::now();
        let resumed = wait_for("resumed")?;
        let took = resumed.saturating_duration_since(back);
        let _ = writeln!(std::io::stderr(), "issued again {took:?} after etcd's return");
        if took >= CLOCK_STEP_TTL {
            return Err(format!("issued again {took:?} after etcd's return, the TTL is {CLOCK_STEP_TTL:?}").into());
        }
        Ok(())
    })();
    let status = if outcome.is_err() {
        let _ = process.kill();
        process.wait()?
    } else {
        process.wait()?
    };
    let stdout = reader.join().map_err(|_| "the reader panicked")?.join("\n");
    let stderr = std::fs::read_to_string(&stderr).unwrap_or_default();
    if let Err(e) = outcome {
        return Err(format!("{e}\nchild stdout:\n{stdout}\nchild stderr:\n{stderr}").into());
    }
    let _ = writeln!(std::io::stderr(), "the child said:\n{stdout}");
    assert!(status.success(), "the child failed ({status}):\n{stdout}\n{stderr}");
    assert!(stdout.contains(&format!("scenario {CLOCK_STEP} done")), "{stdout}\n{stderr}");
    Ok(())
}

/// The child of [`a_wall_clock_stepped_back_does_not_block_recovery`]: a lease with the
/// default clock (`MonotonicClock`) and a generator; it says `issuing`, then issues until it
/// is fenced, and says `resumed` when it issues again, above every ID before.
fn clock_step_child() -> TestResult {
    let url = std::env::var("LEASE_TEST_URL")?;
    let store = Arc::new(store(&url).timeout(Duration::from_millis(500)));
    let lease = WorkerLease::builder_shared(store)
        .namespace(CLOCK_STEP_NAMESPACE)
        .space(CLOCK_STEP_SPACE)
        .ttl(CLOCK_STEP_TTL)
        .reservation(CLOCK_STEP_TTL)
        .margin(Duration::from_secs(1))
        .renew_every(Duration::from_millis(500))
        .acquire()?;
    let generator = Generator::builder(lease_cluster::Narrow::LAYOUT).lease(lease.clone()).build()?;
    let mut last = generator.next_raw()?;
    println!("issuing on worker {}", lease.stats().worker);
    let began = Instant::now();
    let deadline = began + Duration::from_secs(40);
    let mut fenced = false;
    // Each change of the lease's state, for the parent's message when it fails.
    let mut state = String::new();
    loop {
        let status = lease.status();
        let now = format!("{:?}", std::mem::discriminant(&status));
        if now != state {
            println!("{:?}: {status:?}", began.elapsed());
            state = now;
        }
        match generator.next_raw() {
            Ok(id) if fenced => {
                assert!(id > last, "{id} after {last}");
                // The wall clock did step back, and the lease, expired meanwhile, was renewed
                // again (its worker ID was still its own) or acquired again.
                let ahead = MonotonicClock.now_ms() - wall_ms();
                let stats = lease.stats();
                println!("resumed on worker {}, the clock {ahead} ms ahead of the wall: {stats:?}", stats.worker);
                assert!(ahead >= 4_000, "the wall clock did not step back: the clock is {ahead} ms ahead of it");
                assert!(stats.recoveries + stats.late_renewals >= 1, "{stats:?}");
                break;
            }
            Ok(id) => last = id,
            Err(_) => fenced = true,
        }
        if Instant::now() >= deadline {
            return Err(format!("never issued again: {:?}", lease.status()).into());
        }
        std::thread::sleep(Duration::from_millis(2));
    }
    let _ = lease.release();
    child::done(CLOCK_STEP);
    Ok(())
}
