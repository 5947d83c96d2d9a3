//! Running holders keep issuing while their store is away, attacked from outside with real
//! processes and real servers (Redis here; PostgreSQL and MariaDB in `lease_sql.rs`, etcd in
//! `lease_store_etcd.rs`): a store paused or cut off for longer than the TTL (but less than
//! the reservation `W`), a store that comes back empty, and a holder restarted after a clean
//! shutdown or a `SIGKILL`. Every holder generates as fast as it can into a file of its own;
//! the IDs of all files are counted for duplicates, and each holder's log says whether, and
//! for how long, it stopped issuing.
//!
//! The settings are the defaults scaled down (TTL 3 s, `W` 9 s, margin 500 ms, the store away
//! 6 s; the defaults are 10 s, 60 s, 2 s), so that a run takes seconds;
//! `LEASE_OUTAGE_DEFAULTS=1` runs them at the defaults, the store away 30 s (the figures of
//! `docs/many-nodes.md`). Figures are printed to stderr, also for passing tests.

use crate::faults;
use crate::faults::heavy;
use crate::servers;

use std::time::Duration;

use faults::{HolderSpec, Holders, unique, wall_ms};

type TestResult = Result<(), Box<dyn std::error::Error>>;

/// The settings: the defaults scaled down, or, with `LEASE_OUTAGE_DEFAULTS=1`, the defaults
/// themselves (TTL 10 s, `W` 60 s, margin 2 s, the store away 30 s; a run takes minutes).
struct Settings {
    ttl: Duration,
    margin: Duration,
    reservation: Duration,
    /// Longer than the TTL, shorter than `W - margin`.
    outage: Duration,
}

fn settings() -> Settings {
    let s = Duration::from_secs;
    if std::env::var("LEASE_OUTAGE_DEFAULTS").is_ok_and(|v| v == "1") {
        Settings { ttl: s(10), margin: s(2), reservation: s(60), outage: s(30) }
    } else {
        Settings { ttl: s(3), margin: Duration::from_millis(500), reservation: s(9), outage: s(6) }
    }
}

fn spec(url: &str, namespace: &str) -> HolderSpec {
    HolderSpec {
        url: url.to_owned(),
        namespace: namespace.to_owned(),
        space: 2,
        ttl: settings().ttl,
        margin: settings().margin,
        reservation: Some(settings().reservation),
    }
}

/// The first IDs of a fresh namespace wait out `W` (the store cannot vouch for it), then
/// process start on a loaded machine.
fn first_ids_bound() -> Duration {
    settings().reservation * 2 + Duration::from_secs(10)
}

#[test]
#[ignore = "the entry point of the child processes: the other tests run it"]
fn child() -> TestResult {
    faults::child_main()
}

/// Two holders issue on `url`; `fault` takes the store away (or empties it), `heal` gives it
/// back after `away`; they issue a TTL more. No duplicate, workers never interleaved; each
/// holder's stops since the fault, in ms.
fn ride_through(
    tag: &str,
    url: &str,
    away: Duration,
    fault: impl FnOnce(&str) -> TestResult,
    heal: impl FnOnce() -> TestResult,
) -> Result<Vec<Vec<i64>>, Box<dyn std::error::Error>> {
    let namespace = unique(tag);
    let spec = spec(url, &namespace);
    let mut holders = Holders::new(Duration::from_secs(120))?;
    holders.spawn_holder("a", &spec)?;
    holders.spawn_holder("b", &spec)?;
    if !holders.wait_for(first_ids_bound(), |h| h.count_issuing_since(0) == 2) {
        return Err(format!("{tag}: the two holders never both issued:\n{}", holders.describe()).into());
    }
    std::thread::sleep(Duration::from_millis(500));
    let from_ms = wall_ms();
    fault(&namespace)?;
    std::thread::sleep(away);
    heal()?;
    std::thread::sleep(settings().ttl);
    let (runs, stops) = holders.finish_unique(tag, from_ms)?;
    assert!(runs.iter().all(|run| run.ids.len() > 1_000), "{tag}: a holder issued almost nothing");
    Ok(stops)
}

/// Away longer than the TTL, shorter than `W - margin`: no holder stops at all.
fn never_stopped(tag: &str, stops: &[Vec<i64>]) {
    assert!(stops.iter().all(Vec::is_empty), "{tag}: a holder stopped: {stops:?}");
}

/// Back empty: a holder may stop for the round trip that finds its lease gone and takes its
/// worker ID again, never for the reservation that a store without records makes others
/// wait out.
fn only_blips(tag: &str, stops: &[Vec<i64>]) {
    let longest = stops.iter().flatten().copied().max().unwrap_or(0);
    assert!(
        u128::try_from(longest).unwrap_or(0) < settings().reservation.as_millis() / 3,
        "{tag}: a holder stopped for {longest} ms, as if it waited out the reservation: {stops:?}"
    );
}

#[cfg(feature = "lease-redis")]
#[test]
fn redis_paused_longer_than_the_ttl_costs_no_holder_an_id() -> TestResult {
    let _heavy = heavy();
    let Some(redis) = servers::PrivateRedis::start() else { return Ok(()) };
    let stops = ride_through(
        "redis-paused",
        &redis.url(),
        settings().outage,
        |_| {
            redis.stop();
            Ok(())
        },
        || {
            redis.cont();
            Ok(())
        },
    )?;
    never_stopped("redis paused", &stops);
    Ok(())
}

#[cfg(feature = "lease-redis")]
#[test]
fn redis_restarted_empty_costs_no_running_holder_more_than_a_round_trip() -> TestResult {
    let _heavy = heavy();
    let Some(mut redis) = servers::PrivateRedis::start() else { return Ok(()) };
    let url = redis.url();
    let redis = std::cell::RefCell::new(&mut redis);
    let stops = ride_through(
        "redis-empty",
        &url,
        Duration::ZERO,
        |_| {
            redis.borrow_mut().restart_empty();
            Ok(())
        },
        || Ok(()),
    )?;
    only_blips("redis restarted empty", &stops);
    Ok(())
}

/// A holder stopped cleanly (its lease released) or killed, started again at once: the new
/// process takes a worker ID that needs no waiting (the released one, or the never-used one of
/// a namespace the store has known for longer than `W`; the killed holder's is still leased)
/// and issues without waiting out the reservation. The time to its first ID is printed.
fn restarted_at_once(tag: &str, url: &str, kill: bool) -> TestResult {
    let namespace = unique(tag);
    let spec = spec(url, &namespace);
    let mut holders = Holders::new(Duration::from_secs(120))?;
    holders.spawn_holder("b", &spec)?;
    if !holders.wait_for(first_ids_bound(), |h| h.count_issuing_since(0) == 1) {
        return Err(format!("{tag}: the holder never issued:\n{}", holders.describe()).into());
    }
    std::thread::sleep(Duration::from_millis(500));
    if kill {
        holders.kill("b");
    } else {
        assert!(holders.release("b")?, "{tag}: b did not stop cleanly:\n{}", holders.describe());
    }
    holders.restart_issues_at_once(tag, "b2", &spec, first_ids_bound(), settings().reservation)
}

#[cfg(feature = "lease-redis")]
#[test]
fn redis_a_holder_restarted_after_release_or_kill_issues_without_waiting() -> TestResult {
    let _heavy = heavy();
    let Some(redis) = servers::PrivateRedis::start() else { return Ok(()) };
    restarted_at_once("redis-released", &redis.url(), false)?;
    restarted_at_once("redis-killed", &redis.url(), true)
}
