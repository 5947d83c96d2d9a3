//! A restart on the same port that refuses nothing: a first server with `--reuse-port` under
//! four client loops, a second one started on its address, then SIGTERM to the first, which
//! drains and exits while the second serves. The loops count what failed, and every ID they
//! got is checked for duplicates (the two servers overlap, so each has its own worker ID, as
//! leases would give them).

use crate::common;

use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use common::Server;
use snowflake_server::config::IdSpec;

const ORDER: &str = "order=preset=leaf,epoch=2020-01-01";

/// What one client loop saw.
#[derive(Default)]
struct Seen {
    ids: Vec<i64>,
    failures: Vec<String>,
}

/// One client: `GET /v1/ids/order` on a keep-alive connection, as fast as answered, until
/// `stop` (or 60 s, so that a stuck test ends).
fn client_loop(base: String, stop: Arc<AtomicBool>, seen: Arc<Mutex<Seen>>) {
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .timeout_global(Some(Duration::from_secs(5)))
        .build()
        .into();
    let url = format!("{base}/v1/ids/order");
    let deadline = Instant::now() + Duration::from_secs(60);
    while !stop.load(Ordering::Relaxed) && Instant::now() < deadline {
        let answer = agent.get(&url).call().map_err(|e| e.to_string()).and_then(|mut response| {
            let status = response.status().as_u16();
            let body = response.body_mut().read_to_string().map_err(|e| e.to_string())?;
            if status != 200 {
                return Err(format!("{status}: {body}"));
            }
            let value: serde_json::Value = serde_json::from_str(&body).map_err(|e| e.to_string())?;
            value["id"].as_str().and_then(|id| id.parse::<i64>().ok()).ok_or(body)
        });
        let mut seen = seen.lock().unwrap();
        match answer {
            Ok(id) => seen.ids.push(id),
            Err(e) => seen.failures.push(e),
        }
    }
}

#[test]
fn a_restart_with_reuse_port_under_four_clients_fails_at_most_four_requests() {
    let listen = format!("127.0.0.1:{}", common::free_port());
    // A drain of 1 s: the first server stays in the port's group, answering, while the
    // second one serves beside it; then it leaves, finishing what it has in flight.
    let args = |worker: &'static str| ["--id", ORDER, "--worker", worker, "--reuse-port", "--drain", "1s"];
    let mut first = Server::start_at(&listen, &args("3"), &[]);
    let base = first.base.clone();

    let stop = Arc::new(AtomicBool::new(false));
    let seen: Vec<Arc<Mutex<Seen>>> = (0..4).map(|_| Arc::default()).collect();
    let loops: Vec<_> = seen
        .iter()
        .map(|seen| {
            let (base, stop, seen) = (base.clone(), Arc::clone(&stop), Arc::clone(seen));
            std::thread::spawn(move || client_loop(base, stop, seen))
        })
        .collect();
    std::thread::sleep(Duration::from_millis(500));

    // The second server binds the same address while the first still listens.
    let mut second = Server::start_at(&listen, &args("4"), &[]);
    assert_eq!(second.base, base);
    std::thread::sleep(Duration::from_millis(500));
    let (code, log) = first.stop();
    assert_eq!(code, Some(0), "the first server drains and exits cleanly:\n{log}");
    // The loops go on against the second server alone.
    std::thread::sleep(Duration::from_millis(1000));
    stop.store(true, Ordering::Relaxed);
    for handle in loops {
        handle.join().unwrap();
    }
    let (code, log) = second.stop();
    assert_eq!(code, Some(0), "{log}");

    let layout = IdSpec::parse(ORDER).unwrap().layout;
    let mut all = HashSet::new();
    let mut failures = Vec::new();
    for (n, seen) in seen.iter().enumerate() {
        let seen = seen.lock().unwrap();
        let workers: HashSet<u64> = seen.ids.iter().map(|&id| layout.worker_of(id)).collect();
        assert_eq!(workers, HashSet::from([3, 4]), "loop {n} was served by both servers");
        all.extend(seen.ids.iter().copied());
        failures.extend(seen.failures.iter().cloned());
    }
    let total: usize = seen.iter().map(|s| s.lock().unwrap().ids.len()).sum();
    assert_eq!(all.len(), total, "no ID twice");
    eprintln!("{total} IDs through the restart, {} failed requests: {failures:?}", failures.len());
    assert!(failures.len() <= 4, "{} requests failed through the restart: {failures:?}", failures.len());
}
