//! The server binary on a Redis lease, from its start to its stop under load: the refusals
//! while a new namespace's earlier holders are waited out are logged when it turns ready,
//! `/metrics` shows the lease's gauges from the start, and SIGTERM drains (every request
//! answered while `/readyz` says "draining") before the port closes and the lease is released.
//! Started by systemd's socket activation, it serves on the socket it was passed.

use crate::common;

use std::sync::Arc;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use common::{Server, eventually, get};

const ORDER: &str = "order=preset=leaf,epoch=2020-01-01";

/// One request of a client: when it was sent, and its status or why it got none.
type Outcome = (Instant, Result<u16, String>);

/// What the readiness probe saw: `ready`, `draining`, `closed` (no answer) or another answer,
/// with the answer or the error.
type Probe = (Instant, &'static str, String);

/// `GET url` on a connection of its own (`Connection: close`), or why it got no answer.
fn fresh(agent: &ureq::Agent, url: &str) -> Result<(u16, String), String> {
    let mut response = agent.get(url).header("Connection", "close").call().map_err(|e| e.to_string())?;
    let body = response.body_mut().read_to_string().map_err(|e| e.to_string())?;
    Ok((response.status().as_u16(), body))
}

/// A client loop until `stop`: IDs one after another, on a kept-alive connection or on a new
/// connection each time.
fn client(base: String, keep_alive: bool, stop: Arc<AtomicBool>, sent: Arc<AtomicUsize>) -> Vec<Outcome> {
    let agent = common::agent();
    let url = format!("{base}/v1/ids/order");
    let mut outcomes = Vec::new();
    while !stop.load(Ordering::Relaxed) {
        let at = Instant::now();
        let outcome = if keep_alive {
            agent.get(&url).call().map_err(|e| e.to_string()).and_then(|mut r| {
                r.body_mut().read_to_string().map_err(|e| e.to_string())?;
                Ok(r.status().as_u16())
            })
        } else {
            fresh(&agent, &url).map(|(status, _)| status)
        };
        outcomes.push((at, outcome));
        sent.fetch_add(1, Ordering::Relaxed);
        std::thread::sleep(Duration::from_millis(2));
    }
    outcomes
}

#[test]
fn a_server_stopped_under_load_drains_then_releases_its_lease() {
    let Some(url) = common::redis_url() else { return };
    let namespace = common::unique("serve-drain");
    let mut server = Server::start(&[
        "--id",
        ORDER,
        "--lease",
        &url,
        "--namespace",
        &namespace,
        "--lease-ttl",
        "2s",
        "--lease-reservation",
        "2s",
        "--drain",
        "2s",
    ]);
    let agent = common::agent();

    // A new namespace: earlier holders are waited out (one reservation), ID requests are
    // refused meanwhile; then it issues.
    let mut refused = 0;
    eventually(Duration::from_secs(30), "issuing once the lease is there", || {
        let (status, _, _) = get(&agent, &server.url("/v1/ids/order"));
        refused += usize::from(status == 503);
        (status == 200).then_some(())
    });
    assert!(refused > 1, "the wait for earlier holders refuses requests");
    assert_eq!(get(&agent, &server.url("/readyz")).0, 200);
    // The lease's gauges are there before any outage, the fence's among them.
    let metrics = get(&agent, &server.url("/metrics")).2;
    for line in [
        format!("snowflake_lease_fenced{{namespace=\"{namespace}\"}} 0"),
        format!("snowflake_lease_store_up{{namespace=\"{namespace}\"}} 1"),
    ] {
        assert!(metrics.contains(&line), "{line} missing from:\n{metrics}");
    }

    // Load: two clients on kept-alive connections, two with a new connection per request,
    // and a readiness probe on connections of its own.
    let stop = Arc::new(AtomicBool::new(false));
    let sent = Arc::new(AtomicUsize::new(0));
    let clients: Vec<_> = [true, true, false, false]
        .into_iter()
        .map(|keep_alive| {
            let (base, stop, sent) = (server.base.clone(), Arc::clone(&stop), Arc::clone(&sent));
            std::thread::spawn(move || client(base, keep_alive, stop, sent))
        })
        .collect();
    // The probe's answers in order: ready, draining, or none (the port closed).
    let probes: Arc<Mutex<Vec<Probe>>> = Arc::default();
    let probe = {
        let (url, stop, probes) = (server.url("/readyz"), Arc::clone(&stop), Arc::clone(&probes));
        std::thread::spawn(move || {
            let agent = common::agent();
            while !stop.load(Ordering::Relaxed) {
                let (kind, detail) = match fresh(&agent, &url) {
                    Ok((200, body)) => ("ready", body),
                    Ok((503, body)) if body.contains("\"reason\":\"draining") => ("draining", body),
                    Ok((status, body)) => ("other", format!("{status} {body}")),
                    Err(e) => ("closed", e),
                };
                probes.lock().unwrap().push((Instant::now(), kind, detail));
                std::thread::sleep(Duration::from_millis(20));
            }
        })
    };
    eventually(Duration::from_secs(30), "the clients under way", || {
        (sent.load(Ordering::Relaxed) >= 100).then_some(())
    });

    let (code, log) = server.stop();
    stop.store(true, Ordering::Relaxed);
    let outcomes: Vec<Vec<Outcome>> = clients.into_iter().map(|c| c.join().unwrap()).collect();
    probe.join().unwrap();
    let probes = probes.lock().unwrap();
    assert_eq!(code, Some(0), "a clean exit:\n{log}");

    // The order of what each client saw tells the drain, whatever the machine's load: the
    // probe saw ready, then draining, then the port closed, never anything else; each client
    // got IDs, then no answer (the port closed), never an ID after a refusal or a drop. A
    // refused or dropped request while the port was open would be followed by an ID.
    let mut order: Vec<&str> = probes.iter().map(|(_, kind, _)| *kind).collect();
    order.dedup();
    assert!(
        order == ["ready", "draining", "closed"] || order == ["ready", "draining"],
        "/readyz: ready, then draining, then closed; saw {probes:?}"
    );
    let draining_seen = probes.iter().find(|(_, kind, _)| *kind == "draining").map(|(at, ..)| *at).unwrap();
    let (mut served, mut during, mut refused_after) = (0, 0, 0);
    for client in &outcomes {
        let answered = client.iter().take_while(|(_, outcome)| *outcome == Ok(200)).count();
        let rest = &client[answered..];
        assert!(
            rest.iter().all(|(_, outcome)| outcome.is_err()),
            "a request refused, dropped or failed while the port was open: {:?}",
            rest.iter().find(|(_, outcome)| outcome.is_ok())
        );
        served += answered;
        // Sent once the probe had seen the drain.
        during += client[..answered].iter().filter(|(at, _)| *at > draining_seen).count();
        refused_after += rest.len();
    }
    eprintln!(
        "{served} requests answered with an ID, {during} of them sent while /readyz said draining, \
         none refused or dropped before the port closed; {refused_after} sent after it closed"
    );
    assert!(during > 0, "requests sent during the drain were served");

    // The log: the refusals before the lease, counted when the server turned ready; the drain
    // before the release.
    let position = |what: &str| log.find(what).unwrap_or_else(|| panic!("{what:?} missing from:\n{log}"));
    let first = position("ID requests refused: ");
    let summary = first + 1 + log[first + 1..].find("ID requests refused: ").expect("a count after the first line");
    // The next change of readiness: `ready`, or straight to draining when the server was
    // asked to stop before its watch saw it ready.
    let change = log.find("snowflake_server: ready").unwrap_or(usize::MAX).min(position("reason=draining"));
    assert!(summary < change, "the refusals' count before the next readiness:\n{log}");
    assert!(position("draining: /readyz answers 503") < position("worker-ID lease released"), "{log}");
    common::delete_namespace(&url, &namespace);
}

/// A program that does what systemd does for a `.socket` unit: it opens the listening socket,
/// hands it over as file descriptor 3 with `LISTEN_FDS=1` and `LISTEN_PID` set to the process
/// that then runs the server (itself: `exec` keeps the process ID).
const SOCKET_ACTIVATION: &str = r#"
import os, socket, sys
listener = socket.socket()
listener.bind(("127.0.0.1", 0))
listener.listen(64)
os.dup2(listener.fileno(), 3)
os.set_inheritable(3, True)
os.environ.update(LISTEN_FDS="1", LISTEN_PID=str(os.getpid()))
os.execv(sys.argv[1], sys.argv[1:])
"#;

#[test]
fn socket_activation_serves_on_the_socket_systemd_passes() {
    if common::tool("python3").is_none() {
        return;
    }
    let mut command = std::process::Command::new("python3");
    // --listen names another address: the passed socket wins.
    command.args(["-c", SOCKET_ACTIVATION, env!("CARGO_BIN_EXE_snowflake-server")]).args([
        "--id",
        ORDER,
        "--worker",
        "3",
        "--listen",
        "127.0.0.1:1",
    ]);
    let mut server = Server::launch(command, &[]);
    assert_ne!(server.base, "http://127.0.0.1:1", "the passed socket, not --listen");
    let agent = common::agent();
    let id = eventually(Duration::from_secs(10), "an ID on the passed socket", || {
        let (status, _, body) = get(&agent, &server.url("/v1/ids/order"));
        (status == 200).then_some(body)
    });
    assert!(id.starts_with("{\"id\":\""), "{id}");
    let (code, log) = server.stop();
    assert_eq!(code, Some(0), "{log}");
    assert!(log.contains("listening on the socket systemd passed (LISTEN_FDS)"), "{log}");
}
