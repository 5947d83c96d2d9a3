//! `snowflake leases` (feature `leases`), run as an operator runs it against a Redis whose
//! namespace this test leases worker IDs in: declared new, listed, fenced. Every store's
//! records are checked by the conformance suite (tests/common/conformance.rs at the workspace
//! root); here, the command.

use std::process::{Command, Output};
use std::time::Duration;

use serde_json::Value;
use snowflake_types::worker::lease::{RedisLeaseStore, WorkerLease};

fn under_ci() -> bool {
    std::env::var_os("CI").is_some_and(|value| !value.is_empty() && value != "false" && value != "0")
}

fn redis_url() -> Option<String> {
    match std::env::var("REDIS_URL") {
        Ok(url) if !url.trim().is_empty() => Some(url),
        _ if under_ci() => panic!("REDIS_URL is not set; under CI the servers must run"),
        _ => {
            eprintln!("skipped: REDIS_URL is not set");
            None
        }
    }
}

fn snowflake(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_snowflake")).args(args).env_remove("SNOWFLAKE_NAMESPACE").output().unwrap()
}

fn stdout(output: &Output) -> String {
    assert!(output.status.success(), "{output:?}");
    String::from_utf8(output.stdout.clone()).unwrap()
}

/// Deletes the namespace's keys when the test ends, however it ends.
struct Keys(String, String);

impl Drop for Keys {
    fn drop(&mut self) {
        if let Ok(mut c) = redis::Client::open(self.0.as_str()).and_then(|client| client.get_connection()) {
            let keys: Vec<String> =
                redis::cmd("KEYS").arg(format!("snowflake:{{{}}}:*", self.1)).query(&mut c).unwrap_or_default();
            if !keys.is_empty() {
                let _: redis::RedisResult<()> = redis::cmd("DEL").arg(keys).query(&mut c);
            }
        }
    }
}

#[test]
fn leases_declares_lists_and_fences_a_namespace() {
    let Some(url) = redis_url() else { return };
    let namespace = format!("cli-leases-{}", std::process::id());
    let _keys = Keys(url.clone(), namespace.clone());

    // Declared new before anything ran in it; a second declaration is refused with the reason.
    let said = stdout(&snowflake(&["leases", "init", &url, "--namespace", &namespace]));
    assert!(said.contains("declared new"), "{said}");
    let again = snowflake(&["leases", "init", &url, "--namespace", &namespace]);
    assert_eq!(again.status.code(), Some(1), "{again:?}");
    assert!(String::from_utf8_lossy(&again.stderr).contains(&namespace), "{again:?}");

    // Two holders: one runs on, one released.
    let lease = || {
        WorkerLease::builder(RedisLeaseStore::open(&url).unwrap())
            .namespace(namespace.clone())
            .space(8)
            .ttl(Duration::from_secs(30))
            .acquire()
            .unwrap()
    };
    let held = lease();
    let released = lease();
    let released_worker = released.worker();
    released.release().unwrap();

    let lines = stdout(&snowflake(&["leases", &url, "--namespace", &namespace, "--json"]));
    let records: Vec<Value> = lines.lines().map(|line| serde_json::from_str(line).unwrap()).collect();
    assert_eq!(records.len(), 2, "{lines}");
    let live = records.iter().find(|r| r["worker"] == held.worker()).expect(&lines);
    let free = records.iter().find(|r| r["worker"] == released_worker).expect(&lines);
    assert_eq!(live["leased"], true);
    let holder = live["holder"].as_str().unwrap();
    assert!(holder.ends_with(&format!(":{}", std::process::id())), "{holder}");
    assert!(live["fence"].is_string(), "the fence, exact, as a string: {live}");
    let left = live["expires_in_ms"].as_i64().unwrap();
    assert!(left > 20_000 && left <= 30_000, "{left}");
    assert!(live["expires_at"].as_str().unwrap().ends_with('Z'));
    assert_eq!(live["vouched"], true);
    assert_eq!(free["leased"], false);
    assert_eq!((&free["holder"], &free["expires_in_ms"]), (&Value::Null, &Value::Null));
    assert!(free["high_water"].as_str().unwrap().ends_with('Z'), "{free}");

    let text = stdout(&snowflake(&["leases", &url, "--namespace", &namespace]));
    let head = text.lines().next().unwrap();
    assert!(head.starts_with(&format!("namespace {namespace:?} in redis://")), "{head}");
    assert!(head.contains("(declared new)") && head.contains("1 leased, 1 free"), "{head}");

    // Fenced, as after a restore the store cannot tell: no record is vouched for any more.
    let said = stdout(&snowflake(&["leases", "fence", &url, "--namespace", &namespace]));
    assert!(said.contains("fenced"), "{said}");
    let after = stdout(&snowflake(&["leases", &url, "--namespace", &namespace, "--json"]));
    assert!(after.lines().all(|line| line.contains("\"vouched\":false")), "{after}");
    held.abandon();

    // Another namespace is not this one.
    let empty = stdout(&snowflake(&["leases", &url, "--namespace", &format!("{namespace}-none"), "--json"]));
    assert_eq!(empty, "");
}

#[test]
fn bad_store_urls_and_namespaces_are_refused_clearly() {
    for (args, message) in [
        (&["leases", "gopher://127.0.0.1:70"][..], "bad lease store URL \"gopher://127.0.0.1:70\": expected redis://"),
        (
            &["leases", "redis://:secret@127.0.0.1:1", "--namespace", "x"],
            "lease store redis://127.0.0.1:1/0: reading namespace \"x\" failed",
        ),
        (&["leases", "redis://127.0.0.1:1", "--namespace", "bad namespace"], "bad lease namespace \"bad namespace\""),
        (&["leases", "etcd://a/b?c=d"], "bad lease store URL"),
    ] {
        let output = snowflake(args);
        assert_eq!(output.status.code(), Some(1), "{args:?}: {output:?}");
        let stderr = String::from_utf8(output.stderr).unwrap();
        assert!(stderr.starts_with(&format!("snowflake: {message}")), "{args:?}: {stderr}");
        assert!(!stderr.contains("secret"), "{stderr}");
        assert!(output.stdout.is_empty());
    }
    // No URL: a usage error.
    assert_eq!(snowflake(&["leases"]).status.code(), Some(2));
}
