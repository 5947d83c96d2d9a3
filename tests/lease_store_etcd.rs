//! The etcd lease store against real etcd servers: each test starts a private one (Debian's
//! `etcd-server`) on free loopback ports and stops it after. The conformance checks every
//! store passes, the clock comparison through the recorded times, a server that never
//! answers, a holder whose renewals are cut off, a server rebuilt empty under a holder, and
//! processes configured by `SNOWFLAKE_WORKER_LEASE=etcd://…` alone.

#[path = "common/child.rs"]
mod child;
#[path = "common/faults.rs"]
mod faults;
#[path = "common/lease_cluster.rs"]
mod lease_cluster;
#[path = "common/lease_store.rs"]
mod lease_store;
#[path = "common/servers.rs"]
mod servers;

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use lease_cluster::TestResult;
use lease_store::{TTL, timed_out};
use typed_snowflake::worker::lease::{Claim, EtcdLeaseStore, LeaseError, LeaseStore, open_store};

fn store(url: &str) -> EtcdLeaseStore {
    EtcdLeaseStore::open(url).expect("an etcd URL")
}

fn shared(url: &str) -> Arc<dyn LeaseStore> {
    Arc::new(store(url).timeout(Duration::from_millis(300)))
}

/// A private server and a namespace; `None` to skip.
fn setup() -> Option<(servers::PrivateEtcd, String)> {
    let etcd = servers::PrivateEtcd::start()?;
    Some((etcd, "shop".to_owned()))
}

/// Puts `key` = `value` through etcd's JSON gateway (`/v3/kv/put`), as another client would.
fn put(port: u16, key: &str, value: &str) {
    let body = format!(r#"{{"key":"{}","value":"{}"}}"#, base64(key.as_bytes()), base64(value.as_bytes()));
    let mut stream = TcpStream::connect(("127.0.0.1", port)).expect("connecting to etcd");
    // One write: the request whole.
    let request = format!(
        "POST /v3/kv/put HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    stream.write_all(request.as_bytes()).expect("sending");
    let mut reply = String::new();
    stream.read_to_string(&mut reply).expect("reading the reply");
    assert!(reply.starts_with("HTTP/1.1 200"), "{reply}");
}

fn base64(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::new();
    for chunk in bytes.chunks(3) {
        let n = chunk.iter().enumerate().fold(0u32, |n, (i, &b)| n | u32::from(b) << (16 - 8 * i));
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(char::from(ALPHABET[(n >> (18 - 6 * i) & 63) as usize]));
            } else {
                out.push('=');
            }
        }
    }
    out
}

#[test]
fn thirty_two_holders_share_a_five_bit_space() {
    let Some((etcd, namespace)) = setup() else { return };
    let stores: Vec<EtcdLeaseStore> = (0..8).map(|_| store(&etcd.url())).collect();
    lease_store::thirty_two_holders_share_a_five_bit_space(&stores, &namespace);
}

#[test]
fn fences_follow_the_clock_and_the_claim() {
    let Some((etcd, namespace)) = setup() else { return };
    lease_store::fences_follow_the_clock_and_the_claim(&store(&etcd.url()), &namespace);
}

/// The server rebuilt from nothing (killed, its data deleted, started again): revisions start
/// again at 1, and no high water is vouched for.
#[test]
fn a_store_that_lost_its_data_vouches_for_nothing() {
    let Some((etcd, namespace)) = setup() else { return };
    let url = etcd.url();
    let etcd = Mutex::new(etcd);
    let lose = || etcd.lock().unwrap().restart_empty();
    lease_store::a_store_that_lost_its_data_vouches_for_nothing(&store(&url), &namespace, lose);
}

#[test]
fn the_leases_are_listed() {
    let Some((etcd, namespace)) = setup() else { return };
    lease_store::the_leases_are_listed(&store(&etcd.url()), &namespace, true);
}

#[test]
fn high_water_rises_until_the_release() {
    let Some((etcd, namespace)) = setup() else { return };
    lease_store::high_water_rises_until_the_release(&store(&etcd.url()), &namespace);
}

#[test]
fn a_stale_token_is_lost() {
    let Some((etcd, namespace)) = setup() else { return };
    lease_store::a_stale_token_is_lost(&store(&etcd.url()), &namespace);
}

#[test]
fn an_expired_lease_is_taken_over() {
    let Some((etcd, namespace)) = setup() else { return };
    let (old, new) = (store(&etcd.url()), store(&etcd.url()));
    lease_store::an_expired_lease_is_taken_over_within(
        &old,
        &new,
        &namespace,
        Duration::from_millis(300),
        Duration::from_secs(10),
    );
}

#[test]
fn the_store_clock_is_close() {
    let Some((etcd, namespace)) = setup() else { return };
    lease_store::the_store_clock_is_close(&store(&etcd.url()), &namespace);
}

#[test]
fn bad_arguments_are_refused() {
    let Some((etcd, namespace)) = setup() else { return };
    lease_store::bad_arguments_are_refused(&store(&etcd.url()), &namespace);
}

#[test]
fn namespaces_differ_by_case() {
    let Some((etcd, namespace)) = setup() else { return };
    lease_store::namespaces_differ_by_case(&store(&etcd.url()), &namespace);
}

/// Keys live under the URL's prefix: two prefixes are two stores.
#[test]
fn prefixes_separate_stores() {
    let Some((etcd, namespace)) = setup() else { return };
    let a = store(&format!("{}/apps/a", etcd.url()));
    let b = store(&format!("{}/apps/b", etcd.url()));
    let first = a.acquire(&Claim::new(&namespace, 1, TTL)).expect("acquiring under one prefix");
    let second = b.acquire(&Claim::new(&namespace, 1, TTL)).expect("acquiring under the other");
    assert_eq!((first.worker, second.worker), (0, 0));
    assert!(matches!(a.acquire(&Claim::new(&namespace, 1, TTL)), Err(LeaseError::NoFreeWorker { .. })));
}

/// The previous holder of a worker ID recorded a time an hour ahead of this host's clock:
/// this host's clock is behind, and the acquisition is refused, naming both times.
#[test]
fn a_clock_behind_the_previous_holders_is_refused() {
    let Some((etcd, namespace)) = setup() else { return };
    let ahead = lease_store::HIGH_WATER + 10 * 365 * 86_400_000;
    put(etcd.port(), &format!("/snowflake/{namespace}/high-water/0000000"), &format!("5|{ahead}|{ahead}"));
    let store = store(&etcd.url());
    match store.acquire(&Claim::new(&namespace, 1, TTL)) {
        Err(LeaseError::ClockSkew { store_ms, tolerance, .. }) => {
            assert_eq!(store_ms, ahead);
            assert_eq!(tolerance, Duration::from_secs(1));
        }
        other => panic!("expected a clock skew, got {other:?}"),
    }
    // A record written within the tolerance is taken over, above its fence and high water.
    let now = lease_store::HIGH_WATER;
    put(etcd.port(), &format!("/snowflake/{namespace}/high-water/0000000"), &format!("5|{now}|{now}"));
    let grant = store.acquire(&Claim::new(&namespace, 1, TTL)).expect("acquiring");
    assert_eq!(grant.previous_high_water_ms, Some(now));
    assert!(grant.fence > 5);
}

/// A record that no store of ours wrote is refused, never read as a number.
#[test]
fn foreign_data_is_refused() {
    let Some((etcd, namespace)) = setup() else { return };
    put(etcd.port(), &format!("/snowflake/{namespace}/high-water/0000000"), "not a record");
    let err = store(&etcd.url()).acquire(&Claim::new(&namespace, 1, TTL)).unwrap_err();
    assert!(matches!(err, LeaseError::Store { .. }), "{err:?}");
    assert!(err.to_string().contains("unexpected reply: high-water record \"not a record\""), "{err}");
}

#[test]
fn a_server_that_never_answers_times_out() {
    // A socket that accepts connections and never replies.
    let silent = TcpListener::bind("127.0.0.1:0").expect("binding");
    let url = format!("etcd://{}", silent.local_addr().expect("an address"));
    let bound = Duration::from_millis(300);
    let store = store(&url).timeout(bound);
    let began = Instant::now();
    timed_out(store.acquire(&Claim::new("shop", 32, TTL)), began, bound);
}

#[test]
fn renewals_cut_off_fence_the_holder_before_its_ttl_ends() -> TestResult {
    let Some((etcd, _)) = setup() else { return Ok(()) };
    let server = std::net::SocketAddr::from(([127, 0, 0, 1], etcd.port()));
    lease_cluster::renewals_cut_off_fence_the_holder_before_its_ttl_ends(server, "etcd", &shared)
}

#[test]
fn a_new_holder_starts_above_the_last_even_with_a_clock_an_hour_back() -> TestResult {
    let Some((etcd, _)) = setup() else { return Ok(()) };
    lease_cluster::a_new_holder_starts_above_the_last_even_with_a_clock_an_hour_back(&etcd.url(), &shared)
}

#[test]
fn a_store_restarted_empty_makes_the_holder_wait_out_earlier_ones() -> TestResult {
    let Some((mut etcd, _)) = setup() else { return Ok(()) };
    let url = etcd.url();
    lease_cluster::a_store_restarted_empty_makes_the_holder_wait_out_earlier_ones(&url, &shared, &mut || {
        etcd.restart_empty()
    })
}

#[test]
fn churn() -> TestResult {
    let Some((etcd, _)) = setup() else { return Ok(()) };
    lease_cluster::churn(&shared, &etcd.url())
}

#[test]
fn acquisition_latency() {
    let Some((etcd, _)) = setup() else { return };
    lease_cluster::acquisition_latency(&store(&etcd.url()), "etcd");
}

#[test]
#[ignore = "the entry point of the child processes: the other tests run it"]
fn child() -> TestResult {
    lease_cluster::child_main()
}

#[test]
fn processes_configured_by_the_environment_never_share_an_id() -> TestResult {
    let Some((etcd, _)) = setup() else { return Ok(()) };
    lease_cluster::processes_configured_by_the_environment_never_share_an_id(&etcd.url(), 4)
}

#[test]
fn open_store_opens_etcd_urls() {
    let store = open_store("etcd+http://127.0.0.1:2379,127.0.0.1:22379/apps").expect("an etcd URL");
    assert_eq!(store.describe(), "etcd://127.0.0.1:2379,127.0.0.1:22379/apps");
}
