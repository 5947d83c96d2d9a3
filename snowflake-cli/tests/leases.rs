#![cfg(any())] // PORTING
//! `snowflake leases` (feature `leases`), run as an operator runs it against a Redis whose
//! namespace this test leases worker IDs in. Every store's listing is checked by the lease
//! conformance suite (tests/common/lease_store.rs at the workspace root); here, the command.

use std::process::{Command, Output};
use std::time::Duration;

use serde_json::Value;
use snowflake_types::worker::lease::{Claim, LeaseStore, RedisLeaseStore};

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
fn leases_lists_holders_fences_time_left_and_high_waters() {
    let Some(url) = redis_url() else { return };
    let namespace = format!("cli-leases-{}", std::process::id());
    let _keys = Keys(url.clone(), namespace.clone());
    let store = RedisLeaseStore::open(&url).unwrap();
    let ttl = Duration::from_secs(30);
    let held = store.acquire(&Claim::new(&namespace, 8, ttl).prefer(3)).unwrap();
    let released = store.acquire(&Claim::new(&namespace, 8, ttl).prefer(5)).unwrap();
    assert_eq!((held.worker, released.worker), (3, 5));
    store.renew(&namespace, &held, ttl, 1_800_000_000_000).unwrap();
    store.release(&namespace, &released, 1_800_000_000_123).unwrap();

    let lines = stdout(&snowflake(&["leases", &url, "--namespace", &namespace, "--json"]));
    let records: Vec<Value> = lines.lines().map(|line| serde_json::from_str(line).unwrap()).collect();
    assert_eq!(records.len(), 2, "{lines}");
    let (live, free) = (&records[0], &records[1]);
    assert_eq!(live["worker"], 3);
    assert_eq!(live["leased"], true);
    let holder = live["holder"].as_str().unwrap();
    assert!(holder.ends_with(&format!(":{}", std::process::id())), "{holder}");
    assert_eq!(live["fence"], held.fence.to_string(), "the fence, exact, as a string");
    let left = live["expires_in_ms"].as_i64().unwrap();
    assert!(left > 20_000 && left <= 30_000, "{left}");
    assert!(live["expires_at"].as_str().unwrap().ends_with('Z'));
    assert_eq!(live["high_water_ms"], 1_800_000_000_000_i64);
    assert_eq!(live["high_water"], "2027-01-15T08:00:00.000Z");
    assert_eq!(free["worker"], 5);
    assert_eq!(free["leased"], false);
    assert_eq!((&free["holder"], &free["fence"], &free["expires_in_ms"]), (&Value::Null, &Value::Null, &Value::Null));
    assert_eq!(free["high_water"], "2027-01-15T08:00:00.123Z");

    let text = stdout(&snowflake(&["leases", &url, "--namespace", &namespace]));
    let mut rows = text.lines();
    let head = rows.next().unwrap();
    assert!(head.starts_with(&format!("namespace {namespace:?} in redis://")), "{head}");
    assert!(head.ends_with(": 1 leased, 1 free with a recorded high water"), "{head}");
    let row = |line: Option<&str>| line.unwrap().split_whitespace().map(str::to_owned).collect::<Vec<_>>();
    assert_eq!(row(rows.next()), ["worker", "holder", "fence", "left", "high", "water"]);
    let live = row(rows.next());
    assert_eq!((live[0].as_str(), live[1].as_str(), live[2].as_str()), ("3", holder, held.fence.to_string().as_str()));
    assert!(live[3].ends_with('s') && live[4] == "2027-01-15T08:00:00.000Z", "{live:?}");
    assert_eq!(row(rows.next()), ["5", "-", "-", "free", "2027-01-15T08:00:00.123Z"]);
    assert_eq!(rows.next(), None);

    store.release(&namespace, &held, 1_800_000_000_000).unwrap();
    let after = stdout(&snowflake(&["leases", &url, "--namespace", &namespace, "--json"]));
    assert!(after.lines().all(|line| line.contains("\"leased\":false")), "{after}");
    // Another namespace, and the default one of this test's environment, are not this one.
    let empty = stdout(&snowflake(&["leases", &url, "--namespace", &format!("{namespace}-none"), "--json"]));
    assert_eq!(empty, "");
}

#[test]
fn bad_store_urls_and_namespaces_are_refused_clearly() {
    for (args, message) in [
        (&["leases", "gopher://127.0.0.1:70"][..], "bad lease store URL \"gopher://127.0.0.1:70\": expected redis://"),
        (
            &["leases", "redis://:secret@127.0.0.1:1", "--namespace", "x"],
            "lease store redis://127.0.0.1:1/0: listing the leases of namespace \"x\" failed",
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
