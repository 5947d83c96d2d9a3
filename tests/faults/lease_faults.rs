//! Worker-ID leases under store faults, attacked from outside with real processes: private
//! `redis-server`s that are killed, restarted empty, flushed and paused (the SQL store's
//! faults are `lease_sql.rs`'s). Every holder generates as fast
//! as it can into a file of its own; the IDs of all files are counted for duplicates, and for
//! each worker ID the holders must follow one another (no interleaving IDs, fencing numbers
//! that only grow). What must hold: a holder stops issuing before its TTL ends, a store that
//! lost its data costs no uniqueness, and a holder issues again by itself, without a
//! restart, once the store is back.
//!
//! The processes are this test binary run again with `--exact child` (see
//! `common/faults.rs`, over `common/child.rs`). Figures (IDs, duplicates, time from "store
//! back" to "IDs flow again") are printed to stderr, also for passing tests. `LEASE_FAULTS_ROUNDS` sets the
//! number of Redis data-loss rounds (default 10, 6 to 8 s each); `CHURN_FAULT_HOLDERS`,
//! `CHURN_FAULT_SECONDS` and `CHURN_FAULT_WORKER_BITS` size the churn (default 64 holders,
//! 12 s, 6 bits; the full run: 1024 holders, 10 bits).

use crate::servers;

use crate::faults;
use crate::faults::heavy;

use crate::rng;

use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use faults::{
    Event, HOLDER_LAYOUT, HolderRun, HolderSpec, Holders, Proxy, Segment, check_workers, count_duplicates,
    describe_runs, ms, report, segments_of, unique, wall_ms,
};
use servers::PrivateRedis;
use typed_snowflake::worker::lease::{LeaseStore, RedisLeaseStore, WorkerLease};
use typed_snowflake::{Generator, Layout};

type TestResult = Result<(), Box<dyn std::error::Error>>;

/// The holders' TTL in every test but the registry's (which runs on the default, 10 s).
const TTL: Duration = Duration::from_secs(2);
const MARGIN: Duration = Duration::from_millis(500);

fn env_or<T: std::str::FromStr>(var: &str, default: T) -> T {
    std::env::var(var).ok().and_then(|v| v.trim().parse().ok()).unwrap_or(default)
}

fn spec(url: &str, namespace: &str, space: u64) -> HolderSpec {
    HolderSpec {
        url: url.to_owned(),
        namespace: namespace.to_owned(),
        space,
        ttl: TTL,
        margin: MARGIN,
        reservation: None,
    }
}

/// How long the first IDs of a fresh namespace may take: a store with no record of a worker
/// ID makes its first holder wait about one TTL and the clock tolerance; then process start
/// and a loaded machine.
fn first_ids_bound(ttl: Duration) -> Duration {
    ttl * 3 + Duration::from_secs(10)
}

/// The child processes' entry point; ignored in the parent (the other tests run it), and
/// does nothing there.
#[test]
#[ignore = "the entry point of the child processes: the other tests run it"]
fn child() -> TestResult {
    faults::child_main()
}

// ---------------------------------------------------------------------------------------
// Data loss: the store forgets, a newcomer arrives at once
// ---------------------------------------------------------------------------------------

/// What one data-loss round gave.
struct Round {
    ids: usize,
    duplicates: usize,
    findings: Vec<String>,
    /// From the store's return to the first run of IDs that began after it.
    flows_again_ms: Option<i64>,
    /// IDs stamped after the store's return: a holder that never stopped (it renewed its
    /// lease again, or took its own worker ID again before its generator asked) issued them.
    issued_after: usize,
    /// Set when fewer than `resuming` holders began a run of IDs within the bound after the
    /// loss: what the holders last logged.
    not_resumed: Option<String>,
    runs: Vec<HolderRun>,
}

/// How long after a data loss `resuming` holders must have begun a run of IDs again. A grant
/// without a record waits out one TTL and the clock tolerance (rule 4, `docs/many-nodes.md`;
/// 2.2 s measured), a holder that takes its own worker ID again one round trip (rule 6);
/// then process start, a renewal interval and a loaded machine: 3 TTL is a wide margin, and a
/// holder that never recovers by itself never meets it.
const RESUME_AFTER_LOSS: Duration = TTL.saturating_mul(3);

/// What a data loss must be followed by, within [`RESUME_AFTER_LOSS`].
#[derive(Clone, Copy, Debug)]
enum Resume {
    /// Both worker IDs of the space lost their records: each is granted again, to its holder
    /// (under a new fence) or to the newcomer, and two processes begin a run of IDs.
    Both,
    /// Only worker 0's lease key is gone, its last grant (`last:0`) and high water kept: the
    /// newcomer takes worker 0 and begins a run, or the old holder's next renewal writes its
    /// lease key again first (a renewal of an expired lease that no one took since, rule 5 of
    /// `docs/many-nodes.md`) and the newcomer is told every worker ID is taken.
    Worker0,
}

impl Resume {
    fn done(self, holders: &Holders, back_ms: i64) -> bool {
        match self {
            Resume::Both => holders.count_issuing_since(back_ms) >= 2,
            Resume::Worker0 => {
                holders.count_issuing_since(back_ms) >= 1
                    || holders.events("c").iter().any(|e| {
                        e.kind == "acquire-failed" && e.get("error").is_some_and(|m| m.starts_with("no free worker ID"))
                    })
            }
        }
    }
}

/// Two holders on a space of 2 issue; `fault` makes the store forget; a third process starts
/// at once; all issue until what `resume` says followed the loss (the round fails when it
/// did not within [`RESUME_AFTER_LOSS`]), and half a second more.
fn data_loss_round(
    url: &str,
    tag: &str,
    resume: Resume,
    fault: impl FnOnce(&str) -> TestResult,
) -> Result<Round, Box<dyn std::error::Error>> {
    let namespace = unique(tag);
    let spec = spec(url, &namespace, 2);
    let mut holders = Holders::new(Duration::from_secs(90))?;
    holders.spawn_holder("a", &spec)?;
    holders.spawn_holder("b", &spec)?;
    if !holders.wait_for(first_ids_bound(TTL), |h| h.count_issuing_since(0) == 2) {
        return Err(format!("{tag}: the two holders never both issued:\n{}", holders.describe()).into());
    }
    std::thread::sleep(Duration::from_millis(400));
    fault(&namespace)?;
    let back_ms = wall_ms();
    holders.spawn_holder("c", &spec)?;
    let resumed = holders.wait_for(RESUME_AFTER_LOSS, |h| resume.done(h, back_ms));
    let not_resumed = (!resumed).then(|| {
        format!(
            "{tag}: not resumed ({resume:?}) within {RESUME_AFTER_LOSS:?} of the loss: {} processes began a run of IDs since:\n{}",
            holders.count_issuing_since(back_ms),
            holders.describe()
        )
    });
    std::thread::sleep(Duration::from_millis(500));
    let runs = holders.finish()?;
    let (ids, duplicates) = count_duplicates(runs.iter().map(|r| r.ids.as_slice()));
    let findings = check_workers(&segments_of(&runs, &HOLDER_LAYOUT));
    let flows_again_ms = runs.iter().filter_map(|r| r.resumed_after(back_ms)).map(|e| e.at_ms - back_ms).min();
    let issued_after =
        runs.iter().flat_map(|r| r.ids.iter()).filter(|&&id| HOLDER_LAYOUT.timestamp_ms_of(id) > back_ms).count();
    Ok(Round { ids, duplicates, findings, flows_again_ms, issued_after, not_resumed, runs })
}

/// Reports a round; its failures, if any.
fn judge(label: &str, round: &Round) -> Option<String> {
    let per_holder: Vec<String> =
        round.runs.iter().enumerate().map(|(i, r)| format!("holder {i} = {}: {}", r.name, r.ids.len())).collect();
    report(&format!(
        "{label}: {} IDs ({}), {} duplicates, first run after the loss {} ms after the store came back, {} IDs stamped after it{}",
        round.ids,
        per_holder.join(", "),
        round.duplicates,
        round.flows_again_ms.map_or_else(|| "none (no holder stopped)".to_owned(), |ms| ms.to_string()),
        round.issued_after,
        if round.findings.is_empty() { String::new() } else { format!("; {}", round.findings.join("; ")) }
    ));
    let mut failures = Vec::new();
    if round.duplicates > 0 {
        failures.push(format!("{} duplicate IDs", round.duplicates));
    }
    failures.extend(round.findings.iter().cloned());
    if round.flows_again_ms.is_none() && round.issued_after == 0 {
        failures.push("no holder issued after the loss: the round proves nothing".to_owned());
    }
    failures.extend(round.not_resumed.iter().cloned());
    (!failures.is_empty()).then(|| format!("{label}: {}\n{}", failures.join("; "), describe_runs(&round.runs)))
}

/// Redis killed (`SIGKILL`) and restarted empty on its port while two holders issue on a
/// space of 2, a third process starting at once; `LEASE_FAULTS_ROUNDS` rounds (default 10)
/// with TTL 2 s. In every round: no ID twice, no two holders issuing on one worker ID at once,
/// and the fencing numbers of each worker ID grow across the loss.
#[test]
fn redis_restarted_empty_under_two_holders_and_a_newcomer_gives_no_duplicate() -> TestResult {
    let _turn = heavy();
    let Some(mut redis) = PrivateRedis::start() else { return Ok(()) };
    let rounds: usize = env_or("LEASE_FAULTS_ROUNDS", 10);
    let started = Instant::now();
    let mut failures = Vec::new();
    let (mut ids, mut duplicates) = (0, 0);
    for n in 0..rounds {
        let url = redis.url();
        let round = data_loss_round(&url, &format!("loss{n}"), Resume::Both, |_| {
            redis.kill9();
            redis.restart_empty();
            Ok(())
        })?;
        ids += round.ids;
        duplicates += round.duplicates;
        failures.extend(judge(&format!("redis restarted empty, round {}/{rounds}", n + 1), &round));
    }
    report(&format!(
        "redis restarted empty: {rounds} rounds in {:.1} s, {ids} IDs, {duplicates} duplicates, {} rounds failed",
        started.elapsed().as_secs_f64(),
        failures.len()
    ));
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    Ok(())
}

/// `FLUSHALL` while two holders issue, a third process starting at once.
#[test]
fn flushall_under_two_holders_and_a_newcomer_gives_no_duplicate() -> TestResult {
    let _turn = heavy();
    let Some(redis) = PrivateRedis::start() else { return Ok(()) };
    let url = redis.url();
    let round = data_loss_round(&url, "flushall", Resume::Both, |_| {
        redis.flushall();
        Ok(())
    })?;
    if let Some(failure) = judge("redis FLUSHALL", &round) {
        panic!("{failure}");
    }
    Ok(())
}

/// The lease key of worker 0 deleted by hand (`DEL snowflake:{<ns>}:worker:0`) while two
/// holders issue, a third process starting at once (and taking worker 0).
#[test]
fn a_lease_key_deleted_by_hand_gives_no_duplicate() -> TestResult {
    let _turn = heavy();
    let Some(redis) = PrivateRedis::start() else { return Ok(()) };
    let url = redis.url();
    let round = data_loss_round(&url, "del", Resume::Worker0, |namespace| {
        let mut conn = redis::Client::open(url.as_str())?.get_connection()?;
        let deleted: i64 = redis::cmd("DEL").arg(format!("snowflake:{{{namespace}}}:worker:0")).query(&mut conn)?;
        if deleted != 1 {
            return Err(format!("no lease key of worker 0 in namespace {namespace}").into());
        }
        Ok(())
    })?;
    if let Some(failure) = judge("lease key deleted", &round) {
        panic!("{failure}");
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------
// Outage and recovery
// ---------------------------------------------------------------------------------------

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    Begin,
    End,
}

/// What each holder did around a fault that began at `fault_ms` and ended at `back_ms`:
/// it stopped before its TTL ran out (by the timestamp of its last ID, and no ID stamped
/// between the TTL's end and the store's return), and began issuing again within `bound`
/// after the store came back. Reports the figures; returns the failures.
fn judge_outage(
    label: &str,
    runs: &[HolderRun],
    layout: &Layout,
    ttl: Duration,
    fault_ms: i64,
    back_ms: i64,
    bound: Duration,
) -> Vec<String> {
    let mut failures = Vec::new();
    for run in runs {
        let name = &run.name;
        match run.stop_after(fault_ms) {
            None => failures.push(format!("{name}: never stopped issuing after the fault")),
            Some(stop) => {
                let last = stop.last_id_ms - fault_ms;
                report(&format!(
                    "{label}: {name} stopped {} ms after the fault began (its last ID stamped {} ms after; TTL {} ms)",
                    stop.at_ms - fault_ms,
                    if stop.last_id_ms == i64::MIN { "-".to_owned() } else { last.to_string() },
                    ms(ttl)
                ));
                if stop.last_id_ms >= fault_ms + ms(ttl) {
                    failures.push(format!("{name}: issued an ID stamped {last} ms after the fault, TTL {ttl:?}"));
                }
            }
        }
        let late = run.stamped_within(layout, fault_ms + ms(ttl), back_ms);
        if late > 0 {
            failures.push(format!("{name}: {late} IDs stamped between the TTL's end and the store's return"));
        }
        match run.resumed_after(back_ms) {
            Some(event) => {
                let took = event.at_ms - back_ms;
                report(&format!(
                    "{label}: {name}: store back -> IDs flow again in {took} ms (worker {}, fence {})",
                    event.get("id_worker").unwrap_or("?"),
                    event.get("fence").unwrap_or("?")
                ));
                if took > ms(bound) {
                    failures.push(format!("{name}: issued again only {took} ms after the store came back"));
                }
            }
            None => {
                report(&format!("{label}: {name}: store back -> no ID within {bound:?}"));
                failures.push(format!("{name}: never issued again after the store came back"));
            }
        }
    }
    let (ids, duplicates) = count_duplicates(runs.iter().map(|r| r.ids.as_slice()));
    let findings = check_workers(&segments_of(runs, layout));
    report(&format!("{label}: {ids} IDs, {duplicates} duplicates"));
    if duplicates > 0 {
        failures.push(format!("{duplicates} duplicate IDs"));
    }
    failures.extend(findings);
    failures
}

/// Two holders on a space of 2 issue; `fault(Begin)`; `hold`; `fault(End)`; both must stop
/// before their TTL ends and issue again by themselves within 3 TTL of the store's return.
fn outage(label: &str, url: &str, namespace: &str, hold: Duration, mut fault: impl FnMut(Phase)) -> TestResult {
    let spec = spec(url, namespace, 2);
    let bound = TTL * 3;
    let mut holders = Holders::new(Duration::from_secs(120))?;
    holders.spawn_holder("a", &spec)?;
    holders.spawn_holder("b", &spec)?;
    if !holders.wait_for(first_ids_bound(TTL), |h| h.count_issuing_since(0) == 2) {
        return Err(format!("{label}: the two holders never both issued:\n{}", holders.describe()).into());
    }
    std::thread::sleep(Duration::from_millis(500));
    let fault_ms = wall_ms();
    fault(Phase::Begin);
    std::thread::sleep(hold);
    // The store's return is read before the store is given back: read after, on a loaded
    // machine, it can come later than IDs a renewal the store answered at once allowed.
    let back_ms = wall_ms();
    fault(Phase::End);
    let resumed = holders.wait_for(bound + Duration::from_secs(1), |h| h.count_issuing_since(back_ms) == 2);
    let not_resumed = (!resumed).then(|| {
        format!(
            "{} of the 2 holders issued again within {:?} of the store's return:\n{}",
            holders.count_issuing_since(back_ms),
            bound + Duration::from_secs(1),
            holders.describe()
        )
    });
    std::thread::sleep(Duration::from_millis(300));
    let runs = holders.finish()?;
    let mut failures = judge_outage(label, &runs, &HOLDER_LAYOUT, TTL, fault_ms, back_ms, bound);
    failures.extend(not_resumed);
    assert!(failures.is_empty(), "{label}:\n{}\n{}", failures.join("\n"), describe_runs(&runs));
    Ok(())
}

/// Redis paused (`SIGSTOP`) for 2.5 TTL, then continued: the leases expired meanwhile, the
/// data is kept.
#[test]
fn redis_stopped_for_two_and_a_half_ttls_then_holders_resume() -> TestResult {
    let _turn = heavy();
    let Some(redis) = PrivateRedis::start() else { return Ok(()) };
    let namespace = unique("redis-stop");
    outage("redis stopped 2.5 TTL", &redis.url(), &namespace, TTL * 5 / 2, |phase| match phase {
        Phase::Begin => redis.stop(),
        Phase::End => redis.cont(),
    })
}

/// Redis killed, down for 2 TTL, and restarted empty on its port.
#[test]
fn redis_killed_and_restarted_empty_after_two_ttls_then_holders_resume() -> TestResult {
    let _turn = heavy();
    let Some(mut redis) = PrivateRedis::start() else { return Ok(()) };
    let namespace = unique("redis-kill");
    let url = redis.url();
    outage("redis killed, empty 2 TTL later", &url, &namespace, TTL * 2, |phase| match phase {
        Phase::Begin => redis.kill9(),
        Phase::End => redis.restart_empty(),
    })
}

// ---------------------------------------------------------------------------------------
// The registry path
// ---------------------------------------------------------------------------------------

/// A process configured only by `SNOWFLAKE_WORKER_LEASE` and `SNOWFLAKE_NAMESPACE` (the
/// default TTL, 10 s) generating through the registry; Redis paused for 25 s: it stops
/// before the TTL ends and issues again without a restart.
#[test]
fn registry_generators_resume_after_redis_stopped_for_25_s() -> TestResult {
    let _turn = heavy();
    let Some(redis) = PrivateRedis::start() else { return Ok(()) };
    let label = "registry, redis stopped 25 s";
    let ttl = typed_snowflake::worker::lease::DEFAULT_TTL;
    let bound = ttl * 3;
    let namespace = unique("registry");
    let mut holders = Holders::new(Duration::from_secs(180))?;
    holders.spawn_registry("registry", &redis.url(), &namespace)?;
    if !holders.wait_for(first_ids_bound(ttl), |h| h.count_issuing_since(0) == 1) {
        return Err(format!("{label}: the process never issued:\n{}", holders.describe()).into());
    }
    std::thread::sleep(Duration::from_secs(1));
    let fault_ms = wall_ms();
    redis.stop();
    std::thread::sleep(Duration::from_secs(25));
    // Read before the store is given back (see `outage`).
    let back_ms = wall_ms();
    redis.cont();
    let resumed = holders.wait_for(bound + Duration::from_secs(1), |h| h.count_issuing_since(back_ms) == 1);
    let not_resumed = (!resumed).then(|| {
        format!(
            "the process did not issue again within {:?} of the store's return:\n{}",
            bound + Duration::from_secs(1),
            holders.describe()
        )
    });
    std::thread::sleep(Duration::from_millis(500));
    let runs = holders.finish()?;
    let mut failures = judge_outage(label, &runs, &faults::RegistryId::LAYOUT, ttl, fault_ms, back_ms, bound);
    failures.extend(not_resumed);
    assert!(failures.is_empty(), "{label}:\n{}\n{}", failures.join("\n"), describe_runs(&runs));
    Ok(())
}

// ---------------------------------------------------------------------------------------
// Churn through a restart and a flush
// ---------------------------------------------------------------------------------------

/// The churn's layout: `worker_bits` worker bits (the space), 8 sequence bits.
fn churn_layout(worker_bits: u32) -> Result<Layout, typed_snowflake::InvalidLayout> {
    Layout::new(41, worker_bits, 8, 1_704_067_200_000)
}

#[derive(Default)]
struct Churned {
    ids: Vec<i64>,
    segments: Vec<Segment>,
    acquisitions: usize,
    refusals: BTreeMap<String, usize>,
    errors: BTreeMap<String, usize>,
    failed_releases: usize,
}

/// The variant's name from an error's `Debug` form: `NoFreeWorker { .. }` → `NoFreeWorker`.
fn kind(debug: String) -> String {
    debug.split([' ', '{', '(']).next().unwrap_or_default().to_owned()
}

/// The run of IDs being issued on one worker ID under one fence.
struct Run {
    worker: u64,
    fence: Option<u64>,
    ids: Vec<i64>,
}

impl Churned {
    fn close(&mut self, holder: usize, run: &mut Run) {
        if !run.ids.is_empty() {
            self.segments.push(Segment::of(holder, run.worker, run.fence, &run.ids));
            self.ids.append(&mut run.ids);
        }
    }
}

/// One of the churn's holders: acquires (retrying whatever the store says), issues in bursts
/// for a while, sometimes with its renewals paused past the margin, then releases or
/// abandons (a crash), until `deadline`.
fn churn_holder(
    holder: usize,
    store: &Arc<dyn LeaseStore>,
    namespace: &str,
    layout: Layout,
    deadline: Instant,
) -> Churned {
    let mut out = Churned::default();
    let mut rng = rng::XorShift::for_actor(holder);
    let mut random = move |n: u64| rng.below(n);
    std::thread::sleep(Duration::from_millis(random(500)));
    while Instant::now() < deadline {
        let acquired = WorkerLease::builder_shared(Arc::clone(store))
            .namespace(namespace)
            .worker_bits(layout.worker_bits())
            .ttl(Duration::from_secs(1))
            .reservation(Duration::from_secs(1))
            .margin(Duration::from_millis(300))
            .renew_every(Duration::from_millis(200))
            .clock_tolerance(Duration::from_millis(200))
            .acquire();
        let lease = match acquired {
            Ok(lease) => lease,
            Err(e) => {
                *out.refusals.entry(kind(format!("{e:?}"))).or_default() += 1;
                std::thread::sleep(Duration::from_millis(50 + random(200)));
                continue;
            }
        };
        out.acquisitions += 1;
        let generator = match Generator::builder(layout).lease(lease.clone()).build() {
            Ok(generator) => generator,
            Err(e) => {
                *out.errors.entry(kind(format!("{e:?}"))).or_default() += 1;
                lease.abandon();
                continue;
            }
        };
        let action = random(4);
        if action == 3 {
            // Longer than the margin: the generators fence, and resume or lose the lease.
            lease.pause_renewals(Duration::from_millis(500));
        }
        let until = Instant::now() + Duration::from_millis(200 + random(600));
        let mut run = Run { worker: 0, fence: None, ids: Vec::new() };
        let mut n = 0u64;
        while Instant::now() < until {
            n += 1;
            // Bursts: 64 holders share two cores with the lease threads under test.
            if n.is_multiple_of(128) {
                std::thread::sleep(Duration::from_millis(10));
                if !run.ids.is_empty() && run.fence != Some(lease.fence()) {
                    out.close(holder, &mut run);
                }
            }
            match generator.next_raw() {
                Ok(id) => {
                    let worker = layout.worker_of(id);
                    if run.ids.is_empty() || worker != run.worker {
                        out.close(holder, &mut run);
                        run.worker = worker;
                        run.fence = Some(lease.fence());
                    }
                    run.ids.push(id);
                }
                Err(e) => {
                    out.close(holder, &mut run);
                    *out.errors.entry(kind(format!("{e:?}"))).or_default() += 1;
                    std::thread::sleep(Duration::from_millis(5));
                }
            }
        }
        out.close(holder, &mut run);
        if action == 0 {
            lease.abandon();
        } else if lease.release().is_err() {
            out.failed_releases += 1;
        }
    }
    out
}

/// 64 holders in one process on a space of 64 (TTL 1 s), acquiring, issuing, releasing and
/// abandoning, while the private Redis is killed and restarted empty (at a third of the run)
/// and flushed (at two thirds): no ID twice, no two holders on one worker ID at once. Fences
/// are not checked here: they only grow while the store keeps what it acknowledged, and a
/// grant that read the store just before a flush may take a fence below one the flush erased
/// (uniqueness rests on the floors, not on the fences).
#[test]
fn churn_of_64_holders_through_a_redis_restart_and_a_flush() -> TestResult {
    let _turn = heavy();
    let Some(mut redis) = PrivateRedis::start() else { return Ok(()) };
    let holders: usize = env_or("CHURN_FAULT_HOLDERS", 64);
    let seconds: u64 = env_or("CHURN_FAULT_SECONDS", 12);
    let layout = churn_layout(env_or("CHURN_FAULT_WORKER_BITS", 6))?;
    let namespace = unique("churn-faults");
    let store: Arc<dyn LeaseStore> = Arc::new(RedisLeaseStore::open(&redis.url())?.timeout(Duration::from_millis(500)));
    let deadline = Instant::now() + Duration::from_secs(seconds);
    let third = Duration::from_secs(seconds) / 3;
    let results: Vec<Churned> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..holders)
            .map(|holder| {
                let (store, namespace) = (&store, namespace.as_str());
                scope.spawn(move || churn_holder(holder, store, namespace, layout, deadline))
            })
            .collect();
        std::thread::sleep(third);
        redis.kill9();
        redis.restart_empty();
        std::thread::sleep(third);
        redis.flushall();
        handles.into_iter().map(|h| h.join().expect("a holder panicked")).collect()
    });
    let (ids, duplicates) = count_duplicates(results.iter().map(|r| r.ids.as_slice()));
    let segments: Vec<Segment> = results.iter().flat_map(|r| r.segments.iter().copied()).collect();
    let findings = check_workers(&segments);
    let acquisitions: usize = results.iter().map(|r| r.acquisitions).sum();
    let failed_releases: usize = results.iter().map(|r| r.failed_releases).sum();
    let mut refusals: BTreeMap<String, usize> = BTreeMap::new();
    let mut errors: BTreeMap<String, usize> = BTreeMap::new();
    for result in &results {
        for (k, v) in &result.refusals {
            *refusals.entry(k.clone()).or_default() += v;
        }
        for (k, v) in &result.errors {
            *errors.entry(k.clone()).or_default() += v;
        }
    }
    report(&format!(
        "churn through a restart and a flush: {holders} holders on {} worker IDs, {seconds} s: {acquisitions} acquisitions, refused {refusals:?}, generation errors {errors:?}, {failed_releases} failed releases, {ids} IDs, {duplicates} duplicates, {} runs",
        layout.max_worker() + 1,
        segments.len()
    ));
    assert_eq!(duplicates, 0, "{duplicates} duplicate IDs; {findings:?}");
    let overlaps: Vec<&String> =
        findings.iter().filter(|f| !f.contains(": fence ") && !f.contains(" 0 interleaving pairs")).collect();
    assert!(overlaps.is_empty(), "{findings:?}");
    assert!(acquisitions >= holders, "every holder acquired at least once: {acquisitions}");
    Ok(())
}

// ---------------------------------------------------------------------------------------
// The fixtures themselves
// ---------------------------------------------------------------------------------------

/// An echo server on a free loopback port, stopped when dropped.
struct Echo {
    port: u16,
    closing: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Echo {
    fn start() -> std::io::Result<Echo> {
        let listener = TcpListener::bind(("127.0.0.1", 0))?;
        listener.set_nonblocking(true)?;
        let port = listener.local_addr()?.port();
        let closing = Arc::new(AtomicBool::new(false));
        let thread = std::thread::spawn({
            let closing = Arc::clone(&closing);
            move || {
                let mut connections = Vec::new();
                while !closing.load(Ordering::SeqCst) {
                    match listener.accept() {
                        Ok((mut stream, _)) => {
                            let closing = Arc::clone(&closing);
                            connections.push(std::thread::spawn(move || {
                                let _ = stream.set_nonblocking(false);
                                let _ = stream.set_read_timeout(Some(Duration::from_millis(10)));
                                let mut buf = [0u8; 1024];
                                while !closing.load(Ordering::SeqCst) {
                                    match stream.read(&mut buf) {
                                        Ok(0) => break,
                                        Ok(n) => {
                                            if stream.write_all(&buf[..n]).is_err() {
                                                break;
                                            }
                                        }
                                        Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
                                        Err(e) if e.kind() == std::io::ErrorKind::TimedOut => {}
                                        Err(_) => break,
                                    }
                                }
                            }));
                        }
                        Err(_) => std::thread::sleep(Duration::from_millis(2)),
                    }
                }
                for connection in connections {
                    let _ = connection.join();
                }
            }
        });
        Ok(Echo { port, closing, thread: Some(thread) })
    }
}

impl Drop for Echo {
    fn drop(&mut self) {
        self.closing.store(true, Ordering::SeqCst);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// Reads up to `want` bytes within `within`; fewer if the connection ends or the time is up.
fn read_for(stream: &mut TcpStream, want: usize, within: Duration) -> Result<Vec<u8>, std::io::Error> {
    let deadline = Instant::now() + within;
    let mut got = Vec::new();
    let mut buf = [0u8; 64];
    while got.len() < want && Instant::now() < deadline {
        stream.set_read_timeout(Some(Duration::from_millis(20)))?;
        match stream.read(&mut buf) {
            Ok(0) => return Ok(got),
            Ok(n) => got.extend_from_slice(&buf[..n]),
            Err(e) if matches!(e.kind(), std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut) => {}
            Err(e) => return Err(e),
        }
    }
    Ok(got)
}

/// Whether the peer closed the connection within `within` (end of stream or a reset).
fn closed_within(stream: &mut TcpStream, within: Duration) -> bool {
    let deadline = Instant::now() + within;
    let mut buf = [0u8; 64];
    while Instant::now() < deadline {
        let _ = stream.set_read_timeout(Some(Duration::from_millis(20)));
        match stream.read(&mut buf) {
            Ok(0) => return true,
            Ok(_) => {}
            Err(e) if matches!(e.kind(), std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut) => {}
            Err(_) => return true,
        }
    }
    false
}

#[test]
fn the_proxy_forwards_stalls_drops_and_resumes() -> TestResult {
    let echo = Echo::start()?;
    let proxy = Proxy::start(([127, 0, 0, 1], echo.port).into())?;
    let connect = || TcpStream::connect(("127.0.0.1", proxy.port()));
    let mut first = connect()?;
    first.write_all(b"ping")?;
    assert_eq!(read_for(&mut first, 4, Duration::from_secs(2))?, b"ping");

    // Stalled: the connection stays open and nothing moves, a new one is accepted and waits.
    proxy.stall();
    first.write_all(b"held")?;
    let mut second = connect()?;
    second.write_all(b"late")?;
    assert_eq!(read_for(&mut first, 4, Duration::from_millis(300))?, b"");
    assert_eq!(read_for(&mut second, 4, Duration::from_millis(300))?, b"");
    proxy.resume();
    assert_eq!(read_for(&mut first, 4, Duration::from_secs(2))?, b"held");
    assert_eq!(read_for(&mut second, 4, Duration::from_secs(2))?, b"late");

    // Dropped: every connection closes, and so does every new one.
    proxy.drop_all();
    assert!(closed_within(&mut first, Duration::from_secs(2)), "a connection survived drop_all");
    assert!(closed_within(&mut second, Duration::from_secs(2)), "a connection survived drop_all");
    let mut third = connect()?;
    let _ = third.write_all(b"lost");
    assert!(closed_within(&mut third, Duration::from_secs(2)), "a new connection was kept while dropping");
    proxy.resume();
    let mut fourth = connect()?;
    fourth.write_all(b"pong")?;
    assert_eq!(read_for(&mut fourth, 4, Duration::from_secs(2))?, b"pong");
    assert!(proxy.accepted() >= 4);

    // Dropped, it closes what it held and forwards no more. Its port is free again: another
    // test may take it at once, so a connection there may succeed, but never reaches the echo
    // server through the proxy.
    let port = proxy.port();
    drop(proxy);
    assert!(closed_within(&mut fourth, Duration::from_secs(2)), "a connection survived the proxy's drop");
    if let Ok(mut late) = TcpStream::connect(("127.0.0.1", port)) {
        let _ = late.write_all(b"gone");
        let echoed = read_for(&mut late, 4, Duration::from_millis(300)).unwrap_or_default();
        assert_ne!(echoed, b"gone", "the proxy still forwards after its drop");
    }
    assert_eq!(
        faults::with_address("postgres://u:p@db.example:5432/test?x=1", "127.0.0.1:9").as_deref(),
        Some("postgres://u:p@127.0.0.1:9/test?x=1")
    );
    assert_eq!(
        faults::with_address("mysql://root@127.0.0.1/test", "127.0.0.1:9").as_deref(),
        Some("mysql://root@127.0.0.1:9/test")
    );
    Ok(())
}

#[test]
fn a_private_redis_is_killed_restarted_empty_on_its_port_paused_and_flushed() -> TestResult {
    let Some(mut redis) = PrivateRedis::start() else { return Ok(()) };
    let port = redis.port();
    let connect = |url: &str| -> redis::RedisResult<redis::Connection> {
        let conn = redis::Client::open(url)?.get_connection_with_timeout(Duration::from_secs(1))?;
        conn.set_read_timeout(Some(Duration::from_millis(500)))?;
        Ok(conn)
    };
    let mut conn = connect(&redis.url())?;
    let () = redis::cmd("SET").arg("k").arg("v").query(&mut conn)?;

    redis.kill9();
    assert!(TcpStream::connect(("127.0.0.1", port)).is_err(), "killed, the port still answers");
    redis.restart_empty();
    assert_eq!(redis.port(), port);
    let mut conn = connect(&redis.url())?;
    let value: Option<String> = redis::cmd("GET").arg("k").query(&mut conn)?;
    assert_eq!(value, None, "restarted with its data");

    let () = redis::cmd("SET").arg("k").arg("v").query(&mut conn)?;
    redis.flushall();
    let size: i64 = redis::cmd("DBSIZE").query(&mut conn)?;
    assert_eq!(size, 0);

    redis.stop();
    let paused: redis::RedisResult<String> = redis::cmd("PING").query(&mut conn);
    assert!(paused.is_err(), "a paused server answered: {paused:?}");
    redis.cont();
    let mut conn = connect(&redis.url())?;
    let pong: String = redis::cmd("PING").query(&mut conn)?;
    assert_eq!(pong, "PONG");
    Ok(())
}

fn event(line: &str) -> Event {
    Event::parse(line).unwrap_or_else(|| panic!("unparsable event {line:?}"))
}

#[test]
fn the_counters_find_duplicates_interleaved_holders_and_fences_going_back() -> TestResult {
    let layout = HOLDER_LAYOUT;
    let ids = |worker: u64, from_ms: i64, to_ms: i64| -> Result<Vec<i64>, typed_snowflake::LayoutError> {
        (from_ms..to_ms).map(|ms| layout.encode(1_800_000_000_000 + ms, worker, 0)).collect()
    };
    let run = |name: &str, fence: u64, ids: Vec<i64>| HolderRun {
        name: name.to_owned(),
        events: vec![
            event(&format!("1 resumed n=0 worker=0 fence={fence} id_worker=0 id_ms=1")),
            event(&format!("2 stopped n={} last_id_ms=1 error=lost: a b=c", ids.len())),
        ],
        ids,
    };
    // Worker 0 held by "a" (fence 5) for 10 ms, then by "b" (fence 3) from the 5th ms on.
    let bad = [run("a", 5, ids(0, 0, 10)?), run("b", 3, ids(0, 5, 15)?)];
    assert_eq!(count_duplicates(bad.iter().map(|r| r.ids.as_slice())), (20, 5));
    let findings = check_workers(&segments_of(&bad, &layout));
    assert!(findings.iter().any(|f| f.contains("issued at once")), "{findings:?}");
    assert!(findings.iter().any(|f| f.contains("went backwards")), "{findings:?}");
    let twice = [run("a", 5, ids(0, 0, 10)?), run("b", 5, ids(0, 10, 15)?)];
    assert!(check_workers(&segments_of(&twice, &layout)).iter().any(|f| f.contains("given twice")));

    // The same, one after the other with a higher fence; worker 1 in between changes nothing.
    let good = [run("a", 5, ids(0, 0, 10)?), run("b", 6, ids(0, 10, 15)?), run("c", 1, ids(1, 0, 15)?)];
    assert_eq!(count_duplicates(good.iter().map(|r| r.ids.as_slice())), (30, 0));
    assert_eq!(check_workers(&segments_of(&good, &layout)), Vec::<String>::new());

    // One process: a run under fence 1, a stop, a run under fence 2 on another worker.
    let mut two = run("a", 1, ids(0, 0, 3)?);
    two.ids.extend(ids(1, 10, 12)?);
    two.events = vec![
        event("100 resumed n=0 worker=0 fence=1 id_worker=0 id_ms=0"),
        event("200 stopped n=3 last_id_ms=2 error=fenced"),
        event("900 resumed n=3 worker=1 fence=2 id_worker=1 id_ms=10"),
    ];
    let segments = two.segments(0, &layout);
    assert_eq!(
        segments.iter().map(|s| (s.worker, s.fence, s.count)).collect::<Vec<_>>(),
        [(0, Some(1), 3), (1, Some(2), 2)]
    );
    // The lease acquired again (worker 1, fence 9) while the generator still issued on worker 0
    // under fence 1: the run after the `fence` event keeps worker 0 and has no known fence, so
    // a holder that issued on worker 0 under fence 4 before it is not reported out of order.
    let mut late = run("b", 1, ids(0, 0, 6)?);
    late.events = vec![
        event("100 resumed n=0 worker=0 fence=1 id_worker=0 id_ms=0"),
        event("200 fence n=3 worker=1 fence=9 id_worker=0 id_ms=3"),
        event("300 stopped n=6 last_id_ms=5 error=fenced"),
    ];
    assert_eq!(
        late.segments(0, &layout).iter().map(|s| (s.worker, s.fence, s.count)).collect::<Vec<_>>(),
        [(0, Some(1), 3), (0, None, 3)]
    );
    let after = [late, run("c", 4, ids(0, 6, 9)?)];
    assert_eq!(check_workers(&segments_of(&after, &layout)), Vec::<String>::new());

    assert_eq!(two.stop_after(150), Some(faults::Stop { at_ms: 200, last_id_ms: 2 }));
    assert_eq!(two.stop_after(300), Some(faults::Stop { at_ms: 200, last_id_ms: 2 }));
    assert_eq!(two.resumed_after(300).map(|e| e.at_ms), Some(900));
    assert_eq!(two.stop_after(1000), None);
    let parsed = event("5 stopped n=7 last_id_ms=-3 error=lease store x: renewing failed: a=b");
    assert_eq!(parsed.int("last_id_ms"), Some(-3));
    assert_eq!(parsed.get("error"), Some("lease store x: renewing failed: a=b"));
    Ok(())
}
