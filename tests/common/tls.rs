//! TLS servers of a test's own: a CA and a server certificate made for the run (`openssl`),
//! a TLS `redis-server`, a PostgreSQL with `ssl=on` and a MariaDB with TLS (or without, and
//! restarted on demand); and a PostgreSQL primary with a streaming standby to promote. Each
//! listens on a free loopback port and is stopped when dropped. Include with
//! `#[path = "common/tls.rs"] mod tls;` beside `servers.rs`. Under `CI` a server that cannot
//! be started fails the test; elsewhere the test says so on stderr and returns.
#![allow(dead_code)]

use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use super::child;
use super::servers::under_ci;

use typed_snowflake::worker::lease::{CA_ENV, LeaseError};
use typed_snowflake::{Registry, SnowflakeId};

/// The password the TLS servers ask for (the stores read it from the URL).
pub const PASSWORD: &str = "s3cret-tls";

/// A store error's whole text: its message names its cause.
pub fn refused(result: Result<impl std::fmt::Debug, LeaseError>) -> String {
    match result {
        Err(error) => error.to_string(),
        Ok(other) => panic!("expected a refusal, got {other:?}"),
    }
}

/// The message of a server whose certificate the trusted CA did not sign.
pub fn assert_unknown_issuer(message: &str) {
    assert!(message.contains("invalid peer certificate") && message.contains("UnknownIssuer"), "{message}");
}

/// The zero-code path in a fresh process: `SNOWFLAKE_WORKER_LEASE=<url>` (and the CA in
/// `SNOWFLAKE_LEASE_CA` when given) leases a worker ID at the first `generate()`. The child
/// runs the calling module's `child` entry with the scenario `env_lease`, which calls
/// [`env_lease`]; `secret` (the URL's password, as the URL spells it) never shows in a failure.
pub fn zero_code(url: &str, ca: Option<&Path>, namespace: &str, secret: &str) {
    let mut command = child::command("env_lease");
    command
        .env("SNOWFLAKE_WORKER_LEASE", url)
        .env("SNOWFLAKE_NAMESPACE", namespace)
        .env("SNOWFLAKE_LEASE_TTL", "2s")
        .env("SNOWFLAKE_LEASE_RESERVATION", "2s")
        // A store slow to answer under a loaded machine is waited for (the default wait),
        // not reported at its first timeout.
        .env_remove("SNOWFLAKE_LEASE_WAIT")
        .env_remove("SNOWFLAKE_WORKER_ID")
        .env_remove("SNOWFLAKE_WORKER_SPACE")
        .env_remove(CA_ENV);
    if let Some(ca) = ca {
        command.env(CA_ENV, ca);
    }
    let output = command.output().expect("running the child");
    child::check("env_lease", &output, &url.replace(secret, "…"));
}

/// The `env_lease` scenario in the child: two IDs of `I`, in order, on the worker ID of the
/// lease the environment names (a 5-bit worker field: workers 0..=31).
pub fn env_lease<I: SnowflakeId + std::fmt::Debug + Ord>() -> Result<(), Box<dyn std::error::Error>> {
    let _shutdown = Registry::shutdown_guard();
    let first = I::try_generate()?;
    let second = I::try_generate()?;
    assert!(second > first, "{second:?} after {first:?}");
    let worker = Registry::worker_id()?;
    assert_eq!(first.worker(), worker);
    assert!(worker < 32, "worker {worker}");
    Ok(())
}

/// A CA and a server certificate for `127.0.0.1` and `localhost` that it signed, and a second
/// CA that signed nothing: PEM files in a directory of their own.
pub struct Certificates {
    pub dir: tempfile::TempDir,
}

impl Certificates {
    /// `None` when `openssl` cannot make them (and not under CI, where that fails).
    pub fn make() -> Option<Self> {
        match Self::try_make() {
            Ok(certificates) => Some(certificates),
            Err(e) => skip(&format!("the test certificates could not be made: {e}")),
        }
    }

    fn try_make() -> Result<Self, String> {
        let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
        let path = |name: &str| dir.path().join(name).display().to_string();
        let ca = |name: &str, subject: &str| {
            let (key, pem) = (path(&format!("{name}.key")), path(&format!("{name}.pem")));
            run(Command::new("openssl").args([
                "req",
                "-x509",
                "-newkey",
                "rsa:2048",
                "-nodes",
                "-days",
                "2",
                "-subj",
                subject,
                "-keyout",
                &key,
                "-out",
                &pem,
                "-addext",
                "basicConstraints=critical,CA:TRUE",
                "-addext",
                "keyUsage=critical,keyCertSign,cRLSign",
            ]))
        };
        ca("ca", "/CN=typed-snowflake test CA")?;
        ca("wrong-ca", "/CN=typed-snowflake wrong CA")?;
        std::fs::write(
            path("server.ext"),
            "subjectAltName=IP:127.0.0.1,DNS:localhost\nbasicConstraints=CA:FALSE\n\
             keyUsage=critical,digitalSignature,keyEncipherment\nextendedKeyUsage=serverAuth\n",
        )
        .map_err(|e| e.to_string())?;
        run(Command::new("openssl").args([
            "req",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-subj",
            "/CN=localhost",
            "-keyout",
            &path("server.key"),
            "-out",
            &path("server.csr"),
        ]))?;
        run(Command::new("openssl").args([
            "x509",
            "-req",
            "-in",
            &path("server.csr"),
            "-CA",
            &path("ca.pem"),
            "-CAkey",
            &path("ca.key"),
            "-CAcreateserial",
            "-days",
            "2",
            "-extfile",
            &path("server.ext"),
            "-out",
            &path("server.pem"),
        ]))?;
        Ok(Certificates { dir })
    }

    pub fn ca(&self) -> PathBuf {
        self.dir.path().join("ca.pem")
    }

    pub fn wrong_ca(&self) -> PathBuf {
        self.dir.path().join("wrong-ca.pem")
    }

    pub fn server_cert(&self) -> PathBuf {
        self.dir.path().join("server.pem")
    }

    pub fn server_key(&self) -> PathBuf {
        self.dir.path().join("server.key")
    }
}

fn run(command: &mut Command) -> Result<(), String> {
    let output = command.stdin(Stdio::null()).output().map_err(|e| format!("{command:?}: {e}"))?;
    if output.status.success() {
        Ok(())
    } else {
        Err(format!("{command:?}: {}\n{}", output.status, String::from_utf8_lossy(&output.stderr)))
    }
}

fn skip<T>(reason: &str) -> Option<T> {
    assert!(!under_ci(), "{reason}; under CI the TLS servers must start");
    eprintln!("SKIPPED: {reason}");
    None
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").and_then(|l| l.local_addr()).expect("a free port").port()
}

/// Waits until something listens on `port`, while `child` (if any) runs.
fn wait_listening(port: u16, child: Option<&mut Child>, within: Duration) -> Result<(), String> {
    let deadline = Instant::now() + within;
    let mut child = child;
    loop {
        if TcpStream::connect(("127.0.0.1", port)).is_ok() {
            return Ok(());
        }
        if let Some(child) = child.as_deref_mut()
            && let Ok(Some(status)) = child.try_wait()
        {
            return Err(format!("the server exited: {status}"));
        }
        if Instant::now() >= deadline {
            return Err(format!("nothing listened on port {port} within {within:?}"));
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// A `redis-server` that speaks TLS only (`--port 0 --tls-port …`), asks for [`PASSWORD`] and
/// does not check client certificates.
pub struct TlsRedis {
    child: Child,
    port: u16,
}

impl TlsRedis {
    pub fn start(certificates: &Certificates) -> Option<Self> {
        let port = free_port();
        let child = Command::new("redis-server")
            .args(["--port", "0", "--tls-port", &port.to_string(), "--bind", "127.0.0.1"])
            .arg("--tls-cert-file")
            .arg(certificates.server_cert())
            .arg("--tls-key-file")
            .arg(certificates.server_key())
            .arg("--tls-ca-cert-file")
            .arg(certificates.ca())
            .args(["--tls-auth-clients", "no", "--requirepass", PASSWORD, "--save", "", "--appendonly", "no"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn();
        let mut child = match child {
            Ok(child) => child,
            Err(e) => return skip(&format!("redis-server could not be started: {e}")),
        };
        match wait_listening(port, Some(&mut child), Duration::from_secs(10)) {
            Ok(()) => Some(TlsRedis { child, port }),
            Err(e) => {
                let _ = child.kill();
                let _ = child.wait();
                skip(&format!("the TLS redis-server did not start: {e}"))
            }
        }
    }

    /// `rediss://:<password>@127.0.0.1:<port>`.
    pub fn url(&self) -> String {
        format!("rediss://:{PASSWORD}@127.0.0.1:{}", self.port)
    }

    pub fn port(&self) -> u16 {
        self.port
    }
}

impl Drop for TlsRedis {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Whether this process runs as root (PostgreSQL refuses to; it runs as `postgres` then).
fn is_root() -> bool {
    Command::new("id").arg("-u").output().is_ok_and(|out| String::from_utf8_lossy(&out.stdout).trim() == "0")
}

/// `command` as the `postgres` user when this process is root.
fn as_postgres(program: &Path) -> Command {
    if is_root() {
        let mut command = Command::new("runuser");
        command.args(["-u", "postgres", "--"]).arg(program);
        command
    } else {
        Command::new(program)
    }
}

/// The newest PostgreSQL's binaries (`/usr/lib/postgresql/<version>/bin`).
fn pg_bin() -> Option<PathBuf> {
    let mut versions: Vec<u32> = std::fs::read_dir("/usr/lib/postgresql")
        .ok()?
        .filter_map(|entry| entry.ok()?.file_name().to_str()?.parse().ok())
        .collect();
    versions.sort_unstable();
    let bin = PathBuf::from(format!("/usr/lib/postgresql/{}/bin", versions.last()?));
    bin.join("initdb").exists().then_some(bin)
}

/// A PostgreSQL of the test's own (`initdb` in a temporary directory, `pg_ctl` on a free
/// port), with TLS on; the superuser `postgres` logs in over TCP with [`PASSWORD`].
pub struct TlsPostgres {
    data: tempfile::TempDir,
    bin: PathBuf,
    port: u16,
}

impl TlsPostgres {
    pub fn start(certificates: &Certificates) -> Option<Self> {
        match Self::try_start(certificates) {
            Ok(server) => Some(server),
            Err(e) => skip(&format!("the TLS PostgreSQL could not be started: {e}")),
        }
    }

    fn try_start(certificates: &Certificates) -> Result<Self, String> {
        let bin = pg_bin().ok_or("no /usr/lib/postgresql/<version>/bin/initdb")?;
        let data = tempfile::tempdir().map_err(|e| e.to_string())?;
        let root = data.path();
        // The server reads its key and certificate as its own user, the key private to it.
        for (from, to) in [(certificates.server_cert(), "server.pem"), (certificates.server_key(), "server.key")] {
            std::fs::copy(from, root.join(to)).map_err(|e| e.to_string())?;
        }
        std::fs::write(root.join("password"), PASSWORD).map_err(|e| e.to_string())?;
        run(Command::new("chmod").arg("600").arg(root.join("server.key")))?;
        if is_root() {
            run(Command::new("chown").args(["-R", "postgres:postgres"]).arg(root))?;
        }
        run(as_postgres(&bin.join("initdb"))
            .args(["-N", "-U", "postgres", "--auth-local=trust", "--auth-host=scram-sha-256", "-D"])
            .arg(root.join("data"))
            .arg(format!("--pwfile={}", root.join("password").display()))
            .stdout(Stdio::null()))?;
        // TCP logins over TLS only, so that a store that did not use it is refused.
        let hba = root.join("data").join("pg_hba.conf");
        std::fs::write(
            &hba,
            "local all all trust\nhostssl all all 127.0.0.1/32 scram-sha-256\nhostnossl all all 127.0.0.1/32 reject\n",
        )
        .map_err(|e| e.to_string())?;
        if is_root() {
            run(Command::new("chown").arg("postgres:postgres").arg(&hba))?;
        }
        let server = TlsPostgres { data, bin, port: free_port() };
        server.pg_ctl_start(true)?;
        Ok(server)
    }

    /// Starts the server, with TLS on or off.
    fn pg_ctl_start(&self, ssl: bool) -> Result<(), String> {
        let root = self.data.path();
        let options = format!(
            "-p {} -c listen_addresses=127.0.0.1 -c unix_socket_directories={} -c fsync=off -c ssl={} \
             -c ssl_cert_file={} -c ssl_key_file={}",
            self.port,
            root.display(),
            if ssl { "on" } else { "off" },
            root.join("server.pem").display(),
            root.join("server.key").display(),
        );
        run(as_postgres(&self.bin.join("pg_ctl"))
            .args(["-w", "-t", "30", "-D"])
            .arg(root.join("data"))
            .arg("-l")
            .arg(root.join("log"))
            .args(["-o", &options, "start"])
            .stdout(Stdio::null()))
    }

    fn pg_ctl_stop(&self) -> Result<(), String> {
        run(as_postgres(&self.bin.join("pg_ctl"))
            .args(["-w", "-m", "immediate", "-D"])
            .arg(self.data.path().join("data"))
            .arg("stop")
            .stdout(Stdio::null()))
    }

    /// Restarts the server with TLS off: a plain-text server on the same port.
    pub fn restart_without_tls(&self) {
        self.pg_ctl_stop().expect("stopping the private PostgreSQL");
        self.pg_ctl_start(false).expect("starting the private PostgreSQL without TLS");
    }

    /// `postgres://postgres:<password>@127.0.0.1:<port>/postgres`, then `query` (without `?`).
    pub fn url(&self, query: &str) -> String {
        format!("postgres://postgres:{PASSWORD}@127.0.0.1:{}/postgres?{query}", self.port)
    }
}

impl Drop for TlsPostgres {
    fn drop(&mut self) {
        let _ = self.pg_ctl_stop();
    }
}

/// A MariaDB of the test's own (`mariadb-install-db` in a temporary directory, `mariadbd`
/// on a free port and a socket there), with TLS or without; `root` logs in with [`PASSWORD`].
pub struct TlsMariaDb {
    child: Child,
    data: tempfile::TempDir,
    port: u16,
    /// `mariadbd`'s arguments, for a restart.
    args: Vec<String>,
}

impl TlsMariaDb {
    pub fn start(certificates: &Certificates, tls: bool) -> Option<Self> {
        match Self::try_start(tls.then_some(certificates)) {
            Ok(server) => Some(server),
            Err(e) => skip(&format!("the private MariaDB could not be started: {e}")),
        }
    }

    /// Without TLS, and so without certificates.
    pub fn plain() -> Option<Self> {
        match Self::try_start(None) {
            Ok(server) => Some(server),
            Err(e) => skip(&format!("the private MariaDB could not be started: {e}")),
        }
    }

    fn try_start(certificates: Option<&Certificates>) -> Result<Self, String> {
        let tls = certificates.is_some();
        let data = tempfile::tempdir().map_err(|e| e.to_string())?;
        let root = data.path();
        let datadir = root.join("data");
        run(Command::new("mariadb-install-db")
            .arg("--no-defaults")
            .arg(format!("--datadir={}", datadir.display()))
            .args(["--user=root", "--auth-root-authentication-method=normal", "--skip-test-db"])
            .stdout(Stdio::null()))?;
        // The password of `root` over TCP, set at start-up from a file; with TLS on, the user
        // must use it, so that a store that did not is refused.
        let init = root.join("init.sql");
        let require = if tls { " REQUIRE SSL" } else { "" };
        std::fs::write(
            &init,
            format!(
                "CREATE OR REPLACE USER 'root'@'127.0.0.1' IDENTIFIED BY '{PASSWORD}'{require};\n\
                 GRANT ALL ON *.* TO 'root'@'127.0.0.1' WITH GRANT OPTION;\nCREATE DATABASE IF NOT EXISTS test;\n"
            ),
        )
        .map_err(|e| e.to_string())?;
        let port = free_port();
        let mut args = vec![
            "--no-defaults".to_owned(),
            format!("--datadir={}", datadir.display()),
            format!("--socket={}", root.join("sock").display()),
            format!("--pid-file={}", root.join("pid").display()),
            format!("--init-file={}", init.display()),
            format!("--port={port}"),
        ];
        args.extend(
            ["--bind-address=127.0.0.1", "--user=root", "--skip-log-bin", "--innodb-buffer-pool-size=16M"]
                .map(String::from),
        );
        args.extend(["--skip-name-resolve", "--innodb-flush-log-at-trx-commit=0"].map(String::from));
        match certificates {
            Some(certificates) => args.extend([
                format!("--ssl-cert={}", certificates.server_cert().display()),
                format!("--ssl-key={}", certificates.server_key().display()),
                format!("--ssl-ca={}", certificates.ca().display()),
            ]),
            None => args.push("--skip-ssl".to_owned()),
        }
        let child = Self::spawn(root, port, &args)?;
        Ok(TlsMariaDb { child, data, port, args })
    }

    /// Runs `mariadbd` with `args` until it listens on `port`; its stderr goes on in `log`.
    fn spawn(root: &Path, port: u16, args: &[String]) -> Result<Child, String> {
        let log = std::fs::File::options().create(true).append(true).open(root.join("log"));
        let mut child = Command::new("mariadbd")
            .args(args)
            .stdout(Stdio::null())
            .stderr(Stdio::from(log.map_err(|e| e.to_string())?))
            .spawn()
            .map_err(|e| format!("mariadbd: {e}"))?;
        if let Err(e) = wait_listening(port, Some(&mut child), Duration::from_secs(30)) {
            let _ = child.kill();
            let _ = child.wait();
            let log = std::fs::read_to_string(root.join("log")).unwrap_or_default();
            return Err(format!("{e}\n{log}"));
        }
        Ok(child)
    }

    /// Shuts the server down (`SIGTERM`, waited for) and starts it again on the same data
    /// directory and port.
    pub fn restart(&mut self) -> Result<(), String> {
        run(Command::new("kill").args(["-TERM", &self.child.id().to_string()]))?;
        self.child.wait().map_err(|e| e.to_string())?;
        self.child = Self::spawn(self.data.path(), self.port, &self.args)?;
        Ok(())
    }

    /// `mysql://root:<password>@127.0.0.1:<port>/test`, then `query` (without `?`).
    pub fn url(&self, query: &str) -> String {
        format!("mysql://root:{PASSWORD}@127.0.0.1:{}/test?{query}", self.port)
    }
}

impl Drop for TlsMariaDb {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = &self.data;
    }
}

/// A PostgreSQL primary and a streaming standby of the test's own: `initdb` in a temporary
/// directory, the standby copied by `pg_basebackup -R`, each started by `pg_ctl` on a free
/// loopback port. The superuser `postgres` logs in over TCP without a password (`trust`).
pub struct ReplicatedPostgres {
    dir: tempfile::TempDir,
    bin: PathBuf,
    primary: u16,
    standby: u16,
}

impl ReplicatedPostgres {
    pub fn start() -> Option<Self> {
        match Self::try_start() {
            Ok(servers) => Some(servers),
            Err(e) => skip(&format!("the private PostgreSQL primary and standby could not be started: {e}")),
        }
    }

    fn try_start() -> Result<Self, String> {
        let bin = pg_bin().ok_or("no /usr/lib/postgresql/<version>/bin/initdb")?;
        let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
        if is_root() {
            run(Command::new("chown").args(["postgres:postgres"]).arg(dir.path()))?;
        }
        let servers = ReplicatedPostgres { dir, bin, primary: free_port(), standby: free_port() };
        run(as_postgres(&servers.bin.join("initdb"))
            .args(["-N", "-U", "postgres", "--auth=trust", "-D"])
            .arg(servers.data("primary"))
            .stdout(Stdio::null()))?;
        servers.pg_ctl_start("primary", servers.primary)?;
        run(as_postgres(&servers.bin.join("pg_basebackup"))
            .args(["-h", "127.0.0.1", "-p", &servers.primary.to_string(), "-U", "postgres"])
            .args(["-R", "-X", "stream", "-c", "fast", "-D"])
            .arg(servers.data("standby")))?;
        servers.pg_ctl_start("standby", servers.standby)?;
        Ok(servers)
    }

    fn data(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    fn pg_ctl_start(&self, name: &str, port: u16) -> Result<(), String> {
        let options = format!(
            "-p {port} -c listen_addresses=127.0.0.1 -c unix_socket_directories={} -c fsync=off",
            self.dir.path().display()
        );
        run(as_postgres(&self.bin.join("pg_ctl"))
            .args(["-w", "-t", "30", "-D"])
            .arg(self.data(name))
            .arg("-l")
            .arg(self.dir.path().join(format!("{name}.log")))
            .args(["-o", &options, "start"])
            .stdout(Stdio::null()))
    }

    fn pg_ctl_stop(&self, name: &str, mode: &str) -> Result<(), String> {
        run(as_postgres(&self.bin.join("pg_ctl"))
            .args(["-w", "-m", mode, "-D"])
            .arg(self.data(name))
            .arg("stop")
            .stdout(Stdio::null()))
    }

    /// One statement run by `psql` on the server at `port`: its output, unaligned.
    pub fn psql(&self, port: u16, sql: &str) -> Result<String, String> {
        let output = as_postgres(&self.bin.join("psql"))
            .args(["-h", "127.0.0.1", "-p", &port.to_string(), "-U", "postgres", "-d", "postgres", "-Atq", "-c", sql])
            .stdin(Stdio::null())
            .output()
            .map_err(|e| format!("psql: {e}"))?;
        if output.status.success() {
            Ok(String::from_utf8_lossy(&output.stdout).trim().to_owned())
        } else {
            Err(format!("psql {sql:?}: {}\n{}", output.status, String::from_utf8_lossy(&output.stderr)))
        }
    }

    pub fn primary_port(&self) -> u16 {
        self.primary
    }

    pub fn standby_port(&self) -> u16 {
        self.standby
    }

    /// `postgres://postgres@127.0.0.1:<port>/postgres`.
    pub fn url(port: u16) -> String {
        format!("postgres://postgres@127.0.0.1:{port}/postgres")
    }

    /// Waits until the standby has replayed everything the primary wrote so far.
    pub fn wait_replayed(&self) -> Result<(), String> {
        let written = self.psql(self.primary, "SELECT pg_current_wal_lsn()")?;
        let deadline = Instant::now() + Duration::from_secs(30);
        let caught_up = format!("SELECT pg_last_wal_replay_lsn() >= '{written}'::pg_lsn");
        while self.psql(self.standby, &caught_up)? != "t" {
            if Instant::now() >= deadline {
                return Err(format!("the standby did not replay up to {written} within 30 s"));
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        Ok(())
    }

    /// Stops the primary (`-m fast`: its sessions end, and the standby receives the WAL up to
    /// the shutdown checkpoint).
    pub fn stop_primary(&self) -> Result<(), String> {
        self.pg_ctl_stop("primary", "fast")
    }

    /// Promotes the standby (`pg_promote()`), returning once it accepts writes.
    pub fn promote_standby(&self) -> Result<(), String> {
        match self.psql(self.standby, "SELECT pg_promote(true, 60)")?.as_str() {
            "t" => Ok(()),
            other => Err(format!("pg_promote() answered {other:?}")),
        }
    }
}

impl Drop for ReplicatedPostgres {
    fn drop(&mut self) {
        let _ = self.pg_ctl_stop("standby", "immediate");
        let _ = self.pg_ctl_stop("primary", "immediate");
    }
}
