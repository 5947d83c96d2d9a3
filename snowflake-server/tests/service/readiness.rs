//! Readiness is what issuing is: clients hammer the ID route and `/readyz` (and, with the
//! `grpc` feature, `Issue` and health) of the real server through every phase of its lease —
//! acquiring while the store is not there yet, waiting out earlier holders of a namespace not
//! declared new, issuing, fenced while the store is paused past the reservation, recovering,
//! draining — and find no instant where they disagree.
//!
//! Each sample is three requests in a row: readiness, an ID, readiness again. An ID refused
//! for a lease reason (a 503, `UNAVAILABLE`) between two "ready" answers, or an ID issued
//! between two "not ready" answers for a lease reason (anything but draining, where the
//! server still issues by design), is an instant where they disagreed: a violation.

use crate::common;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

#[cfg(feature = "grpc")]
use common::hammer::Sample;
use common::hammer::{Issue, Ready, hammer_http, issue, judge, readyz};
use common::{PrivateRedis, Server, eventually};

const ORDER: &str = "order=preset=leaf,epoch=2020-01-01";

/// Samples over gRPC (health, `Issue`, health) until `stop`.
#[cfg(feature = "grpc")]
fn hammer_grpc(base: String, stop: Arc<AtomicBool>) -> Vec<Sample> {
    use snowflake_server::grpc::pb::IssueRequest;
    use snowflake_server::grpc::pb::snowflake_client::SnowflakeClient;
    use tonic_health::pb::HealthCheckRequest;
    use tonic_health::pb::health_check_response::ServingStatus;
    use tonic_health::pb::health_client::HealthClient;

    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let channel = runtime.block_on(tonic::transport::Endpoint::from_shared(base).unwrap().connect()).unwrap();
    let (mut health, mut ids) = (HealthClient::new(channel.clone()), SnowflakeClient::new(channel));
    let mut samples = Vec::new();
    while !stop.load(Ordering::Relaxed) {
        runtime.block_on(async {
            let mut check = async || {
                let request = HealthCheckRequest { service: "snowflake.v1.Snowflake".into() };
                match health.check(request).await {
                    Ok(answer) if answer.get_ref().status == ServingStatus::Serving as i32 => Ready::Yes,
                    // Health has no phase: draining is told apart by the ID call (refused
                    // with "shutting down" only once the port closes).
                    Ok(_) => Ready::No("not serving".into()),
                    Err(_) => Ready::Closed,
                }
            };
            let at = Instant::now();
            let before = check().await;
            let (issued, message) = match ids.issue(IssueRequest { r#type: "order".into() }).await {
                Ok(_) => (Issue::Id, String::new()),
                Err(status) if status.code() == tonic::Code::Unavailable => {
                    let message = status.message().to_owned();
                    if message.contains("shutting down") { (Issue::Closed, message) } else { (Issue::Refused, message) }
                }
                Err(status) => (Issue::Closed, status.message().to_owned()),
            };
            let after = check().await;
            samples.push((at, before, issued, after, message));
        });
    }
    samples
}

#[test]
fn readiness_and_issuing_agree_through_every_phase_of_the_lease() {
    through_every_phase("serve-readiness", &[]);
}

/// The same with a lease state file, whose limit the generators issue up to: readiness
/// follows it too (a server once said ready while it refused half its requests for it).
#[test]
fn readiness_and_issuing_agree_with_a_state_file() {
    let dir = std::env::temp_dir().join(common::unique("serve-readiness-state"));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("lease");
    through_every_phase("serve-readiness-file", &["--lease-state-file", file.to_str().unwrap()]);
    let _ = std::fs::remove_dir_all(&dir);
}

/// Hammers a server on a private Redis with `extra` arguments through every phase of its
/// lease (see the module's docs), and checks that readiness and issuing never disagree.
fn through_every_phase(prefix: &str, extra: &[&str]) {
    let Some(mut redis) = PrivateRedis::not_started() else { return };
    let url = redis.url();
    let namespace = common::unique(prefix);
    let started = Instant::now();
    let mut args = vec![
        "--id",
        ORDER,
        "--lease",
        &url,
        "--namespace",
        &namespace,
        "--lease-ttl",
        "1s",
        "--lease-reservation",
        "1s",
        "--lease-wait",
        "60s",
        "--drain",
        "1500ms",
    ];
    args.extend_from_slice(extra);
    let mut server = Server::start(&args);
    let stop = Arc::new(AtomicBool::new(false));
    let mut http = Vec::new();
    for _ in 0..2 {
        let (base, stop) = (server.base.clone(), Arc::clone(&stop));
        http.push(std::thread::spawn(move || hammer_http(base, stop)));
    }
    #[cfg(feature = "grpc")]
    let grpc = {
        let (base, stop) = (server.base.clone(), Arc::clone(&stop));
        std::thread::spawn(move || hammer_grpc(base, stop))
    };
    let agent = common::agent();
    let phase = || match readyz(&agent, &server.url("/readyz")) {
        Ready::Yes => "issuing".to_owned(),
        Ready::No(phase) => phase,
        Ready::Closed => "closed".to_owned(),
    };

    // Acquiring: the store is not there yet.
    std::thread::sleep(Duration::from_millis(700));
    assert_eq!(phase(), "acquiring");
    // The store comes: a worker ID of a namespace not declared new waits out earlier holders
    // (one reservation), then issues.
    redis.restart();
    eventually(Duration::from_secs(20), "issuing once the store answers", || (phase() == "issuing").then_some(()));
    std::thread::sleep(Duration::from_millis(700));
    // The store stops answering for longer than the reservation: fenced, then (the lease
    // expired in the store meanwhile) issuing again once it answers.
    redis.pause();
    eventually(Duration::from_secs(10), "not issuing once the store is away", || (phase() != "issuing").then_some(()));
    std::thread::sleep(Duration::from_millis(1500));
    redis.resume();
    eventually(Duration::from_secs(20), "issuing again once the store is back", || {
        (phase() == "issuing").then_some(())
    });
    std::thread::sleep(Duration::from_millis(700));
    // Every refusal and every ID is counted, by reason and by face (the gauges read as the
    // server stands when asked: a loaded machine may show a late renewal's moment first).
    let mut expected = vec![
        "snowflake_server_refusals_total{reason=\"acquiring\"}",
        "snowflake_server_refusals_total{reason=\"waiting_out\"}",
        "snowflake_server_ids_issued_total{type=\"order\"}",
        "snowflake_server_phase{phase=\"issuing\"} 1",
        "snowflake_server_ready 1",
    ];
    if cfg!(feature = "grpc") {
        expected.push("snowflake_grpc_requests_total{method=\"Issue\",code=\"OK\"}");
        expected.push("snowflake_grpc_requests_total{method=\"Issue\",code=\"UNAVAILABLE\"}");
        expected.push("snowflake_grpc_requests_total{method=\"Check\",code=\"OK\"}");
    }
    let asked = Instant::now();
    loop {
        let metrics = common::get(&agent, &server.url("/metrics")).2;
        let missing: Vec<&str> = expected.iter().copied().filter(|line| !metrics.contains(line)).collect();
        if missing.is_empty() {
            break;
        }
        assert!(asked.elapsed() < Duration::from_secs(10), "{missing:?} missing from:\n{metrics}");
        std::thread::sleep(Duration::from_millis(200));
    }
    // Draining: not ready, still issuing, then the port closes.
    #[cfg_attr(not(feature = "grpc"), allow(unused_variables))]
    let stopping = Instant::now();
    let (code, log) = server.stop();
    stop.store(true, Ordering::Relaxed);
    assert_eq!(code, Some(0), "{log}");

    let mut all_phases = Vec::new();
    let (mut violations, mut flips) = (Vec::new(), Vec::new());
    let mut counts = Vec::new();
    for client in http {
        let samples = client.join().unwrap();
        let (v, phases, f) = judge("http", &samples);
        counts.push(("http", samples.len(), samples.iter().filter(|s| s.2 == Issue::Id).count()));
        violations.extend(v);
        flips.extend(f);
        all_phases.extend(phases);
    }
    #[cfg(feature = "grpc")]
    {
        // Health has no phase to tell the drain (NOT_SERVING, still issuing by design) from a
        // lease's refusal: the samples from the drain on are left out, and those begun in the
        // second before it (a sample's checks may reach the server after SIGTERM did).
        let samples: Vec<Sample> =
            grpc.join().unwrap().into_iter().filter(|s| s.0 + Duration::from_secs(1) < stopping).collect();
        let (v, _, f) = judge("grpc", &samples);
        counts.push(("grpc", samples.len(), samples.iter().filter(|s| s.2 == Issue::Id).count()));
        violations.extend(v);
        flips.extend(f);
        assert!(samples.iter().any(|s| s.2 == Issue::Refused) && samples.iter().any(|s| s.2 == Issue::Id));
    }
    all_phases.sort();
    all_phases.dedup();
    eprintln!(
        "readiness vs issuing {extra:?} in {:.1?}: (face, samples, IDs issued) {counts:?}; phases seen {all_phases:?}; {} violations, {} flips",
        started.elapsed(),
        violations.len(),
        flips.len()
    );
    for flip in &flips {
        eprintln!("flip: {flip}");
    }
    assert!(violations.is_empty(), "readiness and issuing disagreed:\n{}", violations.join("\n"));
    // A readiness that did not follow the status would give a flip at every refusal between
    // two of its answers (hundreds); the status's own transitions within one sample, a few.
    assert!(flips.len() <= 3, "too many refusals between two ready answers:\n{}", flips.join("\n"));
    for expected in ["acquiring", "waiting_out", "issuing", "draining"] {
        assert!(all_phases.iter().any(|p| p == expected), "{expected} never seen: {all_phases:?}");
    }
    assert!(
        all_phases.iter().any(|p| p == "fenced" || p == "recovering"),
        "the store's absence was never seen: {all_phases:?}"
    );
    // The store's absence is a warning; waiting out earlier holders is not.
    let warnings: Vec<&str> = log.lines().filter(|l| l.contains(" WARN snowflake_server")).collect();
    assert!(warnings.iter().any(|l| l.contains("not ready")), "the outage is a warning:\n{log}");
    assert!(!warnings.iter().any(|l| l.contains("phase=waiting_out")), "waiting out is no warning:\n{log}");
    common::delete_namespace(&url, &namespace);
}

/// A normal start (the store answers, the namespace declared new) tells its steps as
/// information: no warning from the server from its start to its first ID.
#[test]
fn a_normal_start_logs_no_warning() {
    let Some(url) = common::redis_url() else { return };
    let namespace = common::unique("serve-quiet");
    let mut server = Server::start(&["--id", ORDER, "--lease", &url, "--namespace", &namespace, "--create-namespace"]);
    let agent = common::agent();
    eventually(Duration::from_secs(10), "ready", || {
        (readyz(&agent, &server.url("/readyz")) == Ready::Yes).then_some(())
    });
    assert_eq!(issue(&agent, &server.url("/v1/ids/order")).0, Issue::Id);
    let (code, log) = server.stop();
    assert_eq!(code, Some(0), "{log}");
    let warnings: Vec<&str> = log.lines().filter(|l| l.contains(" WARN ") || l.contains(" ERROR ")).collect();
    let server_warnings: Vec<&&str> = warnings.iter().filter(|l| l.contains("snowflake_server")).collect();
    assert!(server_warnings.is_empty(), "a normal start warned:\n{log}");
    if !warnings.is_empty() {
        eprintln!("the library's warnings on a normal start:\n{}", warnings.join("\n"));
    }
    common::delete_namespace(&url, &namespace);
}
