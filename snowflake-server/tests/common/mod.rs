//! What the process tests share: the server binary started on a free port, HTTP through
//! ureq, the rule for missing servers and tools (under `CI` a failure, elsewhere a skip),
//! and private redis-servers.
#![allow(dead_code)]

pub mod certs;
pub mod hammer;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// Whether this run is CI's, where a missing server or tool is a failure.
pub fn under_ci() -> bool {
    std::env::var_os("CI").is_some_and(|value| !value.is_empty() && value != "false" && value != "0")
}

/// Under CI, a failure; elsewhere, a note on stderr and `None` (the test returns).
pub fn missing<T>(reason: &str) -> Option<T> {
    if under_ci() {
        panic!("{reason}; under CI it must be there");
    }
    let _ = writeln!(std::io::stderr(), "skipped: {reason}");
    None
}

/// `REDIS_URL`, when a Redis answers there.
pub fn redis_url() -> Option<String> {
    let url = match std::env::var("REDIS_URL") {
        Ok(url) if !url.trim().is_empty() => url,
        _ => return missing("REDIS_URL is not set (e.g. redis://127.0.0.1:6379)"),
    };
    match redis::Client::open(url.as_str()).and_then(|c| c.get_connection_with_timeout(Duration::from_secs(2))) {
        Ok(_) => Some(url),
        Err(e) => missing(&format!("REDIS_URL={url}: {e}")),
    }
}

/// Whether `program` runs (`program --version`).
pub fn tool(program: &str) -> Option<()> {
    match Command::new(program).arg("--version").stdout(Stdio::null()).stderr(Stdio::null()).status() {
        Ok(status) if status.success() => Some(()),
        _ => missing(&format!("{program} is not installed")),
    }
}

/// A namespace no other test run uses.
pub fn unique(prefix: &str) -> String {
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().subsec_nanos();
    format!("{prefix}-{}-{nanos}", std::process::id())
}

/// Deletes every key of a lease namespace.
pub fn delete_namespace(url: &str, namespace: &str) {
    let mut con = redis::Client::open(url).unwrap().get_connection().unwrap();
    let keys: Vec<String> = redis::cmd("KEYS").arg(format!("snowflake:{{{namespace}}}:*")).query(&mut con).unwrap();
    if !keys.is_empty() {
        let _: () = redis::cmd("DEL").arg(keys).query(&mut con).unwrap();
    }
}

/// A free TCP port on 127.0.0.1.
pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

/// A running `snowflake-server`, stopped (SIGTERM, then killed) when dropped.
pub struct Server {
    pub child: Option<Child>,
    /// `http://127.0.0.1:PORT`.
    pub base: String,
    stderr: mpsc::Receiver<String>,
}

impl Server {
    /// Starts the binary with `args` (and `--listen 127.0.0.1:0`) and waits until it says where
    /// it listens (up to 60 s). It says so once its port is open, before any lease is there:
    /// wait for `/readyz` before asking for IDs.
    pub fn start(args: &[&str]) -> Server {
        Server::start_env(args, &[])
    }

    /// [`Server::start`] with environment variables.
    pub fn start_env(args: &[&str], env: &[(&str, &str)]) -> Server {
        Server::start_at("127.0.0.1:0", args, env)
    }

    /// [`Server::start_env`] listening on `listen` (`--listen`).
    pub fn start_at(listen: &str, args: &[&str], env: &[(&str, &str)]) -> Server {
        let mut command = Command::new(env!("CARGO_BIN_EXE_snowflake-server"));
        command.args(["--listen", listen]).args(args);
        Server::launch(command, env)
    }

    /// `command`, which runs the binary (itself, or through a program that ends by
    /// executing it), with the tests' environment and `env`; waits as [`Server::start`] does.
    pub fn launch(mut command: Command, env: &[(&str, &str)]) -> Server {
        let mut child = command
            .env_remove("SNOWFLAKE_WORKER_ID")
            .env_remove("SNOWFLAKE_WORKER_LEASE")
            .env_remove("SNOWFLAKE_IDS")
            .env("RUST_LOG", "info")
            // Stopped at once: the drain on SIGTERM is tests/service/shutdown.rs's subject (`--drain`).
            .env("SNOWFLAKE_DRAIN", "0")
            .envs(env.iter().copied())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("snowflake-server starts");
        let (line_tx, line_rx) = mpsc::channel();
        let stdout = child.stdout.take().unwrap();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                let _ = line_tx.send(line);
            }
        });
        let (err_tx, err_rx) = mpsc::channel();
        let mut stderr = child.stderr.take().unwrap();
        std::thread::spawn(move || {
            let mut text = String::new();
            let _ = stderr.read_to_string(&mut text);
            let _ = err_tx.send(text);
        });
        let mut server = Server { child: Some(child), base: String::new(), stderr: err_rx };
        match line_rx.recv_timeout(Duration::from_secs(60)) {
            Ok(line) => {
                let addr =
                    line.strip_prefix("listening on ").unwrap_or_else(|| panic!("unexpected first line {line:?}"));
                server.base = addr.to_owned();
            }
            Err(_) => {
                let (code, log) = server.stop();
                panic!("snowflake-server did not start (exit {code:?}):\n{log}");
            }
        }
        server
    }

    /// `base` + `path`.
    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    /// Sends SIGTERM, waits for the exit (killing after 20 s), and returns the exit code and
    /// everything written to stderr.
    pub fn stop(&mut self) -> (Option<i32>, String) {
        let Some(mut child) = self.child.take() else { return (None, String::new()) };
        let _ = Command::new("kill").args(["-TERM", &child.id().to_string()]).status();
        let deadline = Instant::now() + Duration::from_secs(20);
        let status = loop {
            if let Some(status) = child.try_wait().unwrap() {
                break Some(status);
            }
            if Instant::now() > deadline {
                let _ = child.kill();
                let _ = child.wait();
                break None;
            }
            std::thread::sleep(Duration::from_millis(20));
        };
        let log = self.stderr.recv_timeout(Duration::from_secs(5)).unwrap_or_default();
        (status.and_then(|s| s.code()), log)
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// An HTTP agent that returns every status as a response (4xx and 5xx are what is tested).
pub fn agent() -> ureq::Agent {
    ureq::Agent::config_builder()
        .http_status_as_error(false)
        .timeout_global(Some(Duration::from_secs(10)))
        .build()
        .into()
}

/// `GET url`: status, `Retry-After` (if any) and body.
pub fn get(agent: &ureq::Agent, url: &str) -> (u16, Option<String>, String) {
    let mut response = agent.get(url).call().unwrap_or_else(|e| panic!("GET {url}: {e}"));
    let status = response.status().as_u16();
    let retry = response.headers().get("retry-after").map(|v| v.to_str().unwrap().to_owned());
    let body = response.body_mut().read_to_string().unwrap();
    (status, retry, body)
}

/// Polls `check` every 100 ms until it returns `Some`, for at most `limit`.
pub fn eventually<T>(limit: Duration, what: &str, mut check: impl FnMut() -> Option<T>) -> T {
    let deadline = Instant::now() + limit;
    loop {
        if let Some(value) = check() {
            return value;
        }
        assert!(Instant::now() < deadline, "not within {limit:?}: {what}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// A redis-server of this test's own, on a free port, without persistence; killed on drop.
pub struct PrivateRedis {
    child: Option<Child>,
    pub port: u16,
}

impl PrivateRedis {
    /// Starts one, or `None` (a failure under CI) when `redis-server` is not installed.
    pub fn start() -> Option<PrivateRedis> {
        tool("redis-server")?;
        let mut redis = PrivateRedis { child: None, port: free_port() };
        redis.restart();
        Some(redis)
    }

    /// One on a free port, not started yet: nothing listens there until [`PrivateRedis::restart`].
    pub fn not_started() -> Option<PrivateRedis> {
        tool("redis-server")?;
        Some(PrivateRedis { child: None, port: free_port() })
    }

    /// Stops the server's process (SIGSTOP): connections are accepted by the kernel, and
    /// nothing answers.
    pub fn pause(&self) {
        self.signal("-STOP");
    }

    /// Lets a paused server go on (SIGCONT).
    pub fn resume(&self) {
        self.signal("-CONT");
    }

    fn signal(&self, signal: &str) {
        let child = self.child.as_ref().expect("the redis-server runs");
        let status = Command::new("kill").args([signal, &child.id().to_string()]).status().unwrap();
        assert!(status.success(), "kill {signal}");
    }

    /// `redis://127.0.0.1:PORT`.
    pub fn url(&self) -> String {
        format!("redis://127.0.0.1:{}", self.port)
    }

    /// Kills the server (its data goes with it).
    pub fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            // A paused server is killed as well; SIGCONT first so that it exits at once.
            let _ = Command::new("kill").args(["-CONT", &child.id().to_string()]).status();
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// Starts it again, empty, on the same port, and waits until it answers.
    pub fn restart(&mut self) {
        self.kill();
        let port = self.port.to_string();
        let child = Command::new("redis-server")
            .args(["--port", &port, "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("redis-server starts");
        self.child = Some(child);
        let url = self.url();
        eventually(Duration::from_secs(10), "the private redis-server answers", || {
            let client = redis::Client::open(url.as_str()).ok()?;
            let mut con = client.get_connection_with_timeout(Duration::from_millis(500)).ok()?;
            redis::cmd("PING").query::<String>(&mut con).ok()
        });
    }
}

impl Drop for PrivateRedis {
    fn drop(&mut self) {
        self.kill();
    }
}
