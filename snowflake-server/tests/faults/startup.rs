//! A server answers from the moment its port is open: while its worker-ID lease is being
//! acquired (the store does not answer yet, or earlier holders are waited out) `/healthz` is
//! 200, `/readyz` 503 with the reason, the ID routes 503 with `Retry-After` at once, and the
//! routes that need no worker ID work; once the store answers it becomes ready and issues.
//! Refused ID requests are logged as a count every few seconds, not a line per request.

use crate::common;

use std::time::{Duration, Instant};

use common::{PrivateRedis, Server, agent, eventually, get};
use serde_json::Value;
use typed_snowflake::worker::lease::DEFAULT_STORE_TIMEOUT;

const ORDER: &str = "order=preset=leaf,epoch=2020-01-01";

fn json(body: &str) -> Value {
    serde_json::from_str(body).unwrap_or_else(|e| panic!("{e}: {body}"))
}

/// The WARN lines about refused ID requests in `log`, and the refusals they count.
fn refusal_lines(log: &str) -> (usize, u64) {
    let lines: Vec<&str> = log.lines().filter(|l| l.contains("ID requests refused")).collect();
    let total = lines
        .iter()
        .map(|line| {
            let count = line.split("ID requests refused: ").nth(1).unwrap_or_else(|| panic!("no count in {line:?}"));
            count.split(|c: char| !c.is_ascii_digit()).next().unwrap().parse::<u64>().unwrap()
        })
        .sum();
    (lines.len(), total)
}

#[test]
fn a_server_waiting_for_its_lease_answers_at_once_then_issues_once_the_store_is_there() {
    let Some(mut redis) = PrivateRedis::not_started() else { return };
    let url = redis.url();
    let namespace = common::unique("serve-startup");
    let started = Instant::now();
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
        "--lease-wait",
        "60s",
    ]);
    let agent = agent();
    let (status, _, body) = get(&agent, &server.url("/readyz"));
    let to_not_ready = started.elapsed();
    eprintln!("start to /readyz 503: {to_not_ready:?}");
    assert_eq!(status, 503, "{body}");
    assert!(to_not_ready < Duration::from_secs(1), "/readyz answered {to_not_ready:?} after the start");
    let ready = json(&body);
    assert_eq!(ready["ready"], false);
    let reason = ready["reason"].as_str().unwrap();
    assert!(reason.starts_with(&format!("waiting for a worker-ID lease from {url}")), "{reason}");
    assert!(reason.contains("acquiring a worker ID"), "{reason}");
    let (status, _, body) = get(&agent, &server.url("/healthz"));
    assert_eq!(status, 200, "{body}");

    // The ID routes: 503 with Retry-After and the reason, at once.
    let mut refused = 0u64;
    let mut slowest = Duration::ZERO;
    for path in ["/v1/ids/order", "/v1/ids/order?count=10", "/api/snowflake/get/order"] {
        let asked = Instant::now();
        let (status, retry, body) = get(&agent, &server.url(path));
        slowest = slowest.max(asked.elapsed());
        refused += 1;
        assert_eq!(status, 503, "{path}: {body}");
        assert!(retry.is_some_and(|r| r.parse::<u64>().is_ok()), "{path}: Retry-After");
        let error = json(&body)["error"].as_str().unwrap().to_owned();
        assert!(error.contains("waiting for a worker-ID lease"), "{path}: {error}");
    }
    // What needs no worker ID works; an unknown type is still a 404.
    let (status, _, body) = get(&agent, &server.url("/v1/types"));
    assert_eq!(status, 200, "{body}");
    let types = json(&body);
    assert_eq!(types["types"][0]["name"], "order");
    assert_eq!(types["types"][0]["worker"], Value::Null);
    assert!(types["worker_source"].as_str().unwrap().contains("waiting"), "{types}");
    assert_eq!(get(&agent, &server.url("/v1/ping")).2, "pong");
    let (status, _, body) = get(&agent, &server.url("/v1/ids/order/1541815603606036480"));
    assert_eq!(status, 200, "{body}");
    assert_eq!(get(&agent, &server.url("/decodeSnowflakeId?snowflakeId=1541815603606036480")).0, 200);
    assert_eq!(get(&agent, &server.url("/v1/ids/nope")).0, 404);

    // The store's error, once the lease thread has met it.
    eventually(Duration::from_secs(5), "/readyz gives the last store error", || {
        let reason = json(&get(&agent, &server.url("/readyz")).2)["reason"].as_str().unwrap().to_owned();
        reason.contains("last store error").then_some(())
    });
    // 20 requests a second for 2 s, each refused at once.
    for _ in 0..40 {
        let asked = Instant::now();
        let (status, retry, _) = get(&agent, &server.url("/v1/ids/order"));
        slowest = slowest.max(asked.elapsed());
        refused += 1;
        assert_eq!((status, retry.is_some()), (503, true));
        std::thread::sleep(Duration::from_millis(50));
    }
    eprintln!("slowest 503 of an ID route: {slowest:?}");
    // A route that waited on the store would take a store call's timeout (2 s); a refusal
    // that does not wait takes a request's time, however loaded the machine.
    assert!(slowest < DEFAULT_STORE_TIMEOUT / 4, "an ID route took {slowest:?} to refuse: it waited on the store");

    // The store comes up: the lease is taken, earlier holders of a worker ID of the new
    // namespace are waited out (docs/lease-rules.md, what each start costs), then the server
    // is ready and issues. During the first acquisition, /readyz says it is acquiring (the
    // wait and its time left are the lease's log line).
    redis.restart();
    let mut reasons = Vec::new();
    eventually(Duration::from_secs(30), "ready once the store answers", || {
        let (status, _, body) = get(&agent, &server.url("/readyz"));
        if status == 200 {
            return Some(());
        }
        let reason = json(&body)["reason"].as_str().unwrap().to_owned();
        if reasons.last() != Some(&reason) {
            reasons.push(reason);
        }
        None
    });
    assert!(reasons.iter().any(|r| r.contains("acquiring a worker ID")), "{reasons:#?}");
    let (status, _, body) = get(&agent, &server.url("/v1/ids/order?count=5"));
    assert_eq!(status, 200, "{body}");
    assert_eq!(json(&body)["ids"].as_array().unwrap().len(), 5);
    let types = json(&get(&agent, &server.url("/v1/types")).2);
    assert!(types["types"][0]["worker"].is_u64(), "{types}");

    let (code, log) = server.stop();
    assert_eq!(code, Some(0), "{log}");
    assert!(log.contains("worker-ID lease released"), "{log}");
    let (lines, counted) = refusal_lines(&log);
    assert_eq!(counted, refused, "every refused request is counted:\n{log}");
    assert!((1..=3).contains(&lines), "{lines} lines for {refused} refusals:\n{log}");
    common::delete_namespace(&url, &namespace);
}

/// A lease store that stops answering (SIGSTOP) while the server issues: at 20 requests a
/// second, the refusals are logged as counts, a line every few seconds, not a line or two
/// per request.
#[test]
fn refused_requests_are_logged_as_a_count_every_few_seconds() {
    let Some(redis) = PrivateRedis::start() else { return };
    let url = redis.url();
    let mut server = Server::start(&[
        "--id",
        ORDER,
        "--lease",
        &url,
        "--lease-ttl",
        "2s",
        "--lease-reservation",
        "2s",
        "--namespace",
        "quiet",
    ]);
    let agent = agent();
    eventually(Duration::from_secs(30), "the server is ready", || {
        (get(&agent, &server.url("/readyz")).0 == 200).then_some(())
    });
    assert_eq!(get(&agent, &server.url("/v1/ids/order")).0, 200);
    redis.pause();
    eventually(Duration::from_secs(10), "503 once the lease is not renewed", || {
        (get(&agent, &server.url("/v1/ids/order")).0 == 503).then_some(())
    });
    let mut refused = 1u64;
    for _ in 0..60 {
        let (status, _, body) = get(&agent, &server.url("/v1/ids/order"));
        assert_eq!(status, 503, "{body}");
        refused += 1;
        std::thread::sleep(Duration::from_millis(50));
    }
    redis.resume();
    let (code, log) = server.stop();
    assert_eq!(code, Some(0), "{log}");
    let (lines, counted) = refusal_lines(&log);
    assert_eq!(counted, refused, "every refused request is counted:\n{log}");
    assert!((1..=3).contains(&lines), "{lines} lines for {refused} refusals:\n{log}");
    assert!(!log.contains("ID generation failed") && !log.contains("cannot issue"), "a line per request:\n{log}");
}

/// A lease that cannot be had within `--lease-wait`: the server answers meanwhile, then exits
/// with 1 and the store's error, as a server that never opened its port did.
#[test]
fn a_lease_never_had_ends_the_server_after_the_wait() {
    let port = common::free_port();
    let url = format!("redis://127.0.0.1:{port}");
    let mut server = Server::start(&["--id", ORDER, "--lease", &url, "--lease-wait", "2s"]);
    let agent = agent();
    let (status, _, body) = get(&agent, &server.url("/readyz"));
    assert_eq!(status, 503, "{body}");
    assert_eq!(get(&agent, &server.url("/healthz")).0, 200);
    // The port closes when the process ends (not reaped here: `stop` collects the code).
    let healthz = server.url("/healthz");
    eventually(Duration::from_secs(20), "the server exits once the wait is over", || {
        agent.get(&healthz).call().is_err().then_some(())
    });
    std::thread::sleep(Duration::from_millis(200));
    let (code, log) = server.stop();
    assert_eq!(code, Some(1), "{log}");
    assert!(log.contains("snowflake serve: worker-ID lease:"), "{log}");
}

/// A lease store that accepts connections and answers nothing (SIGSTOP) at start: the
/// acquisition hangs on its store timeout in the background, and the server answers at once
/// all the same; once the store goes on, it becomes ready and issues.
#[test]
fn a_store_paused_at_start_does_not_hold_up_the_answers() {
    let Some(redis) = PrivateRedis::start() else { return };
    let url = redis.url();
    redis.pause();
    let started = Instant::now();
    let mut server = Server::start(&[
        "--id",
        ORDER,
        "--lease",
        &url,
        "--lease-ttl",
        "2s",
        "--lease-reservation",
        "2s",
        "--lease-wait",
        "60s",
    ]);
    let agent = agent();
    let (status, _, body) = get(&agent, &server.url("/readyz"));
    let to_not_ready = started.elapsed();
    eprintln!("paused store: start to /readyz 503: {to_not_ready:?}");
    assert_eq!(status, 503, "{body}");
    assert!(to_not_ready < Duration::from_secs(1), "/readyz answered {to_not_ready:?} after the start");
    assert!(json(&body)["reason"].as_str().unwrap().contains("acquiring a worker ID"), "{body}");
    assert_eq!(get(&agent, &server.url("/healthz")).0, 200);
    let mut slowest = Duration::ZERO;
    for _ in 0..20 {
        let asked = Instant::now();
        let (status, retry, _) = get(&agent, &server.url("/v1/ids/order"));
        slowest = slowest.max(asked.elapsed());
        assert_eq!((status, retry.is_some()), (503, true));
        std::thread::sleep(Duration::from_millis(50));
    }
    eprintln!("paused store: slowest 503 of an ID route: {slowest:?}");
    // A route that waited on the store would take a store call's timeout (2 s); a refusal
    // that does not wait takes a request's time, however loaded the machine.
    assert!(slowest < DEFAULT_STORE_TIMEOUT / 4, "an ID route took {slowest:?} to refuse: it waited on the store");
    redis.resume();
    eventually(Duration::from_secs(30), "ready once the store goes on", || {
        (get(&agent, &server.url("/readyz")).0 == 200).then_some(())
    });
    assert_eq!(get(&agent, &server.url("/v1/ids/order")).0, 200);
    let (code, log) = server.stop();
    assert_eq!(code, Some(0), "{log}");
    assert!(log.contains("worker-ID lease released"), "{log}");
}
