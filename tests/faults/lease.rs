//! Worker-ID leases end to end, against the real stores (`REDIS_URL`, `DATABASE_URL_PG`,
//! `DATABASE_URL_MYSQL`) and private `redis-server`s this test starts and stops: real
//! processes configured only by `SNOWFLAKE_WORKER_LEASE` never share an ID, a holder whose
//! renewals are cut off stops issuing before its TTL ends, a new holder starts above the
//! previous one even with a clock an hour back, and a node with a skewed clock is refused.
//!
//! The processes are this test binary run again with `--exact child` (`common/child.rs`).

use crate::child;
use crate::faults::unique;
use crate::faults::{alone, heavy};
use crate::rng;
use crate::servers;

use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::process::Stdio;
use std::sync::Arc;
use std::sync::atomic::AtomicUsize;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use typed_snowflake::worker::lease::{
    LeaseError, LeaseStatus, LeaseStore, RedisLeaseStore, SqlLeaseStore, WorkerLease, WorkerLeaseBuilder, open_store,
};
use typed_snowflake::{
    Clock, FenceReason, GenerateError, Generator, Layout, ManualClock, Registry, SnowflakeId, StepBack, SystemClock,
};

type TestResult = Result<(), Box<dyn std::error::Error>>;

/// Five worker bits: 32 processes at most.
#[derive(SnowflakeId, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
#[layout(time = 42, worker = 5, seq = 16, epoch = "2021-05-05")]
struct Narrow(i64);

/// Ten worker bits.
#[derive(SnowflakeId, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
#[layout(time = 41, worker = 10, seq = 12, epoch = "2020-01-01")]
struct Wide(i64);

fn wall_ms() -> i64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
}

/// Deletes a namespace's keys or rows when dropped, also when the test fails.
struct Cleanup {
    url: String,
    namespace: String,
}

impl Drop for Cleanup {
    fn drop(&mut self) {
        if self.url.starts_with("redis") {
            servers::delete_redis_keys(&self.url, &servers::redis_lease_keys(&self.namespace));
        } else {
            let url = self.url.clone();
            let namespace = self.namespace.clone();
            // The default table; a fresh runtime, since a test may have none.
            let _ = std::thread::spawn(move || {
                let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().ok()?;
                runtime.block_on(async {
                    use sqlx::Connection;
                    if url.starts_with("postgres") {
                        let mut conn = sqlx::PgConnection::connect(&url).await.ok()?;
                        sqlx::query("DELETE FROM snowflake_worker_leases WHERE namespace = $1")
                            .bind(&namespace)
                            .execute(&mut conn)
                            .await
                            .ok()
                            .map(drop)
                    } else {
                        let mut conn = sqlx::MySqlConnection::connect(&url).await.ok()?;
                        sqlx::query("DELETE FROM snowflake_worker_leases WHERE namespace = ?")
                            .bind(&namespace)
                            .execute(&mut conn)
                            .await
                            .ok()
                            .map(drop)
                    }
                })
            })
            .join();
        }
    }
}

// ---------------------------------------------------------------------------------------
// Real processes configured by the environment alone
// ---------------------------------------------------------------------------------------

/// What a child reported: its IDs, or the error that refused it.
enum Outcome {
    Issued(Vec<i64>),
    Refused(String),
}

fn spawn_children(
    count: usize,
    scenario: &str,
    url: &str,
    namespace: &str,
    seconds: f64,
) -> Result<Vec<Outcome>, Box<dyn std::error::Error>> {
    let dir = tempfile::tempdir()?;
    // Every child leases first, then all generate from the same instant, so no acquisition
    // competes for the CPU with processes already generating at full speed.
    let start_at = wall_ms() + 1_000 + 60 * i64::try_from(count)?;
    let mut children = Vec::new();
    for n in 0..count {
        let out = dir.path().join(format!("ids-{n}"));
        let process = child::command(scenario)
            .env("SNOWFLAKE_WORKER_LEASE", url)
            .env("SNOWFLAKE_NAMESPACE", namespace)
            .env_remove("SNOWFLAKE_WORKER_ID")
            .env_remove("SNOWFLAKE_WORKER_SPACE")
            .env("LEASE_TEST_SECONDS", seconds.to_string())
            // A fresh namespace: each worker ID waits out one TTL before its first ID. 6 s, not
            // less: processes at full speed beside the other slow tests can starve a renewal
            // (and the Redis that answers it) for over 2 s, and a lease not renewed in time
            // stops its generators, as it must.
            .env("SNOWFLAKE_LEASE_TTL", "6s")
            .env("SNOWFLAKE_LEASE_RESERVATION", "6s")
            .env("LEASE_TEST_START_AT", start_at.to_string())
            .env("LEASE_TEST_OUT", &out)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()?;
        children.push((process, out));
    }
    let mut outcomes = Vec::new();
    for (process, out) in children {
        let output = process.wait_with_output()?;
        let stdout = child::check(scenario, &output, &namespace);
        // The harness prints "test child ... " on the same line.
        if let Some((_, refused)) = stdout.split_once("REFUSED: ") {
            outcomes.push(Outcome::Refused(refused.lines().next().unwrap_or_default().to_owned()));
            continue;
        }
        let bytes = std::fs::read(&out)?;
        outcomes.push(Outcome::Issued(
            bytes.chunks_exact(8).map(|c| i64::from_le_bytes(c.try_into().unwrap_or_default())).collect(),
        ));
    }
    Ok(outcomes)
}

/// Sorts `ids` and fails on the first one issued twice.
fn assert_no_duplicate(ids: &mut [i64]) {
    ids.sort_unstable();
    if let Some(pair) = ids.windows(2).find(|pair| pair[0] == pair[1]) {
        panic!("ID {} issued twice", pair[0]);
    }
}

/// The child: generates as fast as it can for the given time, then shuts the registry down
/// (releasing the lease) and writes its IDs out; or reports that it was refused a worker
/// ID. Ignored in the parent, and does nothing there.
#[test]
#[ignore = "the entry point of the child processes: the other tests run it"]
fn child() -> TestResult {
    let Some(scenario) = child::scenario() else { return Ok(()) };
    let seconds: f64 = std::env::var("LEASE_TEST_SECONDS")?.parse()?;
    let out = std::env::var("LEASE_TEST_OUT")?;
    let next: fn() -> Result<i64, GenerateError> = match scenario.as_str() {
        "narrow" => || Narrow::try_generate().map(|id| id.get()),
        "wide" => || Wide::try_generate().map(|id| id.get()),
        other => return Err(format!("unknown scenario {other}").into()),
    };
    let first = match next() {
        Ok(id) => id,
        Err(e) => {
            println!("REFUSED: {e}");
            child::done(&scenario);
            return Ok(());
        }
    };
    let start_at: i64 = std::env::var("LEASE_TEST_START_AT")?.parse()?;
    std::thread::sleep(Duration::from_millis(u64::try_from(start_at - wall_ms()).unwrap_or(0)));
    let mut ids = vec![first];
    let deadline = Instant::now() + Duration::from_secs_f64(seconds);
    while Instant::now() < deadline {
        for _ in 0..1000 {
            ids.push(next()?);
        }
    }
    Registry::shutdown()?;
    let bytes: Vec<u8> = ids.iter().flat_map(|id| id.to_le_bytes()).collect();
    std::fs::write(out, bytes)?;
    println!("{} IDs", ids.len());
    child::done(&scenario);
    Ok(())
}

/// `count` processes with `SNOWFLAKE_WORKER_LEASE` and nothing else, at full speed for
/// `seconds`: `count` worker IDs, no ID twice.
fn processes(count: usize, seconds: f64, url: &str, tag: &str) -> TestResult {
    // Eight processes at full speed take the 2 cores: no other heavy test beside them.
    let _turn = if count > 2 { alone() } else { heavy() };
    let namespace = unique(tag);
    let _cleanup = Cleanup { url: url.to_owned(), namespace: namespace.clone() };
    let outcomes = spawn_children(count, "wide", url, &namespace, seconds)?;
    let mut all = Vec::new();
    let mut workers = BTreeSet::new();
    for outcome in outcomes {
        let Outcome::Issued(ids) = outcome else { return Err("no process may be refused a worker ID".into()) };
        workers.insert(Wide::try_from(*ids.first().ok_or("a process issued nothing")?)?.worker());
        all.extend(ids);
    }
    assert_no_duplicate(&mut all);
    eprintln!("{tag}: {count} processes issued {} IDs on workers {workers:?}, no duplicate", all.len());
    assert_eq!(workers.len(), count, "{count} processes, {count} worker IDs: {workers:?}");
    Ok(())
}

#[test]
fn two_processes_at_full_speed_for_several_seconds_never_share_an_id() -> TestResult {
    let Some(url) = servers::redis_url() else { return Ok(()) };
    processes(2, 3.0, &url, "two-redis")
}

#[test]
fn eight_processes_leasing_from_redis_never_share_an_id() -> TestResult {
    let Some(url) = servers::redis_url() else { return Ok(()) };
    processes(8, 0.5, &url, "eight-redis")
}

#[test]
fn eight_processes_leasing_from_postgres_never_share_an_id() -> TestResult {
    let Some(url) = servers::pg_url() else { return Ok(()) };
    processes(8, 0.5, &url, "eight-pg")
}

#[test]
fn eight_processes_leasing_from_mariadb_never_share_an_id() -> TestResult {
    let Some(url) = servers::mysql_url() else { return Ok(()) };
    processes(8, 0.5, &url, "eight-mysql")
}

/// 33 processes generating a type with a 5-bit worker field: the space is the type's, so 32
/// issue and the 33rd is refused with a message that says why.
#[test]
fn thirty_three_processes_for_a_five_bit_type() -> TestResult {
    let Some(url) = servers::redis_url() else { return Ok(()) };
    let _turn = alone();
    let namespace = unique("thirty-three");
    let _cleanup = Cleanup { url: url.clone(), namespace: namespace.clone() };
    let outcomes = spawn_children(33, "narrow", &url, &namespace, 0.3)?;
    let mut all = Vec::new();
    let mut refused = Vec::new();
    let mut workers = BTreeSet::new();
    for outcome in outcomes {
        match outcome {
            Outcome::Issued(ids) => {
                workers.insert(Narrow::try_from(*ids.first().ok_or("a process issued nothing")?)?.worker());
                all.extend(ids);
            }
            Outcome::Refused(message) => refused.push(message),
        }
    }
    assert_no_duplicate(&mut all);
    assert_eq!(workers.len(), 32, "{workers:?}");
    assert_eq!(refused.len(), 1, "{refused:?}");
    assert!(
        refused[0].contains(&format!("no free worker ID in namespace \"{namespace}\": all 32 (0..32) are leased")),
        "{}",
        refused[0]
    );
    Ok(())
}

// ---------------------------------------------------------------------------------------
// Leases in one process
// ---------------------------------------------------------------------------------------

fn layout() -> Layout {
    Wide::LAYOUT
}

/// 32 leases of a 5-bit space, the 33rd refused, a released ID taken again above its last.
/// The namespace is new: each worker ID's first grant waits out one (short) TTL.
fn thirty_two_leases(store: Arc<dyn LeaseStore>, namespace: &str) -> TestResult {
    let builder = |store: &Arc<dyn LeaseStore>| {
        WorkerLease::builder_shared(Arc::clone(store))
            .namespace(namespace)
            .worker_bits(5)
            .ttl(Duration::from_secs(3))
            .reservation(Duration::from_secs(3))
            .margin(Duration::from_millis(600))
            .clock_tolerance(Duration::from_millis(300))
    };
    let leases: Vec<WorkerLease> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..32).map(|_| scope.spawn(|| builder(&store).acquire())).collect();
        handles.into_iter().map(|h| h.join().expect("a holder panicked")).collect::<Result<_, _>>()
    })?;
    let workers: BTreeSet<u64> = leases.iter().map(WorkerLease::worker).collect();
    assert_eq!(workers, (0..32).collect());
    let refused = builder(&store).acquire();
    assert!(matches!(refused, Err(LeaseError::NoFreeWorker { space: 32, .. })), "{refused:?}");

    // Issue on one, release it: the next holder of that worker ID starts above.
    let mut leases = leases;
    let lease = leases.remove(5);
    let worker = lease.worker();
    let generator = Generator::builder(layout()).lease(lease.clone()).build()?;
    let mut last = (0..1000).map(|_| generator.next_raw()).last().transpose()?.ok_or("no ID")?;
    lease.release()?;
    // The tick in progress may finish; the next one is refused.
    let started = Instant::now();
    loop {
        match generator.next_raw() {
            Ok(id) => last = id,
            Err(GenerateError::Fenced { reason: FenceReason::Released, .. }) => break,
            Err(e) => return Err(e.into()),
        }
        assert!(started.elapsed() < Duration::from_secs(10), "still issuing after the release");
    }
    let again = builder(&store).acquire()?;
    assert_eq!(again.worker(), worker);
    let floor = again.previous_high_water_ms().ok_or("the release recorded a high water")?;
    assert!(floor >= layout().timestamp_ms_of(last), "{floor} below the last issued {last}");
    let next = Generator::builder(layout()).lease(again.clone()).build()?;
    assert!(next.next_raw()? > last);
    again.release()?;
    for lease in leases {
        lease.release()?;
    }
    Ok(())
}

#[test]
fn thirty_two_leases_from_redis() -> TestResult {
    let Some(url) = servers::redis_url() else { return Ok(()) };
    let namespace = unique("leases32");
    let _cleanup = Cleanup { url: url.clone(), namespace: namespace.clone() };
    thirty_two_leases(Arc::new(RedisLeaseStore::open(&url)?), &namespace)
}

#[test]
fn thirty_two_leases_from_postgres() -> TestResult {
    let Some(url) = servers::pg_url() else { return Ok(()) };
    let namespace = unique("leases32");
    let _cleanup = Cleanup { url: url.clone(), namespace: namespace.clone() };
    thirty_two_leases(Arc::new(SqlLeaseStore::connect(&url)?), &namespace)
}

#[test]
fn thirty_two_leases_from_mariadb() -> TestResult {
    let Some(url) = servers::mysql_url() else { return Ok(()) };
    let namespace = unique("leases32");
    let _cleanup = Cleanup { url: url.clone(), namespace: namespace.clone() };
    thirty_two_leases(Arc::new(SqlLeaseStore::connect(&url)?), &namespace)
}

/// A private Redis stopped with SIGSTOP: the holder stops issuing before its TTL ends; after
/// the TTL, the store running again, it acquires the worker ID again by itself and resumes
/// above its own IDs; once it releases, a second holder gets the worker ID, and every one of
/// its IDs lies above the first holder's.
#[test]
fn renewals_cut_off_fence_the_holder_before_its_ttl_ends() -> TestResult {
    let Some(server) = servers::PrivateRedis::start() else { return Ok(()) };
    let ttl = Duration::from_millis(1500);
    let margin = Duration::from_millis(400);
    let builder = |store: RedisLeaseStore| -> WorkerLeaseBuilder {
        WorkerLease::builder(store)
            .namespace("cut")
            .space(1)
            .ttl(ttl)
            .reservation(ttl)
            .margin(margin)
            .renew_every(Duration::from_millis(200))
    };
    let first = builder(RedisLeaseStore::open(&server.url())?.timeout(Duration::from_millis(150))).acquire()?;
    let generator = Arc::new(Generator::builder(layout()).lease(first.clone()).build()?);
    // The worker ID is taken: a second holder is refused while the first renews.
    let second_store = || -> Result<RedisLeaseStore, LeaseError> {
        Ok(RedisLeaseStore::open(&server.url())?.timeout(Duration::from_millis(150)))
    };
    assert!(matches!(builder(second_store()?).acquire(), Err(LeaseError::NoFreeWorker { .. })));

    let issuer = {
        let generator = Arc::clone(&generator);
        std::thread::spawn(move || {
            let mut ids = Vec::new();
            let started = Instant::now();
            loop {
                match generator.next_raw() {
                    Ok(id) => ids.push((id, Instant::now())),
                    Err(GenerateError::Fenced { .. }) => return Ok((ids, Instant::now())),
                    Err(e) => return Err(e),
                }
                assert!(started.elapsed() < Duration::from_secs(30), "never fenced");
            }
        })
    };
    std::thread::sleep(Duration::from_millis(600));
    let stopped = Instant::now();
    server.signal("-STOP");
    let (ids, fenced_at) = issuer.join().map_err(|_| "the issuer panicked")??;
    let last_issued = ids.last().map(|(_, at)| *at).ok_or("no ID before the cut")?;
    assert!(last_issued < stopped + ttl, "issued {:?} after the cut, TTL {ttl:?}", last_issued - stopped);
    assert!(fenced_at < stopped + ttl, "fenced {:?} after the cut", fenced_at - stopped);
    assert!(!first.is_valid());

    // Past the TTL the store, running again, has let the lease key expire: no one took the
    // worker ID since, so the first holder's next renewal writes its lease again (the space
    // holds one worker ID); its generator resumes above every ID it issued, and a second
    // holder is refused.
    std::thread::sleep((stopped + ttl + Duration::from_millis(200)).saturating_duration_since(Instant::now()));
    server.signal("-CONT");
    let deadline = Instant::now() + Duration::from_secs(30);
    while first.stats().recoveries + first.stats().late_renewals == 0 {
        assert!(Instant::now() < deadline, "never acquired again: {:?}", first.status());
        std::thread::sleep(Duration::from_millis(10));
    }
    let first_max = ids.iter().map(|(id, _)| *id).max().ok_or("no ID")?;
    let resumed = loop {
        match generator.next_raw() {
            Ok(id) => break id,
            Err(GenerateError::Fenced { .. }) if Instant::now() < deadline => {
                std::thread::sleep(Duration::from_millis(5))
            }
            Err(e) => return Err(e.into()),
        }
    };
    assert!(resumed > first_max, "resumed at {resumed}, below {first_max}");
    assert!(matches!(builder(second_store()?).acquire(), Err(LeaseError::NoFreeWorker { .. })));
    let first_fence = first.fence();
    let mut last_of_first = resumed;
    for _ in 0..1000 {
        last_of_first = generator.next_raw()?;
    }
    first.release()?;
    assert!(matches!(generator.next_raw(), Err(GenerateError::Fenced { reason: FenceReason::Released, .. })));
    // Released: a second holder takes it, with a higher fence, above everything.
    let second = builder(second_store()?).acquire()?;
    assert!(second.fence() > first_fence);
    let successor = Generator::builder(layout()).lease(second.clone()).build()?;
    for _ in 0..10_000 {
        assert!(successor.next_raw()? > last_of_first);
    }
    second.release()?;
    Ok(())
}

/// The next holder of a worker ID starts above the previous holder's last ID, even when its
/// clock reads an hour earlier: it borrows ahead (with a policy that allows it) or refuses,
/// never issues below.
#[test]
fn a_new_holder_starts_above_the_last_even_with_a_clock_an_hour_back() -> TestResult {
    let Some(url) = servers::redis_url() else { return Ok(()) };
    for crash in [false, true] {
        let namespace = unique(if crash { "handover-crash" } else { "handover" });
        let _cleanup = Cleanup { url: url.clone(), namespace: namespace.clone() };
        let builder = || -> Result<WorkerLeaseBuilder, LeaseError> {
            Ok(WorkerLease::builder(RedisLeaseStore::open(&url)?)
                .namespace(namespace.as_str())
                .space(1)
                .ttl(Duration::from_millis(800))
                .reservation(Duration::from_millis(800))
                .margin(Duration::from_millis(200))
                .renew_every(Duration::from_millis(150)))
        };
        let first = builder()?.acquire()?;
        let generator = Generator::builder(layout()).lease(first.clone()).build()?;
        let mut last = 0;
        for _ in 0..50_000 {
            last = generator.next_raw()?;
        }
        if crash {
            first.abandon();
            // Its lease expires after the TTL and the clock tolerance (1 s by default).
            std::thread::sleep(Duration::from_millis(2_000));
        } else {
            first.release()?;
        }
        let second = builder()?.acquire()?;
        let hour_back = Arc::new(
            ManualClock::new(wall_ms() - 3_600_000)
                .with_policy(StepBack::Borrow { max_ahead: Duration::from_secs(7200) }),
        );
        let successor = Generator::builder(layout()).lease(second.clone()).shared_clock(hour_back).build()?;
        let next = successor.next_raw()?;
        assert!(next > last, "crash {crash}: {next} after {last}");
        // With the default policy the hour is too far to borrow: refused, never below.
        let strict = Generator::builder(layout())
            .lease(second.clone())
            .clock(ManualClock::new(wall_ms() - 3_600_000))
            .build()?;
        let refused = strict.next_raw();
        assert!(matches!(refused, Err(GenerateError::ClockBackwards { .. })), "crash {crash}: {refused:?}");
        second.release()?;
    }
    Ok(())
}

/// Acquisition and release awaited in a tokio runtime: the store calls run on the lease's
/// thread, so even the SQL store (which runs its own runtime) works from async code.
#[test]
fn leases_are_acquired_and_released_from_async_code() -> TestResult {
    let (Some(redis_url), Some(pg_url)) = (servers::redis_url(), servers::pg_url()) else { return Ok(()) };
    let namespace = unique("async");
    let _cleanup = [
        Cleanup { url: redis_url.clone(), namespace: namespace.clone() },
        Cleanup { url: pg_url.clone(), namespace: namespace.clone() },
    ];
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    runtime.block_on(async {
        for url in [&redis_url, &pg_url] {
            let lease = WorkerLease::from_url(url.as_str())
                .namespace(namespace.as_str())
                .space(4)
                .reservation(typed_snowflake::worker::lease::DEFAULT_TTL)
                .acquire_async()
                .await?;
            let generator = Generator::builder(layout()).lease(lease.clone()).build()?;
            let before = wall_ms();
            let id = generator.next_raw()?;
            // Issued on the leased worker ID, at the present time (or just after, if the
            // lease's floor asks for it).
            assert_eq!(layout().worker_of(id), lease.worker(), "{url}: {id}");
            let at = layout().timestamp_ms_of(id);
            assert!(at >= before - 1 && at <= wall_ms() + 1_000, "{url}: {id} at {at}, issued at {before}");
            lease.release_async().await?;
        }
        Ok::<(), Box<dyn std::error::Error>>(())
    })
}

/// A clock 5 s off the store's: acquisition refused, both readings in the message.
/// A store that does not answer when the process starts: the acquisition waits for it and
/// succeeds once it answers; with a shorter wait it fails with the store's error. While the
/// store is away later, the status says fenced, with the store's error; once it is back,
/// issuing.
#[test]
fn an_acquisition_waits_for_a_store_that_is_down_at_start() -> TestResult {
    let Some(server) = servers::PrivateRedis::start() else { return Ok(()) };
    let _turn = heavy();
    let builder = |wait: Duration| -> Result<WorkerLeaseBuilder, LeaseError> {
        Ok(WorkerLease::builder(RedisLeaseStore::open(&server.url())?.timeout(Duration::from_millis(200)))
            .namespace("down")
            .space(4)
            .ttl(Duration::from_secs(2))
            .reservation(Duration::from_secs(2))
            .margin(Duration::from_millis(500))
            .clock_tolerance(Duration::from_millis(300))
            .wait_for_store(wait))
    };
    server.signal("-STOP");
    let started = Instant::now();
    let refused = builder(Duration::from_secs(1))?.acquire();
    let waited = started.elapsed();
    assert!(matches!(refused, Err(LeaseError::Timeout { .. })), "{refused:?}");
    assert!(waited >= Duration::from_secs(1) && waited < Duration::from_secs(5), "waited {waited:?}");

    let started = Instant::now();
    let lease = std::thread::scope(|scope| {
        scope.spawn(|| {
            std::thread::sleep(Duration::from_millis(1500));
            server.signal("-CONT");
        });
        builder(Duration::from_secs(20))?.acquire()
    })?;
    assert!(started.elapsed() >= Duration::from_millis(1500), "acquired before the store answered");
    assert!(matches!(lease.status(), LeaseStatus::Issuing { .. }), "{:?}", lease.status());

    let wait_for = |lease: &WorkerLease, what: &str, matches: &dyn Fn(&LeaseStatus) -> bool| -> TestResult {
        let deadline = Instant::now() + Duration::from_secs(15);
        while !matches(&lease.status()) {
            assert!(Instant::now() < deadline, "never {what}: {:?}", lease.status());
            std::thread::sleep(Duration::from_millis(10));
        }
        Ok(())
    };
    server.signal("-STOP");
    wait_for(&lease, "fenced with the store's error", &|status| {
        matches!(status, LeaseStatus::Fenced { reason: FenceReason::NotRenewed { .. }, error: Some(_), .. })
    })?;
    server.signal("-CONT");
    wait_for(&lease, "issuing again", &|status| matches!(status, LeaseStatus::Issuing { .. }))?;
    let observer = lease.clone();
    lease.release()?;
    assert_eq!(observer.status(), LeaseStatus::Released);
    Ok(())
}

/// A generator under many threads moves to another worker ID when its lease is lost and the
/// worker ID it held is taken: holder A issues on worker `a` from four threads; `a`'s key is
/// deleted and B takes `a`; A finds its lease lost, finds `b` held by C, waits, and takes `b`
/// when C releases it. A's threads then issue on `b`, above every ID C issued, and each
/// thread's IDs keep increasing; no ID of A, B or C is issued twice.
#[test]
fn a_generator_moves_to_another_worker_id_under_many_threads() -> TestResult {
    let Some(url) = servers::redis_url() else { return Ok(()) };
    let _turn = heavy();
    let namespace = unique("move");
    let _cleanup = Cleanup { url: url.clone(), namespace: namespace.clone() };
    seed_records(&url, &namespace, 2)?;
    let builder = || -> Result<WorkerLeaseBuilder, LeaseError> {
        Ok(WorkerLease::builder(RedisLeaseStore::open(&url)?)
            .namespace(namespace.as_str())
            .space(2)
            .ttl(Duration::from_millis(1500))
            .reservation(Duration::from_millis(1500))
            .margin(Duration::from_millis(400))
            .renew_every(Duration::from_millis(100))
            .clock_tolerance(Duration::from_millis(200)))
    };
    let lease_a = builder()?.acquire()?;
    let lease_c = builder()?.acquire()?;
    let (a, b) = (lease_a.worker(), lease_c.worker());
    assert_ne!(a, b);
    let holder_a = Generator::builder(layout()).lease(lease_a.clone()).build()?;
    let holder_c = Generator::builder(layout()).lease(lease_c.clone()).build()?;
    let stop = std::sync::atomic::AtomicBool::new(false);
    // How many IDs each of A's threads issued on `a`, and on `b`, so far.
    let on_a: [AtomicUsize; 4] = Default::default();
    let on_b_so_far: [AtomicUsize; 4] = Default::default();
    // Polls `reached` every 5 ms for up to 20 s; fails naming `what` and A's lease if it never is.
    let poll = |what: &str, reached: &dyn Fn() -> bool| -> Result<(), String> {
        let deadline = Instant::now() + Duration::from_secs(20);
        while !reached() {
            if Instant::now() >= deadline {
                return Err(format!("{what}: not reached within 20 s; A's lease: {:?}", lease_a.status()));
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        Ok(())
    };
    // A's threads stop when the scope's body returns, on an error too: the scope then joins
    // them, and an error would otherwise leave them issuing (and keeping every ID) for good.
    struct StopOnExit<'a>(&'a std::sync::atomic::AtomicBool);
    impl Drop for StopOnExit<'_> {
        fn drop(&mut self) {
            self.0.store(true, std::sync::atomic::Ordering::Relaxed);
        }
    }
    let (ids_a, ids_b, ids_c) = std::thread::scope(|scope| -> Result<_, Box<dyn std::error::Error + Send + Sync>> {
        let _stop_on_exit = StopOnExit(&stop);
        let threads: Vec<_> = (0..4)
            .map(|thread| {
                let (on_a, on_b) = (&on_a[thread], &on_b_so_far[thread]);
                let stop = &stop;
                let holder_a = &holder_a;
                scope.spawn(move || {
                    let mut ids = Vec::new();
                    while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                        match holder_a.next_raw() {
                            Ok(id) => {
                                let on = if layout().worker_of(id) == b { on_b } else { on_a };
                                on.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                                ids.push(id);
                            }
                            Err(GenerateError::Fenced { .. }) => std::thread::sleep(Duration::from_millis(1)),
                            Err(e) => return Err(e),
                        }
                    }
                    Ok(ids)
                })
            })
            .collect();
        let mut ids_c: Vec<i64> = (0..100_000).map(|_| holder_c.next_raw()).collect::<Result<_, _>>()?;
        // Every one of A's threads issues on `a` before it goes.
        poll("each of A's threads issued on `a`", &|| {
            on_a.iter().all(|n| n.load(std::sync::atomic::Ordering::Relaxed) > 0)
        })?;
        // `a` vanishes from the store, and B takes it (`b` is C's). A, renewing every 100 ms,
        // may notice first on a loaded machine and take `a` back, leaving B nothing free:
        // then `a` vanishes again, until B has it.
        let mut connection = redis::Client::open(url.as_str())?.get_connection()?;
        let mut attempts = 0;
        let lease_b = loop {
            let () = redis::cmd("DEL").arg(format!("snowflake:{{{namespace}}}:worker:{a}")).query(&mut connection)?;
            match builder()?.acquire() {
                Err(LeaseError::NoFreeWorker { .. }) if attempts < 10 => attempts += 1,
                lease => break lease?,
            }
        };
        assert_eq!(lease_b.worker(), a);
        let holder_b = Generator::builder(layout()).lease(lease_b.clone()).build()?;
        let ids_b: Vec<i64> = (0..100_000).map(|_| holder_b.next_raw()).collect::<Result<_, _>>()?;
        // A finds `a` taken and `b` held: its lease lost `a`, and acquiring again, it is told
        // that no worker ID is free; once C releases `b`, A takes it.
        poll("A's lease lost `a` and found no free worker ID", &|| {
            matches!(
                lease_a.status(),
                LeaseStatus::Recovering { previous_worker, error: Some(LeaseError::NoFreeWorker { .. }), .. }
                    if previous_worker == a
            )
        })?;
        ids_c.extend((0..1_000).map(|_| holder_c.next_raw()).collect::<Result<Vec<_>, _>>()?);
        lease_c.release()?;
        poll(&format!("A moved to {b}"), &|| lease_a.worker() == b && lease_a.is_valid())?;
        // Every one of A's threads issues on `b` before they stop.
        poll(&format!("each of A's threads issued on {b}"), &|| {
            on_b_so_far.iter().all(|n| n.load(std::sync::atomic::Ordering::Relaxed) > 0)
        })?;
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
        let mut ids_a = Vec::new();
        for thread in threads {
            ids_a.push(thread.join().map_err(|_| "a thread panicked")??);
        }
        lease_b.release()?;
        Ok((ids_a, ids_b, ids_c))
    })
    .map_err(|e| e.to_string())?;
    let last_c = *ids_c.iter().max().ok_or("C issued nothing")?;
    let mut on_b = 0;
    assert_eq!(ids_a.len(), 4);
    for ids in &ids_a {
        assert!(ids.windows(2).all(|w| w[0] < w[1]), "a thread's IDs went back");
        let workers: Vec<u64> = ids.iter().map(|&id| layout().worker_of(id)).collect();
        // Worker `a` first, then `b`, never back.
        let moved = workers.iter().position(|&w| w == b).unwrap_or(workers.len());
        assert!(workers[..moved].iter().all(|&w| w == a) && workers[moved..].iter().all(|&w| w == b));
        assert!(moved > 0 && moved < workers.len(), "a thread of A issued on {a} first, then on {b}");
        assert!(ids[moved..].iter().all(|&id| id > last_c), "A issued on {b} at or below C's last ID");
        on_b += workers.len() - moved;
    }
    assert!(on_b > 0, "A never issued on {b}");
    let mut all: Vec<i64> = ids_a.into_iter().flatten().chain(ids_b).chain(ids_c).collect();
    let issued = all.len();
    assert_no_duplicate(&mut all);
    eprintln!("moved from worker {a} to {b}: {issued} IDs of three holders, {on_b} of A's on {b}, no duplicate");
    lease_a.release()?;
    Ok(())
}

/// The store goes away while a first acquisition waits out earlier holders (a worker ID it
/// has no record of): the acquisition fails with the store's error once it has waited for
/// the store as long as `wait_for_store` allows, rather than block until the store is back.
#[test]
fn a_first_acquisition_gives_up_on_a_store_that_goes_away_while_it_waits() -> TestResult {
    let Some(server) = servers::PrivateRedis::start() else { return Ok(()) };
    let _turn = heavy();
    let started = Instant::now();
    let refused = std::thread::scope(|scope| {
        scope.spawn(|| {
            std::thread::sleep(Duration::from_millis(500));
            server.signal("-STOP");
        });
        WorkerLease::builder(RedisLeaseStore::open(&server.url())?.timeout(Duration::from_millis(200)))
            .namespace("gone")
            .space(4)
            .ttl(Duration::from_secs(3))
            .reservation(Duration::from_secs(3))
            .margin(Duration::from_millis(500))
            .wait_for_store(Duration::from_secs(1))
            .acquire()
    });
    let waited = started.elapsed();
    server.signal("-CONT");
    assert!(matches!(refused, Err(LeaseError::Timeout { .. })), "{refused:?}");
    // The no-record wait alone would take 4 s (TTL + tolerance); the store went away at
    // 0.5 s, and the acquisition gave up 1 s after its first failed call.
    assert!(waited < Duration::from_millis(3_500), "gave up only after {waited:?}");
    Ok(())
}

#[test]
fn a_skewed_clock_is_refused_at_acquisition() -> TestResult {
    #[derive(Debug)]
    struct Ahead;
    impl Clock for Ahead {
        fn now_ms(&self) -> i64 {
            SystemClock::new(StepBack::default()).now_ms() + 5_000
        }
    }
    let Some(url) = servers::redis_url() else { return Ok(()) };
    let namespace = unique("skew");
    let _cleanup = Cleanup { url: url.clone(), namespace: namespace.clone() };
    let refused =
        WorkerLease::builder(RedisLeaseStore::open(&url)?).namespace(namespace.as_str()).clock(Ahead).acquire();
    let Err(error @ LeaseError::ClockSkew { local_ms, store_ms, .. }) = &refused else {
        return Err(format!("a clock 5 s ahead must be refused: {refused:?}").into());
    };
    let message = error.to_string();
    assert!(message.contains(&local_ms.to_string()) && message.contains(&store_ms.to_string()), "{message}");
    assert!((local_ms - store_ms - 5_000).abs() < 1_000, "{message}");
    // Nothing was taken: the whole space is free. (A namespace the store has known for less
    // than the reservation waits it out first: a short one keeps the wait short.)
    let lease = WorkerLease::builder(RedisLeaseStore::open(&url)?)
        .namespace(namespace.as_str())
        .space(1)
        .ttl(Duration::from_secs(3))
        .reservation(Duration::from_secs(3))
        .margin(Duration::from_millis(600))
        .acquire()?;
    assert_eq!(lease.worker(), 0);
    lease.release()?;
    Ok(())
}

#[test]
fn store_urls_of_disabled_or_unknown_stores_are_refused() {
    for url in ["zookeeper://127.0.0.1:2181", "", "127.0.0.1:6379"] {
        assert!(matches!(open_store(url), Err(LeaseError::BadUrl { .. })), "{url:?}");
    }
}

// ---------------------------------------------------------------------------------------
// Churn
// ---------------------------------------------------------------------------------------

/// What one holder issued under one lease.
struct Tenure {
    worker: u64,
    fence: u64,
    ids: Vec<i64>,
}

/// Many lease holders in one process, each with its own generator, over a 10-bit space for a
/// while: random starts, crashes (no release), pauses longer than the margin, releases. From
/// the issued IDs: no duplicate, and for each worker ID the holders follow one another (every
/// ID of a later fence lies above every ID of an earlier one), so no two held it at once.
fn churn(store: Arc<dyn LeaseStore>, namespace: &str, tag: &str) -> TestResult {
    let _turn = heavy();
    let holders: usize = std::env::var("CHURN_HOLDERS").ok().and_then(|v| v.parse().ok()).unwrap_or(64);
    let seconds: u64 = std::env::var("CHURN_SECONDS").ok().and_then(|v| v.parse().ok()).unwrap_or(4);
    let deadline = Instant::now() + Duration::from_secs(seconds);
    let results: Vec<(Vec<Tenure>, Vec<Duration>, usize)> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..holders)
            .map(|holder| {
                let store = Arc::clone(&store);
                scope.spawn(move || -> Result<_, String> {
                    let mut tenures = Vec::new();
                    let mut latencies = Vec::new();
                    let mut refusals = 0;
                    let mut rng = rng::XorShift::for_actor(holder);
                    let mut random = move |n: u64| rng.below(n);
                    std::thread::sleep(Duration::from_millis(random(500)));
                    while Instant::now() < deadline {
                        let asked = Instant::now();
                        let lease = match WorkerLease::builder_shared(Arc::clone(&store))
                            .namespace(namespace)
                            .worker_bits(10)
                            .ttl(Duration::from_millis(2000))
                            .reservation(Duration::from_millis(2000))
                            .margin(Duration::from_millis(600))
                            .renew_every(Duration::from_millis(400))
                            .acquire()
                        {
                            Ok(lease) => lease,
                            // Lost: the acquisition took longer than the TTL; Timeout: a store call
                            // took longer than its bound. Both happen on a loaded machine, and a
                            // holder then tries again, as a service would.
                            Err(
                                LeaseError::NoFreeWorker { .. } | LeaseError::Lost { .. } | LeaseError::Timeout { .. },
                            ) => {
                                refusals += 1;
                                std::thread::sleep(Duration::from_millis(50 + random(200)));
                                continue;
                            }
                            Err(e) => return Err(format!("holder {holder}: {e}")),
                        };
                        latencies.push(asked.elapsed());
                        let generator =
                            Generator::builder(layout()).lease(lease.clone()).build().map_err(|e| e.to_string())?;
                        let mut tenure = Tenure { worker: lease.worker(), fence: lease.fence(), ids: Vec::new() };
                        let action = random(4);
                        let until = Instant::now() + Duration::from_millis(100 + random(400));
                        if action == 3 {
                            // A pause longer than the margin, mid-tenure.
                            lease.pause_renewals(Duration::from_millis(900));
                        }
                        while Instant::now() < until {
                            // Bursts, not a busy loop: 128 holders share two cores with the
                            // lease threads whose renewals are under test.
                            if tenure.ids.len() % 256 == 255 {
                                std::thread::sleep(Duration::from_millis(if tenure.ids.len() > 2000 { 20 } else { 2 }));
                            }
                            match generator.next_raw() {
                                Ok(id) => tenure.ids.push(id),
                                Err(GenerateError::Fenced { .. }) => std::thread::sleep(Duration::from_millis(5)),
                                Err(GenerateError::ClockBackwards { .. }) => {
                                    std::thread::sleep(Duration::from_millis(5))
                                }
                                Err(e) => return Err(format!("holder {holder}: {e}")),
                            }
                        }
                        tenures.push(tenure);
                        match action {
                            0 => lease.abandon(),
                            // A release that times out leaves the lease to expire, like a crash.
                            _ => match lease.release() {
                                Ok(()) | Err(LeaseError::Lost { .. } | LeaseError::Timeout { .. }) => {}
                                Err(e) => return Err(format!("holder {holder}: {e}")),
                            },
                        }
                    }
                    Ok((tenures, latencies, refusals))
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().expect("a holder panicked")).collect::<Result<_, _>>()
    })?;

    let mut seen = HashSet::new();
    let mut by_worker: BTreeMap<u64, BTreeMap<u64, (i64, i64)>> = BTreeMap::new();
    let mut latencies = Vec::new();
    let (mut acquisitions, mut total, mut refusals) = (0usize, 0usize, 0usize);
    for (tenures, lat, refused) in results {
        latencies.extend(lat);
        refusals += refused;
        for tenure in tenures {
            acquisitions += 1;
            total += tenure.ids.len();
            for &id in &tenure.ids {
                assert!(seen.insert(id), "ID {id} issued twice");
                assert_eq!(layout().worker_of(id), tenure.worker);
            }
            if let (Some(&lo), Some(&hi)) = (tenure.ids.iter().min(), tenure.ids.iter().max()) {
                let previous = by_worker.entry(tenure.worker).or_default().insert(tenure.fence, (lo, hi));
                assert!(previous.is_none(), "fence {} given twice for worker {}", tenure.fence, tenure.worker);
            }
        }
    }
    for (worker, tenures) in &by_worker {
        let ranges: Vec<&(i64, i64)> = tenures.values().collect();
        for pair in ranges.windows(2) {
            assert!(pair[0].1 < pair[1].0, "worker {worker}: two holders overlap: {:?} then {:?}", pair[0], pair[1]);
        }
    }
    latencies.sort();
    let p99 = latencies.get(latencies.len().saturating_sub(1) * 99 / 100).copied().unwrap_or_default();
    eprintln!(
        "churn {tag}: {holders} holders, {seconds} s: {acquisitions} acquisitions ({:.1}/s), {refusals} refusals (space full), p99 acquisition {p99:?}, {total} IDs, 0 duplicates, {} worker IDs used, no overlap",
        acquisitions as f64 / seconds as f64,
        by_worker.len()
    );
    assert!(acquisitions >= holders, "every holder acquired at least once");
    Ok(())
}

/// Declares `namespace` new, as `snowflake leases init` does before a fleet's first start:
/// acquisitions then hand over without waiting out the reservation, as they do in a namespace
/// the store has known for long.
fn seed_records(url: &str, namespace: &str, _space: u64) -> TestResult {
    Ok(servers::declare_namespace(url, namespace)?)
}

#[test]
fn churn_against_redis() -> TestResult {
    let Some(url) = servers::redis_url() else { return Ok(()) };
    let namespace = unique("churn");
    let _cleanup = Cleanup { url: url.clone(), namespace: namespace.clone() };
    seed_records(&url, &namespace, 1024)?;
    churn(Arc::new(RedisLeaseStore::open(&url)?), &namespace, "redis")
}

#[test]
fn churn_against_postgres() -> TestResult {
    let Some(url) = servers::pg_url() else { return Ok(()) };
    let namespace = unique("churn");
    let _cleanup = Cleanup { url: url.clone(), namespace: namespace.clone() };
    let store = SqlLeaseStore::connect(&url)?;
    seed_records(&url, &namespace, 1024)?;
    churn(Arc::new(store), &namespace, "postgres")
}
