//! Fixtures for fault-injection tests of worker-ID leases:
//!
//! - [`Proxy`] (from `common/proxy.rs`): a TCP proxy in front of a real server, which
//!   forwards, stalls, drops, delays or moves connections;
//! - [`Holders`]: lease holders in child processes (this test binary run again as
//!   `--exact child`), each generating as fast as it can into a file of its own and logging
//!   when it stops and resumes issuing, with wall-clock times;
//! - the counters that read what they wrote: [`count_duplicates`], and [`check_workers`]
//!   (two holders of one worker ID whose IDs interleave, fencing numbers that go backwards).
//!
//! The private `redis-server` that is killed, restarted empty, paused and flushed is
//! `servers::PrivateRedis`. The holders are child processes of `common/child.rs`. Include
//! the four: `#[path = "common/child.rs"] mod child;`, `#[path = "common/servers.rs"] mod
//! servers;`, `#[path = "common/proxy.rs"] mod proxy;` and `#[path = "common/faults.rs"] mod
//! faults;`, and call [`child_main`] from the
//! ignored test named `child`.
#![allow(dead_code)]

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Display;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use typed_snowflake::worker::lease::{LeaseError, WorkerLease};
use typed_snowflake::{Generator, Layout};

type BoxError = Box<dyn std::error::Error>;

pub use crate::proxy::{Proxy, with_address};

/// Wall-clock Unix milliseconds: the time base that parent and children share.
pub fn wall_ms() -> i64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
}

/// Milliseconds of a duration, as the signed numbers wall-clock times are.
pub fn ms(d: Duration) -> i64 {
    i64::try_from(d.as_millis()).unwrap_or(i64::MAX)
}

/// A name of this process and test (a namespace, a key): no two tests, and no two runs at
/// once, share one.
pub fn unique(test: &str) -> String {
    format!("t{}-{test}", std::process::id())
}

/// A line on stderr that the test harness does not capture: the figures are wanted from
/// passing tests too.
pub fn report(line: &str) {
    let _ = writeln!(std::io::stderr(), "{line}");
}

/// The last events of every run, for failure messages.
pub fn describe_runs(runs: &[HolderRun]) -> String {
    let mut text = String::new();
    for run in runs {
        text.push_str(&format!("--- {} ({} IDs)\n", run.name, run.ids.len()));
        for event in &run.events[run.events.len().saturating_sub(12)..] {
            text.push_str(&format!("{} {} {:?}\n", event.at_ms, event.kind, event.fields));
        }
    }
    text
}

/// The layout the holder processes generate: one worker bit (a space of 2) and 4 sequence
/// bits, so that a holder issues at most 16 IDs a millisecond. Each millisecond is still
/// issued whole ([`rest_if_spent`]), so two holders of one worker ID in one millisecond
/// issue the same IDs and are counted, at a sixteenth of the CPU and the files that 8 bits
/// cost (millions of IDs per test, written, read back and sorted by a debug build, beside
/// the rest of the tier).
pub const HOLDER_LAYOUT: Layout = match Layout::new(41, 1, 4, 1_704_067_200_000) {
    Ok(layout) => layout,
    Err(_) => panic!("a valid layout"),
};

/// The type the registry child generates: 32 worker IDs, 64 IDs a millisecond.
#[derive(typed_snowflake::SnowflakeId, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
#[layout(time = 41, worker = 5, seq = 6, epoch = "2024-01-01")]
pub struct RegistryId(i64);

// ---------------------------------------------------------------------------------------
// Turns
// ---------------------------------------------------------------------------------------

/// The tests that start processes, servers or many holders take turns, one at a time, or
/// `FAULTS_HEAVY_AT_ONCE` at a time: more together would starve the lease threads of CPU on a
/// small machine, and their timings would mean nothing (every module of the slow tier that starts them takes these turns). Most of what they do is wait for TTLs and outages: on a quiet machine two share 2
/// cores (see CONTRIBUTING.md).
static HEAVY: (Mutex<usize>, std::sync::Condvar) = (Mutex::new(0), std::sync::Condvar::new());

/// A heavy test's turn, given back when dropped: `weight` of the `FAULTS_HEAVY_AT_ONCE` slots.
pub struct Turn {
    weight: usize,
}

/// One slot: a test with a few servers, processes or holders.
pub fn heavy() -> Turn {
    turn(1)
}

/// Every slot: a test that starts dozens of processes at once runs with no other heavy test
/// beside it (33 processes beside another heavy test starved a release past its 2 s timeout).
#[cfg_attr(not(all(feature = "lease-redis", feature = "lease-postgres", feature = "lease-mysql")), allow(dead_code))] // `lease.rs` takes it
pub fn alone() -> Turn {
    turn(usize::MAX)
}

fn turn(weight: usize) -> Turn {
    let at_once: usize =
        std::env::var("FAULTS_HEAVY_AT_ONCE").ok().and_then(|v| v.trim().parse().ok()).unwrap_or(1).max(1);
    let weight = weight.min(at_once);
    let (running, freed) = &HEAVY;
    let mut running = running.lock().unwrap_or_else(|p| p.into_inner());
    while *running + weight > at_once {
        running = freed.wait(running).unwrap_or_else(|p| p.into_inner());
    }
    *running += weight;
    Turn { weight }
}

impl Drop for Turn {
    fn drop(&mut self) {
        let (running, freed) = &HEAVY;
        *running.lock().unwrap_or_else(|p| p.into_inner()) -= self.weight;
        freed.notify_all();
    }
}

// ---------------------------------------------------------------------------------------
// Holder processes
// ---------------------------------------------------------------------------------------

/// A lease holder's settings.
#[derive(Clone, Debug)]
pub struct HolderSpec {
    pub url: String,
    pub namespace: String,
    pub space: u64,
    pub ttl: Duration,
    pub margin: Duration,
    /// The lease's reservation `W`; `None`: the TTL (a holder stops with its store).
    pub reservation: Option<Duration>,
}

/// Child processes, killed when dropped (also when the test fails). Each writes
/// `<dir>/<name>.ids` (every ID, `i64` little-endian), `<dir>/<name>.events` (one line per
/// event, see [`Event`]) and `<dir>/<name>.out` (its stdout and stderr); all stop when
/// `<dir>/stop` exists, or at the latest after `max`.
pub struct Holders {
    dir: tempfile::TempDir,
    max: Duration,
    /// Each process's name, scenario (`holder`, `registry`) and, until it is reaped, itself.
    procs: Vec<(String, &'static str, Option<Child>)>,
    /// The processes killed on purpose ([`Holders::kill`]): they never finish.
    killed: Vec<String>,
}

impl Holders {
    /// No process yet; every one started later ends after `max` at the latest.
    pub fn new(max: Duration) -> std::io::Result<Holders> {
        Ok(Holders { dir: tempfile::tempdir()?, max, procs: Vec::new(), killed: Vec::new() })
    }

    /// Starts a holder process: `WorkerLease::from_url(url)` with the spec, retried until it
    /// is acquired, and a generator on it.
    pub fn spawn_holder(&mut self, name: &str, spec: &HolderSpec) -> std::io::Result<()> {
        let env = [
            ("FAULTS_URL", spec.url.clone()),
            ("FAULTS_NAMESPACE", spec.namespace.clone()),
            ("FAULTS_SPACE", spec.space.to_string()),
            ("FAULTS_TTL_MS", spec.ttl.as_millis().to_string()),
            ("FAULTS_MARGIN_MS", spec.margin.as_millis().to_string()),
            ("FAULTS_RESERVATION_MS", spec.reservation.unwrap_or(spec.ttl).as_millis().to_string()),
        ];
        self.spawn(name, "holder", &env)
    }

    /// Starts `name` on `spec` again (after a holder stopped cleanly or was killed), waits up
    /// to `bound` for its first ID, and ends the run: it issued, no ID twice, and its first ID
    /// came before `reservation` had passed since its start (it waited out nothing). The time
    /// to its first ID is reported under `tag`.
    pub fn restart_issues_at_once(
        mut self,
        tag: &str,
        name: &str,
        spec: &HolderSpec,
        bound: Duration,
        reservation: Duration,
    ) -> Result<(), BoxError> {
        let started_ms = wall_ms();
        self.spawn_holder(name, spec)?;
        let issued = self.wait_for(bound, |h| h.issues_since(name, started_ms));
        let first_ms = self.events(name).iter().find(|e| e.kind == "resumed").map(|e| e.at_ms);
        let runs = self.finish()?;
        let (ids, duplicates) = count_duplicates(runs.iter().map(|r| r.ids.as_slice()));
        let latency = first_ms.map(|at| at - started_ms);
        report(&format!(
            "{tag}: the restarted holder's first ID {latency:?} ms after its start; {ids} IDs, {duplicates} duplicates"
        ));
        assert!(issued, "{tag}: the restarted holder never issued");
        assert_eq!(duplicates, 0, "{tag}: duplicates");
        let latency = latency.ok_or("no first ID event")?;
        assert!(
            u128::try_from(latency).unwrap_or(u128::MAX) < reservation.as_millis(),
            "{tag}: the restarted holder waited {latency} ms, as if out the reservation"
        );
        Ok(())
    }

    /// Ends the run and checks it: no ID issued twice, no worker ID's IDs interleaved between
    /// holders. Reports the IDs, the duplicates and each holder's stops since `from_ms` under
    /// `tag`; returns the runs and those stops (ms).
    pub fn finish_unique(self, tag: &str, from_ms: i64) -> Result<(Vec<HolderRun>, Vec<Vec<i64>>), BoxError> {
        let runs = self.finish()?;
        let (ids, duplicates) = count_duplicates(runs.iter().map(|r| r.ids.as_slice()));
        let findings = check_workers(&segments_of(&runs, &HOLDER_LAYOUT));
        let stops: Vec<Vec<i64>> = runs.iter().map(|run| run.stops_since(from_ms)).collect();
        report(&format!("{tag}: {ids} IDs, {duplicates} duplicates, stops since the fault (ms): {stops:?}"));
        assert_eq!(duplicates, 0, "{tag}: duplicates");
        assert!(findings.is_empty(), "{tag}: {findings:?}");
        Ok((runs, stops))
    }

    /// Stops one process as a clean shutdown does (it releases its lease), and waits for it to
    /// exit: whether it exited by itself within 30 s.
    pub fn release(&mut self, name: &str) -> std::io::Result<bool> {
        File::create(self.path(name, "stop"))?;
        let Some((_, _, slot)) = self.procs.iter_mut().find(|(n, _, _)| n == name) else { return Ok(false) };
        let Some(mut child) = slot.take() else { return Ok(false) };
        let deadline = Instant::now() + Duration::from_secs(30);
        while Instant::now() < deadline {
            if let Some(status) = child.try_wait()? {
                return Ok(status.success());
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        let _ = child.kill();
        let _ = child.wait();
        Ok(false)
    }

    /// Kills one process with `SIGKILL`: its lease stays held until its TTL runs out.
    pub fn kill(&mut self, name: &str) {
        self.killed.push(name.to_owned());
        if let Some((_, _, slot)) = self.procs.iter_mut().find(|(n, _, _)| n == name)
            && let Some(mut child) = slot.take()
        {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// Starts a process configured only by `SNOWFLAKE_WORKER_LEASE=url` and
    /// `SNOWFLAKE_NAMESPACE=namespace`, generating [`RegistryId`]s.
    pub fn spawn_registry(&mut self, name: &str, url: &str, namespace: &str) -> std::io::Result<()> {
        // The reservation pinned to the default TTL: these processes show the protocol of the
        // TTL alone (`lease_outage.rs` shows the reservation).
        let env = [
            ("SNOWFLAKE_WORKER_LEASE", url.to_owned()),
            ("SNOWFLAKE_NAMESPACE", namespace.to_owned()),
            ("SNOWFLAKE_LEASE_RESERVATION", "10s".to_owned()),
        ];
        self.spawn(name, "registry", &env)
    }

    fn spawn(&mut self, name: &str, scenario: &'static str, env: &[(&str, String)]) -> std::io::Result<()> {
        let out = File::create(self.path(name, "out"))?;
        let mut command = crate::child::command(scenario);
        command
            .env("FAULTS_DIR", self.dir.path())
            .env("FAULTS_NAME", name)
            .env("FAULTS_MAX_MS", self.max.as_millis().to_string())
            .env_remove("SNOWFLAKE_WORKER_ID")
            .env_remove("SNOWFLAKE_WORKER_SPACE")
            .env_remove("SNOWFLAKE_WORKER_LEASE")
            .env_remove("SNOWFLAKE_NAMESPACE")
            .stdin(Stdio::null())
            .stdout(out.try_clone()?)
            .stderr(out);
        for (key, value) in env {
            command.env(key, value);
        }
        let child = command.spawn()?;
        self.procs.push((name.to_owned(), scenario, Some(child)));
        Ok(())
    }

    fn path(&self, name: &str, ext: &str) -> PathBuf {
        self.dir.path().join(format!("{name}.{ext}"))
    }

    /// The events a process logged so far.
    pub fn events(&self, name: &str) -> Vec<Event> {
        read_events(&self.path(name, "events"))
    }

    /// The names of the processes started so far.
    pub fn names(&self) -> Vec<String> {
        self.procs.iter().map(|(name, ..)| name.clone()).collect()
    }

    /// Whether the process began a run of IDs at or after `since_ms` (Unix ms): a holder
    /// that issued before and has not noticed a fault yet does not count.
    pub fn issues_since(&self, name: &str, since_ms: i64) -> bool {
        issued_since(&self.events(name), since_ms)
    }

    /// Whether a process stopped issuing at or after `since_ms` (a fault), then began a run of
    /// IDs again: it recovered, whenever this test learned the fault was over.
    pub fn resumed_after_stopping_since(&self, name: &str, since_ms: i64) -> bool {
        let events = self.events(name);
        let stop = events.iter().find(|e| e.kind == "stopped" && e.at_ms >= since_ms);
        stop.is_some_and(|stop| issued_since(&events, stop.at_ms))
    }

    /// How many processes began a run of IDs at or after `since_ms`.
    pub fn count_issuing_since(&self, since_ms: i64) -> usize {
        self.procs.iter().filter(|(name, ..)| self.issues_since(name, since_ms)).count()
    }

    /// Polls `done` every 20 ms for up to `bound`: whether it came true.
    pub fn wait_for(&self, bound: Duration, done: impl Fn(&Holders) -> bool) -> bool {
        let deadline = Instant::now() + bound;
        loop {
            if done(self) {
                return true;
            }
            if Instant::now() >= deadline {
                return false;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// The last events and output lines of every process, for a failure message.
    pub fn describe(&self) -> String {
        let mut text = String::new();
        for (name, ..) in &self.procs {
            let events = std::fs::read_to_string(self.path(name, "events")).unwrap_or_default();
            let out = std::fs::read_to_string(self.path(name, "out")).unwrap_or_default();
            text.push_str(&format!("--- {name}: events\n{}--- {name}: output\n{}", tail(&events, 12), tail(&out, 12)));
        }
        text
    }

    /// Tells every process to stop, waits for them (each writes its files out), and reads
    /// what they issued and logged. A process that fails or does not end within 30 s is an
    /// error naming its output.
    pub fn finish(mut self) -> Result<Vec<HolderRun>, String> {
        File::create(self.dir.path().join("stop")).map_err(|e| e.to_string())?;
        let deadline = Instant::now() + Duration::from_secs(30);
        let mut failures = Vec::new();
        let finished: Vec<(String, &'static str)> =
            self.procs.iter().map(|(name, scenario, _)| (name.clone(), *scenario)).collect();
        for (name, _, child) in &mut self.procs {
            let Some(mut child) = child.take() else { continue };
            let status = loop {
                match child.try_wait() {
                    Ok(Some(status)) => break Some(status),
                    Ok(None) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(20)),
                    _ => {
                        let _ = child.kill();
                        let _ = child.wait();
                        break None;
                    }
                }
            };
            if !status.is_some_and(|s| s.success()) {
                failures.push(format!("{name}: {status:?}"));
            }
        }
        if !failures.is_empty() {
            return Err(format!("processes failed or hung: {failures:?}\n{}", self.describe()));
        }
        let mut runs = Vec::new();
        for (name, scenario) in finished {
            let out = std::fs::read_to_string(self.path(&name, "out")).unwrap_or_default();
            if !self.killed.contains(&name) && !out.contains(&format!("scenario {scenario} done")) {
                return Err(format!("{name} did not finish:\n{}", self.describe()));
            }
            let bytes = std::fs::read(self.path(&name, "ids")).map_err(|e| format!("{name}: {e}"))?;
            let ids = bytes.chunks_exact(8).map(|c| i64::from_le_bytes(c.try_into().unwrap_or_default())).collect();
            runs.push(HolderRun { events: self.events(&name), name, ids });
        }
        Ok(runs)
    }
}

impl Drop for Holders {
    fn drop(&mut self) {
        for (.., child) in &mut self.procs {
            if let Some(mut child) = child.take() {
                let _ = child.kill();
                let _ = child.wait();
            }
        }
    }
}

fn tail(text: &str, lines: usize) -> String {
    let all: Vec<&str> = text.lines().collect();
    let mut out = all[all.len().saturating_sub(lines)..].join("\n");
    out.push('\n');
    out
}

/// One line of a child's event log: `<Unix ms> <kind> key=value … [error=<text>]`.
///
/// Kinds: `acquired` (worker, fence, `failed_before`: failed acquisitions before it),
/// `acquire-failed` (the first failed acquisition, with `error`), `resumed` (the first ID after none or an error: `n` its index in the ID file,
/// `worker`/`fence` as the lease reports them, `id_worker`/`id_ms` decoded from the ID),
/// `switched` (the ID's worker differs from the previous ID's), `fence` (the lease's fence
/// changed while issuing), `stopped` (the first error after IDs: `n` IDs so far, `last_id_ms`
/// the last ID's timestamp, `error`), `released`/`release-failed`/`never-acquired`, `done`
/// (`ids`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Event {
    pub at_ms: i64,
    pub kind: String,
    pub fields: BTreeMap<String, String>,
}

impl Event {
    pub fn parse(line: &str) -> Option<Event> {
        let (at, rest) = line.split_once(' ')?;
        let at_ms = at.parse().ok()?;
        let (kind, mut rest) = rest.split_once(' ').unwrap_or((rest, ""));
        let mut fields = BTreeMap::new();
        while !rest.is_empty() {
            if let Some(error) = rest.strip_prefix("error=") {
                fields.insert("error".to_owned(), error.to_owned());
                break;
            }
            let (field, after) = rest.split_once(' ').unwrap_or((rest, ""));
            let (key, value) = field.split_once('=')?;
            fields.insert(key.to_owned(), value.to_owned());
            rest = after;
        }
        Some(Event { at_ms, kind: kind.to_owned(), fields })
    }

    pub fn get(&self, key: &str) -> Option<&str> {
        self.fields.get(key).map(String::as_str)
    }

    pub fn int(&self, key: &str) -> Option<i64> {
        self.get(key)?.parse().ok()
    }

    pub fn uint(&self, key: &str) -> Option<u64> {
        self.get(key)?.parse().ok()
    }

    /// `resumed`, `switched` or `fence`: a run of IDs begins here.
    pub fn begins_run(&self) -> bool {
        matches!(self.kind.as_str(), "resumed" | "switched" | "fence")
    }
}

fn read_events(path: &Path) -> Vec<Event> {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    // A last line without its newline is still being written.
    text.split_inclusive('\n').filter(|line| line.ends_with('\n')).filter_map(|l| Event::parse(l.trim_end())).collect()
}

fn issued_since(events: &[Event], since_ms: i64) -> bool {
    events.iter().any(|e| e.begins_run() && e.at_ms >= since_ms)
}

/// What one child process issued and logged.
#[derive(Clone, Debug, Default)]
pub struct HolderRun {
    pub name: String,
    pub ids: Vec<i64>,
    pub events: Vec<Event>,
}

/// How a holder stopped after a fault.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Stop {
    /// When it saw its first error (Unix ms).
    pub at_ms: i64,
    /// The timestamp of its last ID before it.
    pub last_id_ms: i64,
}

impl HolderRun {
    /// How the holder stopped issuing after `fault_ms`: its first `stopped` event at or
    /// after it, or the last one before it if it was not issuing then. `None`: it never
    /// stopped.
    pub fn stop_after(&self, fault_ms: i64) -> Option<Stop> {
        let stop = |e: &Event| Stop { at_ms: e.at_ms, last_id_ms: e.int("last_id_ms").unwrap_or(i64::MIN) };
        let before =
            self.events.iter().rev().filter(|e| e.at_ms < fault_ms).find(|e| e.begins_run() || e.kind == "stopped");
        match before {
            Some(e) if e.kind == "stopped" => Some(stop(e)),
            None => Some(Stop { at_ms: fault_ms, last_id_ms: i64::MIN }),
            Some(_) => self.events.iter().find(|e| e.kind == "stopped" && e.at_ms >= fault_ms).map(stop),
        }
    }

    /// The stops of the holder's log at or after `since_ms`, each as long as it lasted (ms): to
    /// the next `resumed`, or to the end of the log.
    pub fn stops_since(&self, since_ms: i64) -> Vec<i64> {
        let mut stops = Vec::new();
        let mut stopped: Option<i64> = None;
        for event in &self.events {
            match event.kind.as_str() {
                "stopped" if event.at_ms >= since_ms => stopped = Some(event.at_ms),
                "resumed" => {
                    if let Some(at) = stopped.take() {
                        stops.push(event.at_ms - at);
                    }
                }
                _ => {}
            }
        }
        if let Some(at) = stopped {
            stops.push(self.events.last().map_or(at, |e| e.at_ms) - at);
        }
        stops
    }

    /// The first `resumed` event at or after `since_ms`.
    pub fn resumed_after(&self, since_ms: i64) -> Option<&Event> {
        self.events.iter().find(|e| e.kind == "resumed" && e.at_ms >= since_ms)
    }

    /// How many IDs carry a timestamp in `from_ms..to_ms`.
    pub fn stamped_within(&self, layout: &Layout, from_ms: i64, to_ms: i64) -> usize {
        self.ids.iter().filter(|&&id| (from_ms..to_ms).contains(&layout.timestamp_ms_of(id))).count()
    }

    /// The IDs cut into runs of one worker ID under one fencing number: at every event that
    /// begins or ends a run, and wherever the worker of consecutive IDs changes. A run's fence
    /// is unknown when its event saw the lease on another worker than the run's IDs.
    pub fn segments(&self, holder: usize, layout: &Layout) -> Vec<Segment> {
        let mut cuts: BTreeSet<usize> = [0, self.ids.len()].into();
        let mut fences: BTreeMap<usize, Option<u64>> = BTreeMap::new();
        for event in &self.events {
            let Some(n) = event.uint("n").and_then(|n| usize::try_from(n).ok()) else { continue };
            if event.begins_run() || event.kind == "stopped" {
                cuts.insert(n.min(self.ids.len()));
            }
            if event.begins_run() {
                // The lease is read after the ID was issued: when it already names another
                // worker, it was acquired again in between and its fence is not this run's.
                let same_worker = event.get("worker").is_some() && event.get("worker") == event.get("id_worker");
                fences.insert(n, event.uint("fence").filter(|_| same_worker));
            }
        }
        let cuts: Vec<usize> = cuts.into_iter().collect();
        let mut segments = Vec::new();
        for pair in cuts.windows(2) {
            let fence = fences.range(..=pair[0]).next_back().and_then(|(_, fence)| *fence);
            let mut piece = &self.ids[pair[0]..pair[1]];
            while let Some(&first) = piece.first() {
                let worker = layout.worker_of(first);
                let len = piece.iter().position(|&id| layout.worker_of(id) != worker).unwrap_or(piece.len());
                segments.push(Segment::of(holder, worker, fence, &piece[..len]));
                piece = &piece[len..];
            }
        }
        segments
    }
}

/// A run of IDs one holder issued on one worker ID, under one fencing number if known.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Segment {
    pub holder: usize,
    pub worker: u64,
    pub fence: Option<u64>,
    pub lo: i64,
    pub hi: i64,
    pub count: usize,
}

impl Segment {
    /// The segment of `ids` (not empty).
    pub fn of(holder: usize, worker: u64, fence: Option<u64>, ids: &[i64]) -> Segment {
        let lo = ids.iter().copied().min().unwrap_or_default();
        let hi = ids.iter().copied().max().unwrap_or_default();
        Segment { holder, worker, fence, lo, hi, count: ids.len() }
    }
}

/// How many IDs there are across all runs, and how many are equal to the one before once
/// sorted (an ID issued three times counts twice).
pub fn count_duplicates<'a>(runs: impl IntoIterator<Item = &'a [i64]>) -> (usize, usize) {
    let mut all: Vec<i64> = Vec::new();
    for ids in runs {
        all.extend_from_slice(ids);
    }
    all.sort_unstable();
    let duplicates = all.windows(2).filter(|pair| pair[0] == pair[1]).count();
    (all.len(), duplicates)
}

/// For each worker ID, what two different holders (or two tenures) did wrong: IDs that
/// interleave (both issued on it at once), one fencing number given to two holders, or a
/// fencing number lower than the one of the tenure before (ordered by their IDs). At most 10
/// of each kind, then a line with the totals when there were more.
pub fn check_workers(segments: &[Segment]) -> Vec<String> {
    let mut by_worker: BTreeMap<u64, Vec<&Segment>> = BTreeMap::new();
    for segment in segments {
        by_worker.entry(segment.worker).or_default().push(segment);
    }
    let (mut overlaps, mut fences) = (Vec::new(), Vec::new());
    for (worker, mut list) in by_worker {
        list.sort_by_key(|s| (s.lo, s.hi));
        for (i, a) in list.iter().enumerate() {
            for b in &list[i + 1..] {
                if b.lo > a.hi {
                    break;
                }
                if a.holder != b.holder {
                    overlaps.push(format!(
                        "worker {worker}: holders {} and {} issued at once: {}..={} ({} IDs, fence {:?}) and {}..={} ({} IDs, fence {:?})",
                        a.holder, b.holder, a.lo, a.hi, a.count, a.fence, b.lo, b.hi, b.count, b.fence
                    ));
                }
            }
        }
        // Tenures in the order of their IDs: (holder, fence) changes only to a higher fence.
        let mut tenures: Vec<(usize, u64)> = Vec::new();
        for segment in &list {
            let Some(fence) = segment.fence else { continue };
            if tenures.last() != Some(&(segment.holder, fence)) {
                tenures.push((segment.holder, fence));
            }
        }
        for pair in tenures.windows(2) {
            let ((h1, f1), (h2, f2)) = (pair[0], pair[1]);
            if f2 <= f1 {
                let what = if f1 == f2 && h1 != h2 { "given twice" } else { "went backwards" };
                fences.push(format!(
                    "worker {worker}: fence {what}: holder {h1} had {f1}, then holder {h2} issued with {f2}"
                ));
            }
        }
    }
    let (total_overlaps, total_fences) = (overlaps.len(), fences.len());
    let mut findings: Vec<String> = overlaps.into_iter().take(10).chain(fences.into_iter().take(10)).collect();
    if total_overlaps > 10 || total_fences > 10 {
        findings.push(format!("in all: {total_overlaps} interleaving pairs, {total_fences} fences out of order"));
    }
    findings
}

/// Every run's segments, each holder numbered by its place in `runs`.
pub fn segments_of(runs: &[HolderRun], layout: &Layout) -> Vec<Segment> {
    runs.iter().enumerate().flat_map(|(holder, run)| run.segments(holder, layout)).collect()
}

// ---------------------------------------------------------------------------------------
// A restore under live holders
// ---------------------------------------------------------------------------------------

/// The holder's first stop at or after `since_ms` that names the rollback, as its generator
/// reported it; or the loss of its lease, which is what a holder rightly reports when the
/// copy put back lacks its record (taken before the store had it on disk) and the marker
/// would start any successor above its reservation (`docs/lease-rules.md`, rule 5).
pub fn rolled_back_stop(run: &HolderRun, since_ms: i64) -> Option<&Event> {
    run.events.iter().filter(|e| e.kind == "stopped" && e.at_ms >= since_ms).find(|e| {
        e.get("error").is_some_and(|error| error.contains("rolled back") || error.contains("its lease is lost"))
    })
}

/// Whether `name` stopped issuing at or after `since_ms` (it had issued before).
pub fn stopped_since(holders: &Holders, name: &str, since_ms: i64) -> bool {
    holders.events(name).iter().any(|e| e.kind == "stopped" && e.at_ms >= since_ms)
}

/// Two holders issued on one worker ID at once: the worker, the two holders' names, and
/// the timestamps (Unix ms) of the IDs both issued in.
#[derive(Debug)]
pub struct AtOnce {
    worker: u64,
    holders: (String, String),
    from_ms: i64,
    to_ms: i64,
}

/// Every pair of runs of two holders on one worker ID whose IDs interleave.
pub fn issued_at_once(runs: &[HolderRun]) -> Vec<AtOnce> {
    let segments = segments_of(runs, &HOLDER_LAYOUT);
    let mut found = Vec::new();
    for (i, a) in segments.iter().enumerate() {
        for b in &segments[i + 1..] {
            if a.worker != b.worker || a.holder == b.holder || a.lo.max(b.lo) > a.hi.min(b.hi) {
                continue;
            }
            found.push(AtOnce {
                worker: a.worker,
                holders: (runs[a.holder].name.clone(), runs[b.holder].name.clone()),
                from_ms: HOLDER_LAYOUT.timestamp_ms_of(a.lo.max(b.lo)),
                to_ms: HOLDER_LAYOUT.timestamp_ms_of(a.hi.min(b.hi)),
            });
        }
    }
    found
}

/// The timestamps (Unix ms) of the first and the last ID issued twice, if any was.
pub fn duplicated_span(runs: &[HolderRun]) -> Option<(i64, i64)> {
    let mut all: Vec<i64> = runs.iter().flat_map(|r| r.ids.iter().copied()).collect();
    all.sort_unstable();
    let twice: Vec<i64> = all.windows(2).filter(|pair| pair[0] == pair[1]).map(|pair| pair[0]).collect();
    let (first, last) = (twice.first()?, twice.last()?);
    Some((HOLDER_LAYOUT.timestamp_ms_of(*first), HOLDER_LAYOUT.timestamp_ms_of(*last)))
}

/// A restore under live holders, with a newcomer that takes a worker ID on what the restore
/// brought back: see [`restore_under_live_holders`].
pub struct LiveRestore<'a> {
    /// Names the figures and failures.
    pub label: &'a str,
    /// The proxy in front of the store that the holders `a` and `b` reach it through.
    pub proxy: &'a Proxy,
    /// `a`'s and `b`'s settings (through the proxy), a space of 2 in a namespace declared new.
    pub holders: &'a HolderSpec,
    /// The newcomer `c`'s: the same namespace, the store reached directly.
    pub newcomer: &'a HolderSpec,
    /// How long after its record is rolled back or taken a holder may still issue: one renewal
    /// interval and one store call's timeout (its next renewal's read).
    pub notice: Duration,
    /// Takes the copy (a dump, a snapshot) while the holders issue.
    pub copy: &'a mut dyn FnMut() -> Result<(), BoxError>,
    /// Puts the copy back.
    pub put_back: &'a mut dyn FnMut() -> Result<(), BoxError>,
    /// The operator's fence (`fence_namespace`, `snowflake leases fence`), run right after the
    /// newcomer's grant; `None`: nobody fences.
    pub fence: Option<&'a mut dyn FnMut() -> Result<(), BoxError>>,
}

/// Two live holders `a` and `b` issue on a space of 2 while a newcomer `c` waits for a free
/// worker ID; the store is copied, and put back `W` and a second later: the records put back
/// have expired, so `c` takes one of the live holders' worker IDs at once and issues beside
/// it. So that `c` reaches the store put back before the holders' next renewals do (as it
/// often does, unaided), `a` and `b` reach it through a proxy that drops their connections
/// from the restore until `c` issues (well within `W - margin`: they issue on; a stall would
/// keep a transaction cut off halfway open, and its row locks would block `c`'s grant on
/// MariaDB). With a fence, the operator fences the namespace right after `c`'s grant, before
/// the holders are back (as `snowflake leases fence` run right after the restore, `c`
/// acquiring meanwhile).
///
/// Every holder stops at its next renewal: the one whose worker ID `c` took finds a record
/// that replaced an older write than its own; the other reads its own record back with a value
/// it did not write; `c` finds the marker written afresh (by the fence, or by one of them).
/// So IDs are issued twice only until the victim's first renewal once the store answers it
/// again (`notice`), every stop names the rollback (or, where the copy lacked the holder's
/// record, the loss: see [`rolled_back_stop`]), and once `c` leaves (a short job) `a` and
/// `b` issue again by themselves. The figures are reported; a failure panics.
pub fn restore_under_live_holders(run: LiveRestore<'_>) -> Result<(), BoxError> {
    let LiveRestore { label, proxy, notice, mut fence, .. } = run;
    let reservation = run.holders.reservation.unwrap_or(run.holders.ttl);
    let first_ids = Duration::from_secs(60);
    let mut holders = Holders::new(Duration::from_secs(100))?;
    holders.spawn_holder("a", run.holders)?;
    holders.spawn_holder("b", run.holders)?;
    if !holders.wait_for(first_ids, |h| h.count_issuing_since(0) == 2) {
        return Err(format!("{label}: the two holders never both issued:\n{}", holders.describe()).into());
    }
    holders.spawn_holder("c", run.newcomer)?;
    if !holders.wait_for(first_ids, |h| h.events("c").iter().any(|e| e.kind == "acquire-failed")) {
        return Err(format!("{label}: c never waited for a free worker ID:\n{}", holders.describe()).into());
    }
    std::thread::sleep(Duration::from_millis(300));
    (run.copy)().map_err(|e| format!("{label}: taking the copy: {e}"))?;
    std::thread::sleep(reservation + Duration::from_secs(1));
    // A holder whose renewals starved (a machine far too loaded) lets `c` in before the
    // restore: another schedule than this test's, said as such.
    if holders.events("c").iter().any(|e| e.kind == "acquired") {
        return Err(format!("{label}: c acquired before the restore:\n{}", holders.describe()).into());
    }
    proxy.drop_all();
    let restored_ms = wall_ms();
    (run.put_back)().map_err(|e| format!("{label}: putting the copy back: {e}"))?;
    let c_won = holders.wait_for(Duration::from_secs(3), |h| h.issues_since("c", restored_ms));
    let fenced_ms = match &mut fence {
        Some(fence) => {
            let at = wall_ms();
            fence().map_err(|e| format!("{label}: fencing: {e}"))?;
            Some(at)
        }
        None => None,
    };
    let resumed_ms = wall_ms();
    proxy.resume();
    // Every holder that issued since the restore stops.
    let all_stopped = holders.wait_for(notice * 3, |h| {
        ["a", "b", "c"].iter().all(|name| !h.issues_since(name, restored_ms) || stopped_since(h, name, restored_ms))
            && stopped_since(h, "a", restored_ms)
            && stopped_since(h, "b", restored_ms)
    });
    // `c` leaves, so that both worker IDs are there for `a` and `b`.
    let c_released = holders.release("c")?;
    let again = holders.wait_for(reservation * 3 + Duration::from_secs(5), |h| {
        h.resumed_after_stopping_since("a", restored_ms) && h.resumed_after_stopping_since("b", restored_ms)
    });
    std::thread::sleep(Duration::from_millis(500));
    let runs = holders.finish()?;
    let (ids, duplicates) = count_duplicates(runs.iter().map(|r| r.ids.as_slice()));
    let per_holder: Vec<String> = runs.iter().map(|r| format!("{}: {}", r.name, r.ids.len())).collect();
    report(&format!("{label}: {ids} IDs ({}), {duplicates} duplicates", per_holder.join(", ")));
    let run = |name: &str| runs.iter().find(|r| r.name == name);
    let after = |ms: i64| ms - restored_ms;
    let c_first = run("c").and_then(|r| r.resumed_after(restored_ms)).map(|e| e.at_ms);
    let stops: Vec<(String, Option<i64>)> =
        runs.iter().map(|r| (r.name.clone(), rolled_back_stop(r, restored_ms).map(|e| after(e.at_ms)))).collect();
    let at_once = issued_at_once(&runs);
    let span = duplicated_span(&runs);
    report(&format!(
        "{label}: after the restore (ms): c's first ID {:?}, fenced {:?}, the holders' store back {}, stops for the \
         rollback {stops:?}; issued at once (worker, holders, from, for ms) {:?}; the IDs issued twice stamped (from, \
         for ms) {:?}",
        c_first.map(after),
        fenced_ms.map(after),
        after(resumed_ms),
        at_once.iter().map(|o| (o.worker, &o.holders, after(o.from_ms), o.to_ms - o.from_ms)).collect::<Vec<_>>(),
        span.map(|(first, last)| (after(first), last - first)),
    ));
    let notice_ms = ms(notice);
    let mut failures = Vec::new();
    if !c_won {
        failures.push("c did not issue on the restored records".to_owned());
    }
    match c_first {
        // `c` waited out the earlier holders: nothing twice.
        None => {
            if duplicates > 0 {
                failures.push(format!("{duplicates} duplicate IDs, and c never issued after the restore"));
            }
        }
        Some(c_first) => {
            // The victim stops at its first renewal once its store answers it again.
            let until = resumed_ms + notice_ms;
            if let Some((first, last)) = span
                && (first < c_first - notice_ms || last > until)
            {
                failures.push(format!(
                    "IDs issued twice stamped {}..={} ms after the restore: beyond c's first ID ({} ms) to {} ms",
                    after(first),
                    after(last),
                    after(c_first),
                    after(until)
                ));
            }
            for o in at_once.iter().filter(|o| o.to_ms > until) {
                failures.push(format!("{o:?}: issued at once up to {} ms after the restore", after(o.to_ms)));
            }
            match run("c").and_then(|r| rolled_back_stop(r, restored_ms)) {
                None => failures.push("c issued on the restored records and never stopped for the rollback".to_owned()),
                Some(stop) => {
                    // After the first fence: the operator's, or the holders' own at their stops.
                    let own = stops.iter().filter(|(name, _)| name != "c").filter_map(|(_, at)| *at).min();
                    let first_fence = [fenced_ms.map(after), own].into_iter().flatten().min();
                    if let Some(fence) = first_fence
                        && after(stop.at_ms) - fence > 2 * notice_ms
                    {
                        failures.push(format!(
                            "c stopped {} ms after the restore, the first fence {fence} ms after it",
                            after(stop.at_ms)
                        ));
                    }
                }
            }
        }
    }
    for (name, stop) in stops.iter().filter(|(name, _)| name != "c") {
        match stop {
            None => failures.push(format!("{name}'s stop does not name the rollback")),
            Some(at) if *at > after(resumed_ms) + notice_ms => failures.push(format!(
                "{name} stopped {at} ms after the restore, its store back {} ms after it",
                after(resumed_ms)
            )),
            Some(_) => {}
        }
    }
    if !all_stopped {
        failures.push("not every holder stopped".to_owned());
    }
    if !c_released {
        failures.push("c did not stop cleanly".to_owned());
    }
    if !again {
        failures.push("a and b did not both issue again".to_owned());
    }
    assert!(failures.is_empty(), "{label}: {}\n{}", failures.join("\n"), describe_runs(&runs));
    Ok(())
}

// ---------------------------------------------------------------------------------------
// The child side
// ---------------------------------------------------------------------------------------

/// Runs the child's scenario when this process is one; nothing in the parent.
pub fn child_main() -> Result<(), BoxError> {
    let Some(scenario) = crate::child::scenario() else { return Ok(()) };
    let dir = PathBuf::from(std::env::var("FAULTS_DIR")?);
    let name = std::env::var("FAULTS_NAME")?;
    let max = Duration::from_millis(std::env::var("FAULTS_MAX_MS")?.parse()?);
    let stop =
        StopWhen { file: dir.join("stop"), own: dir.join(format!("{name}.stop")), deadline: Instant::now() + max };
    let log = EventLog { file: File::create(dir.join(format!("{name}.events")))? };
    let ids = BufWriter::with_capacity(1 << 20, File::create(dir.join(format!("{name}.ids")))?);
    match scenario.as_str() {
        "holder" => holder(&stop, Issuer::new(log, ids, HOLDER_LAYOUT))?,
        "registry" => registry(&stop, Issuer::new(log, ids, RegistryId::LAYOUT))?,
        other => return Err(format!("unknown scenario {other}").into()),
    }
    crate::child::done(&scenario);
    Ok(())
}

struct StopWhen {
    file: PathBuf,
    /// This process's own stop file (`Holders::release`).
    own: PathBuf,
    deadline: Instant,
}

impl StopWhen {
    fn now(&self) -> bool {
        Instant::now() >= self.deadline || self.file.exists() || self.own.exists()
    }
}

struct EventLog {
    file: File,
}

impl EventLog {
    /// One line, in one write, so that a reader never sees half a line as a whole one.
    fn log(&mut self, kind: &str, fields: &[(&str, &dyn Display)], error: Option<&dyn Display>) {
        let mut line = format!("{} {kind}", wall_ms());
        for (key, value) in fields {
            line.push_str(&format!(" {key}={value}"));
        }
        if let Some(error) = error {
            line.push_str(&format!(" error={}", error.to_string().replace('\n', " ")));
        }
        line.push('\n');
        let _ = self.file.write_all(line.as_bytes());
    }
}

/// Writes the IDs and logs the transitions between issuing and not issuing.
struct Issuer {
    log: EventLog,
    ids: BufWriter<File>,
    layout: Layout,
    count: u64,
    issuing: bool,
    last_id: i64,
    last_fence: Option<u64>,
}

impl Issuer {
    fn new(log: EventLog, ids: BufWriter<File>, layout: Layout) -> Issuer {
        Issuer { log, ids, layout, count: 0, issuing: false, last_id: 0, last_fence: None }
    }

    /// An ID; `lease` tells the lease's current worker and fence (read only at transitions
    /// and every 4096 IDs).
    fn issued(&mut self, id: i64, lease: impl Fn() -> Option<(u64, u64)>) -> std::io::Result<()> {
        self.ids.write_all(&id.to_le_bytes())?;
        let worker = self.layout.worker_of(id);
        let kind = if !self.issuing {
            Some("resumed")
        } else if worker != self.layout.worker_of(self.last_id) {
            Some("switched")
        } else if self.count.is_multiple_of(4096) && lease().map(|(_, fence)| fence) != self.last_fence {
            Some("fence")
        } else {
            None
        };
        if let Some(kind) = kind {
            let (lease_worker, fence) = match lease() {
                Some((w, f)) => (Some(w), Some(f)),
                None => (None, None),
            };
            self.last_fence = fence;
            let (w, f) = (opt(lease_worker), opt(fence));
            let id_ms = self.layout.timestamp_ms_of(id);
            self.log.log(
                kind,
                &[("n", &self.count), ("worker", &w), ("fence", &f), ("id_worker", &worker), ("id_ms", &id_ms)],
                None,
            );
        }
        self.issuing = true;
        self.last_id = id;
        self.count += 1;
        Ok(())
    }

    /// An error from the generator: logged at the first after IDs; then ~1 ms of sleep.
    fn failed(&mut self, error: &dyn Display) {
        if self.issuing {
            self.issuing = false;
            let last_id_ms = self.layout.timestamp_ms_of(self.last_id);
            self.log.log("stopped", &[("n", &self.count), ("last_id_ms", &last_id_ms)], Some(error));
        }
        std::thread::sleep(Duration::from_millis(1));
    }

    fn finish(mut self) -> std::io::Result<()> {
        self.ids.flush()?;
        self.log.log("done", &[("ids", &self.count)], None);
        Ok(())
    }
}

/// `-` for an unknown value, so that the field still parses.
fn opt(value: Option<u64>) -> String {
    value.map_or_else(|| "-".to_owned(), |v| v.to_string())
}

fn env_ms(var: &str) -> Result<Duration, BoxError> {
    Ok(Duration::from_millis(std::env::var(var)?.parse()?))
}

/// A holder: acquires (again and again while the store refuses or does not answer: a process
/// started during an outage), then generates as fast as it can until told to stop (resting
/// from a millisecond's last ID to the next millisecond: [`rest_if_spent`]), sleeping
/// 1 ms after each error, then releases.
fn holder(stop: &StopWhen, mut issuer: Issuer) -> Result<(), BoxError> {
    let url = std::env::var("FAULTS_URL")?;
    let namespace = std::env::var("FAULTS_NAMESPACE")?;
    let space: u64 = std::env::var("FAULTS_SPACE")?.parse()?;
    let ttl = env_ms("FAULTS_TTL_MS")?;
    let margin = env_ms("FAULTS_MARGIN_MS")?;
    let reservation = env_ms("FAULTS_RESERVATION_MS")?;
    let mut held: Option<(WorkerLease, Generator)> = None;
    let mut failed_acquisitions = 0u64;
    let mut round = 0u32;
    loop {
        round = round.wrapping_add(1);
        if (round.is_multiple_of(256) || !issuer.issuing) && stop.now() {
            break;
        }
        let Some((lease, generator)) = &held else {
            let acquired = WorkerLease::from_url(url.as_str())
                .namespace(namespace.as_str())
                .space(space)
                .ttl(ttl)
                .reservation(reservation)
                .margin(margin)
                .clock_tolerance(Duration::from_millis(200))
                .acquire();
            match acquired {
                Ok(lease) => {
                    issuer.log.log(
                        "acquired",
                        &[
                            ("worker", &lease.worker()),
                            ("fence", &lease.fence()),
                            ("failed_before", &failed_acquisitions),
                        ],
                        None,
                    );
                    let generator = Generator::builder(HOLDER_LAYOUT).lease(lease.clone()).build()?;
                    held = Some((lease, generator));
                }
                Err(e) => {
                    if failed_acquisitions == 0 {
                        issuer.log.log("acquire-failed", &[], Some(&e));
                    }
                    failed_acquisitions += 1;
                    // A store that says every worker ID is taken changes slowly; one that does
                    // not answer is asked again at once, so the process starts when it is back.
                    let pause = if matches!(e, LeaseError::NoFreeWorker { .. }) { 20 } else { 1 };
                    std::thread::sleep(Duration::from_millis(pause));
                }
            }
            continue;
        };
        match generator.next_raw() {
            Ok(id) => {
                issuer.issued(id, || Some((lease.worker(), lease.fence())))?;
                rest_if_spent(HOLDER_LAYOUT.sequence_of(id), HOLDER_LAYOUT.max_seq());
            }
            Err(e) => issuer.failed(&e),
        }
    }
    let released = held.map(|(lease, _)| lease.release());
    match released {
        Some(Ok(())) => issuer.log.log("released", &[], None),
        Some(Err(e)) => issuer.log.log("release-failed", &[], Some(&e)),
        None => issuer.log.log("never-acquired", &[("failed", &failed_acquisitions)], None),
    }
    issuer.finish()?;
    Ok(())
}

/// After the last sequence number of a millisecond, sleeps into the next one instead of
/// leaving the generator to spin there: every millisecond is still issued whole (so two
/// holders of one worker ID in one millisecond issue the same IDs, and are counted), while a
/// few holder processes per test no longer take every core of the machine from the tests
/// beside them (whose store calls and renewals then run late).
fn rest_if_spent(seq: u64, max_seq: u64) {
    if seq == max_seq {
        let into_ms = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.subsec_micros() % 1_000);
        std::thread::sleep(Duration::from_micros(u64::from(1_000 - into_ms)));
    }
}

/// A process configured by the environment alone: `RegistryId::try_generate()` as fast as
/// it can until told to stop, then `Registry::shutdown()`.
fn registry(stop: &StopWhen, mut issuer: Issuer) -> Result<(), BoxError> {
    let mut round = 0u32;
    loop {
        round = round.wrapping_add(1);
        if (round.is_multiple_of(256) || !issuer.issuing) && stop.now() {
            break;
        }
        match RegistryId::try_generate() {
            Ok(id) => {
                issuer.issued(id.get(), || {
                    typed_snowflake::Registry::lease_stats().map(|stats| (stats.worker, stats.fence))
                })?;
                rest_if_spent(id.sequence(), RegistryId::LAYOUT.max_seq());
            }
            Err(e) => issuer.failed(&e),
        }
    }
    match typed_snowflake::Registry::shutdown() {
        Ok(()) => issuer.log.log("released", &[], None),
        Err(e) => issuer.log.log("release-failed", &[], Some(&e)),
    }
    issuer.finish()?;
    Ok(())
}

// ---------------------------------------------------------------------------------------
// Cleanup
// ---------------------------------------------------------------------------------------

/// Deletes a namespace's rows from the default lease table of a PostgreSQL or MySQL/MariaDB
/// server when dropped, also when the test fails.
pub struct SqlCleanup {
    pub url: String,
    pub namespace: String,
}

impl Drop for SqlCleanup {
    fn drop(&mut self) {
        let _ = delete_sql_rows(&self.url, &self.namespace);
    }
}

/// Deletes a namespace's rows from the default lease table, as an emptied table or a restore
/// that lost them would: the SQL store's data loss. Runs on a thread of its own with a fresh
/// runtime, since the caller may be inside none or another.
pub fn delete_sql_rows(url: &str, namespace: &str) -> Result<u64, String> {
    let url = url.to_owned();
    let namespace = namespace.to_owned();
    std::thread::spawn(move || -> Result<u64, String> {
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().map_err(|e| e.to_string())?;
        runtime.block_on(async {
            use sqlx::Connection;
            let deleted = if url.starts_with("postgres") {
                let mut conn = sqlx::PgConnection::connect(&url).await.map_err(|e| e.to_string())?;
                sqlx::query("DELETE FROM snowflake_worker_leases WHERE namespace = $1")
                    .bind(&namespace)
                    .execute(&mut conn)
                    .await
                    .map_err(|e| e.to_string())?
                    .rows_affected()
            } else {
                let mut conn = sqlx::MySqlConnection::connect(&url).await.map_err(|e| e.to_string())?;
                sqlx::query("DELETE FROM snowflake_worker_leases WHERE namespace = ?")
                    .bind(&namespace)
                    .execute(&mut conn)
                    .await
                    .map_err(|e| e.to_string())?
                    .rows_affected()
            };
            Ok(deleted)
        })
    })
    .join()
    .map_err(|_| "the cleanup thread panicked".to_owned())?
}
