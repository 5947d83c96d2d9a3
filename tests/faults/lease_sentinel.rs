//! Leases through Redis Sentinel, with real processes on private loopback ports: one master,
//! two replicas, three sentinels. The master is killed (`SIGKILL`) while holders issue; after
//! the failover every holder issues again, with 0 duplicate IDs overall. The master is frozen
//! (`SIGSTOP`), alone or with a holder, until the sentinels replace it, then continued: it
//! still says it is the master, but no replica acknowledges its writes any more, so nothing
//! it answers counts, and no ID is issued twice. A replica promoted with only a prefix of its
//! master's writes is a new incarnation of the store: the holders trust no record written
//! before it (`docs/lease-rules.md`), and no ID is issued twice.
//!
//! Two replicas, so that a failover leaves the new master a replica (the other one) and the
//! store's default `min_replicas=1` lets holders lease again without waiting for the old
//! master to come back; the master and one replica are a majority of the three servers.

use crate::conformance::{Faults, Subject, run_all};
use crate::faults;
use crate::servers;

use std::net::TcpStream;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

use faults::{
    HOLDER_LAYOUT, HolderRun, HolderSpec, Holders, check_workers, count_duplicates, segments_of, unique, wall_ms,
};
use typed_snowflake::Layout;
use typed_snowflake::worker::lease::store::{Query, Slot};
use typed_snowflake::worker::lease::{LeaseStore, RedisLeaseStore};

type TestResult = Result<(), Box<dyn std::error::Error>>;

const TTL: Duration = Duration::from_secs(2);
const MARGIN: Duration = Duration::from_millis(500);
const MASTER_NAME: &str = "snowflake-test";

/// `faults::RegistryId`'s layout, to read the registry process's IDs.
const REGISTRY_LAYOUT: Layout = match Layout::new(41, 5, 6, 1_704_067_200_000) {
    Ok(layout) => layout,
    Err(_) => panic!("a valid layout"),
};

/// One deployment at a time: each runs six servers and three busy child processes on a small
/// machine, and the sentinels' 500 ms failure detection must not take a starved master for a
/// dead one.
static ONE_DEPLOYMENT: Mutex<()> = Mutex::new(());

/// The child processes' entry point (holders); ignored in the parent (the other tests run it),
/// and does nothing there.
#[test]
#[ignore = "the entry point of the child processes: the other tests run it"]
fn child() -> TestResult {
    faults::child_main()
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").and_then(|l| l.local_addr()).expect("a free port").port()
}

/// A `redis-server` (or sentinel) process, killed when dropped, with a directory of its own
/// (a master writes its data there to sync a replica).
struct Process {
    child: Option<Child>,
    port: u16,
    _dir: Option<tempfile::TempDir>,
}

impl Process {
    /// `redis-server` with `args`, listening on `port` within 10 s, or `None` (which fails
    /// under CI).
    fn start(port: u16, args: &[&str]) -> Option<Process> {
        let child = Command::new("redis-server").args(args).stdout(Stdio::null()).stderr(Stdio::null()).spawn();
        let mut child = match child {
            Ok(child) => child,
            Err(e) => {
                assert!(!servers::under_ci(), "redis-server could not be started: {e}");
                eprintln!("SKIPPED: redis-server could not be started: {e}");
                return None;
            }
        };
        let deadline = Instant::now() + Duration::from_secs(10);
        while TcpStream::connect(("127.0.0.1", port)).is_err() {
            let exited = child.try_wait().ok().flatten();
            assert!(exited.is_none() && Instant::now() < deadline, "redis-server {args:?} did not listen: {exited:?}");
            std::thread::sleep(Duration::from_millis(10));
        }
        Some(Process { child: Some(child), port, _dir: None })
    }

    fn redis(port: u16, extra: &[&str]) -> Option<Process> {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let (port_text, dir_text) = (port.to_string(), dir.path().display().to_string());
        let mut args =
            vec!["--port", &port_text, "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", &dir_text];
        args.extend_from_slice(extra);
        let mut process = Process::start(port, &args)?;
        process._dir = Some(dir);
        Some(process)
    }

    fn kill9(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// Freezes the process (`SIGSTOP`), as a stalled VM or a debugger would.
    fn stop(&self) {
        signal("STOP", self.child.as_ref().expect("a running process").id());
    }

    /// Lets a frozen process run again (`SIGCONT`).
    fn cont(&self) {
        signal("CONT", self.child.as_ref().expect("a running process").id());
    }

    fn connection(&self) -> redis::Connection {
        redis::Client::open(format!("redis://127.0.0.1:{}", self.port))
            .and_then(|client| client.get_connection())
            .expect("connecting to a private redis-server")
    }
}

impl Drop for Process {
    fn drop(&mut self) {
        self.kill9();
    }
}

/// Sends `SIGSTOP`, `SIGCONT`… to `pid` with kill(1).
fn signal(name: &str, pid: u32) {
    let status = Command::new("kill").arg(format!("-{name}")).arg(pid.to_string()).status().expect("running kill");
    assert!(status.success(), "kill -{name} {pid}: {status}");
}

/// The pid of this process's holder child named `name` in `namespace` (read from /proc: the
/// child's parent and environment).
fn holder_pid(name: &str, namespace: &str) -> u32 {
    let me = std::process::id();
    let wanted = [format!("FAULTS_NAME={name}"), format!("FAULTS_NAMESPACE={namespace}")];
    for entry in std::fs::read_dir("/proc").expect("/proc").flatten() {
        let Some(pid) = entry.file_name().to_str().and_then(|name| name.parse::<u32>().ok()) else { continue };
        let stat = std::fs::read_to_string(entry.path().join("stat")).unwrap_or_default();
        // `pid (comm) state ppid …`: the command name may hold spaces and parentheses.
        let parent = stat.rsplit_once(')').and_then(|(_, rest)| rest.split_whitespace().nth(1)?.parse::<u32>().ok());
        if parent != Some(me) {
            continue;
        }
        let environ = std::fs::read(entry.path().join("environ")).unwrap_or_default();
        let vars: Vec<&[u8]> = environ.split(|&b| b == 0).collect();
        if wanted.iter().all(|w| vars.contains(&w.as_bytes())) {
            return pid;
        }
    }
    panic!("no holder process {name} in namespace {namespace}");
}

/// Whether the process's last run of IDs began at or after `since_ms` and it has not
/// stopped since: it is issuing now, on a lease taken or renewed after `since_ms`.
fn issuing_since(holders: &Holders, name: &str, since_ms: i64) -> bool {
    let events = holders.events(name);
    let last = events.iter().rev().find(|e| e.begins_run() || e.kind == "stopped");
    last.is_some_and(|e| e.begins_run() && e.at_ms >= since_ms)
}

/// Waits until `check` holds, for up to `within`.
fn wait_until(within: Duration, what: &str, mut check: impl FnMut() -> bool) {
    let deadline = Instant::now() + within;
    while !check() {
        assert!(Instant::now() < deadline, "{what}: not within {within:?}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Whether the replica at `replica` has caught up with its master.
fn in_sync(replica: &Process) -> bool {
    let info: String = redis::cmd("INFO").arg("replication").query(&mut replica.connection()).unwrap_or_default();
    info.contains("master_link_status:up")
}

/// A sentinel's configuration file (a sentinel rewrites it, so each has its own).
fn sentinel_config(dir: &Path, port: u16, master_port: u16) -> String {
    let path = dir.join(format!("sentinel-{port}.conf"));
    std::fs::write(
        &path,
        format!(
            "port {port}\nbind 127.0.0.1\ndir {dir}\nsentinel monitor {MASTER_NAME} 127.0.0.1 {master_port} 2\n\
             sentinel down-after-milliseconds {MASTER_NAME} 500\nsentinel failover-timeout {MASTER_NAME} 5000\n\
             sentinel parallel-syncs {MASTER_NAME} 1\n",
            dir = dir.display()
        ),
    )
    .expect("writing a sentinel's configuration");
    path.display().to_string()
}

/// A master, its two replicas and three sentinels watching them.
struct Deployment {
    master: Process,
    replicas: Vec<Process>,
    sentinels: Vec<Process>,
    _dir: tempfile::TempDir,
}

impl Deployment {
    fn start() -> Option<Deployment> {
        Deployment::with_replicas(&[&[], &[]])
    }

    /// A master, a replica started with each of `replicas_args`' extra arguments, three
    /// sentinels.
    fn with_replicas(replicas_args: &[&[&str]]) -> Option<Deployment> {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let master = Process::redis(free_port(), &[])?;
        let master_port = master.port.to_string();
        let mut replicas = Vec::new();
        for extra in replicas_args {
            let mut args = vec!["--replicaof", "127.0.0.1", &master_port];
            args.extend_from_slice(extra);
            let replica = Process::redis(free_port(), &args)?;
            wait_until(Duration::from_secs(10), "the replica syncs", || in_sync(&replica));
            replicas.push(replica);
        }
        let mut sentinels = Vec::new();
        for _ in 0..3 {
            let port = free_port();
            let config = sentinel_config(dir.path(), port, master.port);
            sentinels.push(Process::start(port, &[&config, "--sentinel"])?);
        }
        // Every sentinel knows the replicas (learned from the master's INFO) and the others.
        for sentinel in &sentinels {
            wait_until(Duration::from_secs(20), "a sentinel sees the replicas and its peers", || {
                let mut c = sentinel.connection();
                let replicas: Vec<redis::Value> =
                    redis::cmd("SENTINEL").arg("replicas").arg(MASTER_NAME).query(&mut c).unwrap_or_default();
                let peers: Vec<redis::Value> =
                    redis::cmd("SENTINEL").arg("sentinels").arg(MASTER_NAME).query(&mut c).unwrap_or_default();
                replicas.len() == replicas_args.len() && peers.len() == 2
            });
        }
        Some(Deployment { master, replicas, sentinels, _dir: dir })
    }

    /// Whether the first sentinel names one of the replicas as the master: it promoted one.
    fn promoted(&self) -> bool {
        self.master_port().is_some_and(|port| self.replicas.iter().any(|replica| replica.port == port))
    }

    fn url(&self) -> String {
        let hosts: Vec<String> = self.sentinels.iter().map(|s| format!("127.0.0.1:{}", s.port)).collect();
        format!("redis+sentinel://{}/{MASTER_NAME}", hosts.join(","))
    }

    /// The master's port as the first sentinel names it.
    fn master_port(&self) -> Option<u16> {
        let mut c = self.sentinels[0].connection();
        let address: Option<(String, u16)> =
            redis::cmd("SENTINEL").arg("get-master-addr-by-name").arg(MASTER_NAME).query(&mut c).ok()?;
        address.map(|(_, port)| port)
    }
}

/// Holders issue through `redis+sentinel://` (two lease holders, and a process configured
/// only by `SNOWFLAKE_WORKER_LEASE`); the master is killed; the sentinels promote the replica;
/// every holder issues again, and no ID is issued twice.
#[test]
fn a_failover_under_load_issues_no_duplicate_and_recovers() -> TestResult {
    let _one = ONE_DEPLOYMENT.lock().unwrap_or_else(PoisonError::into_inner);
    let Some(mut deployment) = Deployment::start() else { return Ok(()) };
    let url = deployment.url();
    let store = RedisLeaseStore::open(&url)?;
    assert!(store.describe().starts_with("redis+sentinel://127.0.0.1:"), "{}", store.describe());
    assert!(store.read("probe", &Query::workers(0..1)).is_ok(), "the master is reached through the sentinels");
    // The store contract, through the sentinels, each call acknowledged by a replica.
    let open =
        || std::sync::Arc::new(RedisLeaseStore::open(&url).expect("a sentinel URL")) as std::sync::Arc<dyn LeaseStore>;
    let faults = Del { master: &deployment.master };
    let subject =
        Subject { name: "redis+sentinel", open: &open, faults: &faults, prefix: unique("suite"), has_clock: true };
    run_all(&subject).unwrap_or_else(|failures| panic!("{failures}"));

    let namespace = unique("sentinel");
    let spec = HolderSpec {
        url: url.clone(),
        namespace: namespace.clone(),
        space: 2,
        ttl: TTL,
        margin: MARGIN,
        reservation: None,
    };
    let mut holders = Holders::new(Duration::from_secs(120))?;
    holders.spawn_holder("a", &spec)?;
    holders.spawn_holder("b", &spec)?;
    holders.spawn_registry("registry", &url, &format!("{namespace}-registry"))?;
    let first = TTL * 3 + Duration::from_secs(10);
    assert!(
        holders.wait_for(first, |h| h.count_issuing_since(0) == 3),
        "the holders never all issued:\n{}",
        holders.describe()
    );
    std::thread::sleep(Duration::from_millis(500));

    let old_port = deployment.master.port;
    let killed_ms = wall_ms();
    deployment.master.kill9();
    wait_until(Duration::from_secs(30), "the sentinels promote a replica", || deployment.promoted());
    let promoted_ms = wall_ms();
    eprintln!("failover: master on port {old_port} killed, replica promoted {} ms later", promoted_ms - killed_ms);
    // The holders (TTL 2 s) stop while there is no master, and issue again on the new one
    // (which their store may find through the sentinels before this test sees it).
    let recovered = holders.wait_for(TTL * 4 + Duration::from_secs(10), |h| {
        h.resumed_after_stopping_since("a", killed_ms) && h.resumed_after_stopping_since("b", killed_ms)
    });
    // The registry's lease (TTL and `W` 10 s, fenced 8 s after its last renewal) finds the
    // new master another incarnation at its first renewal there: the writes the old one lost
    // may have given its worker ID to another holder, so it issues on what it reserved while
    // it acquires again, and on a new grant once `W` and the tolerance (1 s) have passed. IDs
    // stamped more than `W` after the kill lie beyond any reservation made before it.
    let renewed_by = killed_ms + 10_500;
    holders.wait_for(Duration::from_secs(30), |h| h.resumed_after_stopping_since("registry", killed_ms));
    while wall_ms() < renewed_by + 300 {
        std::thread::sleep(Duration::from_millis(50));
    }
    let description = holders.describe();
    let runs = holders.finish()?;
    assert!(recovered, "not every holder issued again after the failover:\n{description}");
    // The two holders share a namespace and a layout; the registry process has its own.
    let (holders_runs, registry_runs): (Vec<_>, Vec<_>) = runs.iter().partition(|run| run.name != "registry");
    let (ids, duplicates) = count_duplicates(holders_runs.iter().map(|run| run.ids.as_slice()));
    let (registry_ids, registry_duplicates) = count_duplicates(registry_runs.iter().map(|run| run.ids.as_slice()));
    eprintln!("failover under load: {ids} + {registry_ids} IDs, {duplicates} + {registry_duplicates} duplicates");
    for run in &runs {
        if let Some(event) = run.resumed_after(killed_ms) {
            eprintln!("{}: issuing again {} ms after the kill", run.name, event.at_ms - killed_ms);
        }
    }
    assert_eq!((duplicates, registry_duplicates), (0, 0), "{description}");
    let segments: Vec<_> =
        holders_runs.iter().enumerate().flat_map(|(holder, run)| run.segments(holder, &HOLDER_LAYOUT)).collect();
    let findings = check_workers(&segments);
    assert!(findings.is_empty(), "{}\n{description}", findings.join("\n"));
    assert!(ids > 1000 && registry_ids > 0, "{ids} + {registry_ids} IDs");
    let registry_after: usize =
        registry_runs.iter().map(|run| run.stamped_within(&REGISTRY_LAYOUT, renewed_by, i64::MAX)).sum();
    assert!(
        registry_after > 0,
        "the registry process issued nothing on a grant taken after the failover:\n{description}"
    );
    Ok(())
}

/// The master is frozen (`SIGSTOP`) while the holders A and B hold the two worker IDs of a
/// 1-bit space and C waits for one, until the sentinels promote a replica, then continued
/// (`SIGCONT`): it wakes up still saying it is the master, with its replication ID, and the
/// connections that waited on it get their answers. With A frozen too, A wakes up on the old
/// master after C took its worker ID on the new one. Nothing the old master grants or renews
/// counts (no replica acknowledges it): 0 duplicate IDs, every worker ID's holders one after
/// the other, and within 25 s of the continuation both worker IDs issue again on leases taken
/// or renewed after the freeze.
fn freeze_the_master(label: &str, with_holder_a: bool) -> TestResult {
    let _one = ONE_DEPLOYMENT.lock().unwrap_or_else(PoisonError::into_inner);
    let Some(deployment) = Deployment::start() else { return Ok(()) };
    let namespace = unique(label);
    let spec = HolderSpec {
        url: deployment.url(),
        namespace: namespace.clone(),
        space: 2,
        ttl: TTL,
        margin: MARGIN,
        reservation: None,
    };
    let mut holders = Holders::new(Duration::from_secs(120))?;
    holders.spawn_holder("a", &spec)?;
    holders.spawn_holder("b", &spec)?;
    let first = TTL * 3 + Duration::from_secs(10);
    assert!(
        holders.wait_for(first, |h| h.count_issuing_since(0) == 2),
        "A and B never both issued:\n{}",
        holders.describe()
    );
    holders.spawn_holder("c", &spec)?;
    // C finds both worker IDs taken and asks again and again.
    std::thread::sleep(Duration::from_millis(1000));
    let a_pid = holder_pid("a", &namespace);

    let frozen_ms = wall_ms();
    deployment.master.stop();
    if with_holder_a {
        signal("STOP", a_pid);
    }
    wait_until(Duration::from_secs(30), "the sentinels promote a replica", || deployment.promoted());
    let promoted_ms = wall_ms();
    if with_holder_a {
        // Until A's lease expired on the new master and C took it there (its grant waits a TTL:
        // the new master vouches for no high water), or 12 s.
        holders.wait_for(Duration::from_secs(12), |h| h.issues_since("c", frozen_ms));
    }
    deployment.master.cont();
    if with_holder_a {
        signal("CONT", a_pid);
    }
    let continued_ms = wall_ms();
    eprintln!(
        "{label}: replica promoted {} ms after the freeze, master continued {} ms after it",
        promoted_ms - frozen_ms,
        continued_ms - frozen_ms
    );
    let recovery = Duration::from_secs(25);
    let recovered = holders
        .wait_for(recovery, |h| ["a", "b", "c"].iter().filter(|name| issuing_since(h, name, frozen_ms)).count() >= 2);
    let recovered_ms = wall_ms();
    // Time for a holder that the old master still serves to issue what the new one granted.
    while wall_ms() < recovered_ms.max(continued_ms + 4_000) + 1_000 {
        std::thread::sleep(Duration::from_millis(50));
    }
    let description = holders.describe();
    let runs = holders.finish()?;
    let (ids, duplicates) = count_duplicates(runs.iter().map(|run| run.ids.as_slice()));
    eprintln!("{label}: {ids} IDs, {duplicates} duplicates");
    report_runs(&runs, frozen_ms, continued_ms);
    assert_eq!(duplicates, 0, "{description}");
    let findings = check_workers(&segments_of(&runs, &HOLDER_LAYOUT));
    assert!(findings.is_empty(), "{}\n{description}", findings.join("\n"));
    assert!(recovered, "both worker IDs did not issue again within {recovery:?} of the continuation:\n{description}");
    eprintln!("{label}: both worker IDs issuing again {} ms after the continuation", recovered_ms - continued_ms);
    Ok(())
}

/// Prints when each holder stopped and issued again around the freeze.
fn report_runs(runs: &[HolderRun], frozen_ms: i64, continued_ms: i64) {
    for run in runs {
        let stop = run.stop_after(frozen_ms).map(|stop| stop.at_ms - frozen_ms);
        let resumed = run.resumed_after(frozen_ms).map(|event| event.at_ms - continued_ms);
        eprintln!(
            "{}: {} IDs; stopped {stop:?} ms after the freeze, issuing again {resumed:?} ms after the continuation",
            run.name,
            run.ids.len()
        );
    }
}

/// The master alone is frozen until the sentinels promote a replica, then continued.
#[test]
fn a_master_frozen_until_replaced_issues_no_duplicate() -> TestResult {
    freeze_the_master("frozen-master", false)
}

/// The master and holder A are frozen together until the sentinels promoted a replica and C
/// took A's worker ID there, then both continued: A's lease on the old master, which still
/// holds its records under the same replication ID, must not count.
#[test]
fn a_master_frozen_with_a_holder_issues_no_duplicate() -> TestResult {
    freeze_the_master("frozen-master-and-holder", true)
}

/// Deletes one key on the master, as an operator's `DEL` would.
struct Del<'a> {
    master: &'a Process,
}

impl Faults for Del<'_> {
    fn delete(&self, namespace: &str, slot: Slot) {
        let key = match slot {
            Slot::Marker => format!("snowflake:{{{namespace}}}:marker"),
            Slot::Worker(worker) => format!("snowflake:{{{namespace}}}:worker:{worker}"),
        };
        let deleted: i64 = redis::cmd("DEL").arg(&key).query(&mut self.master.connection()).expect("DEL");
        assert_eq!(deleted, 1, "{key} was not there to delete");
    }
}

/// A field of `INFO replication`.
fn replication(process: &Process, field: &str) -> Option<String> {
    let info: String = redis::cmd("INFO").arg("replication").query(&mut process.connection()).ok()?;
    info.lines().find_map(|line| line.strip_prefix(field)?.strip_prefix(':')).map(|v| v.trim().to_owned())
}

/// A replica promoted to master (`REPLICAOF NO ONE`) holds the records its old master wrote,
/// but may lack the last ones: it is another incarnation of the store (a new
/// `master_replid`), so the protocol trusts none of them.
#[test]
fn a_promoted_replica_is_a_new_incarnation() -> TestResult {
    let Some(master) = Process::redis(free_port(), &[]) else { return Ok(()) };
    let master_port = master.port.to_string();
    let Some(replica) = Process::redis(free_port(), &["--replicaof", "127.0.0.1", &master_port]) else {
        return Ok(());
    };
    wait_until(Duration::from_secs(10), "the replica syncs", || in_sync(&replica));
    let namespace = "promoted";
    let on_master = RedisLeaseStore::open(&format!("redis://127.0.0.1:{}", master.port))?;
    let ops = [typed_snowflake::worker::lease::store::Cas::new(Slot::Worker(0), None, "r0")];
    assert_eq!(on_master.write(namespace, &ops)?, typed_snowflake::worker::lease::store::Written::Done);
    let before = on_master.read(namespace, &Query::workers(0..1))?;
    let mut c = replica.connection();
    wait_until(Duration::from_secs(10), "the replica has the record", || {
        redis::cmd("GET").arg("snowflake:{promoted}:worker:0").query::<Option<String>>(&mut c).ok().flatten().as_deref()
            == Some("r0")
    });
    let () = redis::cmd("REPLICAOF").arg("NO").arg("ONE").query(&mut c)?;
    let on_replica = RedisLeaseStore::open(&format!("redis://127.0.0.1:{}", replica.port))?;
    let after = on_replica.read(namespace, &Query::workers(0..1))?;
    assert_eq!(after.record(0), Some("r0"), "the promoted replica holds its master's record");
    assert_ne!(after.incarnation, before.incarnation, "a promotion changes the incarnation");
    let (old_replid, new_replid) = (before.incarnation.split_once('-'), after.incarnation.split_once('-'));
    assert_ne!(old_replid.map(|p| p.1), new_replid.map(|p| p.1), "a new master_replid");
    Ok(())
}

/// A failover to a replica that holds only a prefix of the master's writes: replica R2 is
/// frozen and its replication link cut while the holders go on writing (acknowledged by R1,
/// which is never promoted: `replica-priority 0`); then the master is killed and R2 continued,
/// and the sentinels promote R2, whose records are older than what the holders last wrote.
/// The holders (a reservation of 4 s) and a newcomer issue again on the new master, and no ID
/// is issued twice.
#[test]
fn a_failover_to_a_replica_with_a_prefix_of_the_writes_issues_no_duplicate() -> TestResult {
    let _one = ONE_DEPLOYMENT.lock().unwrap_or_else(PoisonError::into_inner);
    let Some(mut deployment) = Deployment::with_replicas(&[&["--replica-priority", "0"], &[]]) else {
        return Ok(());
    };
    let label = "failover to a prefix";
    let url = deployment.url();
    let namespace = unique("prefix");
    typed_snowflake::worker::lease::admin::create_namespace(&RedisLeaseStore::open(&url)?, &namespace)?;
    let spec = HolderSpec {
        url: url.clone(),
        namespace: namespace.clone(),
        space: 2,
        ttl: TTL,
        margin: MARGIN,
        reservation: Some(Duration::from_secs(4)),
    };
    let mut holders = Holders::new(Duration::from_secs(120))?;
    holders.spawn_holder("a", &spec)?;
    holders.spawn_holder("b", &spec)?;
    assert!(
        holders.wait_for(Duration::from_secs(20), |h| h.count_issuing_since(0) == 2),
        "the holders never both issued:\n{}",
        holders.describe()
    );
    std::thread::sleep(Duration::from_millis(500));
    // R2's link to the master, as R2 lists it (`flags=M`): its local address is the one the
    // master sees.
    let r2 = &deployment.replicas[1];
    let clients: String = redis::cmd("CLIENT").arg("LIST").query(&mut r2.connection())?;
    let link = clients
        .lines()
        .find(|line| line.split(' ').any(|f| f == "flags=M"))
        .and_then(|line| line.split(' ').find_map(|f| f.strip_prefix("laddr=")))
        .ok_or_else(|| format!("R2 lists no link to its master:\n{clients}"))?
        .to_owned();
    // Frozen, then cut off: what the master writes from now on never reaches R2.
    r2.stop();
    let cut: i64 = redis::cmd("CLIENT")
        .arg("KILL")
        .arg("ADDR")
        .arg(&link)
        .arg("SKIPME")
        .arg("no")
        .query(&mut deployment.master.connection())?;
    assert_eq!(cut, 1, "R2's replication link {link}");
    // The holders write on, acknowledged by R1 alone.
    std::thread::sleep(Duration::from_millis(1_500));
    let master_offset: i64 =
        replication(&deployment.master, "master_repl_offset").and_then(|o| o.parse().ok()).unwrap_or(-1);
    let killed_ms = wall_ms();
    deployment.master.kill9();
    deployment.replicas[1].cont();
    let r2_port = deployment.replicas[1].port;
    wait_until(Duration::from_secs(40), "the sentinels promote R2", || deployment.master_port() == Some(r2_port));
    let promoted_ms = wall_ms();
    // R2's offset when it was promoted: where its new replication ID begins.
    let r2_offset: i64 = replication(&deployment.replicas[1], "second_repl_offset")
        .and_then(|o| o.parse::<i64>().ok())
        .map_or(-1, |o| o - 1);
    eprintln!(
        "{label}: R2 promoted {} ms after the kill with {r2_offset} bytes of the old master's {master_offset}",
        promoted_ms - killed_ms
    );
    assert!(r2_offset < master_offset, "R2 holds every write ({r2_offset} of {master_offset}): no prefix");
    holders.spawn_holder("c", &spec)?;
    let recovered = holders.wait_for(Duration::from_secs(30), |h| h.count_issuing_since(promoted_ms) >= 2);
    std::thread::sleep(Duration::from_millis(1_000));
    let description = holders.describe();
    let runs = holders.finish()?;
    let (ids, duplicates) = count_duplicates(runs.iter().map(|run| run.ids.as_slice()));
    eprintln!("{label}: {ids} IDs, {duplicates} duplicates");
    report_runs(&runs, killed_ms, promoted_ms);
    assert_eq!(duplicates, 0, "{description}");
    let findings = check_workers(&segments_of(&runs, &HOLDER_LAYOUT));
    assert!(findings.is_empty(), "{}\n{description}", findings.join("\n"));
    assert!(recovered, "two holders did not issue again within 30 s of the promotion:\n{description}");
    Ok(())
}

/// Sentinel URLs are checked before anything is sent.
#[test]
fn sentinel_urls() {
    for (url, shown) in [
        ("redis+sentinel://127.0.0.1:26379/main", "redis+sentinel://127.0.0.1:26379/main/0"),
        (
            "redis+sentinel://:secret@10.0.0.1,10.0.0.2:26380/main/3",
            "redis+sentinel://10.0.0.1:26379,10.0.0.2:26380/main/3",
        ),
        ("rediss+sentinel://app:secret@[::1]:26379/main", "rediss+sentinel://app@[::1]:26379/main/0"),
    ] {
        let store = RedisLeaseStore::open(url).unwrap_or_else(|e| panic!("{url}: {e}"));
        assert_eq!(store.describe(), shown);
    }
    for bad in [
        "redis+sentinel://127.0.0.1:26379",
        "redis+sentinel://127.0.0.1:26379/",
        "redis+sentinel://127.0.0.1:26379/main/x",
        "redis+sentinel://127.0.0.1:26379,/main",
        "redis+sentinel://:secret@127.0.0.1:26379/main?db=2",
    ] {
        let error = RedisLeaseStore::open(bad).expect_err(bad).to_string();
        assert!(error.starts_with("bad lease store URL"), "{bad}: {error}");
        assert!(!error.contains("secret"), "{error}");
    }
}
