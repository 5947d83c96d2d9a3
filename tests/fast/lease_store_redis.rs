//! The Redis lease store against a real server (`REDIS_URL`), and against a private
//! `redis-server` that the test stops with SIGSTOP: a store that cannot reach its server in
//! time says so within its timeout, and works again when the server does.

use crate::lease_store;
use crate::servers;

use std::net::TcpListener;
use std::time::{Duration, Instant};

use lease_store::{HIGH_WATER, TTL, timed_out, unique};
use typed_snowflake::worker::lease::{Claim, LeaseError, LeaseStore, RedisLeaseStore};

/// Every key of a namespace, deleted when dropped.
fn cleanup(url: &str, namespace: &str) -> servers::RedisKeys {
    servers::RedisKeys { url: url.to_owned(), pattern: servers::redis_lease_keys(namespace) }
}

/// The server's URL and a namespace of this test, cleaned up on drop; `None` to skip.
fn setup(test: &str) -> Option<(String, String, servers::RedisKeys)> {
    let url = servers::redis_url()?;
    let namespace = unique(test);
    let cleanup = cleanup(&url, &namespace);
    Some((url, namespace, cleanup))
}

fn store(url: &str) -> RedisLeaseStore {
    RedisLeaseStore::open(url).expect("REDIS_URL is a Redis URL")
}

#[test]
fn thirty_two_holders_share_a_five_bit_space() {
    let Some((url, namespace, _cleanup)) = setup("32") else { return };
    // One store, so one connection, per holder: 32 processes in miniature.
    let stores: Vec<RedisLeaseStore> = (0..32).map(|_| store(&url)).collect();
    lease_store::thirty_two_holders_share_a_five_bit_space(&stores, &namespace);
}

#[test]
fn fences_follow_the_clock_and_the_claim() {
    let Some((url, namespace, _cleanup)) = setup("fences") else { return };
    lease_store::fences_follow_the_clock_and_the_claim(&store(&url), &namespace);
}

#[test]
fn a_store_that_lost_its_data_vouches_for_nothing() {
    let Some((url, namespace, _cleanup)) = setup("loss") else { return };
    let lose = || servers::delete_redis_keys(&url, &servers::redis_lease_keys(&namespace));
    lease_store::a_store_that_lost_its_data_vouches_for_nothing(&store(&url), &namespace, lose);
}

/// A fence counter lost alone (evicted, deleted) makes every high water of the namespace
/// untrustworthy: a key that survived may be older than what a holder issued since.
#[test]
fn a_lost_fence_counter_vouches_for_no_high_water() {
    let Some((url, namespace, _cleanup)) = setup("counter") else { return };
    let store = store(&url);
    let first = store.acquire(&Claim::new(&namespace, 1, TTL)).expect("acquiring");
    store.release(&namespace, &first, HIGH_WATER).expect("releasing");
    let mut conn = redis::Client::open(url.as_str()).and_then(|c| c.get_connection()).expect("connecting");
    let _: i64 = redis::cmd("DEL").arg(format!("snowflake:{{{namespace}}}:fence")).query(&mut conn).expect("DEL");
    let second = store.acquire(&Claim::new(&namespace, 1, TTL)).expect("acquiring");
    assert_eq!(second.previous_high_water_ms, None, "the high water survived, but without its counter");
    assert!(second.fence > first.fence);
    store.release(&namespace, &second, HIGH_WATER).expect("releasing");
}

#[test]
fn the_leases_are_listed() {
    let Some((url, namespace, _cleanup)) = setup("list") else { return };
    let _other = cleanup(&url, &format!("{namespace}-other"));
    lease_store::the_leases_are_listed(&store(&url), &namespace, true);
}

#[test]
fn high_water_rises_until_the_release() {
    let Some((url, namespace, _cleanup)) = setup("hw") else { return };
    lease_store::high_water_rises_until_the_release(&store(&url), &namespace);
}

#[test]
fn a_stale_token_is_lost() {
    let Some((url, namespace, _cleanup)) = setup("stale") else { return };
    lease_store::a_stale_token_is_lost(&store(&url), &namespace);
}

#[test]
fn an_expired_lease_is_taken_over() {
    let Some((url, namespace, _cleanup)) = setup("expired") else { return };
    lease_store::an_expired_lease_is_taken_over(&store(&url), &store(&url), &namespace);
}

#[test]
fn the_store_clock_is_close() {
    let Some((url, namespace, _cleanup)) = setup("clock") else { return };
    lease_store::the_store_clock_is_close(&store(&url), &namespace);
}

#[test]
fn bad_arguments_are_refused() {
    let Some((url, namespace, _cleanup)) = setup("bad") else { return };
    lease_store::bad_arguments_are_refused(&store(&url), &namespace);
}

#[test]
fn namespaces_differ_by_case() {
    let Some((url, namespace, _cleanup)) = setup("case") else { return };
    let _upper = cleanup(&url, &format!("{namespace}_A"));
    let _lower = cleanup(&url, &format!("{namespace}_a"));
    lease_store::namespaces_differ_by_case(&store(&url), &namespace);
}

#[test]
fn the_last_free_id_is_found() {
    let Some((url, namespace, _cleanup)) = setup("wide") else { return };
    let mut conn = redis::Client::open(url.as_str()).and_then(|c| c.get_connection()).expect("connecting");
    let mut fill = redis::pipe();
    for worker in (0..lease_store::WIDE_SPACE).filter(|&w| w != lease_store::FREE) {
        let key = format!("snowflake:{{{namespace}}}:worker:{worker}");
        fill.cmd("SET").arg(key).arg("another holder|1").arg("PX").arg(3_600_000).ignore();
    }
    let () = fill.query(&mut conn).expect("filling the space");
    lease_store::the_last_free_id_is_found(&store(&url), &namespace);
}

#[test]
fn the_high_water_outlives_the_lease_key() {
    let Some((url, namespace, _cleanup)) = setup("keys") else { return };
    let store = store(&url);
    let grant = store.acquire(&Claim::new(&namespace, 1, Duration::from_secs(5))).expect("acquiring");
    store.renew(&namespace, &grant, Duration::from_secs(5), HIGH_WATER).expect("renewing");
    let mut conn = redis::Client::open(url.as_str()).and_then(|c| c.get_connection()).expect("connecting");
    let key = |kind: &str| format!("snowflake:{{{namespace}}}:{kind}");
    let value: String = redis::cmd("GET").arg(key("worker:0")).query(&mut conn).expect("GET");
    // `token|fence|host:pid`.
    let name = value.strip_prefix(&format!("{}|{}|", grant.token, grant.fence)).expect("token|fence|name");
    assert!(name.ends_with(&format!(":{}", std::process::id())), "{value}");
    let lease_ttl: i64 = redis::cmd("PTTL").arg(key("worker:0")).query(&mut conn).expect("PTTL");
    assert!((4_000..=5_000).contains(&lease_ttl), "the lease key expires with the lease: {lease_ttl} ms");
    let high_water_ttl: i64 = redis::cmd("PTTL").arg(key("hw:0")).query(&mut conn).expect("PTTL");
    assert_eq!(high_water_ttl, -1, "the high water never expires");
    let fence_ttl: i64 = redis::cmd("PTTL").arg(key("fence")).query(&mut conn).expect("PTTL");
    assert_eq!(fence_ttl, -1, "the fence counter never expires");
    store.release(&namespace, &grant, HIGH_WATER).expect("releasing");
    let exists: i64 = redis::cmd("EXISTS").arg(key("worker:0")).query(&mut conn).expect("EXISTS");
    assert_eq!(exists, 0, "a release deletes the lease key");
}

#[test]
fn a_server_that_never_answers_times_out() {
    // A socket that accepts connections and never replies.
    let silent = TcpListener::bind("127.0.0.1:0").expect("binding");
    let url = format!("redis://{}", silent.local_addr().expect("an address"));
    let bound = Duration::from_millis(300);
    let store = RedisLeaseStore::open(&url).expect("a Redis URL").timeout(bound);
    let began = Instant::now();
    timed_out(store.acquire(&Claim::new("shop", 32, TTL)), began, bound);
    let began = Instant::now();
    timed_out(store.now_ms(), began, bound);
}

#[test]
fn a_server_that_is_down_is_a_store_error() {
    let free = TcpListener::bind("127.0.0.1:0").expect("binding");
    let url = format!("redis://:secret@{}", free.local_addr().expect("an address"));
    drop(free);
    let store = RedisLeaseStore::open(&url).expect("a Redis URL");
    let err = store.acquire(&Claim::new("shop", 32, TTL)).unwrap_err();
    assert!(matches!(err, LeaseError::Store { .. }), "{err:?}");
    let message = err.to_string();
    assert!(message.contains("acquiring a worker ID in namespace \"shop\""), "{message}");
    assert!(!message.contains("secret"), "{message}");
    assert!(std::error::Error::source(&err).is_some(), "the driver's error is kept");
}

#[test]
fn a_stopped_server_times_out_within_the_bound_and_recovers() {
    let Some(server) = servers::PrivateRedis::start() else { return };
    let bound = Duration::from_millis(300);
    let store = RedisLeaseStore::open(&server.url()).expect("a Redis URL").timeout(bound);
    let namespace = "paused";
    let grant = store.acquire(&Claim::new(namespace, 32, TTL)).expect("acquiring");

    server.signal("-STOP");
    let began = Instant::now();
    timed_out(store.renew(namespace, &grant, TTL, HIGH_WATER), began, bound);
    let began = Instant::now();
    timed_out(store.now_ms(), began, bound);
    let began = Instant::now();
    timed_out(store.acquire(&Claim::new(namespace, 32, TTL)), began, bound);

    server.signal("-CONT");
    store.renew(namespace, &grant, TTL, HIGH_WATER).expect("renewing once the server runs again");
    store.release(namespace, &grant, HIGH_WATER).expect("releasing");
    let again = store.acquire(&Claim::new(namespace, 1, TTL)).expect("acquiring");
    assert!(again.fence > grant.fence);
}

#[test]
fn a_dropped_connection_is_replaced_on_the_next_call() {
    // The private server: killing clients on a shared one would cut other tests off.
    let Some(server) = servers::PrivateRedis::start() else { return };
    let store = RedisLeaseStore::open(&server.url()).expect("a Redis URL");
    let namespace = "reconnect";
    let grant = store.acquire(&Claim::new(namespace, 32, TTL)).expect("acquiring");
    let mut admin = redis::Client::open(server.url()).and_then(|c| c.get_connection()).expect("connecting");
    let killed: i64 =
        redis::cmd("CLIENT").arg(&["KILL", "TYPE", "normal", "SKIPME", "yes"]).query(&mut admin).expect("CLIENT KILL");
    assert_eq!(killed, 1, "the store's connection");
    // The call that meets the dead connection fails with a store error, not a lost lease;
    // the next one connects afresh.
    match store.renew(namespace, &grant, TTL, HIGH_WATER) {
        Err(LeaseError::Store { .. }) => {}
        other => panic!("expected a store error, got {other:?}"),
    }
    store.renew(namespace, &grant, TTL, HIGH_WATER).expect("a fresh connection renews");
    store.release(namespace, &grant, HIGH_WATER).expect("releasing");
}

/// With `min_replicas=1`, a server without replicas counts no grant and no renewal: the grant
/// is undone (the worker ID stays free) and fails saying how many replicas acknowledged it;
/// the renewal is a store error, not a loss (the holder keeps the validity it had).
#[test]
fn writes_too_few_replicas_acknowledged_do_not_count() {
    let Some((url, namespace, _cleanup)) = setup("min_replicas") else { return };
    let separator = if url.contains('?') { '&' } else { '?' };
    let strict = store(&format!("{url}{separator}min_replicas=1")).timeout(Duration::from_millis(400));
    let plain = store(&url);
    let replicas: String = redis::cmd("INFO")
        .arg("replication")
        .query(&mut redis::Client::open(url.as_str()).and_then(|c| c.get_connection()).expect("connecting"))
        .expect("INFO replication");
    if !replicas.contains("connected_slaves:0") {
        eprintln!("SKIPPED: the server at REDIS_URL has replicas");
        return;
    }
    let error = strict.acquire(&Claim::new(&namespace, 1, TTL)).expect_err("no replica acknowledges");
    assert!(matches!(error, LeaseError::Store { .. }), "{error:?}");
    let text = error.to_string();
    assert!(text.contains("too few replicas acknowledged the write"), "{text}");
    assert!(text.contains("0 of the 1 asked for (min_replicas=1) within 200 ms"), "{text}");
    // Undone: the only worker ID is free for the next store.
    let grant = plain.acquire(&Claim::new(&namespace, 1, TTL)).expect("the worker ID is free again");
    let error = strict.renew(&namespace, &grant, TTL, HIGH_WATER).expect_err("no replica acknowledges");
    assert!(matches!(error, LeaseError::Store { .. }), "a renewal too few replicas acknowledged is no loss: {error:?}");
    // A stale token is still a loss, told before any replica is asked.
    let mut stale = grant.clone();
    stale.token = "stale".into();
    let error = strict.renew(&namespace, &stale, TTL, HIGH_WATER).expect_err("a stale token");
    assert!(matches!(error, LeaseError::Lost { .. }), "{error:?}");
    plain.release(&namespace, &grant, HIGH_WATER).expect("releasing");
}
