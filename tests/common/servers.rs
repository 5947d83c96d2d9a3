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

/// Declares `namespace` new in the lease store at `url` (`snowflake leases init`): its worker
/// IDs' first grants issue at once, as they do in a namespace the store has known for long.
pub fn declare_namespace(url: &str, namespace: &str) -> Result<(), typed_snowflake::worker::lease::LeaseError> {
    let store = typed_snowflake::worker::lease::open_store(url)?;
    typed_snowflake::worker::lease::admin::create_namespace(&*store, namespace)
}

/// A free loopback port (free when asked; the server binds it just after).
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").and_then(|l| l.local_addr()).expect("a free port").port()
}

/// Says that a server a test starts itself could not start, and that the test is skipped;
/// under CI, fails naming what is missing.
fn private_server_missing(what: &str, error: &dyn std::fmt::Display) {
    assert!(!under_ci(), "{what} could not be started: {error}; under CI it must be installed (.ci/run installs it)");
    let _ = writeln!(std::io::stderr(), "skipped: {what} could not be started: {error}");
}

/// Starts `command` until `port` accepts connections: a process that exits at once (a port
/// taken meanwhile) or does not listen within 20 s is an error.
fn spawn_listening(mut command: std::process::Command, port: u16) -> std::io::Result<std::process::Child> {
    use std::process::Stdio;
    let mut child = command.stdout(Stdio::null()).stderr(Stdio::null()).spawn()?;
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    loop {
        if TcpStream::connect(("127.0.0.1", port)).is_ok() {
            return Ok(child);
        }
        if let Some(status) = child.try_wait()? {
            return Err(std::io::Error::other(format!("it exited ({status}) before listening on port {port}")));
        }
        if std::time::Instant::now() >= deadline {
            let _ = child.kill();
            let _ = child.wait();
            return Err(std::io::Error::other(format!("it did not listen on port {port} within 20 s")));
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// A single-member etcd of a test's own (Debian's `etcd-server`), on free loopback ports with
/// a temporary data directory, killed when dropped. Its election timeout is short (100 ms),
/// so that it elects itself at once and its shortest lease is 1 s.
pub struct PrivateEtcd {
    child: Option<std::process::Child>,
    dir: tempfile::TempDir,
    client_port: u16,
    peer_port: u16,
    /// The certificate and key of its `https://` client URL, if it serves TLS.
    tls: Option<(std::path::PathBuf, std::path::PathBuf)>,
    /// More command-line flags.
    flags: Vec<String>,
}

impl PrivateEtcd {
    /// `None` when `etcd` is not installed (and not under CI, where that fails).
    pub fn start() -> Option<Self> {
        Self::start_with(None, &[])
    }

    /// [`start`](Self::start), serving TLS only on its client port with the certificate and
    /// key `tls` names (peers stay plain text), and with more command-line `flags`.
    pub fn start_with(tls: Option<(&std::path::Path, &std::path::Path)>, flags: &[&str]) -> Option<Self> {
        let mut tries = 0;
        loop {
            let dir = tempfile::tempdir().expect("a temporary directory");
            let mut etcd = PrivateEtcd {
                child: None,
                dir,
                client_port: free_port(),
                peer_port: free_port(),
                tls: tls.map(|(cert, key)| (cert.to_owned(), key.to_owned())),
                flags: flags.iter().map(|flag| (*flag).to_owned()).collect(),
            };
            tries += 1;
            match etcd.spawn() {
                Ok(()) => return Some(etcd),
                // It exited at once: a port was taken meanwhile by another test's server. Other
                // ports, up to three times; a missing binary is not tried again.
                Err(e) if e.kind() != std::io::ErrorKind::NotFound && tries < 3 => {
                    let _ = writeln!(std::io::stderr(), "etcd did not start ({e}); again on other ports");
                }
                Err(e) => {
                    private_server_missing("etcd (Debian package etcd-server)", &e);
                    return None;
                }
            }
        }
    }

    fn spawn(&mut self) -> std::io::Result<()> {
        let scheme = if self.tls.is_some() { "https" } else { "http" };
        let client = format!("{scheme}://127.0.0.1:{}", self.client_port);
        let peer = format!("http://127.0.0.1:{}", self.peer_port);
        let mut command = std::process::Command::new("etcd");
        command
            .args(["--name", "private", "--data-dir"])
            .arg(self.dir.path().join("data"))
            .args(["--listen-client-urls", &client, "--advertise-client-urls", &client])
            .args(["--listen-peer-urls", &peer, "--initial-advertise-peer-urls", &peer])
            .args(["--initial-cluster", &format!("private={peer}")])
            .args(["--heartbeat-interval", "10", "--election-timeout", "100"])
            .args(&self.flags);
        if let Some((cert, key)) = &self.tls {
            command.arg("--cert-file").arg(cert).arg("--key-file").arg(key);
        }
        self.child = Some(spawn_listening(command, self.client_port)?);
        self.wait_healthy();
        Ok(())
    }

    /// Waits (up to 10 s) until etcd says it is healthy (`GET /health`): it accepts connections
    /// before it has elected itself leader, and a request sent then may be reset (a test's
    /// first raw `put` was, once). Over TLS, asked with curl (`-k`: the test's own CA); a
    /// server that never says so is left to the test, which then fails on its own terms.
    fn wait_healthy(&self) {
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        while std::time::Instant::now() < deadline {
            let answer = if self.tls.is_some() {
                let url = format!("https://127.0.0.1:{}/health", self.client_port);
                std::process::Command::new("curl")
                    .args(["-s", "-k", "--max-time", "1", &url])
                    .output()
                    .map(|out| String::from_utf8_lossy(&out.stdout).into_owned())
                    .unwrap_or_default()
            } else {
                http_get(self.client_port, "/health").unwrap_or_default()
            };
            if answer.contains(r#""health":"true""#) {
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// `etcd://127.0.0.1:<port>`, or `etcds://…` when it serves TLS.
    pub fn url(&self) -> String {
        let scheme = if self.tls.is_some() { "etcds" } else { "etcd" };
        format!("{scheme}://127.0.0.1:{}", self.client_port)
    }

    /// The client port, the same across restarts.
    pub fn port(&self) -> u16 {
        self.client_port
    }

    /// Saves a snapshot of the running server's data to `path` (`etcdctl snapshot save`,
    /// Debian's `etcd-client`).
    pub fn snapshot(&self, path: &std::path::Path) {
        let endpoint = format!("http://127.0.0.1:{}", self.client_port);
        let output = std::process::Command::new("etcdctl")
            .env("ETCDCTL_API", "3")
            .args(["--endpoints", &endpoint, "snapshot", "save"])
            .arg(path)
            .output()
            .expect("running etcdctl (Debian package etcd-client)");
        assert!(output.status.success(), "etcdctl snapshot save failed: {}", String::from_utf8_lossy(&output.stderr));
    }

    /// Kills the server (`SIGKILL`), replaces its data directory with the snapshot at `path`
    /// (`etcdctl snapshot restore`, the member's name and URLs as before) and starts it again
    /// on the same ports. `token`: the restored cluster's `--initial-cluster-token` (`None`:
    /// etcd's default, the one the server started with), from which etcd derives the member
    /// and cluster IDs.
    pub fn restore(&mut self, path: &std::path::Path, token: Option<&str>) {
        self.kill9();
        let data = self.dir.path().join("data");
        let _ = std::fs::remove_dir_all(&data);
        let peer = format!("http://127.0.0.1:{}", self.peer_port);
        let mut command = std::process::Command::new("etcdctl");
        command
            .env("ETCDCTL_API", "3")
            .args(["snapshot", "restore"])
            .arg(path)
            .args(["--name", "private", "--data-dir"])
            .arg(&data)
            .args(["--initial-cluster", &format!("private={peer}"), "--initial-advertise-peer-urls", &peer]);
        if let Some(token) = token {
            command.args(["--initial-cluster-token", token]);
        }
        let output = command.output().expect("running etcdctl (Debian package etcd-client)");
        assert!(
            output.status.success(),
            "etcdctl snapshot restore failed: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        if let Err(e) = self.spawn() {
            panic!("etcd could not be started again on port {}: {e}", self.client_port);
        }
    }

    /// Kills the server (`SIGKILL`), deletes its data and starts an empty one on the same
    /// ports: an etcd rebuilt from nothing, its revisions starting again at 1.
    pub fn restart_empty(&mut self) {
        self.kill9();
        let _ = std::fs::remove_dir_all(self.dir.path().join("data"));
        if let Err(e) = self.spawn() {
            panic!("etcd could not be started again on port {}: {e}", self.client_port);
        }
    }

    /// Kills the server with `SIGKILL`.
    pub fn kill9(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

impl Drop for PrivateEtcd {
    fn drop(&mut self) {
        self.kill9();
    }
}

/// Sends a signal (`-STOP`, `-CONT`) to `child` with the `kill` command (the crates forbid
/// unsafe code).
fn signal_child(child: Option<&std::process::Child>, signal: &str) {
    let child = child.expect("the server runs");
    let status =
        std::process::Command::new("kill").args([signal, &child.id().to_string()]).status().expect("running kill");
    assert!(status.success(), "kill {signal} failed");
}

impl PrivateEtcd {
    /// Pauses the server (`SIGSTOP`): its kernel still accepts connections, nothing answers.
    pub fn stop(&self) {
        signal_child(self.child.as_ref(), "-STOP");
    }

    /// Lets a paused server run again (`SIGCONT`).
    pub fn cont(&self) {
        signal_child(self.child.as_ref(), "-CONT");
    }
}

/// A three-member etcd cluster of a test's own, on free loopback ports, each member with a
/// data directory of its own, killed when dropped (a paused member too). Its election
/// timeout is 500 ms (heartbeats every 50 ms), long enough not to flap on a loaded machine.
pub struct PrivateEtcdCluster {
    members: Vec<EtcdMember>,
    dir: tempfile::TempDir,
}

struct EtcdMember {
    child: Option<std::process::Child>,
    client_port: u16,
    peer_port: u16,
}

impl PrivateEtcdCluster {
    /// How many members.
    pub const MEMBERS: usize = 3;

    /// `None` when `etcd` is not installed (and not under CI, where that fails).
    pub fn start() -> Option<Self> {
        let mut tries = 0;
        loop {
            tries += 1;
            let mut cluster = PrivateEtcdCluster {
                members: (0..Self::MEMBERS)
                    .map(|_| EtcdMember { child: None, client_port: free_port(), peer_port: free_port() })
                    .collect(),
                dir: tempfile::tempdir().expect("a temporary directory"),
            };
            match cluster.spawn() {
                Ok(()) => return Some(cluster),
                // A port taken meanwhile by another test's server: other ports, up to three times.
                Err(e) if e.kind() != std::io::ErrorKind::NotFound && tries < 3 => {
                    let _ = writeln!(std::io::stderr(), "the etcd cluster did not start ({e}); again on other ports");
                }
                Err(e) => {
                    private_server_missing("etcd (Debian package etcd-server)", &e);
                    return None;
                }
            }
        }
    }

    fn spawn(&mut self) -> std::io::Result<()> {
        let peer = |member: &EtcdMember| format!("http://127.0.0.1:{}", member.peer_port);
        let initial: Vec<String> =
            self.members.iter().enumerate().map(|(i, member)| format!("m{i}={}", peer(member))).collect();
        let initial = initial.join(",");
        let token = format!("private-{}", self.members[0].client_port);
        for i in 0..self.members.len() {
            let client = format!("http://127.0.0.1:{}", self.members[i].client_port);
            let peer = peer(&self.members[i]);
            let mut command = std::process::Command::new("etcd");
            command
                .args(["--name", &format!("m{i}"), "--data-dir"])
                .arg(self.dir.path().join(format!("m{i}")))
                .args(["--listen-client-urls", &client, "--advertise-client-urls", &client])
                .args(["--listen-peer-urls", &peer, "--initial-advertise-peer-urls", &peer])
                .args(["--initial-cluster", &initial, "--initial-cluster-state", "new"])
                .args(["--initial-cluster-token", &token])
                .args(["--heartbeat-interval", "50", "--election-timeout", "500"]);
            match spawn_listening(command, self.members[i].client_port) {
                Ok(child) => self.members[i].child = Some(child),
                Err(e) => {
                    self.kill9();
                    return Err(e);
                }
            }
        }
        // Each member healthy: the cluster has a leader and every member knows it.
        let deadline = std::time::Instant::now() + Duration::from_secs(20);
        for member in &self.members {
            while !http_get(member.client_port, "/health").unwrap_or_default().contains(r#""health":"true""#) {
                if std::time::Instant::now() >= deadline {
                    self.kill9();
                    return Err(std::io::Error::other("the members did not say they are healthy within 20 s"));
                }
                std::thread::sleep(Duration::from_millis(50));
            }
        }
        Ok(())
    }

    /// `etcd://127.0.0.1:<port>,…` with every member, member `first` first (the store tries
    /// it first), then the others in order.
    pub fn url_from(&self, first: usize) -> String {
        let count = self.members.len();
        let servers: Vec<String> =
            (0..count).map(|i| format!("127.0.0.1:{}", self.members[(first + i) % count].client_port)).collect();
        format!("etcd://{}", servers.join(","))
    }

    /// `etcd://127.0.0.1:<port>,…` with every member, in order.
    pub fn url(&self) -> String {
        self.url_from(0)
    }

    /// The client port of member `index`.
    pub fn port(&self, index: usize) -> u16 {
        self.members[index].client_port
    }

    /// The member that is the leader, as member `index` sees it (`/v3/maintenance/status`):
    /// `None` when it does not answer or knows none.
    pub fn leader(&self, index: usize) -> Option<usize> {
        let ids: Vec<Option<String>> = self
            .members
            .iter()
            .map(|member| {
                let reply = http_post(member.client_port, "/v3/maintenance/status", "{}").ok()?;
                json_string_field(&reply, "member_id")
            })
            .collect();
        let reply = http_post(self.members[index].client_port, "/v3/maintenance/status", "{}").ok()?;
        let leader = json_string_field(&reply, "leader")?;
        ids.iter().position(|id| id.as_deref() == Some(leader.as_str()))
    }

    /// A member that is not the leader (as every member sees it), once the cluster has one.
    pub fn follower(&self) -> usize {
        (self.agreed_leader() + 1) % self.members.len()
    }

    /// The leader, once every member sees the same one.
    pub fn agreed_leader(&self) -> usize {
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        loop {
            let seen: Vec<Option<usize>> = (0..self.members.len()).map(|i| self.leader(i)).collect();
            if let Some(leader) = seen[0]
                && seen.iter().all(|&l| l == Some(leader))
            {
                return leader;
            }
            assert!(std::time::Instant::now() < deadline, "the members do not agree on a leader: {seen:?}");
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Pauses member `index` (`SIGSTOP`): its kernel still accepts connections on its ports,
    /// nothing answers.
    pub fn stop(&self, index: usize) {
        signal_child(self.members[index].child.as_ref(), "-STOP");
    }

    /// Lets member `index` run again (`SIGCONT`).
    pub fn cont(&self, index: usize) {
        signal_child(self.members[index].child.as_ref(), "-CONT");
    }

    /// Kills every member with `SIGKILL` (a paused one too).
    pub fn kill9(&mut self) {
        for member in &mut self.members {
            if let Some(mut child) = member.child.take() {
                let _ = child.kill();
                let _ = child.wait();
            }
        }
    }
}

impl Drop for PrivateEtcdCluster {
    fn drop(&mut self) {
        self.kill9();
    }
}

/// A plain HTTP/1.1 `POST` of a JSON `body` to `path` on a loopback port: the whole reply, or
/// the I/O error (within 1 s for each step).
fn http_post(port: u16, path: &str, body: &str) -> std::io::Result<String> {
    use std::io::Read;
    let mut stream = TcpStream::connect_timeout(&([127, 0, 0, 1], port).into(), Duration::from_secs(1))?;
    stream.set_read_timeout(Some(Duration::from_secs(1)))?;
    stream.set_write_timeout(Some(Duration::from_secs(1)))?;
    let request = format!(
        "POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    stream.write_all(request.as_bytes())?;
    let mut reply = String::new();
    stream.read_to_string(&mut reply)?;
    Ok(reply)
}

/// The first string field `"name":"…"` in a JSON text (etcd writes its IDs as strings).
fn json_string_field(text: &str, name: &str) -> Option<String> {
    let start = text.find(&format!("\"{name}\":\""))? + name.len() + 4;
    let end = text[start..].find('"')?;
    Some(text[start..start + end].to_owned())
}

/// A standalone ZooKeeper of a test's own (Debian's `zookeeper`, run with the package's jar),
/// on a free loopback port with a temporary data directory, killed when dropped. Its tick is
/// 100 ms, so sessions may last from 200 ms to a minute. Or an ensemble of one member
/// ([`start_ensemble_of_one`](Self::start_ensemble_of_one)): it elects itself leader at each
/// start, in a new epoch, as a real ensemble does after it loses its leader.
pub struct PrivateZooKeeper {
    child: Option<std::process::Child>,
    dir: tempfile::TempDir,
    port: u16,
    tls: Option<ZooKeeperTls>,
    /// The quorum and election ports of an ensemble of one; `None` for a standalone server.
    ensemble: Option<(u16, u16)>,
}

/// A secure client port: its number, the server's key and certificate (one PEM file, the
/// key PKCS#8) and the CA it trusts (it asks no client for a certificate).
struct ZooKeeperTls {
    port: u16,
    key_and_certificate: std::path::PathBuf,
    ca: std::path::PathBuf,
}

/// The jar of Debian's `zookeeper` package; its manifest names the jars it needs.
const ZOOKEEPER_JAR: &str = "/usr/share/java/zookeeper.jar";

impl PrivateZooKeeper {
    /// `None` when Java or the `zookeeper` package is not installed (and not under CI, where
    /// that fails).
    pub fn start() -> Option<Self> {
        let dir = tempfile::tempdir().expect("a temporary directory");
        Self::start_with(PrivateZooKeeper { child: None, dir, port: free_port(), tls: None, ensemble: None })
    }

    /// An ensemble of one member (`standaloneEnabled=false`), whose zxid epoch changes at each
    /// start.
    pub fn start_ensemble_of_one() -> Option<Self> {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let ensemble = Some((free_port(), free_port()));
        Self::start_with(PrivateZooKeeper { child: None, dir, port: free_port(), tls: None, ensemble })
    }

    /// A server with a TLS port too (`secureClientPort`, through netty) beside the plain one:
    /// its certificate and key are PEM files (the key PKCS#8), `ca` the CA it trusts.
    pub fn start_tls(certificate: &std::path::Path, key: &std::path::Path, ca: &std::path::Path) -> Option<Self> {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let key_and_certificate = dir.path().join("server-key-and-certificate.pem");
        let pem =
            [key, certificate].map(|path| std::fs::read_to_string(path).expect("the server's PEM files")).concat();
        std::fs::write(&key_and_certificate, pem).expect("writing the server's key and certificate");
        let tls = ZooKeeperTls { port: free_port(), key_and_certificate, ca: ca.to_owned() };
        Self::start_with(PrivateZooKeeper { child: None, dir, port: free_port(), tls: Some(tls), ensemble: None })
    }

    fn start_with(mut server: Self) -> Option<Self> {
        match server.spawn() {
            Ok(()) => Some(server),
            Err(e) => {
                private_server_missing("ZooKeeper (Debian package zookeeper)", &e);
                None
            }
        }
    }

    fn spawn(&mut self) -> std::io::Result<()> {
        if !std::path::Path::new(ZOOKEEPER_JAR).exists() {
            return Err(std::io::Error::new(std::io::ErrorKind::NotFound, format!("{ZOOKEEPER_JAR} is missing")));
        }
        let data = self.dir.path().join("data");
        std::fs::create_dir_all(&data)?;
        let config = self.dir.path().join("zoo.cfg");
        let secure_port = self.tls.as_ref().map(|tls| format!("secureClientPort={}\n", tls.port)).unwrap_or_default();
        let ensemble = match self.ensemble {
            None => String::new(),
            Some((quorum, election)) => {
                std::fs::write(data.join("myid"), "1\n")?;
                format!("standaloneEnabled=false\ninitLimit=50\nsyncLimit=20\nserver.1=127.0.0.1:{quorum}:{election}\n")
            }
        };
        std::fs::write(
            &config,
            format!(
                "tickTime=100\nminSessionTimeout=200\nmaxSessionTimeout=60000\ndataDir={}\n\
                 clientPort={}\n{secure_port}clientPortAddress=127.0.0.1\nadmin.enableServer=false\nmaxClientCnxns=0\n\
                 4lw.commands.whitelist=srvr\n{ensemble}",
                data.display(),
                self.port
            ),
        )?;
        let mut command = std::process::Command::new("java");
        command.args(["-Xmx256m", "-XX:TieredStopAtLevel=1", "-cp"]);
        match &self.tls {
            None => command.arg(ZOOKEEPER_JAR),
            Some(tls) => {
                // The jar's manifest names netty's buffer, common, handler and transport; its
                // TLS needs codec and resolver too.
                let mut classpath = ZOOKEEPER_JAR.to_owned();
                for jar in NETTY_TLS_JARS {
                    if !std::path::Path::new(jar).exists() {
                        return Err(std::io::Error::new(std::io::ErrorKind::NotFound, format!("{jar} is missing")));
                    }
                    classpath = format!("{classpath}:{jar}");
                }
                command
                    .arg(classpath)
                    .arg("-Dzookeeper.serverCnxnFactory=org.apache.zookeeper.server.NettyServerCnxnFactory")
                    .arg(format!("-Dzookeeper.ssl.keyStore.location={}", tls.key_and_certificate.display()))
                    .arg("-Dzookeeper.ssl.keyStore.type=PEM")
                    .arg(format!("-Dzookeeper.ssl.trustStore.location={}", tls.ca.display()))
                    .arg("-Dzookeeper.ssl.trustStore.type=PEM")
                    .arg("-Dzookeeper.ssl.clientAuth=none")
            }
        };
        command
            .arg(format!("-Dzookeeper.log.dir={}", self.dir.path().display()))
            .arg(if self.ensemble.is_some() {
                "org.apache.zookeeper.server.quorum.QuorumPeerMain"
            } else {
                "org.apache.zookeeper.server.ZooKeeperServerMain"
            })
            .arg(&config);
        self.child = Some(spawn_listening(command, self.port)?);
        if let Some(tls) = &self.tls {
            let deadline = std::time::Instant::now() + Duration::from_secs(20);
            while TcpStream::connect(("127.0.0.1", tls.port)).is_err() {
                if std::time::Instant::now() >= deadline {
                    return Err(std::io::Error::other(format!(
                        "ZooKeeper's secure client port {} did not listen within 20 s",
                        tls.port
                    )));
                }
                std::thread::sleep(Duration::from_millis(20));
            }
        }
        // It listens before it serves: wait until `srvr` reports its mode.
        let deadline = std::time::Instant::now() + Duration::from_secs(20);
        loop {
            if zookeeper_serves(self.port) {
                return Ok(());
            }
            if std::time::Instant::now() >= deadline {
                return Err(std::io::Error::other(format!(
                    "ZooKeeper on port {} did not serve within 20 s",
                    self.port
                )));
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// `zk://127.0.0.1:<port>`.
    pub fn url(&self) -> String {
        format!("zk://127.0.0.1:{}", self.port)
    }

    /// The secure client port, of a server started with [`start_tls`](Self::start_tls).
    pub fn tls_port(&self) -> u16 {
        self.tls.as_ref().expect("a ZooKeeper started with TLS").port
    }

    /// The plain client port.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// The address clients connect to.
    pub fn address(&self) -> std::net::SocketAddr {
        std::net::SocketAddr::from(([127, 0, 0, 1], self.port))
    }

    /// Kills the server (`SIGKILL`), deletes its data and starts an empty one on the same
    /// port: an ensemble rebuilt from nothing.
    pub fn restart_empty(&mut self) {
        self.kill9();
        let _ = std::fs::remove_dir_all(self.dir.path().join("data"));
        if let Err(e) = self.spawn() {
            panic!("ZooKeeper could not be started again on port {}: {e}", self.port);
        }
    }

    /// Kills the server with `SIGKILL`.
    pub fn kill9(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// Kills the server (`SIGKILL`) and starts it again on its data.
    pub fn restart(&mut self) {
        self.kill9();
        if let Err(e) = self.spawn() {
            panic!("ZooKeeper could not be started again on port {}: {e}", self.port);
        }
    }

    /// Pauses the server (`SIGSTOP`): it holds its connections and answers nothing.
    pub fn stop(&self) {
        signal_child(self.child.as_ref(), "-STOP");
    }

    /// Lets a paused server run again (`SIGCONT`).
    pub fn cont(&self) {
        signal_child(self.child.as_ref(), "-CONT");
    }

    /// A copy of the data directory as it is on disk now, the server paused meanwhile: what a
    /// filesystem snapshot or a backup of a running server holds.
    pub fn snapshot(&self) -> tempfile::TempDir {
        let copy = tempfile::tempdir().expect("a temporary directory");
        self.stop();
        let copied =
            std::process::Command::new("cp").arg("-a").arg(self.dir.path().join("data")).arg(copy.path()).status();
        self.cont();
        assert!(copied.is_ok_and(|status| status.success()), "copying ZooKeeper's data directory");
        copy
    }

    /// Kills the server (`SIGKILL`), puts back the data directory of `snapshot` and starts it
    /// again on the same port.
    pub fn restore(&mut self, snapshot: &tempfile::TempDir) {
        self.kill9();
        let data = self.dir.path().join("data");
        let _ = std::fs::remove_dir_all(&data);
        let copied =
            std::process::Command::new("cp").arg("-a").arg(snapshot.path().join("data")).arg(self.dir.path()).status();
        assert!(copied.is_ok_and(|status| status.success()), "restoring ZooKeeper's data directory");
        if let Err(e) = self.spawn() {
            panic!("ZooKeeper could not be started again on port {}: {e}", self.port);
        }
    }

    /// Deletes the znode `path` (an operator's `delete`), through a client of its own.
    pub fn delete(&self, path: &str) {
        use zookeeper_client as zk;
        /// Spawns zookeeper-client's tasks onto the tokio runtime of the thread.
        struct Spawner;
        impl spawns_core::Spawn for Spawner {
            fn spawn(&self, task: spawns_core::Task) {
                tokio::spawn(Box::into_pin(task.future));
            }
        }
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("a runtime");
        let _spawner = spawns_core::enter(&Spawner);
        let address = format!("127.0.0.1:{}", self.port);
        runtime.block_on(async {
            let deleting = async {
                let client =
                    zk::Client::connector().with_session_timeout(Duration::from_secs(10)).connect(&address).await?;
                client.delete(path, None).await
            };
            match tokio::time::timeout(Duration::from_secs(10), deleting).await {
                Ok(Ok(()) | Err(zk::Error::NoNode)) => {}
                Ok(Err(e)) => panic!("deleting {path}: {e}"),
                Err(_) => panic!("deleting {path}: no answer within 10 s"),
            }
        });
    }
}

/// The jars of Debian's netty that ZooKeeper's TLS needs beyond those its jar's manifest names.
const NETTY_TLS_JARS: [&str; 3] = [
    "/usr/share/java/netty-codec.jar",
    "/usr/share/java/netty-resolver.jar",
    "/usr/share/java/netty-transport-native-unix-common.jar",
];

/// Whether the ZooKeeper on `port` serves requests: its `srvr` command reports a mode.
fn zookeeper_serves(port: u16) -> bool {
    use std::io::Read;
    let Ok(mut stream) = TcpStream::connect(("127.0.0.1", port)) else { return false };
    let _ = stream.set_read_timeout(Some(Duration::from_secs(2)));
    let mut reply = String::new();
    stream.write_all(b"srvr").is_ok() && stream.read_to_string(&mut reply).is_ok() && reply.contains("Mode:")
}

impl Drop for PrivateZooKeeper {
    fn drop(&mut self) {
        self.kill9();
    }
}

/// A plain HTTP/1.1 `GET` of `path` on a loopback port, in one write: the whole reply, or the
/// I/O error (within 1 s for each step).
pub fn http_get(port: u16, path: &str) -> std::io::Result<String> {
    use std::io::Read;
    let mut stream = TcpStream::connect_timeout(&([127, 0, 0, 1], port).into(), Duration::from_secs(1))?;
    stream.set_read_timeout(Some(Duration::from_secs(1)))?;
    stream.set_write_timeout(Some(Duration::from_secs(1)))?;
    stream.write_all(format!("GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n").as_bytes())?;
    let mut reply = String::new();
    stream.read_to_string(&mut reply)?;
    Ok(reply)
}
