//! The Redis lease store under the faults Redis has, on private `redis-server`s with holders in
//! child processes issuing as fast as they can: one worker ID's key deleted with the marker
//! kept, the marker deleted alone, a restart from an older RDB snapshot, a `maxmemory` with
//! `allkeys-lru` evicting the leases' keys, and an outage shorter than the reservation less
//! the margin. Every ID of every holder is counted: no ID may be issued twice, and each worker
//! ID's holders must follow one another. The rules the holders follow are on
//! `docs/lease-rules.md`; figures are printed to stderr, also for passing tests.

use crate::faults;
use crate::planted::{Bug, Planted};
use crate::servers;

use std::net::TcpStream;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use faults::{
    HOLDER_LAYOUT, HolderRun, HolderSpec, Holders, check_workers, count_duplicates, describe_runs, report, segments_of,
    unique, wall_ms,
};
use typed_snowflake::worker::lease::admin::create_namespace;
use typed_snowflake::worker::lease::store::Query;
use typed_snowflake::worker::lease::{LeaseStore, RedisLeaseStore};

type TestResult = Result<(), Box<dyn std::error::Error>>;

const TTL: Duration = Duration::from_secs(2);
const MARGIN: Duration = Duration::from_millis(500);
/// The reservation `W`: how long a holder issues without its store.
const RESERVATION: Duration = Duration::from_secs(4);

/// One test with child processes at a time: their timings mean little on a starved machine.
static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// The child processes' entry point (holders); ignored in the parent (the other tests run it),
/// and does nothing there.
#[test]
#[ignore = "the entry point of the child processes: the other tests run it"]
fn child() -> TestResult {
    faults::child_main()
}

/// A `redis-server` of the test's own on a free loopback port, with a directory of its own for
/// its RDB file; killed when dropped.
struct Server {
    child: Option<Child>,
    port: u16,
    dir: tempfile::TempDir,
    extra: Vec<String>,
}

impl Server {
    /// `None` when `redis-server` cannot be started (which fails under CI).
    fn start(extra: &[&str]) -> Option<Server> {
        let port = std::net::TcpListener::bind("127.0.0.1:0").and_then(|l| l.local_addr()).expect("a port").port();
        let dir = tempfile::tempdir().expect("a temporary directory");
        let mut server = Server { child: None, port, dir, extra: extra.iter().map(|s| (*s).to_owned()).collect() };
        match server.spawn() {
            Ok(()) => Some(server),
            Err(e) => {
                assert!(!servers::under_ci(), "redis-server could not be started: {e}");
                report(&format!("SKIPPED: redis-server could not be started: {e}"));
                None
            }
        }
    }

    /// Starts the server on its port and directory (loading `dump.rdb` if there is one).
    fn spawn(&mut self) -> std::io::Result<()> {
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let (port, dir) = (self.port.to_string(), self.dir.path().display().to_string());
            let mut args =
                vec!["--port", &port, "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", &dir];
            args.extend(self.extra.iter().map(String::as_str));
            let mut child =
                Command::new("redis-server").args(&args).stdout(Stdio::null()).stderr(Stdio::null()).spawn()?;
            loop {
                if TcpStream::connect(("127.0.0.1", self.port)).is_ok() {
                    self.child = Some(child);
                    return Ok(());
                }
                if child.try_wait()?.is_some() || Instant::now() >= deadline {
                    let _ = child.kill();
                    let _ = child.wait();
                    break;
                }
                std::thread::sleep(Duration::from_millis(10));
            }
            assert!(Instant::now() < deadline, "redis-server did not listen on port {}", self.port);
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    fn url(&self) -> String {
        format!("redis://127.0.0.1:{}", self.port)
    }

    fn connection(&self) -> redis::Connection {
        redis::Client::open(self.url()).and_then(|c| c.get_connection()).expect("connecting")
    }

    fn signal(&self, signal: &str) {
        let pid = self.child.as_ref().expect("the server runs").id().to_string();
        let status = Command::new("kill").args([signal, &pid]).status().expect("running kill");
        assert!(status.success(), "kill {signal} failed");
    }

    fn kill9(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    fn rdb(&self) -> PathBuf {
        self.dir.path().join("dump.rdb")
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        if let Some(child) = &self.child {
            let _ = Command::new("kill").args(["-CONT", &child.id().to_string()]).status();
        }
        self.kill9();
    }
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

/// What a run of holders through a fault gave.
struct Outcome {
    runs: Vec<HolderRun>,
    ids: usize,
    duplicates: usize,
    findings: Vec<String>,
    /// IDs stamped after the fault began.
    issued_after: usize,
}

/// Two holders on a space of 2 in a namespace declared new issue; `fault` hurts the store; a
/// third process starts at once and competes for the two worker IDs; all issue for `after`
/// more. Reports the figures.
fn through(
    label: &str,
    url: &str,
    after: Duration,
    fault: impl FnOnce(&str) -> TestResult,
) -> Result<(Outcome, i64), Box<dyn std::error::Error>> {
    let namespace = unique(&label.replace(' ', "-"));
    create_namespace(&RedisLeaseStore::open(url)?, &namespace)?;
    let spec = spec(url, &namespace);
    let mut holders = Holders::new(Duration::from_secs(90))?;
    holders.spawn_holder("a", &spec)?;
    holders.spawn_holder("b", &spec)?;
    if !holders.wait_for(Duration::from_secs(20), |h| h.count_issuing_since(0) == 2) {
        return Err(format!("{label}: the two holders never both issued:\n{}", holders.describe()).into());
    }
    std::thread::sleep(Duration::from_millis(500));
    let fault_ms = wall_ms();
    fault(&namespace)?;
    holders.spawn_holder("c", &spec)?;
    std::thread::sleep(after);
    let runs = holders.finish()?;
    let (ids, duplicates) = count_duplicates(runs.iter().map(|r| r.ids.as_slice()));
    let findings = check_workers(&segments_of(&runs, &HOLDER_LAYOUT));
    let issued_after =
        runs.iter().flat_map(|r| r.ids.iter()).filter(|&&id| HOLDER_LAYOUT.timestamp_ms_of(id) > fault_ms).count();
    let per_holder: Vec<String> = runs.iter().map(|r| format!("{} {}", r.name, r.ids.len())).collect();
    report(&format!(
        "redis, {label}: {ids} IDs ({}), {duplicates} duplicates, {issued_after} IDs stamped after the fault{}",
        per_holder.join(", "),
        if findings.is_empty() { String::new() } else { format!("; {}", findings.join("; ")) }
    ));
    Ok((Outcome { runs, ids, duplicates, findings, issued_after }, fault_ms))
}

/// No duplicate, no two holders on one worker ID at once, and IDs issued after the fault.
fn assert_unique(label: &str, outcome: &Outcome) {
    let mut failures = Vec::new();
    if outcome.duplicates > 0 {
        failures.push(format!("{} duplicate IDs of {}", outcome.duplicates, outcome.ids));
    }
    failures.extend(outcome.findings.iter().cloned());
    if outcome.issued_after == 0 {
        failures.push("no ID issued after the fault: the run proves nothing".to_owned());
    }
    assert!(failures.is_empty(), "{label}: {}\n{}", failures.join("; "), describe_runs(&outcome.runs));
}

/// How long the holders run after a fault that loses a record: a worker ID granted before
/// whose record is gone waits out `W` and the clock tolerance, then a little more.
const AFTER_LOSS: Duration = Duration::from_millis(7_000);

fn del(server: &Server, key: &str) -> TestResult {
    let deleted: i64 = redis::cmd("DEL").arg(key).query(&mut server.connection())?;
    if deleted != 1 {
        return Err(format!("no key {key} to delete").into());
    }
    Ok(())
}

/// `DEL snowflake:{<ns>}:worker:0` while its holder runs, the marker kept.
#[test]
fn a_worker_key_deleted_gives_no_duplicate() -> TestResult {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    let Some(server) = Server::start(&[]) else { return Ok(()) };
    let label = "worker key deleted";
    let (outcome, _) =
        through(label, &server.url(), AFTER_LOSS, |ns| del(&server, &format!("snowflake:{{{ns}}}:worker:0")))?;
    assert_unique(label, &outcome);
    Ok(())
}

/// `DEL snowflake:{<ns>}:marker` alone while the holders run.
#[test]
fn the_marker_deleted_alone_gives_no_duplicate() -> TestResult {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    let Some(server) = Server::start(&[]) else { return Ok(()) };
    let label = "marker deleted";
    let (outcome, _) =
        through(label, &server.url(), AFTER_LOSS, |ns| del(&server, &format!("snowflake:{{{ns}}}:marker")))?;
    assert_unique(label, &outcome);
    Ok(())
}

/// The server killed and started again from an RDB snapshot taken 1.5 s earlier: every record
/// rolled back, the marker with them. The incarnation changes (a new `run_id`), so nothing
/// written before is trusted; a store with `incarnation-constant` planted in front of it
/// does not see the restart.
#[test]
fn a_restart_from_an_older_rdb_gives_no_duplicate() -> TestResult {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    let Some(mut server) = Server::start(&[]) else { return Ok(()) };
    let label = "restart from an older RDB";
    let url = server.url();
    let store = RedisLeaseStore::open(&url)?;
    let constant = Planted::new(Arc::new(RedisLeaseStore::open(&url)?), Bug::IncarnationConstant);
    let incarnation = |store: &dyn LeaseStore| -> Result<String, Box<dyn std::error::Error>> {
        let mut last = None;
        // The server may be starting again: a few tries.
        for _ in 0..50 {
            match store.read("probe", &Query::workers(0..1)) {
                Ok(read) => return Ok(read.incarnation),
                Err(e) => last = Some(e),
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        Err(last.map_or_else(|| "no read".into(), |e| e.to_string().into()))
    };
    let before = incarnation(&store)?;
    let constant_before = incarnation(&constant)?;
    let old = server.dir.path().join("old.rdb");
    let (outcome, _) = through(label, &url, AFTER_LOSS, |ns| {
        // A renewal may land between the `SAVE` and a read of the record: the record read
        // before and after the `SAVE` must agree to be the one the snapshot holds.
        let worker0 = format!("snowflake:{{{ns}}}:worker:0");
        // A key of the test's own shows the snapshot loaded: the holders may write worker 0's
        // record again as soon as the server answers, before the test reads it.
        let probe = format!("snapshot-probe:{ns}");
        let () = redis::cmd("SET").arg(&probe).arg("in the snapshot").query(&mut server.connection())?;
        let mut at_snapshot = None;
        for _ in 0..20 {
            let before: Option<String> = redis::cmd("GET").arg(&worker0).query(&mut server.connection())?;
            let () = redis::cmd("SAVE").query(&mut server.connection())?;
            let after: Option<String> = redis::cmd("GET").arg(&worker0).query(&mut server.connection())?;
            if before == after {
                at_snapshot = Some(after);
                break;
            }
        }
        let Some(at_snapshot) = at_snapshot else {
            return Err("worker 0's record changed across every one of 20 snapshots".into());
        };
        std::fs::copy(server.rdb(), &old)?;
        let () = redis::cmd("SET").arg(&probe).arg("after the snapshot").query(&mut server.connection())?;
        // The holders renew on: their records move past the snapshot.
        std::thread::sleep(Duration::from_millis(1_500));
        let later: Option<String> = redis::cmd("GET").arg(&worker0).query(&mut server.connection())?;
        if at_snapshot == later {
            return Err(format!("worker 0's record did not change after the snapshot: {later:?}").into());
        }
        server.kill9();
        std::fs::copy(&old, server.rdb())?;
        server.spawn()?;
        let restored: Option<String> = redis::cmd("GET").arg(&probe).query(&mut server.connection())?;
        if restored.as_deref() != Some("in the snapshot") {
            return Err(format!("the snapshot was not loaded: the probe key reads {restored:?}").into());
        }
        Ok(())
    })?;
    let after = incarnation(&store)?;
    report(&format!("redis, {label}: incarnation {before} -> {after}"));
    assert_ne!(before, after, "a restart changes the incarnation");
    let constant_after = incarnation(&constant)?;
    assert_eq!(constant_before, constant_after, "incarnation-constant planted: the restart goes unseen");
    report(&format!("redis, {label}: planted incarnation-constant: {constant_before} -> {constant_after}, unseen"));
    assert_unique(label, &outcome);
    Ok(())
}

/// `maxmemory` 3 MB with `allkeys-lru` (and `maxmemory-samples 1`, so that the keys Redis
/// evicts are near random, the leases' hot keys among them) while the parent fills the memory
/// with keys of its own: the leases' keys are evicted while the holders run. The store warns
/// of the policy; no ID is issued twice.
#[test]
fn eviction_under_allkeys_lru_gives_no_duplicate() -> TestResult {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    let Some(server) =
        Server::start(&["--maxmemory", "3mb", "--maxmemory-policy", "allkeys-lru", "--maxmemory-samples", "1"])
    else {
        return Ok(());
    };
    let label = "allkeys-lru eviction";
    let url = server.url();
    let warnings = RedisLeaseStore::open(&url)?.warnings()?;
    report(&format!("redis, {label}: warnings {warnings:?}"));
    assert!(warnings.len() == 1 && warnings[0].contains("allkeys-lru"), "{warnings:?}");
    let stop = Arc::new(AtomicBool::new(false));
    let lease_keys_lost = Arc::new(AtomicU64::new(0));
    let mut threads = Vec::new();
    let (outcome, _) = through(label, &url, AFTER_LOSS + Duration::from_secs(3), |ns| {
        // Fills the memory: a key of 20 kB every 40 ms, evicting about 25 keys a second.
        let (filler_stop, mut filler) = (Arc::clone(&stop), server.connection());
        threads.push(std::thread::spawn(move || {
            let value = "x".repeat(20_000);
            let mut n = 0u64;
            while !filler_stop.load(Ordering::Relaxed) {
                let _: Result<(), _> = redis::cmd("SET").arg(format!("filler:{n}")).arg(&value).query(&mut filler);
                n += 1;
                std::thread::sleep(Duration::from_millis(40));
            }
        }));
        // Watches the leases' keys: how often one that was there is gone.
        let (watch_stop, lost, mut watch) = (Arc::clone(&stop), Arc::clone(&lease_keys_lost), server.connection());
        let keys: Vec<String> = ["marker", "worker:0", "worker:1", "workers"]
            .iter()
            .map(|kind| format!("snowflake:{{{ns}}}:{kind}"))
            .collect();
        threads.push(std::thread::spawn(move || {
            let mut present = vec![true; keys.len()];
            while !watch_stop.load(Ordering::Relaxed) {
                for (key, was) in keys.iter().zip(present.iter_mut()) {
                    // `TYPE` does not touch the key's LRU clock, as `EXISTS` would not either.
                    let kind: String = redis::cmd("TYPE").arg(key).query(&mut watch).unwrap_or_default();
                    let is = kind != "none";
                    if *was && !is {
                        lost.fetch_add(1, Ordering::Relaxed);
                    }
                    *was = is;
                }
                std::thread::sleep(Duration::from_millis(10));
            }
        }));
        Ok(())
    })?;
    stop.store(true, Ordering::Relaxed);
    for thread in threads {
        let _ = thread.join();
    }
    let info: String = redis::cmd("INFO").arg("stats").query(&mut server.connection())?;
    let evicted = info.lines().find_map(|l| l.strip_prefix("evicted_keys:")).unwrap_or("?").trim().to_owned();
    let lost = lease_keys_lost.load(Ordering::Relaxed);
    report(&format!("redis, {label}: {evicted} keys evicted, the leases' keys seen gone {lost} times"));
    assert!(lost > 0, "no lease key was evicted: the test proves nothing");
    assert_unique(label, &outcome);
    Ok(())
}

/// The server paused (`SIGSTOP`) for 2.5 s, longer than the TTL and shorter than the
/// reservation less the margin (3.5 s): no holder stops issuing.
#[test]
fn an_outage_shorter_than_the_reservation_stops_no_holder() -> TestResult {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    let Some(server) = Server::start(&[]) else { return Ok(()) };
    let label = "paused 2.5 s";
    let outage = Duration::from_millis(2_500);
    assert!(outage < RESERVATION - MARGIN && outage > TTL);
    let (outcome, fault_ms) = through(label, &server.url(), Duration::from_secs(3), |_| {
        server.signal("-STOP");
        std::thread::sleep(outage);
        server.signal("-CONT");
        Ok(())
    })?;
    for run in outcome.runs.iter().filter(|r| r.name != "c") {
        if let Some(stop) = run.stop_after(fault_ms) {
            panic!(
                "{label}: holder {} stopped {} ms after the pause began\n{}",
                run.name,
                stop.at_ms - fault_ms,
                describe_runs(&outcome.runs)
            );
        }
    }
    let during =
        outcome.runs.iter().map(|r| r.stamped_within(&HOLDER_LAYOUT, fault_ms + 200, fault_ms + 2_300)).sum::<usize>();
    report(&format!("redis, {label}: {during} IDs stamped while the server was paused"));
    assert!(during > 0, "no ID issued while the server was paused");
    assert_unique(label, &outcome);
    Ok(())
}
