//! The Redis lease store against a real server (`REDIS_URL`): the conformance suite every
//! store is held to, each bug planted in front of the adapter failing its case against the server, and
//! what the adapter adds of its own (timeouts, reconnection, replicas' acknowledgements, the
//! eviction warning), some of it on a private `redis-server`.

use crate::conformance::{Faults, Subject, run_all};
use crate::planted::Bug;
use crate::servers;

use std::net::TcpListener;
use std::sync::Arc;
use std::time::{Duration, Instant};

use typed_snowflake::worker::lease::store::{Cas, Query, Slot, Written};
use typed_snowflake::worker::lease::{LeaseError, LeaseStore, RedisLeaseStore};

/// The names of this process's namespaces start with it.
fn prefix(test: &str) -> String {
    format!("t{}-redis-{test}", std::process::id())
}

/// Deletes every key of the namespaces starting with `prefix` (in both cases: the suite uses
/// an upper-case namespace too) when dropped, also when the test fails.
struct Cleanup {
    url: String,
    prefix: String,
}

impl Drop for Cleanup {
    fn drop(&mut self) {
        for prefix in [self.prefix.clone(), self.prefix.to_uppercase()] {
            servers::delete_redis_keys(&self.url, &format!("snowflake:{{{prefix}*"));
        }
    }
}

/// Deletes one key as an operator's `DEL` would.
struct Del {
    url: String,
}

impl Faults for Del {
    fn delete(&self, namespace: &str, slot: Slot) {
        let key = match slot {
            Slot::Marker => format!("snowflake:{{{namespace}}}:marker"),
            Slot::Worker(worker) => format!("snowflake:{{{namespace}}}:worker:{worker}"),
        };
        let mut conn = redis::Client::open(self.url.as_str()).and_then(|c| c.get_connection()).expect("connecting");
        let deleted: i64 = redis::cmd("DEL").arg(&key).query(&mut conn).expect("DEL");
        assert_eq!(deleted, 1, "{key} was not there to delete");
    }
}

fn store(url: &str) -> RedisLeaseStore {
    RedisLeaseStore::open(url).expect("REDIS_URL is a Redis URL")
}

/// Runs `f` on a subject of the shared server, its keys deleted after.
fn with_subject(test: &str, f: impl FnOnce(&Subject<'_>)) {
    let Some(url) = servers::redis_url() else { return };
    let prefix = prefix(test);
    let _cleanup = Cleanup { url: url.clone(), prefix: prefix.clone() };
    let open = || Arc::new(store(&url)) as Arc<dyn LeaseStore>;
    let faults = Del { url: url.clone() };
    f(&Subject { name: "redis", open: &open, faults: &faults, prefix, has_clock: true });
}

#[test]
fn redis_passes_the_conformance_suite() {
    with_subject("suite", |subject| run_all(subject).unwrap_or_else(|failures| panic!("{failures}")));
}

/// Each bug a Redis adapter could have, planted in front of the store, fails a case of the
/// suite against the real server.
#[test]
fn planted_bugs_fail_against_redis() {
    use crate::conformance::planted_bugs_fail;
    with_subject("bugs", |subject| {
        planted_bugs_fail(
            subject,
            &[
                (Bug::CasIgnoresExpect, "a_slot_is_created_only_if_absent"),
                (Bug::WriteNotAtomic, "two_slots_are_written_together_or_not_at_all"),
                (Bug::ClockInSeconds, "the_clock_is_close"),
                (Bug::NamespaceFolded, "namespaces_are_apart"),
                (Bug::RangeEndInclusive, "reads_take_ranges_and_say_the_highest"),
            ],
        )
        .unwrap_or_else(|failure| panic!("{failure}"));
    });
}

/// The keys are plain, without a TTL: the store expires nothing. A worker ID's record is its
/// own key, the marker another, and the index names every worker ID written.
#[test]
fn the_keys_are_plain_and_never_expire() {
    let Some(url) = servers::redis_url() else { return };
    let namespace = prefix("keys");
    let _cleanup = Cleanup { url: url.clone(), prefix: namespace.clone() };
    let store = store(&url);
    let ops = [Cas::new(Slot::Worker(7), None, "r7"), Cas::new(Slot::Marker, None, "m")];
    assert_eq!(store.write(&namespace, &ops).expect("writing"), Written::Done);
    let mut conn = redis::Client::open(url.as_str()).and_then(|c| c.get_connection()).expect("connecting");
    let key = |kind: &str| format!("snowflake:{{{namespace}}}:{kind}");
    for (kind, value) in [("worker:7", "r7"), ("marker", "m")] {
        let read: String = redis::cmd("GET").arg(key(kind)).query(&mut conn).expect("GET");
        assert_eq!(read, value);
        let ttl: i64 = redis::cmd("PTTL").arg(key(kind)).query(&mut conn).expect("PTTL");
        assert_eq!(ttl, -1, "{kind} never expires");
    }
    let index: Vec<u64> = redis::cmd("ZRANGE").arg(key("workers")).arg(0).arg(-1).query(&mut conn).expect("ZRANGE");
    assert_eq!(index, [7]);
    // The index lost (deleted, evicted): the highest worker ID is found by a scan.
    let _: i64 = redis::cmd("DEL").arg(key("workers")).query(&mut conn).expect("DEL");
    let read = store.read(&namespace, &Query::workers(0..0).with_highest()).expect("reading");
    assert_eq!(read.highest, Some(7));
    // The incarnation is the server's run_id and replication ID.
    let info: String = redis::cmd("INFO").arg("server").query(&mut conn).expect("INFO");
    let run_id = info.lines().find_map(|l| l.strip_prefix("run_id:")).expect("a run_id").trim();
    assert!(read.incarnation.starts_with(&format!("{run_id}-")), "{}", read.incarnation);
    assert_eq!(read.incarnation.len(), 81, "{}", read.incarnation);
}

/// A result that must be a timeout of `bound`, within a little more than `bound`.
fn timed_out<T: std::fmt::Debug>(result: Result<T, LeaseError>, began: Instant, bound: Duration) {
    let took = began.elapsed();
    match result {
        Err(LeaseError::Timeout { after, .. }) => assert_eq!(after, bound),
        other => panic!("expected a timeout after {bound:?}, got {other:?} after {took:?}"),
    }
    assert!(took < bound + Duration::from_millis(300), "the timeout of {bound:?} took {took:?}");
}

#[test]
fn a_server_that_never_answers_times_out() {
    // A socket that accepts connections and never replies.
    let silent = TcpListener::bind("127.0.0.1:0").expect("binding");
    let url = format!("redis://{}", silent.local_addr().expect("an address"));
    let bound = Duration::from_millis(300);
    let store = RedisLeaseStore::open(&url).expect("a Redis URL").timeout(bound);
    let began = Instant::now();
    timed_out(store.read("shop", &Query::workers(0..32)), began, bound);
    let began = Instant::now();
    timed_out(store.write("shop", &[Cas::new(Slot::Marker, None, "m")]), began, bound);
}

/// A timeout while connecting names TLS where the URL asks for it, and only there: a server
/// that does not speak TLS on the port never answers the handshake.
#[test]
fn a_timeout_names_tls_only_for_a_tls_url() {
    let silent = TcpListener::bind("127.0.0.1:0").expect("binding");
    let address = silent.local_addr().expect("an address");
    let bound = Duration::from_millis(300);
    for (scheme, names_tls) in [("redis", false), ("rediss", true)] {
        let store = RedisLeaseStore::open(&format!("{scheme}://{address}")).expect("a Redis URL").timeout(bound);
        let began = Instant::now();
        let read = store.read("shop", &Query::workers(0..1));
        if let Err(LeaseError::Timeout { what, .. }) = &read {
            assert_eq!(what.contains("connecting over TLS"), names_tls, "{scheme}: {what}");
        }
        timed_out(read, began, bound);
    }
}

#[test]
fn a_server_that_is_down_is_a_store_error() {
    let free = TcpListener::bind("127.0.0.1:0").expect("binding");
    let url = format!("redis://:secret@{}", free.local_addr().expect("an address"));
    drop(free);
    let store = RedisLeaseStore::open(&url).expect("a Redis URL");
    let err = store.read("shop", &Query::workers(0..32)).unwrap_err();
    assert!(matches!(err, LeaseError::Store { .. }), "{err:?}");
    let message = err.to_string();
    assert!(message.contains("reading worker IDs 0..32 of namespace \"shop\""), "{message}");
    assert!(!message.contains("secret"), "{message}");
    assert!(std::error::Error::source(&err).is_some(), "the driver's error is kept");
}

#[test]
fn a_stopped_server_times_out_within_the_bound_and_recovers() {
    let Some(server) = servers::PrivateRedis::start() else { return };
    let bound = Duration::from_millis(300);
    let store = RedisLeaseStore::open(&server.url()).expect("a Redis URL").timeout(bound);
    let namespace = "paused";
    let create = [Cas::new(Slot::Worker(0), None, "r1")];
    assert_eq!(store.write(namespace, &create).expect("writing"), Written::Done);

    server.stop();
    let began = Instant::now();
    timed_out(store.read(namespace, &Query::workers(0..1)), began, bound);
    let began = Instant::now();
    timed_out(store.write(namespace, &[Cas::new(Slot::Worker(0), Some("r1"), "r2")]), began, bound);

    server.cont();
    // The write that timed out may or may not have been applied: the store says which.
    let read = store.read(namespace, &Query::workers(0..1)).expect("reading once the server runs again");
    let now = read.record(0).expect("the record").to_owned();
    assert!(now == "r1" || now == "r2", "{now}");
    let update = [Cas::new(Slot::Worker(0), Some(&now), "r3")];
    assert_eq!(store.write(namespace, &update).expect("writing"), Written::Done);
}

#[test]
fn a_dropped_connection_is_replaced_on_the_next_call() {
    // The private server: killing clients on a shared one would cut other tests off.
    let Some(server) = servers::PrivateRedis::start() else { return };
    let store = RedisLeaseStore::open(&server.url()).expect("a Redis URL");
    let namespace = "reconnect";
    store.read(namespace, &Query::workers(0..1)).expect("reading");
    let mut admin = redis::Client::open(server.url()).and_then(|c| c.get_connection()).expect("connecting");
    let killed: i64 =
        redis::cmd("CLIENT").arg(&["KILL", "TYPE", "normal", "SKIPME", "yes"]).query(&mut admin).expect("CLIENT KILL");
    assert_eq!(killed, 1, "the store's connection");
    // The call that meets the dead connection fails with a store error; the next one
    // connects afresh.
    match store.read(namespace, &Query::workers(0..1)) {
        Err(LeaseError::Store { .. }) => {}
        other => panic!("expected a store error, got {other:?}"),
    }
    store.read(namespace, &Query::workers(0..1)).expect("a fresh connection reads");
}

/// With `min_replicas=1`, a server without replicas counts no read and no write: each is a
/// store error saying how many replicas acknowledged it (a write may have been applied, as the
/// contract allows a failed write to be).
#[test]
fn calls_too_few_replicas_acknowledged_do_not_count() {
    let Some(server) = servers::PrivateRedis::start() else { return };
    let strict = store(&format!("{}?min_replicas=1", server.url())).timeout(Duration::from_millis(400));
    let namespace = "min-replicas";
    for result in [
        strict.read(namespace, &Query::workers(0..1)).map(|_| Written::Done),
        strict.write(namespace, &[Cas::new(Slot::Marker, None, "m")]),
    ] {
        let error = result.expect_err("no replica acknowledges");
        assert!(matches!(error, LeaseError::Store { .. }), "{error:?}");
        let text = error.to_string();
        assert!(text.contains("too few replicas acknowledged the write"), "{text}");
        assert!(text.contains("0 of the 1 asked for (min_replicas=1) within 200 ms"), "{text}");
    }
    // The bug `acks-ignored` (`min_replicas` asked for and never checked) is a store that
    // waits for no replica, as one opened without `min_replicas`: the same write counts.
    let careless = store(&server.url());
    let ops = [Cas::new(Slot::Worker(1), None, "r")];
    assert_eq!(careless.write(namespace, &ops).expect("no replica asked"), Written::Done);
}

/// `maxmemory` with an eviction policy that may evict keys without a TTL gives a warning that
/// names the policy; `noeviction` and `volatile-*` give none.
#[test]
fn an_evicting_policy_is_warned_of() {
    let Some(server) = servers::PrivateRedis::start() else { return };
    let store = store(&server.url());
    let mut admin = redis::Client::open(server.url()).and_then(|c| c.get_connection()).expect("connecting");
    let mut set = |name: &str, value: &str| {
        let () = redis::cmd("CONFIG").arg("SET").arg(name).arg(value).query(&mut admin).expect("CONFIG SET");
    };
    assert_eq!(store.warnings().expect("warnings"), Vec::<String>::new(), "no maxmemory");
    set("maxmemory", "64mb");
    set("maxmemory-policy", "allkeys-lru");
    let warnings = store.warnings().expect("warnings");
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert!(warnings[0].contains("maxmemory-policy is allkeys-lru"), "{warnings:?}");
    for quiet in ["noeviction", "volatile-lru"] {
        set("maxmemory-policy", quiet);
        assert_eq!(store.warnings().expect("warnings"), Vec::<String>::new(), "{quiet}");
    }
}
