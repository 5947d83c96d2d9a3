//! The URLs of the servers the integration tests talk to, and the rule for when one is
//! missing: under CI (`CI` set) a test whose server URL is unset, or whose server does not
//! answer, fails with a message naming the variable; on a developer's machine it says so on
//! stderr (which the harness shows with `--nocapture`, and which `.ci/run` never needs) and
//! skips. Included with `#[path]` by each test file that needs a server.
#![allow(dead_code)]

use std::net::{TcpStream, ToSocketAddrs};
use std::time::Duration;

/// `REDIS_URL`, e.g. `redis://127.0.0.1:6379`.
pub fn redis_url() -> Option<String> {
    server_url("REDIS_URL", "redis://127.0.0.1:6379")
}

/// `DATABASE_URL_PG`, e.g. `postgres://postgres@127.0.0.1:5432/test`.
pub fn pg_url() -> Option<String> {
    server_url("DATABASE_URL_PG", "postgres://postgres@127.0.0.1:5432/test")
}

/// `DATABASE_URL_MYSQL`, e.g. `mysql://root@127.0.0.1:3306/test`.
pub fn mysql_url() -> Option<String> {
    server_url("DATABASE_URL_MYSQL", "mysql://root@127.0.0.1:3306/test")
}

/// Whether missing servers fail the tests (under CI) instead of skipping them.
pub fn required() -> bool {
    std::env::var_os("CI").is_some_and(|v| !v.is_empty() && v != "false" && v != "0")
}

fn server_url(var: &str, example: &str) -> Option<String> {
    let url = match std::env::var(var) {
        Ok(url) if !url.trim().is_empty() => url,
        _ => {
            let message = format!("{var} is not set (e.g. {var}={example})");
            assert!(!required(), "{message}: under CI every server test must run");
            eprintln!("SKIPPED: {message}");
            return None;
        }
    };
    if let Err(reason) = answers(&url) {
        let message = format!("the server at {var}={url} does not answer: {reason}");
        assert!(!required(), "{message}");
        eprintln!("SKIPPED: {message}");
        return None;
    }
    Some(url)
}

/// A TCP connection to the URL's host and port within two seconds.
fn answers(url: &str) -> Result<(), String> {
    let rest = url.split_once("://").map_or(url, |(_, rest)| rest);
    let authority = rest.split(['/', '?']).next().unwrap_or_default();
    let host_port = authority.rsplit_once('@').map_or(authority, |(_, hp)| hp);
    let default_port = match url.split(':').next().unwrap_or_default() {
        "redis" | "rediss" => 6379,
        "postgres" | "postgresql" => 5432,
        "mysql" | "mariadb" => 3306,
        _ => return Err(format!("unknown scheme in {url:?}")),
    };
    let with_port = if host_port.rsplit_once(':').is_some_and(|(_, p)| p.parse::<u16>().is_ok()) {
        host_port.to_owned()
    } else {
        format!("{host_port}:{default_port}")
    };
    let addrs = with_port.to_socket_addrs().map_err(|e| format!("cannot resolve {with_port}: {e}"))?;
    let mut last = format!("{with_port} resolves to no address");
    for addr in addrs {
        match TcpStream::connect_timeout(&addr, Duration::from_secs(2)) {
            Ok(_) => return Ok(()),
            Err(e) => last = format!("{addr}: {e}"),
        }
    }
    Err(last)
}
