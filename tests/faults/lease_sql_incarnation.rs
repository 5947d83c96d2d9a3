//! The SQL store's incarnation as the server under it changes, on servers of the test's own:
//! a PostgreSQL standby promoted onto a new timeline, read at once (before its end-of-recovery
//! checkpoint, which dirty buffers keep spread over minutes), and a MariaDB restarted on its
//! data directory. Each time a holder running through the change finds the new incarnation
//! at its next renewal, loses its lease, writes the marker afresh as it acquires again
//! ([rules 4 and 6](../../docs/lease-rules.md)), and issues on a new grant once `W` and the
//! tolerance have passed. A store that reaches a standby in recovery reads, and refuses to
//! write.

use crate::faults::{report, unique};

use std::time::{Duration, Instant};

use typed_snowflake::worker::lease::store::{Query, Snapshot};
use typed_snowflake::worker::lease::{LeaseError, LeaseStatus, LeaseStore, SqlLeaseStore, WorkerLease};

type TestResult = Result<(), Box<dyn std::error::Error>>;

/// The holders' settings, the defaults scaled down (as `lease_sql.rs`'s): the server's change
/// takes a few seconds at most, well within `W - margin`.
const TTL: Duration = Duration::from_millis(1_500);
const RESERVATION: Duration = Duration::from_secs(8);
const MARGIN: Duration = Duration::from_millis(500);

fn store(url: &str, timeout: Duration) -> Result<SqlLeaseStore, LeaseError> {
    SqlLeaseStore::builder(url).timeout(timeout).connect()
}

/// A holder of one of four worker IDs, issuing once it returns.
fn holder(url: &str, namespace: &str) -> Result<WorkerLease, Box<dyn std::error::Error>> {
    let lease = WorkerLease::builder(store(url, Duration::from_secs(1))?)
        .namespace(namespace)
        .space(4)
        .ttl(TTL)
        .reservation(RESERVATION)
        .margin(MARGIN)
        .create_namespace()
        .start()?;
    lease.ready()?;
    Ok(lease)
}

/// A marker's generation (its third field) and incarnation (its last).
fn generation_and_incarnation(marker: &str) -> Option<(&str, &str)> {
    let fields: Vec<&str> = marker.split('|').collect();
    (fields.len() == 7).then(|| (fields[2], fields[6]))
}

/// Waits until the holder, finding the store another incarnation at its next renewal, wrote
/// the marker afresh under the new incarnation `after` (a new generation, the incarnation
/// written in) as it acquires again: a promotion or a restart may have lost writes that gave
/// its worker ID to another holder, so its record is not renewed in place. It issues on what
/// it reserved meanwhile, then on a new grant, once `W` and the tolerance have passed since
/// the marker was written afresh.
fn the_holder_acquires_again_under_the_new_incarnation(
    label: &str,
    lease: &WorkerLease,
    read: impl Fn() -> Result<Snapshot, LeaseError>,
    before: &Snapshot,
    after: &Snapshot,
) -> TestResult {
    let old = before.marker.as_deref().and_then(generation_and_incarnation).ok_or("no marker before")?;
    let fence = lease.fence();
    let deadline = Instant::now() + Duration::from_secs(10);
    let marker = loop {
        let now = read()?;
        if now.marker != before.marker {
            break now.marker.ok_or("the marker is gone")?;
        }
        if Instant::now() >= deadline {
            return Err(format!("{label}: the holder left the marker {:?} as it was for 10 s", now.marker).into());
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let marked = Instant::now();
    let (generation, incarnation) = generation_and_incarnation(&marker).ok_or("a marker of another shape")?;
    report(&format!("{label}: the holder wrote the marker afresh: {marker}"));
    assert_eq!(incarnation, after.incarnation, "{label}: the fresh marker names the new incarnation");
    assert_ne!(generation, old.0, "{label}: a fresh marker, a new generation");
    // A new grant, above the old fence, issues within `W` and the tolerance (1 s by default).
    let (mut stopped, mut stopped_at) = (Duration::ZERO, None::<Instant>);
    let deadline = marked + RESERVATION + Duration::from_secs(6);
    let on_a_new_grant = || matches!(lease.status(), LeaseStatus::Issuing { fence: issuing, .. } if issuing > fence);
    while !on_a_new_grant() {
        if Instant::now() >= deadline {
            return Err(format!(
                "{label}: no new grant issuing {:?} after the marker: {:?}",
                RESERVATION + Duration::from_secs(6),
                lease.status()
            )
            .into());
        }
        match (lease.status().is_issuing(), stopped_at) {
            (false, None) => stopped_at = Some(Instant::now()),
            (true, Some(at)) => {
                stopped += at.elapsed();
                stopped_at = None;
            }
            _ => {}
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    if let Some(at) = stopped_at {
        stopped += at.elapsed();
    }
    report(&format!(
        "{label}: a new grant (worker {}) issues {} ms after the marker; the holder issued on what it reserved until {} ms before",
        lease.worker(),
        marked.elapsed().as_millis(),
        stopped.as_millis()
    ));
    Ok(())
}

/// A standby promoted (`pg_promote()`) onto timeline 2 is a new incarnation as soon as it
/// accepts writes: read at once, with the end-of-recovery checkpoint still running (the
/// standby holds 10 MB of dirty buffers, written at the spread checkpoint's pace). The last
/// checkpoint's timeline still names timeline 1 then (for minutes), and a PostgreSQL
/// incarnation without the timeline never changes: either fails here. Before the promotion,
/// a store moved onto the standby in recovery reads (the timeline it follows) and cannot
/// write. The holder reaches the primary through a proxy that moves to the promoted standby
/// (a virtual IP following the failover) once the primary stopped.
#[cfg(feature = "lease-postgres")]
#[test]
fn postgres_a_promoted_standby_is_a_new_incarnation_at_once() -> TestResult {
    use crate::faults::Proxy;
    use crate::tls::ReplicatedPostgres;
    use std::net::SocketAddr;
    use typed_snowflake::worker::lease::store::{Cas, Slot};

    let Some(servers) = ReplicatedPostgres::start() else { return Ok(()) };
    let (primary, standby) = (servers.primary_port(), servers.standby_port());
    let address = |port: u16| SocketAddr::from(([127, 0, 0, 1], port));
    let label = "postgres, promoted";
    let namespace = unique("promoted");
    let on_primary = store(&ReplicatedPostgres::url(primary), Duration::from_secs(10))?;
    let proxy = Proxy::start(address(primary))?;
    let lease = holder(&ReplicatedPostgres::url(proxy.port()), &namespace)?;

    // Buffers the standby dirties as it replays, which its end-of-recovery checkpoint writes.
    servers.psql(
        primary,
        "CREATE TABLE filler AS SELECT g, repeat(md5(g::text), 4) AS t FROM generate_series(1, 60000) AS g",
    )?;
    servers.wait_replayed()?;

    // A store whose server became a standby: it reads, and cannot write.
    let moved = Proxy::start(address(primary))?;
    let on_standby_in_recovery = store(&ReplicatedPostgres::url(moved.port()), Duration::from_secs(10))?;
    moved.retarget(address(standby));
    let in_recovery = on_standby_in_recovery.read(&namespace, &Query::workers(0..4))?;
    let before = on_primary.read(&namespace, &Query::workers(0..4))?;
    assert_eq!(in_recovery.incarnation, before.incarnation, "the standby follows the primary's timeline");
    let message = refused(on_standby_in_recovery.write(&namespace, &[Cas::new(Slot::Worker(3), None, "w")]));
    assert!(message.contains("read-only"), "a write on a standby in recovery: {message}");

    servers.stop_primary()?;
    servers.promote_standby()?;
    let on_promoted = store(&ReplicatedPostgres::url(standby), Duration::from_secs(10))?;
    let after = on_promoted.read(&namespace, &Query::workers(0..4))?;
    let checkpoint = servers.psql(standby, "SELECT timeline_id FROM pg_control_checkpoint()")?;
    report(&format!(
        "{label}: incarnation {} -> {} read at once (the last checkpoint's timeline then: {checkpoint})",
        before.incarnation, after.incarnation
    ));
    assert_ne!(after.incarnation, before.incarnation, "a promotion changes the incarnation at once");
    let cluster = |incarnation: &str| incarnation.rsplit_once("-tl").map(|(cluster, _)| cluster.to_owned());
    assert_eq!(cluster(&after.incarnation), cluster(&before.incarnation), "the same cluster");
    assert_eq!(after.marker, before.marker, "the standby holds the primary's marker");

    proxy.retarget(address(standby));
    let read = || on_promoted.read(&namespace, &Query::workers(0..4));
    the_holder_acquires_again_under_the_new_incarnation(label, &lease, read, &before, &after)?;
    lease.release()?;
    Ok(())
}

/// MariaDB shut down and started again on the same data directory and port: its start time,
/// and so the incarnation, changes, and a holder running through the restart writes the
/// marker afresh. The start time is in whole seconds: the restart begins after the second
/// the server started in (a restart within it would keep the incarnation).
#[cfg(feature = "lease-mysql")]
#[test]
fn mariadb_a_restart_is_a_new_incarnation() -> TestResult {
    use crate::tls::TlsMariaDb;
    use std::time::{SystemTime, UNIX_EPOCH};

    let Some(mut server) = TlsMariaDb::plain() else { return Ok(()) };
    let label = "mariadb, restarted";
    let url = server.url("ssl-mode=DISABLED");
    let namespace = unique("restarted");
    let lease = holder(&url, &namespace)?;
    let on_server = store(&url, Duration::from_secs(10))?;
    let before = on_server.read(&namespace, &Query::workers(0..4))?;
    // The server's start second, or this one's for an incarnation without it.
    let now_s = || SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_secs());
    let started = before.incarnation.rsplit('-').next().and_then(|s| s.parse().ok()).unwrap_or(now_s()?);
    while now_s()? <= started {
        std::thread::sleep(Duration::from_millis(50));
    }

    server.restart()?;
    // The store's connection was closed by the restart: its next call opens another.
    let read = || on_server.read(&namespace, &Query::workers(0..4));
    let after = read().or_else(|_| read())?;
    report(&format!("{label}: incarnation {} -> {}", before.incarnation, after.incarnation));
    assert_ne!(after.incarnation, before.incarnation, "a restart changes the incarnation");
    assert_eq!(after.marker, before.marker, "a clean restart keeps the marker");

    the_holder_acquires_again_under_the_new_incarnation(label, &lease, read, &before, &after)?;
    lease.release()?;
    Ok(())
}

/// A write refused: the error's whole text, which names the server's cause.
#[cfg(feature = "lease-postgres")]
fn refused(written: Result<typed_snowflake::worker::lease::store::Written, LeaseError>) -> String {
    match written {
        Err(error) => error.to_string(),
        Ok(written) => panic!("expected a refusal, got {written:?}"),
    }
}
