//! Many servers on one lease store: three `snowflake-server` processes sharing a Redis lease
//! namespace and one type issue distinct IDs under concurrent load; a server whose store goes
//! away answers 503 and is not ready, then recovers by itself; SIGTERM releases the lease.

use crate::common;

use std::collections::HashSet;
use std::sync::Arc;
use std::time::Duration;

use common::{PrivateRedis, Server, agent, eventually, get};
use serde_json::Value;
use snowflake_server::config::IdSpec;

const ORDER: &str = "order=preset=leaf,epoch=2020-01-01";

fn ids_of(body: &str) -> Vec<u64> {
    let v: Value = serde_json::from_str(body).unwrap_or_else(|e| panic!("{e}: {body}"));
    match (&v["id"], &v["ids"]) {
        (Value::String(id), _) => vec![id.parse().unwrap()],
        (_, Value::Array(ids)) => ids.iter().map(|id| id.as_str().unwrap().parse().unwrap()).collect(),
        _ => panic!("no IDs in {body}"),
    }
}

#[test]
fn three_servers_on_one_lease_store_issue_no_duplicates() {
    let Some(url) = common::redis_url() else { return };
    let namespace = common::unique("serve-many");
    // A space of 3 worker IDs: the three servers take all of them.
    let args = [
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
        "--worker-space",
        "3",
    ];
    let servers: Vec<Server> = (0..3).map(|_| Server::start(&args)).collect();
    let agent = agent();
    for s in &servers {
        eventually(Duration::from_secs(30), "every server is ready", || {
            (get(&agent, &s.url("/readyz")).0 == 200).then_some(())
        });
    }
    let layout = IdSpec::parse(ORDER).unwrap().layout;
    let workers: HashSet<u64> = servers
        .iter()
        .map(|s| {
            let (_, _, body) = get(&agent, &s.url("/v1/ids/order"));
            layout.worker_of(ids_of(&body)[0].try_into().unwrap())
        })
        .collect();
    assert_eq!(workers, HashSet::from([0, 1, 2]), "three leased worker IDs");

    // 4 clients per server, each alternating single IDs and batches of 100, all at once.
    let bases: Arc<Vec<String>> = Arc::new(servers.iter().map(|s| s.base.clone()).collect());
    let threads: Vec<_> = (0..12)
        .map(|t| {
            let bases = Arc::clone(&bases);
            std::thread::spawn(move || {
                let agent = common::agent();
                let base = &bases[t % 3];
                let mut ids = Vec::new();
                for i in 0..150 {
                    let path =
                        if i % 2 == 0 { "/v1/ids/order".to_owned() } else { "/v1/ids/order?count=100".to_owned() };
                    let (status, _, body) = get(&agent, &format!("{base}{path}"));
                    assert_eq!(status, 200, "{base}{path}: {body}");
                    ids.extend(ids_of(&body));
                }
                ids
            })
        })
        .collect();
    let mut all = Vec::new();
    for t in threads {
        all.extend(t.join().unwrap());
    }
    let distinct: HashSet<u64> = all.iter().copied().collect();
    assert_eq!(all.len(), 12 * (75 + 75 * 100));
    assert_eq!(distinct.len(), all.len(), "{} duplicates", all.len() - distinct.len());

    // SIGTERM: a clean exit that releases the lease.
    for mut s in servers {
        let (code, log) = s.stop();
        assert_eq!(code, Some(0), "{log}");
        assert!(log.contains("worker-ID lease released"), "{log}");
    }
    // Released: every record stays (its high water is the next holder's floor), none leased.
    let store = snowflake_types::worker::lease::RedisLeaseStore::open(&url).unwrap();
    let report = snowflake_types::worker::lease::admin::inspect(&store, &namespace).unwrap();
    assert!(report.workers.iter().all(|w| !w.leased), "released leases are not held: {:?}", report.workers);
    common::delete_namespace(&url, &namespace);
}

#[test]
fn a_server_whose_store_goes_away_answers_503_then_recovers_by_itself() {
    let Some(mut redis) = PrivateRedis::start() else { return };
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
        "outage",
    ]);
    let agent = agent();
    let before = eventually(Duration::from_secs(30), "the server issues", || {
        let (status, _, body) = get(&agent, &server.url("/v1/ids/order?count=10"));
        (status == 200).then(|| ids_of(&body))
    });
    let (status, _, ready) = get(&agent, &server.url("/readyz"));
    assert_eq!(status, 200);
    // Ready, with the lease's worker ID, how long it may issue without its store, and the store
    // answering.
    assert!(ready.contains("\"store_answering\":true") && ready.contains("\"issuing_for_ms\":"), "{ready}");

    redis.kill();
    let (retry, error) = eventually(Duration::from_secs(30), "503 once the lease is not renewed", || {
        let (status, retry, body) = get(&agent, &server.url("/v1/ids/order"));
        (status == 503).then_some((retry, body))
    });
    assert!(retry.is_some_and(|r| r.parse::<u64>().is_ok()), "Retry-After on a 503");
    assert!(error.contains("\"error\""), "{error}");
    // While the store is away the server stays not ready (the lease may pass from fenced to
    // lost and recovering meanwhile).
    let ready = get(&agent, &server.url("/readyz"));
    assert_eq!(ready.0, 503, "{}", ready.2);
    assert_eq!(serde_json::from_str::<Value>(&ready.2).unwrap()["ready"], false);
    // The library's lease metrics come through the same exporter (the lease thread records
    // them as it notices; polled).
    let lines = [
        "snowflake_server_ready 0",
        "snowflake_lease_fenced{namespace=\"outage\"} 1",
        "snowflake_lease_renewal_failures_total{",
    ];
    eventually(Duration::from_secs(20), "the lease metrics show the outage", || {
        let metrics = get(&agent, &server.url("/metrics")).2;
        lines.iter().all(|line| metrics.contains(line)).then_some(())
    });

    // The store comes back empty: the lease is acquired again, above anything issued before.
    redis.restart();
    let after = eventually(Duration::from_secs(60), "issuing again after the store came back", || {
        let (status, _, body) = get(&agent, &server.url("/v1/ids/order?count=10"));
        (status == 200).then(|| ids_of(&body))
    });
    assert_eq!(get(&agent, &server.url("/readyz")).0, 200);
    let before: HashSet<u64> = before.into_iter().collect();
    assert!(after.iter().all(|id| !before.contains(id)));
    assert!(after[0] > *before.iter().max().unwrap(), "the new grant issues above the old one");
    let (code, log) = server.stop();
    assert_eq!(code, Some(0), "{log}");
    assert!(log.contains("not ready") && log.contains("ready"), "state changes are logged:\n{log}");
}

#[test]
fn bad_configurations_exit_2_with_the_reason() {
    for (args, says) in [
        (vec!["--id", "order"], "name=layout"),
        (vec![], "no ID type to serve"),
        (vec!["--id", ORDER, "--listen", "nowhere"], "--listen"),
        (vec!["--id", "order=preset=leaf", "--id", "order=preset=twitter"], "given twice"),
    ] {
        let output = std::process::Command::new(env!("CARGO_BIN_EXE_snowflake-server"))
            .args(&args)
            .env_remove("SNOWFLAKE_IDS")
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains(says), "{args:?}: {stderr}");
    }
    // A lease store that does not answer: the start fails after the configured wait.
    let port = common::free_port().to_string();
    let url = format!("redis://127.0.0.1:{port}");
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_snowflake-server"))
        .args(["--id", ORDER, "--lease", &url, "--lease-wait", "0", "--listen", "127.0.0.1:0"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&output.stderr).contains("worker-ID lease"), "{output:?}");
}

/// `scheme://user[:password]@host[:port]/database` as (user, password, host, port, database).
fn parts(url: &str, default_port: &str) -> (String, String, String, String, String) {
    let rest = url.split_once("://").unwrap().1;
    let (auth, rest) = rest.rsplit_once('@').unwrap_or(("", rest));
    let (user, password) = auth.split_once(':').unwrap_or((auth, ""));
    let (hostport, db) = rest.split_once('/').unwrap_or((rest, ""));
    let (host, port) = hostport.split_once(':').unwrap_or((hostport, default_port));
    let db = db.split('?').next().unwrap_or("");
    (user.into(), password.into(), host.into(), port.into(), db.into())
}

/// The same service on a PostgreSQL and a MariaDB lease: issues under the leased worker ID,
/// releases it on SIGTERM. The rows of the test's namespace are deleted afterwards.
#[test]
fn leases_from_postgres_and_mysql() {
    for (var, example) in [
        ("DATABASE_URL_PG", "postgres://postgres@127.0.0.1:5432/test"),
        ("DATABASE_URL_MYSQL", "mysql://root@127.0.0.1:3306/test"),
    ] {
        let url = match std::env::var(var) {
            Ok(url) if !url.trim().is_empty() => url,
            _ => {
                common::missing::<()>(&format!("{var} is not set (e.g. {example})"));
                continue;
            }
        };
        let namespace = common::unique("serve-sql");
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
        ]);
        let agent = agent();
        let ids = eventually(Duration::from_secs(30), "the server issues", || {
            let (status, _, body) = get(&agent, &server.url("/v1/ids/order?count=5"));
            (status == 200).then(|| ids_of(&body))
        });
        assert_eq!(ids.len(), 5);
        let types: Value = serde_json::from_str(&get(&agent, &server.url("/v1/types")).2).unwrap();
        let source = types["worker_source"].as_str().unwrap();
        assert!(source.contains(&namespace), "{source}");
        let (code, log) = server.stop();
        assert_eq!(code, Some(0), "{log}");
        assert!(log.contains("worker-ID lease released"), "{var}: {log}");

        let delete = format!("DELETE FROM snowflake_worker_leases WHERE namespace = '{namespace}'");
        let status = if var == "DATABASE_URL_PG" {
            std::process::Command::new("psql").args([url.as_str(), "-q", "-c", &delete]).status()
        } else {
            let (user, password, host, port, db) = parts(&url, "3306");
            let mut mysql = std::process::Command::new("mysql");
            mysql.args(["-h", &host, "-P", &port, "-u", &user, &db, "-e", &delete]);
            if !password.is_empty() {
                mysql.env("MYSQL_PWD", password);
            }
            mysql.status()
        };
        assert!(status.is_ok_and(|s| s.success()), "{var}: the namespace's rows are deleted");
    }
}

/// A StatefulSet pod's ordinal as the worker ID, and types from a config file.
#[test]
fn worker_from_the_hostname_ordinal_and_types_from_a_file() {
    let dir = std::env::temp_dir().join(common::unique("serve-config"));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("serve.json");
    std::fs::write(
        &file,
        r#"{"ids": {"order": "preset=leaf,epoch=2020-01-01", "tweet": "twitter"}, "worker": "hostname"}"#,
    )
    .unwrap();
    let mut server = Server::start_env(&["--config", file.to_str().unwrap()], &[("HOSTNAME", "orders-7")]);
    let agent = agent();
    let types: Value = serde_json::from_str(&get(&agent, &server.url("/v1/types")).2).unwrap();
    assert_eq!(types["worker_source"], "hostname ordinal: worker 7");
    assert_eq!(types["types"][1]["name"], "tweet");
    let layout = IdSpec::parse(ORDER).unwrap().layout;
    let id = ids_of(&get(&agent, &server.url("/v1/ids/order")).2)[0];
    assert_eq!(layout.worker_of(id.try_into().unwrap()), 7);
    let (code, log) = server.stop();
    assert_eq!(code, Some(0), "{log}");
    std::fs::remove_dir_all(&dir).unwrap();
}
