//! The SQL lease store (PostgreSQL and MariaDB) under the faults of its own kind, attacked
//! from outside with real processes: one worker ID's row deleted while its holder runs (the
//! marker kept), the marker's row deleted alone, the namespace's rows restored from a copy
//! taken earlier while holders ran (fenced, as `docs/lease-rules.md` says; fenced just after
//! a newcomer's grant; and fenced by nobody, with a newcomer that acquires at once or after
//! the holders noticed), a TCP proxy that cuts the store off for longer than the TTL but less
//! than `W - margin`, and one that delays every reply by a third of the store calls' timeout.
//! Every holder is a child process generating as fast as it can into a file of its own; the
//! IDs of all files are counted for duplicates (0 allowed, except beside a newcomer that
//! trusted an unfenced restore: then only until the holders' next renewal), and for each
//! worker ID the holders must follow one another. Figures are printed to stderr, also for
//! passing tests.

use crate::faults;
use crate::servers;

use std::sync::Mutex;
use std::time::{Duration, Instant};

use faults::{
    HOLDER_LAYOUT, HolderRun, HolderSpec, Holders, Proxy, SqlCleanup, check_workers, count_duplicates, describe_runs,
    report, segments_of, unique, wall_ms,
};
use typed_snowflake::worker::lease::admin::{create_namespace, fence_namespace};
use typed_snowflake::worker::lease::store::{Cas, Query, Slot, Written};
use typed_snowflake::worker::lease::{LeaseError, LeaseStatus, LeaseStore, SqlLeaseStore, WorkerLease};

type TestResult = Result<(), Box<dyn std::error::Error>>;

/// The settings: the defaults scaled down (TTL 1.5 s, `W` 8 s, margin 500 ms; the defaults
/// are 10 s, 60 s, 2 s), so that a run takes seconds.
const TTL: Duration = Duration::from_millis(1_500);
const RESERVATION: Duration = Duration::from_secs(8);
const MARGIN: Duration = Duration::from_millis(500);

/// These tests take turns among themselves, apart from the slow tier's heavy turns: two of
/// them at once on the same server (2026-12-07, four and five tests at a time) made a
/// PostgreSQL connection's table creation wait past its 2 s timeout and a holder lose its
/// lease before the restore its test was about; the cause is not pinned down.
static TURN: Mutex<()> = Mutex::new(());

#[test]
#[ignore = "the entry point of the child processes: the other tests run it"]
fn child() -> TestResult {
    faults::child_main()
}

fn spec(url: &str, namespace: &str, space: u64) -> HolderSpec {
    HolderSpec {
        url: url.to_owned(),
        namespace: namespace.to_owned(),
        space,
        ttl: TTL,
        margin: MARGIN,
        reservation: Some(RESERVATION),
    }
}

/// Runs one SQL statement on `url` (binding the namespace as its first parameter where it
/// has one), on a thread and runtime of its own: the rows it changed.
fn execute(url: &str, sql: String, namespace: &str) -> Result<u64, String> {
    let (url, namespace) = (url.to_owned(), namespace.to_owned());
    std::thread::spawn(move || -> Result<u64, String> {
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().map_err(|e| e.to_string())?;
        runtime.block_on(async {
            use sqlx::Connection;
            let sql = sqlx::AssertSqlSafe(sql);
            let done = if url.starts_with("postgres") {
                let mut conn = sqlx::PgConnection::connect(&url).await.map_err(|e| e.to_string())?;
                sqlx::query(sql).bind(&namespace).execute(&mut conn).await.map(|d| d.rows_affected())
            } else {
                let mut conn = sqlx::MySqlConnection::connect(&url).await.map_err(|e| e.to_string())?;
                sqlx::query(sql).bind(&namespace).execute(&mut conn).await.map(|d| d.rows_affected())
            };
            done.map_err(|e| e.to_string())
        })
    })
    .join()
    .map_err(|_| "the SQL thread panicked".to_owned())?
}

/// The `$1`/`?` of the URL's database.
fn placeholder(url: &str) -> &'static str {
    if url.starts_with("postgres") { "$1" } else { "?" }
}

/// A logical dump of a namespace's rows: `(slot, value)`, read as `pg_dump` or `mysqldump`
/// would, while the holders run.
fn dump(url: &str, namespace: &str) -> Result<Vec<(i64, String)>, String> {
    let (url, namespace) = (url.to_owned(), namespace.to_owned());
    std::thread::spawn(move || -> Result<Vec<(i64, String)>, String> {
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().map_err(|e| e.to_string())?;
        runtime.block_on(async {
            use sqlx::Connection;
            if url.starts_with("postgres") {
                let mut conn = sqlx::PgConnection::connect(&url).await.map_err(|e| e.to_string())?;
                sqlx::query_as("SELECT slot, value::text FROM snowflake_worker_leases WHERE namespace = $1")
                    .bind(&namespace)
                    .fetch_all(&mut conn)
                    .await
                    .map_err(|e| e.to_string())
            } else {
                let mut conn = sqlx::MySqlConnection::connect(&url).await.map_err(|e| e.to_string())?;
                let rows: Vec<(i64, Vec<u8>)> =
                    sqlx::query_as("SELECT slot, value FROM snowflake_worker_leases WHERE namespace = ?")
                        .bind(&namespace)
                        .fetch_all(&mut conn)
                        .await
                        .map_err(|e| e.to_string())?;
                Ok(rows.into_iter().map(|(slot, value)| (slot, String::from_utf8_lossy(&value).into_owned())).collect())
            }
        })
    })
    .join()
    .map_err(|_| "the dump thread panicked".to_owned())?
}

/// Restores a namespace's rows from `rows` in one transaction: what loading a dump into the
/// table does to the rows of the namespace (the rows of other tests' namespaces are left).
fn restore(url: &str, namespace: &str, rows: &[(i64, String)]) -> Result<(), String> {
    let (url, namespace, rows) = (url.to_owned(), namespace.to_owned(), rows.to_vec());
    std::thread::spawn(move || -> Result<(), String> {
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().map_err(|e| e.to_string())?;
        runtime.block_on(async {
            use sqlx::Connection;
            let e = |e: sqlx::Error| e.to_string();
            if url.starts_with("postgres") {
                let mut conn = sqlx::PgConnection::connect(&url).await.map_err(e)?;
                let mut tx = conn.begin().await.map_err(e)?;
                sqlx::query("DELETE FROM snowflake_worker_leases WHERE namespace = $1")
                    .bind(&namespace)
                    .execute(&mut *tx)
                    .await
                    .map_err(e)?;
                for (slot, value) in &rows {
                    sqlx::query("INSERT INTO snowflake_worker_leases (namespace, slot, value) VALUES ($1, $2, $3)")
                        .bind(&namespace)
                        .bind(slot)
                        .bind(value)
                        .execute(&mut *tx)
                        .await
                        .map_err(e)?;
                }
                tx.commit().await.map_err(e)
            } else {
                let mut conn = sqlx::MySqlConnection::connect(&url).await.map_err(e)?;
                let mut tx = conn.begin().await.map_err(e)?;
                sqlx::query("DELETE FROM snowflake_worker_leases WHERE namespace = ?")
                    .bind(&namespace)
                    .execute(&mut *tx)
                    .await
                    .map_err(e)?;
                for (slot, value) in &rows {
                    sqlx::query("INSERT INTO snowflake_worker_leases (namespace, slot, value) VALUES (?, ?, ?)")
                        .bind(&namespace)
                        .bind(slot)
                        .bind(value)
                        .execute(&mut *tx)
                        .await
                        .map_err(e)?;
                }
                tx.commit().await.map_err(e)
            }
        })
    })
    .join()
    .map_err(|_| "the restore thread panicked".to_owned())?
}

/// The test's own store, for what an operator does: a timeout far above the holders' own, so
/// that a machine loaded by other work does not fail the test's setup.
fn operator_store(url: &str) -> Result<SqlLeaseStore, LeaseError> {
    SqlLeaseStore::builder(url).timeout(Duration::from_secs(10)).connect()
}

/// Runs an operator's step, once more if the store did not answer.
fn operator(url: &str, step: impl Fn(&SqlLeaseStore) -> Result<(), LeaseError>) -> TestResult {
    let mut tries = 3;
    loop {
        match operator_store(url).and_then(|store| step(&store)) {
            Err(LeaseError::Timeout { .. } | LeaseError::Store { .. }) if tries > 1 => tries -= 1,
            done => return Ok(done?),
        }
    }
}

/// Declares `namespace` new, so that its first holders issue at once.
fn declare(url: &str, namespace: &str) -> TestResult {
    operator(url, |store| create_namespace(store, namespace))
}

/// How long two holders of a namespace declared new may take to issue: process start, on a
/// machine that may be loaded.
const FIRST_IDS: Duration = Duration::from_secs(60);

/// The IDs, duplicates and findings of `runs`, reported under `label`; the failures.
fn judge(label: &str, runs: &[HolderRun]) -> Vec<String> {
    let (ids, duplicates) = count_duplicates(runs.iter().map(|r| r.ids.as_slice()));
    let findings = check_workers(&segments_of(runs, &HOLDER_LAYOUT));
    let per_holder: Vec<String> = runs.iter().map(|r| format!("{}: {}", r.name, r.ids.len())).collect();
    report(&format!("{label}: {ids} IDs ({}), {duplicates} duplicates", per_holder.join(", ")));
    let mut failures = findings;
    if duplicates > 0 {
        failures.insert(0, format!("{duplicates} duplicate IDs"));
    }
    failures
}

/// When the newcomer `c` starts after the fault.
#[derive(Clone, Copy, Debug)]
enum Newcomer {
    /// At once, while `a` and `b` hold both worker IDs; all issue for `W` and 2 s more.
    AtOnce,
    /// Once `a`, a second after the fault, stopped cleanly: `c` takes its worker ID, and must
    /// issue.
    AfterARelease,
}

/// Two holders `a` and `b` issue on a space of 2 in a namespace declared new; `fault` hurts
/// the table; a third process `c` starts as `newcomer` says. No ID twice, no two holders on
/// one worker ID at once, and `a` and `b` issue after the fault.
fn row_fault(
    label: &str,
    url: &str,
    tag: &str,
    newcomer: Newcomer,
    fault: impl FnOnce(&str) -> TestResult,
) -> TestResult {
    let _turn = TURN.lock().unwrap_or_else(|p| p.into_inner());
    let namespace = unique(tag);
    let _cleanup = SqlCleanup { url: url.to_owned(), namespace: namespace.clone() };
    declare(url, &namespace)?;
    let spec = spec(url, &namespace, 2);
    let mut holders = Holders::new(Duration::from_secs(120))?;
    holders.spawn_holder("a", &spec)?;
    holders.spawn_holder("b", &spec)?;
    if !holders.wait_for(FIRST_IDS, |h| h.count_issuing_since(0) == 2) {
        return Err(format!("{label}: the two holders never both issued:\n{}", holders.describe()).into());
    }
    std::thread::sleep(Duration::from_millis(400));
    let fault_ms = wall_ms();
    fault(&namespace)?;
    let c_issued = match newcomer {
        Newcomer::AtOnce => {
            holders.spawn_holder("c", &spec)?;
            std::thread::sleep(RESERVATION + Duration::from_secs(2));
            true
        }
        Newcomer::AfterARelease => {
            std::thread::sleep(Duration::from_secs(1));
            if !holders.release("a")? {
                return Err(format!("{label}: a did not stop cleanly:\n{}", holders.describe()).into());
            }
            holders.spawn_holder("c", &spec)?;
            holders.wait_for(RESERVATION * 3 + Duration::from_secs(5), |h| h.issues_since("c", fault_ms))
        }
    };
    let runs = holders.finish()?;
    let mut failures = judge(label, &runs);
    let c_first =
        runs.iter().find(|r| r.name == "c").and_then(|r| r.resumed_after(fault_ms)).map(|e| e.at_ms - fault_ms);
    let after: Vec<(String, usize)> = runs
        .iter()
        .map(|r| (r.name.clone(), r.ids.iter().filter(|&&id| HOLDER_LAYOUT.timestamp_ms_of(id) > fault_ms).count()))
        .collect();
    report(&format!("{label}: IDs stamped after the fault {after:?}; the newcomer's first ID {c_first:?} ms after it"));
    for (name, count) in &after {
        if name != "c" && *count == 0 {
            failures.push(format!("{name} issued nothing after the fault"));
        }
    }
    if !c_issued {
        failures.push("the newcomer never issued".to_owned());
    }
    assert!(failures.is_empty(), "{label}: {}\n{}", failures.join("\n"), describe_runs(&runs));
    Ok(())
}

fn delete_worker_0(url: &str) -> impl FnOnce(&str) -> TestResult + '_ {
    move |namespace| {
        let sql = format!("DELETE FROM snowflake_worker_leases WHERE namespace = {} AND slot = 0", placeholder(url));
        match execute(url, sql, namespace)? {
            1 => Ok(()),
            n => Err(format!("{n} rows of worker 0 in namespace {namespace}").into()),
        }
    }
}

fn delete_marker(url: &str) -> impl FnOnce(&str) -> TestResult + '_ {
    move |namespace| {
        let sql = format!("DELETE FROM snowflake_worker_leases WHERE namespace = {} AND slot = -1", placeholder(url));
        match execute(url, sql, namespace)? {
            1 => Ok(()),
            n => Err(format!("{n} marker rows in namespace {namespace}").into()),
        }
    }
}

/// Worker 0's row deleted (`DELETE … WHERE slot = 0`), the marker kept, while two holders
/// issue on a space of 2; a newcomer starts at once.
#[cfg(feature = "lease-postgres")]
#[test]
fn postgres_a_worker_row_deleted_under_its_holder_gives_no_duplicate() -> TestResult {
    let Some(url) = servers::pg_url() else { return Ok(()) };
    row_fault("postgres worker row deleted", &url, "pg-row", Newcomer::AtOnce, delete_worker_0(&url))
}

#[cfg(feature = "lease-mysql")]
#[test]
fn mariadb_a_worker_row_deleted_under_its_holder_gives_no_duplicate() -> TestResult {
    let Some(url) = servers::mysql_url() else { return Ok(()) };
    row_fault("mariadb worker row deleted", &url, "my-row", Newcomer::AtOnce, delete_worker_0(&url))
}

/// The marker's row deleted alone while two holders issue on a space of 2; one of them stops
/// cleanly a second later, and a newcomer takes its worker ID.
#[cfg(feature = "lease-postgres")]
#[test]
fn postgres_the_marker_row_deleted_alone_gives_no_duplicate() -> TestResult {
    let Some(url) = servers::pg_url() else { return Ok(()) };
    row_fault("postgres marker row deleted", &url, "pg-marker", Newcomer::AfterARelease, delete_marker(&url))
}

#[cfg(feature = "lease-mysql")]
#[test]
fn mariadb_the_marker_row_deleted_alone_gives_no_duplicate() -> TestResult {
    let Some(url) = servers::mysql_url() else { return Ok(()) };
    row_fault("mariadb marker row deleted", &url, "my-marker", Newcomer::AfterARelease, delete_marker(&url))
}

/// The namespace's rows restored from a dump taken earlier while holders ran. The store cannot
/// tell (the incarnation stays: same server, same timeline), so the operator fences the
/// namespace (`fence_namespace`, `snowflake leases fence`) as `docs/lease-rules.md` says;
/// then a newcomer takes the worker ID of a holder that stopped cleanly after the dump, whose
/// restored record is older than what it issued. No ID twice.
fn restored_from_a_dump(label: &str, url: &str, tag: &str) -> TestResult {
    let _turn = TURN.lock().unwrap_or_else(|p| p.into_inner());
    let namespace = unique(tag);
    let _cleanup = SqlCleanup { url: url.to_owned(), namespace: namespace.clone() };
    declare(url, &namespace)?;
    let spec = spec(url, &namespace, 2);
    let mut holders = Holders::new(Duration::from_secs(90))?;
    holders.spawn_holder("a", &spec)?;
    holders.spawn_holder("b", &spec)?;
    if !holders.wait_for(FIRST_IDS, |h| h.count_issuing_since(0) == 2) {
        return Err(format!("{label}: the two holders never both issued:\n{}", holders.describe()).into());
    }
    std::thread::sleep(Duration::from_millis(300));
    let incarnation_before = operator_store(url)?.read(&namespace, &Query::workers(0..2))?.incarnation;
    let dumped = dump(url, &namespace)?;
    if dumped.len() != 3 {
        return Err(format!("{label}: the dump holds {} rows, not the marker and two records", dumped.len()).into());
    }
    // The holders go on past every reservation of the dump; `a` stops cleanly (its last
    // ID recorded), `b` runs on.
    std::thread::sleep(RESERVATION + Duration::from_secs(1));
    if !holders.release("a")? {
        return Err(format!("{label}: a did not stop cleanly:\n{}", holders.describe()).into());
    }
    let restored_ms = wall_ms();
    restore(url, &namespace, &dumped)?;
    let incarnation_kept = operator_store(url)?.read(&namespace, &Query::workers(0..2))?.incarnation;
    if incarnation_kept != incarnation_before {
        return Err(format!("{label}: the incarnation changed: {incarnation_before:?}, {incarnation_kept:?}").into());
    }
    operator(url, |store| fence_namespace(store, &namespace))?;
    holders.spawn_holder("c", &spec)?;
    let c_issued = holders.wait_for(RESERVATION * 3 + Duration::from_secs(5), |h| h.issues_since("c", restored_ms));
    std::thread::sleep(Duration::from_millis(500));
    let runs = holders.finish()?;
    let mut failures = judge(label, &runs);
    let c_first =
        runs.iter().find(|r| r.name == "c").and_then(|r| r.resumed_after(restored_ms)).map(|e| e.at_ms - restored_ms);
    report(&format!(
        "{label}: the incarnation {incarnation_kept:?} is the same after the restore; after the fence the newcomer's first ID {c_first:?} ms after the restore"
    ));
    if !c_issued {
        failures.push("the newcomer never issued".to_owned());
    }
    assert!(failures.is_empty(), "{label}: {}\n{}", failures.join("\n"), describe_runs(&runs));
    Ok(())
}

#[cfg(feature = "lease-postgres")]
#[test]
fn postgres_restored_from_a_dump_then_fenced_gives_no_duplicate() -> TestResult {
    let Some(url) = servers::pg_url() else { return Ok(()) };
    restored_from_a_dump("postgres restored from a dump", &url, "pg-restore")
}

#[cfg(feature = "lease-mysql")]
#[test]
fn mariadb_restored_from_a_dump_then_fenced_gives_no_duplicate() -> TestResult {
    let Some(url) = servers::mysql_url() else { return Ok(()) };
    restored_from_a_dump("mariadb restored from a dump", &url, "my-restore")
}

// ---------------------------------------------------------------------------------------
// Restores nobody fenced
// ---------------------------------------------------------------------------------------

/// How often a holder renews: a third of the TTL, the lease's default.
const RENEW_EVERY: Duration = Duration::from_millis(500);

/// One store call's timeout (the lease's default): a renewal's read may take this long.
const STORE_TIMEOUT: Duration = Duration::from_secs(2);

/// How long after a holder's record is rolled back or taken it may still issue: to its next
/// renewal, whose read may take a store call's timeout.
const NOTICE: Duration = RENEW_EVERY.saturating_add(STORE_TIMEOUT);

/// The namespace's rows restored from a dump taken `W` and a second earlier, and nobody
/// fences: the restore brings back records the store vouches for (the same marker, the same
/// incarnation). `a` stopped cleanly after the dump, `b` runs on. `b`'s next renewal reads its
/// own record back with a value it did not write: it stops at once, writes the marker afresh
/// and acquires again. A newcomer `c` started after that must wait out every earlier holder:
/// no ID twice, and `b` and `c` issue.
fn restored_unfenced_then_a_newcomer(label: &str, url: &str, tag: &str) -> TestResult {
    let _turn = TURN.lock().unwrap_or_else(|p| p.into_inner());
    let namespace = unique(tag);
    let _cleanup = SqlCleanup { url: url.to_owned(), namespace: namespace.clone() };
    declare(url, &namespace)?;
    let spec = spec(url, &namespace, 2);
    let mut holders = Holders::new(Duration::from_secs(90))?;
    holders.spawn_holder("a", &spec)?;
    holders.spawn_holder("b", &spec)?;
    if !holders.wait_for(FIRST_IDS, |h| h.count_issuing_since(0) == 2) {
        return Err(format!("{label}: the two holders never both issued:\n{}", holders.describe()).into());
    }
    std::thread::sleep(Duration::from_millis(300));
    let dumped = dump(url, &namespace)?;
    if dumped.len() != 3 {
        return Err(format!("{label}: the dump holds {} rows, not the marker and two records", dumped.len()).into());
    }
    std::thread::sleep(RESERVATION + Duration::from_secs(1));
    if !holders.release("a")? {
        return Err(format!("{label}: a did not stop cleanly:\n{}", holders.describe()).into());
    }
    let restored_ms = wall_ms();
    restore(url, &namespace, &dumped)?;
    // No fence: `b` notices at its next renewal.
    let noticed = holders.wait_for(NOTICE * 3, |h| faults::stopped_since(h, "b", restored_ms));
    let c_started_ms = wall_ms();
    holders.spawn_holder("c", &spec)?;
    let issued = holders.wait_for(RESERVATION * 3 + Duration::from_secs(5), |h| {
        h.issues_since("c", c_started_ms) && h.resumed_after_stopping_since("b", restored_ms)
    });
    std::thread::sleep(Duration::from_millis(500));
    let runs = holders.finish()?;
    let mut failures = judge(label, &runs);
    let run = |name: &str| runs.iter().find(|r| r.name == name);
    let b_stop = run("b").and_then(|r| faults::rolled_back_stop(r, restored_ms)).map(|e| e.at_ms - restored_ms);
    let c_first = run("c").and_then(|r| r.resumed_after(c_started_ms)).map(|e| e.at_ms - c_started_ms);
    let b_again = run("b").and_then(|r| r.resumed_after(restored_ms)).map(|e| e.at_ms - restored_ms);
    report(&format!(
        "{label}: b stopped for the rollback {b_stop:?} ms after the restore, issued again {b_again:?} ms after it; \
         the newcomer's first ID {c_first:?} ms after its start"
    ));
    if !noticed {
        failures.push(format!("b did not stop within {NOTICE:?} × 3 of the restore"));
    }
    match b_stop {
        None => failures.push("b's stop does not name the rollback".to_owned()),
        Some(ms) if ms > faults::ms(NOTICE) => failures.push(format!("b stopped {ms} ms after the restore")),
        Some(_) => {}
    }
    if !issued {
        failures.push("c, or b again, never issued".to_owned());
    }
    assert!(failures.is_empty(), "{label}: {}\n{}", failures.join("\n"), describe_runs(&runs));
    Ok(())
}

#[cfg(feature = "lease-postgres")]
#[test]
fn postgres_restored_from_a_dump_unfenced_then_a_newcomer_gives_no_duplicate() -> TestResult {
    let Some(url) = servers::pg_url() else { return Ok(()) };
    restored_unfenced_then_a_newcomer("postgres restored, unfenced, then a newcomer", &url, "pg-unfenced")
}

#[cfg(feature = "lease-mysql")]
#[test]
fn mariadb_restored_from_a_dump_unfenced_then_a_newcomer_gives_no_duplicate() -> TestResult {
    let Some(url) = servers::mysql_url() else { return Ok(()) };
    restored_unfenced_then_a_newcomer("mariadb restored, unfenced, then a newcomer", &url, "my-unfenced")
}

/// The namespace's rows restored from a dump taken `W` and a second earlier under two live
/// holders, while a newcomer waits for a free worker ID (see [`faults::restore_under_live_holders`]).
/// With `fence`, the operator fences the namespace right after the newcomer's grant (as
/// `snowflake leases fence` run right after the restore, the newcomer acquiring meanwhile).
fn restored_under_live_holders(label: &str, url: &str, default_port: u16, tag: &str, fence: bool) -> TestResult {
    let _turn = TURN.lock().unwrap_or_else(|p| p.into_inner());
    let (proxy, proxied) = Proxy::for_url(url, default_port)?;
    let namespace = unique(tag);
    let _cleanup = SqlCleanup { url: url.to_owned(), namespace: namespace.clone() };
    declare(url, &namespace)?;
    let dumped = std::cell::RefCell::new(Vec::new());
    let mut fence_it = || operator(url, |store| fence_namespace(store, &namespace));
    faults::restore_under_live_holders(faults::LiveRestore {
        label,
        proxy: &proxy,
        holders: &spec(&proxied, &namespace, 2),
        newcomer: &spec(url, &namespace, 2),
        notice: NOTICE,
        copy: &mut || {
            let rows = dump(url, &namespace)?;
            if rows.len() != 3 {
                return Err(format!("the dump holds {} rows, not the marker and two records", rows.len()).into());
            }
            *dumped.borrow_mut() = rows;
            Ok(())
        },
        put_back: &mut || Ok(restore(url, &namespace, &dumped.borrow())?),
        fence: if fence { Some(&mut fence_it) } else { None },
    })
}

#[cfg(feature = "lease-postgres")]
#[test]
fn postgres_restored_from_a_dump_under_live_holders_unfenced_costs_at_most_one_renewal() -> TestResult {
    let Some(url) = servers::pg_url() else { return Ok(()) };
    restored_under_live_holders("postgres restored under live holders, unfenced", &url, 5432, "pg-live", false)
}

#[cfg(feature = "lease-mysql")]
#[test]
fn mariadb_restored_from_a_dump_under_live_holders_unfenced_costs_at_most_one_renewal() -> TestResult {
    let Some(url) = servers::mysql_url() else { return Ok(()) };
    restored_under_live_holders("mariadb restored under live holders, unfenced", &url, 3306, "my-live", false)
}

/// The operator's fence right after the restore, `c` granted just before it.
#[cfg(feature = "lease-postgres")]
#[test]
fn postgres_restored_from_a_dump_fenced_while_a_newcomer_acquires_costs_at_most_one_renewal() -> TestResult {
    let Some(url) = servers::pg_url() else { return Ok(()) };
    restored_under_live_holders("postgres restored, fenced as a newcomer acquires", &url, 5432, "pg-race", true)
}

#[cfg(feature = "lease-mysql")]
#[test]
fn mariadb_restored_from_a_dump_fenced_while_a_newcomer_acquires_costs_at_most_one_renewal() -> TestResult {
    let Some(url) = servers::mysql_url() else { return Ok(()) };
    restored_under_live_holders("mariadb restored, fenced as a newcomer acquires", &url, 3306, "my-race", true)
}

/// Two holders issue through a TCP proxy; the proxy stalls or drops every connection for
/// 2 TTL (3 s, less than `W - margin`, 7.5 s), then forwards again; the holders issue on
/// until 9.5 s after the cut. No holder stops.
fn cut_off(label: &str, url: &str, default_port: u16, tag: &str, drop_all: bool) -> TestResult {
    let _turn = TURN.lock().unwrap_or_else(|p| p.into_inner());
    let (proxy, proxied) = Proxy::for_url(url, default_port)?;
    let namespace = unique(tag);
    let _cleanup = SqlCleanup { url: url.to_owned(), namespace: namespace.clone() };
    declare(url, &namespace)?;
    let spec = spec(&proxied, &namespace, 2);
    let mut holders = Holders::new(Duration::from_secs(90))?;
    holders.spawn_holder("a", &spec)?;
    holders.spawn_holder("b", &spec)?;
    if !holders.wait_for(FIRST_IDS, |h| h.count_issuing_since(0) == 2) {
        return Err(format!("{label}: the two holders never both issued:\n{}", holders.describe()).into());
    }
    // A renewal just before the cut: each holder's reservation then runs `W` from about now.
    std::thread::sleep(TTL);
    let from_ms = wall_ms();
    if drop_all {
        proxy.drop_all();
    } else {
        proxy.stall();
    }
    std::thread::sleep(TTL * 2);
    proxy.resume();
    // Past `W - margin` since the cut: a holder that did not renew once the store was back
    // would stop before the end.
    std::thread::sleep(RESERVATION - TTL);
    let runs = holders.finish()?;
    let mut failures = judge(label, &runs);
    for run in &runs {
        if let Some(stop) = run.stop_after(from_ms) {
            failures.push(format!("{} stopped {} ms after the cut", run.name, stop.at_ms - from_ms));
        }
    }
    report(&format!(
        "{label}: cut off {} ms, W - margin {} ms",
        (TTL * 2).as_millis(),
        (RESERVATION - MARGIN).as_millis()
    ));
    assert!(failures.is_empty(), "{label}: {}\n{}", failures.join("\n"), describe_runs(&runs));
    Ok(())
}

#[cfg(feature = "lease-postgres")]
#[test]
fn postgres_stalled_for_less_than_w_minus_margin_stops_no_holder() -> TestResult {
    let Some(url) = servers::pg_url() else { return Ok(()) };
    cut_off("postgres stalled 2 TTL", &url, 5432, "pg-stall", false)
}

#[cfg(feature = "lease-postgres")]
#[test]
fn postgres_dropped_for_less_than_w_minus_margin_stops_no_holder() -> TestResult {
    let Some(url) = servers::pg_url() else { return Ok(()) };
    cut_off("postgres dropped 2 TTL", &url, 5432, "pg-drop", true)
}

#[cfg(feature = "lease-mysql")]
#[test]
fn mariadb_stalled_for_less_than_w_minus_margin_stops_no_holder() -> TestResult {
    let Some(url) = servers::mysql_url() else { return Ok(()) };
    cut_off("mariadb stalled 2 TTL", &url, 3306, "my-stall", false)
}

#[cfg(feature = "lease-mysql")]
#[test]
fn mariadb_dropped_for_less_than_w_minus_margin_stops_no_holder() -> TestResult {
    let Some(url) = servers::mysql_url() else { return Ok(()) };
    cut_off("mariadb dropped 2 TTL", &url, 3306, "my-drop", true)
}

/// How long the proxy of [`replies_delayed`] holds every reply: a third of the store calls'
/// timeout (`DEFAULT_STORE_TIMEOUT`, 2 s), as a database far away or overloaded answers.
const REPLY_DELAY: Duration = Duration::from_millis(700);

/// Every reply of the store is delayed 0.7 s. A write of one op and one of two, and a read,
/// each take one round trip; a holder (TTL 2 s, `W` 6 s, margin 500 ms) that renews through
/// the proxy issues throughout, for twice `W`, on its first grant. Its status is asked
/// every 20 ms. (When a write was several round trips under one timeout, every holder
/// stopped.)
fn replies_delayed(label: &str, url: &str, default_port: u16, tag: &str) -> TestResult {
    let _turn = TURN.lock().unwrap_or_else(|p| p.into_inner());
    let (proxy, proxied) = Proxy::for_url(url, default_port)?;
    let (namespace, timed) = (unique(tag), unique(&format!("{tag}-timed")));
    let _cleanup = [&namespace, &timed].map(|ns| SqlCleanup { url: url.to_owned(), namespace: ns.clone() });
    let reservation = Duration::from_secs(6);
    // Both stores connected before the delay: connecting takes several round trips. The
    // timed one waits long enough to see how long a call takes, however many round trips.
    let store = SqlLeaseStore::builder(&proxied).timeout(Duration::from_secs(10)).connect()?;
    store.write(&timed, &[Cas::new(Slot::Marker, None, "m1")])?;
    let lease = WorkerLease::builder(SqlLeaseStore::connect(&proxied)?)
        .namespace(namespace.clone())
        .space(2)
        .ttl(Duration::from_secs(2))
        .reservation(reservation)
        .margin(Duration::from_millis(500))
        .create_namespace()
        .acquire()?;
    let granted = lease.status();
    assert!(granted.is_issuing(), "{label}: not issuing once acquired: {granted:?}");
    let (worker, fence) = (lease.worker(), lease.fence());

    proxy.delay_replies(REPLY_DELAY);
    let began = Instant::now();
    let time = |call: &dyn Fn() -> Result<Written, LeaseError>| -> Result<Duration, Box<dyn std::error::Error>> {
        let began = Instant::now();
        let written = call()?;
        assert_eq!(written, Written::Done, "{label}: a timed write");
        Ok(began.elapsed())
    };
    let one = time(&|| store.write(&timed, &[Cas::new(Slot::Worker(0), None, "w1")]))?;
    let two = time(&|| {
        store.write(&timed, &[Cas::new(Slot::Marker, Some("m1"), "m2"), Cas::new(Slot::Worker(1), None, "w1")])
    })?;
    let read_began = Instant::now();
    let read = store.read(&timed, &Query::workers(0..2))?;
    let read_took = read_began.elapsed();
    assert_eq!((read.marker.as_deref(), read.record(1)), (Some("m2"), Some("w1")), "{label}: {read:?}");
    report(&format!(
        "{label}: replies delayed {} ms: a write of one op took {} ms, of two {} ms, a read {} ms",
        REPLY_DELAY.as_millis(),
        one.as_millis(),
        two.as_millis(),
        read_took.as_millis()
    ));
    for (what, took) in [("a write of one op", one), ("a write of two", two), ("a read", read_took)] {
        assert!(took < REPLY_DELAY * 2, "{label}: {what} took {took:?}, more than one round trip");
    }

    // Twice `W` since the delay began: a holder whose renewals all failed would have stopped
    // `W - margin` after the last one that succeeded.
    let (mut samples, mut not_issuing, mut unanswered) = (0u32, 0u32, 0u32);
    let mut first_stop = None;
    let mut least_left = reservation;
    while began.elapsed() < reservation * 2 {
        match lease.status() {
            LeaseStatus::Issuing { issuing_for, store_answering, .. } => {
                least_left = least_left.min(issuing_for);
                unanswered += u32::from(!store_answering);
            }
            other => {
                not_issuing += 1;
                first_stop.get_or_insert_with(|| {
                    format!("{} ms after the delay began: {other:?}", began.elapsed().as_millis())
                });
            }
        }
        samples += 1;
        std::thread::sleep(Duration::from_millis(20));
    }
    let stats = lease.stats();
    report(&format!(
        "{label}: {samples} statuses over {} ms, {} not issuing, {unanswered} with the store's last call \
         unanswered, at least {} ms of issuing left; {} renewals, {} failed",
        (reservation * 2).as_millis(),
        not_issuing,
        least_left.as_millis(),
        stats.renewals,
        stats.failed_renewals
    ));
    assert!(first_stop.is_none(), "{label}: the holder stopped {}", first_stop.unwrap_or_default());
    assert_eq!((lease.worker(), lease.fence()), (worker, fence), "{label}: the holder acquired again");
    proxy.delay_replies(Duration::ZERO);
    lease.release()?;
    Ok(())
}

#[cfg(feature = "lease-postgres")]
#[test]
fn postgres_replies_delayed_by_a_third_of_the_timeout_stop_no_holder() -> TestResult {
    let Some(url) = servers::pg_url() else { return Ok(()) };
    replies_delayed("postgres replies delayed", &url, 5432, "pg-delay")
}

#[cfg(feature = "lease-mysql")]
#[test]
fn mariadb_replies_delayed_by_a_third_of_the_timeout_stop_no_holder() -> TestResult {
    let Some(url) = servers::mysql_url() else { return Ok(()) };
    replies_delayed("mariadb replies delayed", &url, 3306, "my-delay")
}
