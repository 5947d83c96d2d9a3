//! `snowflake serve` (feature `serve`), run as a user runs it: the README's command with a
//! lease from Redis, read with curl, stopped with SIGTERM. The service's own tests are in
//! snowflake-server/tests.

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

fn under_ci() -> bool {
    std::env::var_os("CI").is_some_and(|value| !value.is_empty() && value != "false" && value != "0")
}

fn curl(url: &str) -> String {
    let output = Command::new("curl").args(["-sS", "-f", url]).output().expect("curl runs");
    assert!(output.status.success(), "curl {url}: {}", String::from_utf8_lossy(&output.stderr));
    String::from_utf8(output.stdout).unwrap()
}

/// The HTTP status of `GET url`, as curl writes it (`000` when nothing answers).
fn status(url: &str) -> String {
    let output = Command::new("curl").args(["-s", "-o", "/dev/null", "-w", "%{http_code}", url]).output().unwrap();
    String::from_utf8(output.stdout).unwrap()
}

#[test]
fn serve_with_a_redis_lease_answers_curl_and_stops_on_sigterm() {
    let redis = match std::env::var("REDIS_URL") {
        Ok(url) if !url.trim().is_empty() => url,
        _ if under_ci() => panic!("REDIS_URL is not set; under CI the servers must run"),
        _ => return eprintln!("skipped: REDIS_URL is not set"),
    };
    if Command::new("curl").arg("--version").stdout(Stdio::null()).status().is_err() {
        assert!(!under_ci(), "curl is not installed; under CI it must be");
        return eprintln!("skipped: curl is not installed");
    }
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().subsec_nanos();
    let namespace = format!("cli-serve-{}-{nanos}", std::process::id());
    let mut child = Command::new(env!("CARGO_BIN_EXE_snowflake"))
        .args(["serve", "--id", "order=preset=leaf,epoch=2020-01-01", "--lease", &redis])
        .args(["--namespace", &namespace, "--lease-ttl", "2s", "--lease-reservation", "2s", "--listen", "127.0.0.1:0"])
        .env_remove("SNOWFLAKE_WORKER_ID")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("snowflake serve starts");
    let stdout = child.stdout.take().unwrap();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            let _ = tx.send(line);
        }
    });
    let Ok(line) = rx.recv_timeout(Duration::from_secs(60)) else {
        let _ = child.kill();
        panic!("snowflake serve did not start: {:?}", child.wait_with_output());
    };
    let base = line.strip_prefix("listening on ").expect("the address").to_owned();
    // The port opens before the lease is there: ready once the new namespace's earlier
    // holders are waited out (about one TTL).
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    while status(&format!("{base}/readyz")) != "200" {
        assert!(std::time::Instant::now() < deadline, "not ready within 30 s");
        std::thread::sleep(Duration::from_millis(100));
    }

    let body = curl(&format!("{base}/v1/ids/order"));
    let id: &str = body.strip_prefix("{\"id\":\"").and_then(|s| s.strip_suffix("\"}")).expect("{\"id\":\"…\"}");
    assert!(id.parse::<u64>().is_ok(), "{body}");
    let ready = curl(&format!("{base}/readyz"));
    assert!(ready.starts_with("{\"lease\":{\"issuing_for_ms\":") && ready.ends_with(",\"ready\":true}"), "{ready}");
    assert!(ready.contains("\"store_answering\":true"), "{ready}");
    let types = curl(&format!("{base}/v1/types"));
    assert!(types.contains(&format!("in namespace \\\"{namespace}\\\"")), "{types}");

    let _ = Command::new("kill").args(["-TERM", &child.id().to_string()]).status();
    let output = child.wait_with_output().unwrap();
    let log = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(0), "{log}");
    assert!(log.contains("worker-ID lease released"), "{log}");

    let mut con = redis::Client::open(redis.as_str()).unwrap().get_connection().unwrap();
    let keys: Vec<String> = redis::cmd("KEYS").arg(format!("snowflake:{{{namespace}}}:*")).query(&mut con).unwrap();
    assert!(!keys.is_empty(), "the released lease leaves its fence and high water");
    let _: () = redis::cmd("DEL").arg(keys).query(&mut con).unwrap();
}
