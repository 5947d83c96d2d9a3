//! The servers a test needs, and the rule for when they are missing: under `CI` a missing URL
//! or a server that does not answer fails the test, naming the variable; elsewhere the test
//! says on stderr that it is skipped, and returns. Include with
//! `#[path = "common/servers.rs"] mod servers;`.
#![allow(dead_code)]

use std::io::Write;
use std::net::{TcpStream, ToSocketAddrs};
use std::time::Duration;

/// `REDIS_URL`, when the server answers.
pub fn redis_url() -> Option<String> {
    server_url("REDIS_URL", "redis://127.0.0.1:6379", 6379)
}

/// `DATABASE_URL_PG`, when the server answers.
pub fn pg_url() -> Option<String> {
    server_url("DATABASE_URL_PG", "postgres://postgres@127.0.0.1:5432/test", 5432)
}

/// `DATABASE_URL_MYSQL`, when the server answers.
pub fn mysql_url() -> Option<String> {
    server_url("DATABASE_URL_MYSQL", "mysql://root@127.0.0.1:3306/test", 3306)
}

/// Whether this run is CI's, where a server that is missing is a failure.
pub fn under_ci() -> bool {
    std::env::var_os("CI").is_some_and(|value| !value.is_empty() && value != "false" && value != "0")
}

fn server_url(var: &str, example: &str, default_port: u16) -> Option<String> {
    let url = match std::env::var(var) {
        Ok(url) if !url.trim().is_empty() => url,
        _ => return missing(&format!("{var} is not set (e.g. {example})")),
    };
    let Some((host, port)) = host_port(&url, default_port) else {
        return missing(&format!("{var}={url:?} names no host"));
    };
    match answers(&host, port) {
        Ok(()) => Some(url),
        Err(reason) => missing(&format!("{var}: nothing answers at {host}:{port} ({reason})")),
    }
}

fn missing(reason: &str) -> Option<String> {
    if under_ci() {
        panic!("{reason}; under CI the servers must run");
    }
    // Straight to the stream: the test harness captures `eprintln!` of passing tests.
    let _ = writeln!(std::io::stderr(), "skipped: {reason}");
    None
}

/// Host and port of `scheme://[user[:password]@]host[:port][/…]`, IPv6 hosts in brackets.
pub fn host_port(url: &str, default_port: u16) -> Option<(String, u16)> {
    let rest = url.split_once("://")?.1;
    let authority = &rest[..rest.find(['/', '?', '#']).unwrap_or(rest.len())];
    let hostport = authority.rsplit_once('@').map_or(authority, |(_, hostport)| hostport);
    let (host, port) = if let Some(bracketed) = hostport.strip_prefix('[') {
        let (host, after) = bracketed.split_once(']')?;
        (host, after.strip_prefix(':'))
    } else {
        match hostport.rsplit_once(':') {
            Some((host, port)) => (host, Some(port)),
            None => (hostport, None),
        }
    };
    let port = match port {
        Some(port) => port.parse().ok()?,
        None => default_port,
    };
    (!host.is_empty()).then(|| (host.to_owned(), port))
}

/// A TCP connection within 2 s to any address of the host.
fn answers(host: &str, port: u16) -> Result<(), String> {
    let addrs = (host, port).to_socket_addrs().map_err(|e| e.to_string())?;
    let mut last = String::from("the host has no address");
    for addr in addrs {
        match TcpStream::connect_timeout(&addr, Duration::from_secs(2)) {
            Ok(_) => return Ok(()),
            Err(e) => last = e.to_string(),
        }
    }
    Err(last)
}

#[test]
fn urls_name_their_host_and_port() {
    assert_eq!(host_port("redis://127.0.0.1:6379", 1), Some(("127.0.0.1".into(), 6379)));
    assert_eq!(host_port("redis://:pw@cache/2", 6379), Some(("cache".into(), 6379)));
    assert_eq!(host_port("postgres://u:p@[::1]:5433/db", 5432), Some(("::1".into(), 5433)));
    assert_eq!(host_port("mysql://root@127.0.0.1/test?x=1", 3306), Some(("127.0.0.1".into(), 3306)));
    assert_eq!(host_port("not a url", 1), None);
    assert_eq!(host_port("redis://:6379", 1), None);
}
/// A `redis-server` of a test's own on a free loopback port, without persistence
/// (`--save "" --appendonly no`), killed when dropped (also when the test fails), for tests
/// that stop, kill, restart or flush a server.
pub struct PrivateRedis {
    /// `None` between [`PrivateRedis::kill9`] and [`PrivateRedis::restart_empty`].
    child: Option<std::process::Child>,
    port: u16,
}

impl PrivateRedis {
    /// `None` when `redis-server` is not installed (and not under CI, where that fails).
    pub fn start() -> Option<Self> {
        let port = std::net::TcpListener::bind("127.0.0.1:0").and_then(|l| l.local_addr()).expect("a free port").port();
        let mut server = PrivateRedis { child: None, port };
        match server.spawn() {
            Ok(()) => Some(server),
            Err(e) => {
                assert!(!under_ci(), "redis-server could not be started: {e}");
                eprintln!("SKIPPED: redis-server could not be started: {e}");
                None
            }
        }
    }

    /// Starts `redis-server` on `self.port` and waits until it listens; a server that exits
    /// at once (the port not free yet) is started again, for up to 10 s.
    fn spawn(&mut self) -> std::io::Result<()> {
        use std::process::{Command, Stdio};
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        loop {
            let mut child = Command::new("redis-server")
                .args(["--port", &self.port.to_string(), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"])
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()?;
            loop {
                if TcpStream::connect(("127.0.0.1", self.port)).is_ok() {
                    self.child = Some(child);
                    return Ok(());
                }
                if child.try_wait()?.is_some() || std::time::Instant::now() >= deadline {
                    let _ = child.kill();
                    let _ = child.wait();
                    break;
                }
                std::thread::sleep(Duration::from_millis(10));
            }
            assert!(std::time::Instant::now() < deadline, "redis-server did not listen on port {}", self.port);
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// `redis://127.0.0.1:<port>`.
    pub fn url(&self) -> String {
        format!("redis://127.0.0.1:{}", self.port)
    }

    /// The port, the same across restarts.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// Sends a signal (`-STOP`, `-CONT`) with the `kill` command (the crates forbid unsafe code).
    pub fn signal(&self, signal: &str) {
        let child = self.child.as_ref().expect("the server runs");
        let status =
            std::process::Command::new("kill").args([signal, &child.id().to_string()]).status().expect("running kill");
        assert!(status.success(), "kill {signal} failed");
    }

    /// Pauses the server (`SIGSTOP`): connections stay open, nothing is answered.
    pub fn stop(&self) {
        self.signal("-STOP");
    }

    /// Lets a paused server run again (`SIGCONT`).
    pub fn cont(&self) {
        self.signal("-CONT");
    }

    /// Kills the server with `SIGKILL`: its data (in memory only) is gone.
    pub fn kill9(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// Kills the server if it runs, and starts an empty one on the same port.
    pub fn restart_empty(&mut self) {
        self.kill9();
        if let Err(e) = self.spawn() {
            panic!("redis-server could not be started again on port {}: {e}", self.port);
        }
    }

    /// `FLUSHALL`: every key of every database is deleted.
    pub fn flushall(&self) {
        let mut conn = redis::Client::open(self.url()).and_then(|c| c.get_connection()).expect("connecting");
        let () = redis::cmd("FLUSHALL").query(&mut conn).expect("FLUSHALL");
    }
}

impl Drop for PrivateRedis {
    fn drop(&mut self) {
        if let Some(child) = &self.child {
            let _ = std::process::Command::new("kill").args(["-CONT", &child.id().to_string()]).status();
        }
        self.kill9();
    }
}

/// Deletes the keys matching `pattern` on the Redis at `url`. Cleanup only: a server that does
/// not answer, or a failed command, is ignored.
pub fn delete_redis_keys(url: &str, pattern: &str) {
    let Ok(mut conn) = redis::Client::open(url).and_then(|c| c.get_connection()) else { return };
    let keys: Vec<String> = redis::cmd("KEYS").arg(pattern).query(&mut conn).unwrap_or_default();
    if !keys.is_empty() {
        let _: Result<i64, _> = redis::cmd("DEL").arg(&keys).query(&mut conn);
    }
}

/// The `KEYS` pattern of every key a Redis worker lease keeps for `namespace`
/// (`snowflake:{<namespace>}:...`). Test namespaces hold no glob characters; the braces are
/// literal in a pattern.
pub fn redis_lease_keys(namespace: &str) -> String {
    format!("snowflake:{{{namespace}}}:*")
}

/// A test's Redis keys, deleted when dropped (also when the test fails).
pub struct RedisKeys {
    pub url: String,
    /// A `KEYS` pattern covering the test's keys and no one else's.
    pub pattern: String,
}

impl Drop for RedisKeys {
    fn drop(&mut self) {
        delete_redis_keys(&self.url, &self.pattern);
    }
}

/// Gives every worker ID of `0..space` in a lease namespace a record, as a namespace in use
/// has (a high water in the past, and the fence counter): an acquisition then hands over
/// without waiting out a TTL, as it does once every worker ID was used once.
pub fn seed_redis_lease_records(url: &str, namespace: &str, space: u64) -> redis::RedisResult<()> {
    let mut records: Vec<(String, String)> =
        (0..space).map(|w| (format!("snowflake:{{{namespace}}}:hw:{w}"), "1".to_owned())).collect();
    records.push((format!("snowflake:{{{namespace}}}:fence"), "1".to_owned()));
    let mut connection = redis::Client::open(url)?.get_connection()?;
    redis::cmd("MSET").arg(&records).query(&mut connection)
}
