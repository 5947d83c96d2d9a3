//! The gRPC API of the real server binary, read by clients generated from the repository's
//! `.proto`: Python (grpcio-tools, `tests/grpc/client.py`), Node (@grpc/proto-loader,
//! `tests/grpc/client.js`) and Rust (tonic, `examples/grpc_client.rs`). Each gets an ID, a
//! batch, three chunks of a stream, decodes, lists the types and sees the errors with the
//! HTTP routes' reasons; and, from a server still waiting for its worker-ID lease,
//! `UNAVAILABLE` with `retry-after`. Health follows readiness; reflection lists the services.
//! Over TLS with client certificates (a CA made by openssl) the Python and Node clients work,
//! are refused without a client certificate, and see a renewed certificate without a restart.
//! Under CI a missing tool or package fails (`.ci/run` installs them).

use crate::common;

#[allow(dead_code)]
#[path = "../../examples/grpc_client.rs"]
mod example;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::{Server, certs};
use serde_json::Value;
use snowflake_server::config::IdSpec;
use tonic_health::pb::health_check_response::ServingStatus;

const ORDER: &str = "order=preset=leaf,epoch=2020-01-01";
const USER: &str = "user=prefix=usr,preset=twitter";

/// `tests/grpc/`: the clients, their packages (`requirements.txt`, `package.json`).
fn clients_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/grpc")
}

fn proto_dir() -> String {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("proto").display().to_string()
}

/// `host:port` of a server's `http://host:port` or `https://host:port`.
fn target(server: &Server) -> String {
    server.base.trim_start_matches("http://").trim_start_matches("https://").to_owned()
}

/// Whether the Python client's packages are there (`pip install -r tests/grpc/requirements.txt`).
fn python() -> Option<()> {
    common::tool("python3")?;
    let imports = "import grpc, grpc_tools, grpc_health, grpc_reflection";
    match Command::new("python3").args(["-c", imports]).status() {
        Ok(status) if status.success() => Some(()),
        _ => common::missing("the Python gRPC packages: pip install -r snowflake-server/tests/grpc/requirements.txt"),
    }
}

/// Whether the Node client's packages are there (`npm ci` in `tests/grpc`).
fn node() -> Option<()> {
    common::tool("node")?;
    if clients_dir().join("node_modules/@grpc/grpc-js").is_dir() {
        Some(())
    } else {
        common::missing("the Node gRPC packages: npm ci in snowflake-server/tests/grpc")
    }
}

/// Runs a client script (`python3 client.py …`, `node client.js …`) and parses what it prints.
fn run(program: &str, script: &str, args: &[&str]) -> Value {
    let output = Command::new(program)
        .current_dir(clients_dir())
        .arg(script)
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("{program}: {e}"));
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{program} {script} failed: {}\n{stdout}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_str(stdout.trim()).unwrap_or_else(|e| panic!("{program}: {e}: {stdout:?}"))
}

fn id_of(v: &Value) -> u64 {
    v.as_str().unwrap_or_else(|| panic!("not a string: {v}")).parse().unwrap()
}

/// What every client prints from a server of `order` and `user` on worker 5.
fn check(client: &str, v: &Value) {
    let layout = IdSpec::parse(ORDER).unwrap().layout;
    let id = id_of(&v["id"]);
    let raw = i64::try_from(id).unwrap();
    assert_eq!(layout.worker_of(raw), 5, "{client}");
    assert!(id > 1 << 53, "{client}: an ID above 2^53 survives exactly");
    assert_eq!(v["text"], id.to_string(), "{client}: a decimal type's text is its digits");
    let batch: Vec<u64> = v["batch"].as_array().unwrap().iter().map(id_of).collect();
    assert_eq!(batch.len(), 3, "{client}");
    assert!(batch[0] > id && batch.windows(2).all(|w| w[0] < w[1]), "{client}: {batch:?}");
    let texts: Vec<String> = batch.iter().map(u64::to_string).collect();
    assert_eq!(v["batch_texts"], serde_json::json!(texts), "{client}");
    let chunks = v["chunks"].as_array().unwrap();
    assert_eq!(chunks.len(), 3, "{client}: {v}");
    let mut last = batch[2];
    for chunk in chunks {
        let (first, end) = (id_of(&chunk[0]), id_of(&chunk[1]));
        assert_eq!(chunk[2], 1000, "{client}");
        assert!(first > last && end > first, "{client}: chunks in issuing order: {chunks:?}");
        last = end;
    }
    let decoded = &v["decoded"];
    assert_eq!(decoded["id"], v["id"], "{client}");
    assert_eq!((decoded["worker"].as_u64(), decoded["sequence"].as_u64()), (Some(5), Some(layout.sequence_of(raw))));
    assert_eq!(decoded["unix_ms"].as_i64(), Some(layout.timestamp_ms_of(raw)), "{client}");
    assert!(decoded["time"].as_str().unwrap().ends_with('Z'), "{client}: RFC 3339 in UTC");
    let prefixed = &v["prefixed"];
    assert!(prefixed["text"].as_str().unwrap().starts_with("usr_"), "{client}: {prefixed}");
    assert_eq!(prefixed["decoded"], prefixed["id"], "{client}: usr_… decodes to its integer");
    let types = v["types"].as_array().unwrap();
    assert_eq!(types.len(), 2, "{client}");
    assert_eq!(
        (&types[0]["name"], &types[0]["prefix"], &types[0]["worker"]),
        (&"order".into(), &Value::Null, &5.into())
    );
    assert_eq!((&types[1]["name"], &types[1]["prefix"]), (&"user".into(), &"usr".into()), "{client}");
    if client.starts_with("node") {
        assert_eq!(v["made_up"], serde_json::json!([]), "{client}: the docs' options give plain messages");
    }
    let errors = &v["errors"];
    for (call, code, says) in [
        ("unknown_type", "NOT_FOUND", "no ID type \"nope\"; this server serves: order, user"),
        ("bad_id", "INVALID_ARGUMENT", "\"12x4\" is not an ID of type \"order\""),
        ("wrong_prefix", "INVALID_ARGUMENT", "is not a user ID"),
        ("bad_count", "INVALID_ARGUMENT", "count=0: a batch holds at least 1 ID"),
    ] {
        assert_eq!(errors[call]["code"], code, "{client}: {call}: {errors}");
        assert!(errors[call]["details"].as_str().unwrap().contains(says), "{client}: {call}: {errors}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn python_node_and_rust_clients_get_ids_batches_streams_and_decoded_parts() {
    let mut server = Server::start(&["--id", ORDER, "--id", USER, "--worker", "5"]);
    let target = target(&server);
    let proto = proto_dir();

    let channel = tonic::transport::Endpoint::from_shared(server.base.clone()).unwrap().connect().await.unwrap();
    check("rust", &example::tour(channel.clone()).await.unwrap());
    // Health follows readiness: this server has its worker ID from the start.
    let mut health = tonic_health::pb::health_client::HealthClient::new(channel.clone());
    for service in ["", "snowflake.v1.Snowflake"] {
        let request = tonic_health::pb::HealthCheckRequest { service: service.into() };
        let status = health.check(request).await.unwrap().into_inner().status;
        assert_eq!(status, ServingStatus::Serving as i32, "{service:?}");
    }

    // The clients block: off the runtime's workers.
    let (target_py, proto_py) = (target.clone(), proto.clone());
    let python = tokio::task::spawn_blocking(move || {
        python().map(|()| run("python3", "client.py", &[&target_py, "all", &proto_py]))
    });
    let (target_js, proto_js) = (target.clone(), proto.clone());
    let node =
        tokio::task::spawn_blocking(move || node().map(|()| run("node", "client.js", &[&target_js, "all", &proto_js])));
    if let Some(v) = python.await.unwrap() {
        check("python", &v);
        assert_eq!(v["health"], "SERVING", "python: {v}");
        let services: Vec<&str> = v["services"].as_array().unwrap().iter().map(|s| s.as_str().unwrap()).collect();
        for service in ["snowflake.v1.Snowflake", "grpc.health.v1.Health"] {
            assert!(services.contains(&service), "reflection lists {service}: {services:?}");
        }
    }
    if let Some(v) = node.await.unwrap() {
        check("node", &v);
    }

    let (code, log) = server.stop();
    assert_eq!(code, Some(0), "a clean exit on SIGTERM:\n{log}");
}

/// What every client prints from a server still waiting for its lease.
fn check_waiting(client: &str, v: &Value) {
    for call in ["issue", "stream"] {
        let refused = &v[call];
        assert_eq!(refused["code"], "UNAVAILABLE", "{client}: {call}: {v}");
        assert_eq!(refused["retry_after"], "1", "{client}: {call}: {v}");
        let details = refused["details"].as_str().unwrap();
        assert!(details.contains("cannot issue order IDs: waiting for a worker-ID lease"), "{client}: {details}");
    }
    assert_eq!(v["types"], serde_json::json!(["order"]), "{client}: the types are listed meanwhile");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_waiting_for_its_lease_is_unavailable_with_a_retry_hint_and_not_serving() {
    // A lease store that does not answer (nothing listens on its port): the server answers,
    // and cannot issue, until --lease-wait runs out.
    let store = format!("redis://127.0.0.1:{}", common::free_port());
    let namespace = common::unique("grpc-waiting");
    let mut server =
        Server::start(&["--id", ORDER, "--lease", &store, "--namespace", &namespace, "--lease-wait", "60s"]);
    let target = target(&server);
    let proto = proto_dir();

    let channel = tonic::transport::Endpoint::from_shared(server.base.clone()).unwrap().connect().await.unwrap();
    let mut ids = snowflake_server::grpc::pb::snowflake_client::SnowflakeClient::new(channel.clone());
    let request = snowflake_server::grpc::pb::IssueRequest { r#type: "order".into() };
    let status = ids.issue(request).await.unwrap_err();
    assert_eq!(status.code(), tonic::Code::Unavailable, "{status:?}");
    assert_eq!(status.metadata().get("retry-after").map(|v| v.to_str().unwrap()), Some("1"));
    let mut health = tonic_health::pb::health_client::HealthClient::new(channel);
    let request = tonic_health::pb::HealthCheckRequest { service: "snowflake.v1.Snowflake".into() };
    assert_eq!(health.check(request).await.unwrap().into_inner().status, ServingStatus::NotServing as i32);

    let (target_py, proto_py) = (target.clone(), proto.clone());
    let python = tokio::task::spawn_blocking(move || {
        python().map(|()| run("python3", "client.py", &[&target_py, "waiting", &proto_py]))
    });
    let node =
        tokio::task::spawn_blocking(move || node().map(|()| run("node", "client.js", &[&target, "waiting", &proto])));
    if let Some(v) = python.await.unwrap() {
        check_waiting("python", &v);
        assert_eq!(v["health"], "NOT_SERVING", "python: {v}");
    }
    if let Some(v) = node.await.unwrap() {
        check_waiting("node", &v);
    }

    // SIGTERM during the wait stops the server at once.
    let (code, log) = server.stop();
    assert!(code.is_some(), "stopped:\n{log}");
}

/// A CA (`ca.pem`), a server certificate (`server.pem`, `server.key`) and a client one
/// (`client.pem`, `client.key`), made in a new directory.
fn certificates() -> Option<PathBuf> {
    if !certs::openssl_present() {
        return common::missing("openssl is not installed");
    }
    Some(certs::make(&std::env::temp_dir().join(common::unique("snowflake-grpc-tls"))))
}

/// The subject of the certificate the server at `target` presents.
fn served_subject(dir: &Path, target: &str) -> String {
    let output = Command::new("openssl")
        .current_dir(dir)
        .args(["s_client", "-connect", target, "-CAfile", "ca.pem", "-cert", "client.pem", "-key", "client.key"])
        .stdin(std::process::Stdio::null())
        .output()
        .expect("openssl runs");
    let text = String::from_utf8_lossy(&output.stdout).into_owned();
    text.lines().find(|line| line.starts_with("subject=")).unwrap_or_default().to_owned()
}

#[test]
fn over_tls_with_client_certificates_and_refused_without_one() {
    let Some(dir) = certificates() else { return };
    let path = |name: &str| dir.join(name).display().to_string();
    let (ca, cert, key) = (path("ca.pem"), path("client.pem"), path("client.key"));
    let mut server = Server::start(&[
        "--id",
        ORDER,
        "--id",
        USER,
        "--worker",
        "5",
        "--tls-cert",
        &path("server.pem"),
        "--tls-key",
        &path("server.key"),
        "--tls-client-ca",
        &ca,
    ]);
    assert!(server.base.starts_with("https://"), "{}", server.base);
    let target = target(&server);
    let proto = proto_dir();

    let tls = [target.as_str(), "all", &proto, &ca, &cert, &key];
    if python().is_some() {
        check("python over TLS", &run("python3", "client.py", &tls));
    }
    if node().is_some() {
        check("node over TLS", &run("node", "client.js", &tls));
    }
    // Without a client certificate the handshake fails: no call gets through.
    let without = [target.as_str(), "refused", &proto, &ca];
    for (client, program, script) in [("python", "python3", "client.py"), ("node", "node", "client.js")] {
        let ready = if client == "python" { python() } else { node() };
        if ready.is_some() {
            let v = run(program, script, &without);
            assert_eq!(v["issue"]["code"], "UNAVAILABLE", "{client} without a client certificate: {v}");
        }
    }
    // The HTTP face: the same certificates.
    if common::tool("curl").is_some() {
        let url = format!("{}/v1/ids/order", server.base);
        let output = Command::new("curl")
            .args(["-sS", "-f", "--cacert", &ca, "--cert", &cert, "--key", &key, &url])
            .output()
            .unwrap();
        assert!(output.status.success(), "curl with a client certificate: {}", String::from_utf8_lossy(&output.stderr));
        assert!(String::from_utf8_lossy(&output.stdout).starts_with("{\"id\":\""));
        let without = Command::new("curl").args(["-sS", "-f", "--cacert", &ca, &url]).output().unwrap();
        assert!(!without.status.success(), "curl without a client certificate got through");
    }

    // A renewed certificate: served to new connections without a restart.
    assert!(served_subject(&dir, &target).contains("server one"), "{}", served_subject(&dir, &target));
    let renewed = dir.join("renewed");
    std::fs::create_dir_all(&renewed).unwrap();
    for file in ["ca.pem", "ca.key"] {
        std::fs::copy(dir.join(file), renewed.join(file)).unwrap();
    }
    certs::issue_certificate(&renewed, "server", "server two", "serverAuth");
    std::fs::rename(renewed.join("server.key"), dir.join("server.key")).unwrap();
    std::fs::rename(renewed.join("server.pem"), dir.join("server.pem")).unwrap();
    common::eventually(std::time::Duration::from_secs(10), "the renewed certificate is served", || {
        served_subject(&dir, &target).contains("server two").then_some(())
    });
    if python().is_some() {
        check("python after the renewal", &run("python3", "client.py", &tls));
    }

    let (code, log) = server.stop();
    assert_eq!(code, Some(0), "a clean exit on SIGTERM:\n{log}");
    assert!(log.contains("TLS certificate reloaded"), "{log}");
    std::fs::remove_dir_all(&dir).unwrap();
}
