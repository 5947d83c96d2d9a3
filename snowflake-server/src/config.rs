//! What the service serves and how: its ID types by name and layout, where its worker ID comes
//! from, and the address it listens on, gathered from flags, environment variables and a JSON
//! file.
//!
//! ID types come from every source at once (`--id`, [`IDS_ENV`], the file's `ids`); a name
//! given twice is an error naming both places. For the other settings a flag wins over its
//! environment variable, which wins over the file.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Deserialize;
use snowflake_types::worker::{
    CREATE_NAMESPACE_ENV, LEASE_RESERVATION_ENV, LEASE_TTL_ENV, LEASE_WAIT_ENV, WORKER_ID_ENV, duration_in, flag_in,
    lease::MAX_WORKER_SPACE, lease_url_in, namespace_in, parse_duration, space_in, state_file_in,
};
use snowflake_types::{Labels, Layout, Preset};

pub use crate::tls::TlsFiles;

/// The environment variable listing ID types: `name=layout` entries separated by `;`.
///
/// ```
/// use snowflake_server::config::IDS_ENV;
///
/// assert_eq!(IDS_ENV, "SNOWFLAKE_IDS"); // SNOWFLAKE_IDS="order=preset=leaf;tweet=preset=twitter"
/// Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub const IDS_ENV: &str = "SNOWFLAKE_IDS";

/// The environment variable naming the address to listen on (`--listen`).
///
/// ```
/// assert_eq!(snowflake_server::config::LISTEN_ENV, "SNOWFLAKE_LISTEN");
/// Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub const LISTEN_ENV: &str = "SNOWFLAKE_LISTEN";

/// The environment variable naming the JSON configuration file (`--config`).
///
/// ```
/// assert_eq!(snowflake_server::config::CONFIG_ENV, "SNOWFLAKE_CONFIG");
/// Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub const CONFIG_ENV: &str = "SNOWFLAKE_CONFIG";

/// The environment variables of TLS: the certificate chain, its key, and the CA of client
/// certificates (`--tls-cert`, `--tls-key`, `--tls-client-ca`).
///
/// ```
/// use snowflake_server::config::{TLS_CERT_ENV, TLS_CLIENT_CA_ENV, TLS_KEY_ENV};
///
/// assert_eq!([TLS_CERT_ENV, TLS_KEY_ENV, TLS_CLIENT_CA_ENV], ["SNOWFLAKE_TLS_CERT", "SNOWFLAKE_TLS_KEY", "SNOWFLAKE_TLS_CLIENT_CA"]);
/// ```
pub const TLS_CERT_ENV: &str = "SNOWFLAKE_TLS_CERT";
/// See [`TLS_CERT_ENV`].
pub const TLS_KEY_ENV: &str = "SNOWFLAKE_TLS_KEY";
/// See [`TLS_CERT_ENV`].
pub const TLS_CLIENT_CA_ENV: &str = "SNOWFLAKE_TLS_CLIENT_CA";

/// The environment variable giving the drain (`--drain`): how long the server keeps serving
/// after SIGTERM or Ctrl-C, not ready, before it stops taking connections.
///
/// ```
/// assert_eq!(snowflake_server::config::DRAIN_ENV, "SNOWFLAKE_DRAIN");
/// Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub const DRAIN_ENV: &str = "SNOWFLAKE_DRAIN";

/// The environment variable that binds the port with `SO_REUSEPORT` (`--reuse-port`): `1` or
/// `true`, `0` or `false`.
///
/// ```
/// assert_eq!(snowflake_server::config::REUSE_PORT_ENV, "SNOWFLAKE_REUSE_PORT");
/// Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub const REUSE_PORT_ENV: &str = "SNOWFLAKE_REUSE_PORT";

/// The drain when none is given: long enough for a Kubernetes Service to take the server out
/// of its endpoints after SIGTERM, shorter than the default grace period of 30 s.
///
/// ```
/// assert_eq!(snowflake_server::config::DEFAULT_DRAIN, std::time::Duration::from_secs(5));
/// Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub const DEFAULT_DRAIN: Duration = Duration::from_secs(5);

/// The address listened on when none is given: every interface, port 8080.
///
/// ```
/// assert_eq!(snowflake_server::config::DEFAULT_LISTEN.to_string(), "0.0.0.0:8080");
/// Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub const DEFAULT_LISTEN: SocketAddr = SocketAddr::new(std::net::IpAddr::V4(std::net::Ipv4Addr::UNSPECIFIED), 8080);

/// A configuration that cannot be served, with the reason.
///
/// ```
/// use snowflake_server::config::IdSpec;
///
/// let err = IdSpec::parse("order").err().ok_or("accepted")?;
/// assert!(err.to_string().contains("name=layout"), "{err}");
/// Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConfigError(pub String);

impl std::fmt::Display for ConfigError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for ConfigError {}

fn err<T>(message: impl Into<String>) -> Result<T, ConfigError> {
    Err(ConfigError(message.into()))
}

/// One ID type: its name in URLs, its layout, and what its fields are called.
///
/// ```
/// use snowflake_server::config::IdSpec;
///
/// let order = IdSpec::parse("order=preset=leaf,epoch=2020-01-01")?;
/// assert_eq!(order.name, "order");
/// assert_eq!(order.layout.epoch_ms(), 1_577_836_800_000);
/// assert_eq!(order.preset.map(|p| p.name), Some("leaf"));
/// // A bare preset name is read as `preset=NAME`.
/// assert_eq!(IdSpec::parse("tweet=twitter")?.layout, IdSpec::parse("tweet=preset=twitter")?.layout);
/// // A prefix: the type's IDs are `ord_…` on the v1 routes.
/// assert_eq!(IdSpec::parse("order=prefix=ord,preset=leaf")?.prefix.as_deref(), Some("ord"));
/// Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IdSpec {
    /// The name: 1 to 64 characters of `A-Z a-z 0-9 _ . -`.
    pub name: String,
    /// The layout.
    pub layout: Layout,
    /// The preset the layout was given by or is equal to, if any.
    pub preset: Option<&'static Preset>,
    /// The names of the node and sequence fields (the preset's, else `worker`, `sequence`).
    pub labels: Labels,
    /// The type's prefix (`prefix=ord` among the layout's keys): its IDs are then written and
    /// read as `ord_` and 13 base32 characters on the v1 routes (Leaf's stay numeric).
    pub prefix: Option<String>,
}

impl IdSpec {
    /// Parses `name=layout`, the layout in the text form (`time=42,worker=5,seq=16,epoch=2021-05-05`,
    /// `preset=leaf,epoch=2020-01-01`) or a preset's name.
    pub fn parse(spec: &str) -> Result<IdSpec, ConfigError> {
        let Some((name, text)) = spec.split_once('=') else {
            return err(format!(
                "{spec:?} is not an ID type: write name=layout, e.g. order=time=42,worker=5,seq=16,epoch=2021-05-05 or tweet=preset=twitter"
            ));
        };
        IdSpec::new(name.trim(), text.trim())
    }

    /// An ID type named `name`, of the layout `text` (the text form or a preset's name).
    ///
    /// ```
    /// use snowflake_server::config::IdSpec;
    ///
    /// assert_eq!(IdSpec::new("order", "time=42,worker=5,seq=16,epoch=2021-05-05")?.layout.seq_bits(), 16);
    /// assert!(IdSpec::new("bad name", "twitter").is_err());
    /// Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn new(name: &str, text: &str) -> Result<IdSpec, ConfigError> {
        check_name(name)?;
        // `prefix=ord` is the type's, not the layout's: taken out before the layout is read.
        let (prefix, layout_text) =
            snowflake_types::prefixed::take_prefix(text).map_err(|e| ConfigError(format!("ID type {name:?}: {e}")))?;
        let mut spec = IdSpec::of_layout(name, &layout_text)?;
        spec.prefix = prefix;
        Ok(spec)
    }

    fn of_layout(name: &str, text: &str) -> Result<IdSpec, ConfigError> {
        if !text.contains('=') {
            let Some(preset) = Preset::get(text) else {
                return err(format!(
                    "ID type {name:?}: {text:?} is neither a layout (time=…,worker=…,seq=…,epoch=…) nor a preset; the presets are: {}",
                    Preset::NAMES
                ));
            };
            return Ok(IdSpec {
                name: name.to_owned(),
                layout: preset.layout,
                preset: Some(preset),
                labels: preset.labels,
                prefix: None,
            });
        }
        let layout: Layout = text.parse().map_err(|e| ConfigError(format!("ID type {name:?}: {text:?}: {e}")))?;
        let preset = Preset::named_in(text, &layout);
        let labels = Preset::labels_of(text, &layout);
        Ok(IdSpec { name: name.to_owned(), layout, preset, labels, prefix: None })
    }
}

fn check_name(name: &str) -> Result<(), ConfigError> {
    let fits = |b: u8| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-');
    if name.is_empty() || name.len() > 64 || !name.bytes().all(fits) {
        return err(format!("{name:?} is not an ID type name: 1 to 64 characters of A-Z a-z 0-9 _ . -"));
    }
    Ok(())
}

/// Where the worker ID comes from.
///
/// ```
/// use snowflake_server::config::WorkerConfig;
///
/// let fixed = WorkerConfig::Fixed(3);
/// assert_ne!(fixed, WorkerConfig::HostnameOrdinal);
/// Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum WorkerConfig {
    /// This number (`--worker N`).
    Fixed(u64),
    /// `SNOWFLAKE_WORKER_ID` when it is set, else 0 (the default: one process and no more).
    EnvOrZero,
    /// The StatefulSet ordinal of the host's name (`--worker-from-hostname`).
    HostnameOrdinal,
    /// A lease from a store (`--lease URL`).
    Lease(LeaseConfig),
}

/// A worker-ID lease's settings.
///
/// ```
/// use snowflake_server::config::LeaseConfig;
///
/// let lease = LeaseConfig::new("redis://127.0.0.1:6379");
/// assert_eq!(lease.namespace, "typed-snowflake");
/// Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LeaseConfig {
    /// The store's URL: `redis://…`, `postgres://…`, `mysql://…`, `etcd://…`, `zk://…` (the
    /// forms of `snowflake_types::worker::lease::open_store`).
    pub url: String,
    /// The namespace shared by every server that issues the same types.
    pub namespace: String,
    /// The TTL (the library's default when `None`).
    pub ttl: Option<Duration>,
    /// How long the first acquisition waits for a store that does not answer.
    pub wait: Option<Duration>,
    /// The reservation `W`: how long the server keeps issuing while the store does not answer
    /// (the library's default when `None`).
    pub reservation: Option<Duration>,
    /// The worker IDs to lease from, `0..space` (default: as many as the narrowest type's
    /// worker field holds).
    pub space: Option<u64>,
    /// Declare the namespace new where the store knows nothing of it, so that the first
    /// start issues at once (`WorkerLeaseBuilder::create_namespace`).
    pub create_namespace: bool,
    /// The lease state file, so that a restart while the store does not answer issues at
    /// once (`WorkerLeaseBuilder::state_file`).
    pub state_file: Option<PathBuf>,
}

impl LeaseConfig {
    /// A lease from `url` in the default namespace, with the default TTL and wait.
    pub fn new(url: impl Into<String>) -> LeaseConfig {
        LeaseConfig {
            url: url.into(),
            namespace: snowflake_types::worker::lease::DEFAULT_NAMESPACE.to_owned(),
            ttl: None,
            wait: None,
            reservation: None,
            space: None,
            create_namespace: false,
            state_file: None,
        }
    }
}

/// Everything the service needs to start.
///
/// ```
/// use snowflake_server::config::{Config, IdSpec, WorkerConfig};
///
/// let config = Config::new(vec![IdSpec::parse("order=preset=leaf")?], WorkerConfig::Fixed(1));
/// assert_eq!(config.lease_space(), 1024);
/// assert_eq!(config.drain, snowflake_server::config::DEFAULT_DRAIN);
/// Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Config {
    /// The ID types, in the order given.
    pub ids: Vec<IdSpec>,
    /// Where the worker ID comes from.
    pub worker: WorkerConfig,
    /// The address to listen on.
    pub listen: SocketAddr,
    /// TLS on that address (both HTTP and gRPC), or plain text (`None`, the default).
    pub tls: Option<TlsFiles>,
    /// How long an issuing server keeps serving once asked to stop, with `/readyz` 503
    /// ("draining"), before it stops taking connections (zero: at once).
    pub drain: Duration,
    /// Bind the address with `SO_REUSEPORT`, so that a new server binds it beside one still
    /// draining (a restart that refuses nothing); off by default.
    pub reuse_port: bool,
}

impl Config {
    /// A configuration of these types and worker, listening on [`DEFAULT_LISTEN`] in plain text, with the
    /// [`DEFAULT_DRAIN`].
    pub fn new(ids: Vec<IdSpec>, worker: WorkerConfig) -> Config {
        Config { ids, worker, listen: DEFAULT_LISTEN, tls: None, drain: DEFAULT_DRAIN, reuse_port: false }
    }

    /// The worker IDs a lease is taken from: the configured space, else as many as the
    /// narrowest worker field holds.
    pub fn lease_space(&self) -> u64 {
        if let WorkerConfig::Lease(LeaseConfig { space: Some(space), .. }) = &self.worker {
            return *space;
        }
        self.field_space()
    }

    /// As many worker IDs as the narrowest worker field holds (at most [`MAX_WORKER_SPACE`]).
    fn field_space(&self) -> u64 {
        self.ids.iter().map(|id| id.layout.max_worker().saturating_add(1)).min().unwrap_or(32).min(MAX_WORKER_SPACE)
    }
}

/// The command-line flags of `snowflake serve`, to flatten into a clap parser.
///
/// ```
/// use clap::Parser;
/// use snowflake_server::config::{ServeArgs, WorkerConfig};
///
/// #[derive(Parser)]
/// struct Cli {
///     #[command(flatten)]
///     serve: ServeArgs,
/// }
///
/// let cli = Cli::try_parse_from(["serve", "--id", "order=preset=leaf", "--worker", "3"])?;
/// assert_eq!(cli.serve.resolve_with(&|_| None)?.worker, WorkerConfig::Fixed(3));
/// Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(clap::Args, Clone, Debug, Default)]
pub struct ServeArgs {
    /// An ID type: name=layout, the layout in the text form or a preset, e.g.
    /// order=preset=leaf,epoch=2020-01-01 or tweet=preset=twitter; prefix=ord among the keys
    /// makes its IDs ord_… on the v1 routes. Repeat for more types; also from SNOWFLAKE_IDS
    /// (entries separated by `;`) and the config file.
    #[arg(long = "id", value_name = "NAME=LAYOUT")]
    pub ids: Vec<String>,
    /// A JSON file: {"ids": {"order": "preset=leaf"}, "listen": "0.0.0.0:8080", "worker": 3,
    /// "lease": "redis://…", "namespace": "…", "lease_ttl": "10s", "lease_wait": "30s",
    /// "create_namespace": true, "lease_state_file": "/run/snowflake/lease", "worker_space": 64,
    /// "tls_cert": "server.pem", "tls_key": "server.key", "tls_client_ca": "clients-ca.pem",
    /// "drain": "5s", "reuse_port": true}
    /// [env: SNOWFLAKE_CONFIG]
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// The address to listen on [default: 0.0.0.0:8080] [env: SNOWFLAKE_LISTEN].
    #[arg(long, value_name = "ADDR")]
    pub listen: Option<String>,
    /// A fixed worker ID (default: SNOWFLAKE_WORKER_ID, else 0).
    #[arg(long, value_name = "N", conflicts_with_all = ["lease", "worker_from_hostname"])]
    pub worker: Option<u64>,
    /// The worker ID is the StatefulSet ordinal of the host's name (orders-7 → 7).
    #[arg(long, conflicts_with = "lease")]
    pub worker_from_hostname: bool,
    /// Lease the worker ID from a store: redis://, rediss://, redis+sentinel://, postgres://,
    /// mysql://, mariadb://, etcd://, etcds://, zk:// (zks:// with the zookeeper-tls feature)
    /// [env: SNOWFLAKE_WORKER_LEASE].
    #[arg(long, value_name = "URL")]
    pub lease: Option<String>,
    /// The lease namespace, shared by every server of the same types [env: SNOWFLAKE_NAMESPACE]
    /// [default: typed-snowflake].
    #[arg(long)]
    pub namespace: Option<String>,
    /// The lease TTL, e.g. 10s or 1500ms [env: SNOWFLAKE_LEASE_TTL] [default: 10s].
    #[arg(long, value_name = "DURATION")]
    pub lease_ttl: Option<String>,
    /// How long the first acquisition waits for a store that does not answer; the server
    /// answers meanwhile (not ready), and exits with the store's error past it
    /// [env: SNOWFLAKE_LEASE_WAIT] [default: 30s].
    #[arg(long, value_name = "DURATION")]
    pub lease_wait: Option<String>,
    /// How long the server keeps issuing while the store does not answer: the time it reserves
    /// ahead in the store at each renewal, at least the TTL; a start the store cannot vouch
    /// for waits about this long [env: SNOWFLAKE_LEASE_RESERVATION] [default: 60s, or the TTL
    /// where that is longer].
    #[arg(long, value_name = "DURATION")]
    pub lease_reservation: Option<String>,
    /// Declare the lease namespace new, so that its first start issues at once: written only
    /// where the store holds nothing of the namespace, refused otherwise. Never after the
    /// store lost its data while servers of the namespace still run (they would issue beside
    /// the new ones) [env: SNOWFLAKE_CREATE_NAMESPACE].
    #[arg(long)]
    pub create_namespace: bool,
    /// Keep the lease's state in this file (on a disk that outlives the process, e.g. a
    /// Kubernetes emptyDir), so that a restart while the store does not answer issues at once
    /// [env: SNOWFLAKE_LEASE_STATE_FILE].
    #[arg(long, value_name = "PATH")]
    pub lease_state_file: Option<PathBuf>,
    /// Lease from worker IDs 0..N [env: SNOWFLAKE_WORKER_SPACE] [default: the narrowest type's
    /// whole worker field].
    #[arg(long, value_name = "N")]
    pub worker_space: Option<String>,
    /// Serve HTTPS and gRPC over TLS with this certificate chain (PEM), read again when it
    /// changes; plain text without it [env: SNOWFLAKE_TLS_CERT].
    #[arg(long, value_name = "FILE")]
    pub tls_cert: Option<PathBuf>,
    /// The private key of --tls-cert (PEM) [env: SNOWFLAKE_TLS_KEY].
    #[arg(long, value_name = "FILE")]
    pub tls_key: Option<PathBuf>,
    /// Require a client certificate signed by this CA (PEM) on every connection: mutual TLS
    /// [env: SNOWFLAKE_TLS_CLIENT_CA].
    #[arg(long, value_name = "FILE")]
    pub tls_client_ca: Option<PathBuf>,
    /// How long the server keeps serving after SIGTERM or Ctrl-C, with /readyz 503
    /// ("draining"), before it stops taking connections, finishes those in flight and
    /// releases its lease; 0 stops at once [env: SNOWFLAKE_DRAIN] [default: 5s].
    #[arg(long, value_name = "DURATION")]
    pub drain: Option<String>,
    /// Bind the address with SO_REUSEPORT: a new server started on the address of one that
    /// still runs binds beside it and shares its connections, so that a restart (start the
    /// new one, then SIGTERM the old one) refuses nothing [env: SNOWFLAKE_REUSE_PORT].
    #[arg(long)]
    pub reuse_port: bool,
}

/// The JSON configuration file.
#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct FileConfig {
    #[serde(default)]
    ids: std::collections::BTreeMap<String, String>,
    listen: Option<String>,
    worker: Option<FileWorker>,
    lease: Option<String>,
    namespace: Option<String>,
    lease_ttl: Option<String>,
    lease_wait: Option<String>,
    lease_reservation: Option<String>,
    create_namespace: Option<bool>,
    lease_state_file: Option<PathBuf>,
    worker_space: Option<u64>,
    tls_cert: Option<PathBuf>,
    tls_key: Option<PathBuf>,
    tls_client_ca: Option<PathBuf>,
    drain: Option<String>,
    reuse_port: Option<bool>,
}

#[derive(Deserialize)]
#[serde(untagged)]
enum FileWorker {
    Fixed(u64),
    Named(String),
}

impl ServeArgs {
    /// The configuration these flags, the process's environment and the config file give.
    pub fn resolve(&self) -> Result<Config, ConfigError> {
        self.resolve_with(&|var| std::env::var(var).ok())
    }

    /// The configuration these flags, the environment `env` and the config file give.
    ///
    /// ```
    /// use snowflake_server::config::{ServeArgs, WorkerConfig};
    ///
    /// let args = ServeArgs { ids: vec!["order=preset=leaf".into()], ..ServeArgs::default() };
    /// let env = |var: &str| match var {
    ///     "SNOWFLAKE_IDS" => Some("tweet=preset=twitter; post=preset=mastodon".to_owned()),
    ///     "SNOWFLAKE_WORKER_ID" => Some("7".to_owned()),
    ///     _ => None,
    /// };
    /// let config = args.resolve_with(&env)?;
    /// let names: Vec<&str> = config.ids.iter().map(|id| id.name.as_str()).collect();
    /// assert_eq!(names, ["order", "tweet", "post"]);
    /// assert_eq!(config.worker, WorkerConfig::EnvOrZero);
    /// Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn resolve_with(&self, env: &dyn Fn(&str) -> Option<String>) -> Result<Config, ConfigError> {
        let config_path =
            self.config.clone().or_else(|| env(CONFIG_ENV).filter(|v| !v.trim().is_empty()).map(PathBuf::from));
        let file = match &config_path {
            Some(path) => read_file(path)?,
            None => FileConfig::default(),
        };
        let mut ids: Vec<(IdSpec, String)> = Vec::new();
        let mut add = |spec: IdSpec, place: String| -> Result<(), ConfigError> {
            if let Some((_, first)) = ids.iter().find(|(known, _)| known.name == spec.name) {
                return err(format!("ID type {:?} is given twice: in {first} and in {place}", spec.name));
            }
            if let Some((known, first)) =
                ids.iter().find(|(known, _)| spec.prefix.is_some() && known.prefix == spec.prefix)
            {
                return err(format!(
                    "ID types {:?} ({first}) and {:?} ({place}) have the same prefix {:?}: a prefix names one type",
                    known.name,
                    spec.name,
                    spec.prefix.as_deref().unwrap_or_default()
                ));
            }
            ids.push((spec, place));
            Ok(())
        };
        for text in &self.ids {
            add(IdSpec::parse(text)?, "--id".to_owned())?;
        }
        if let Some(value) = env(IDS_ENV) {
            for entry in value.split(';').map(str::trim).filter(|e| !e.is_empty()) {
                let spec = IdSpec::parse(entry).map_err(|e| ConfigError(format!("{IDS_ENV}: {e}")))?;
                add(spec, IDS_ENV.to_owned())?;
            }
        }
        if let Some(path) = &config_path {
            for (name, text) in &file.ids {
                let spec = IdSpec::new(name, text).map_err(|e| ConfigError(format!("{}: {e}", path.display())))?;
                add(spec, path.display().to_string())?;
            }
        }
        if ids.is_empty() {
            return err(format!(
                "no ID type to serve: give --id NAME=LAYOUT (e.g. --id order=preset=leaf,epoch=2020-01-01), {IDS_ENV}, or \"ids\" in a --config file"
            ));
        }
        let ids: Vec<IdSpec> = ids.into_iter().map(|(spec, _)| spec).collect();

        let listen_text = self.listen.clone().or_else(|| env(LISTEN_ENV)).or(file.listen.clone());
        let listen = match listen_text {
            None => DEFAULT_LISTEN,
            Some(text) => text.trim().parse().map_err(|_| {
                ConfigError(format!("--listen {text:?}: expected an address and port, e.g. 0.0.0.0:8080"))
            })?,
        };

        // The `SNOWFLAKE_*` lease variables, read by the library's rules (set but blank is an
        // error: read as unset, it would give every replica the same worker ID).
        let vars = |var: &str| Ok(env(var));
        let env_rule = |e: snowflake_types::WorkerError| ConfigError(e.to_string());
        // The lease URL: the flag, else the environment, else the file.
        let lease_url = match &self.lease {
            Some(url) => Some(url.clone()),
            None => lease_url_in(&vars).map_err(env_rule)?.or(file.lease.clone()),
        };
        // A flag wins over its variable, which wins over the file: the file's "worker" counts
        // only while SNOWFLAKE_WORKER_ID is unset.
        let file_worker = if env(WORKER_ID_ENV).is_some() { None } else { file.worker.as_ref() };
        let fixed = self.worker.or(match file_worker {
            Some(FileWorker::Fixed(n)) => Some(*n),
            _ => None,
        });
        let hostname = self.worker_from_hostname
            || match file_worker {
                Some(FileWorker::Named(name)) if name == "hostname" => true,
                Some(FileWorker::Named(other)) => {
                    return err(format!(
                        "\"worker\": {other:?}: expected a number or \"hostname\" (the StatefulSet ordinal)"
                    ));
                }
                _ => false,
            };
        let worker = match lease_url {
            Some(url) => {
                let url = url.trim().to_owned();
                crate::stores::check_compiled(&url).map_err(ConfigError)?;
                if fixed.is_some() || hostname {
                    return err("a lease and a fixed worker ID are both given: keep one");
                }
                if env(WORKER_ID_ENV).is_some() {
                    return err(format!(
                        "{WORKER_ID_ENV} and a lease are both given: unset {WORKER_ID_ENV} to lease a worker ID, or drop the lease"
                    ));
                }
                let mut lease = LeaseConfig::new(url);
                let env_namespace = match &self.namespace {
                    Some(_) => None,
                    None => namespace_in(&vars).map_err(env_rule)?,
                };
                if let Some(ns) = self.namespace.clone().or(env_namespace).or(file.namespace.clone()) {
                    if ns.trim().is_empty() {
                        return err("the lease namespace is empty: give one, or leave it unset for the default");
                    }
                    lease.namespace = ns.trim().to_owned();
                }
                let duration = |flag: &Option<String>, var: &str, file: &Option<String>, what: &str| {
                    let parse = |text: &String| {
                        parse_duration(text).map_err(|reason| ConfigError(format!("{what} {text:?}: {reason}")))
                    };
                    match flag {
                        Some(text) => parse(text).map(Some),
                        None => match duration_in(&vars, var).map_err(env_rule)? {
                            Some(duration) => Ok(Some(duration)),
                            None => file.as_ref().map(parse).transpose(),
                        },
                    }
                };
                lease.ttl = duration(&self.lease_ttl, LEASE_TTL_ENV, &file.lease_ttl, "--lease-ttl")?;
                lease.wait = duration(&self.lease_wait, LEASE_WAIT_ENV, &file.lease_wait, "--lease-wait")?;
                lease.reservation = duration(
                    &self.lease_reservation,
                    LEASE_RESERVATION_ENV,
                    &file.lease_reservation,
                    "--lease-reservation",
                )?;
                lease.create_namespace = self.create_namespace
                    || flag_in(&vars, CREATE_NAMESPACE_ENV).map_err(env_rule)?
                    || file.create_namespace.unwrap_or(false);
                lease.state_file = match &self.lease_state_file {
                    Some(path) => Some(path.clone()),
                    None => state_file_in(&vars).map_err(env_rule)?.or(file.lease_state_file.clone()),
                };
                // The narrowest type's worker field bounds the space the environment may give.
                let narrowest =
                    ids.iter().min_by_key(|id| id.layout.max_worker()).map(|id| (id.name.as_str(), &id.layout));
                let env_space = match &self.worker_space {
                    Some(_) => None,
                    None => space_in(&vars, narrowest).map_err(env_rule)?,
                };
                if let Some(space) = env_space {
                    lease.space = Some(space.min(MAX_WORKER_SPACE));
                }
                let space_text = self.worker_space.clone().or(file.worker_space.map(|n| n.to_string()));
                if let (None, Some(text)) = (env_space, space_text) {
                    let whole = Config::new(Vec::clone(&ids), WorkerConfig::EnvOrZero).field_space();
                    match text.trim().parse::<u64>() {
                        Ok(space)
                            if (1..=whole).contains(&space) && text.trim().bytes().all(|b| b.is_ascii_digit()) =>
                        {
                            lease.space = Some(space);
                        }
                        _ => {
                            return err(format!(
                                "--worker-space {text:?}: expected a number of worker IDs from 1 to {whole}, as many as the narrowest worker field of the types holds"
                            ));
                        }
                    }
                }
                WorkerConfig::Lease(lease)
            }
            None if fixed.is_some() && hostname => return err("--worker and --worker-from-hostname: keep one"),
            None => match fixed {
                Some(n) => WorkerConfig::Fixed(n),
                None if hostname => WorkerConfig::HostnameOrdinal,
                None => WorkerConfig::EnvOrZero,
            },
        };
        // The drain: the flag, else the variable, else the file.
        let drain_text = [(&self.drain, "--drain"), (&env(DRAIN_ENV), DRAIN_ENV), (&file.drain, "\"drain\"")]
            .into_iter()
            .find_map(|(text, place)| text.as_ref().map(|text| (text.clone(), place)));
        let drain = match drain_text {
            None => DEFAULT_DRAIN,
            Some((text, place)) => {
                parse_duration(&text).map_err(|reason| ConfigError(format!("{place} {text:?}: {reason}")))?
            }
        };
        let tls = self.tls(env, &file)?;
        let reuse_port =
            self.reuse_port || flag_in(&vars, REUSE_PORT_ENV).map_err(env_rule)? || file.reuse_port.unwrap_or(false);
        Ok(Config { ids, worker, listen, tls, drain, reuse_port })
    }

    /// TLS from the flags, else the environment, else the file: a certificate and its key
    /// together, a client CA only with them.
    fn tls(&self, env: &dyn Fn(&str) -> Option<String>, file: &FileConfig) -> Result<Option<TlsFiles>, ConfigError> {
        let path = |flag: &Option<PathBuf>, var: &str, file: &Option<PathBuf>| {
            flag.clone().or_else(|| env(var).filter(|v| !v.trim().is_empty()).map(PathBuf::from)).or(file.clone())
        };
        let cert = path(&self.tls_cert, TLS_CERT_ENV, &file.tls_cert);
        let key = path(&self.tls_key, TLS_KEY_ENV, &file.tls_key);
        let client_ca = path(&self.tls_client_ca, TLS_CLIENT_CA_ENV, &file.tls_client_ca);
        match (cert, key) {
            (Some(cert), Some(key)) => Ok(Some(TlsFiles { cert, key, client_ca })),
            (None, None) if client_ca.is_none() => Ok(None),
            (None, None) => {
                err("--tls-client-ca needs --tls-cert and --tls-key: client certificates are asked for over TLS")
            }
            (Some(_), None) => err("--tls-cert without --tls-key: give the certificate's private key too"),
            (None, Some(_)) => err("--tls-key without --tls-cert: give the certificate chain too"),
        }
    }
}

fn read_file(path: &Path) -> Result<FileConfig, ConfigError> {
    let text = std::fs::read_to_string(path).map_err(|e| ConfigError(format!("{}: {e}", path.display())))?;
    serde_json::from_str(&text).map_err(|e| ConfigError(format!("{}: {e}", path.display())))
}

#[cfg(test)]
mod tests {
    use super::*;
    use snowflake_types::worker::WORKER_LEASE_ENV;

    fn no_env(_: &str) -> Option<String> {
        None
    }

    #[test]
    fn ids_from_every_source_and_duplicates_named() {
        let dir = std::env::temp_dir().join(format!("snowflake-server-config-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("serve.json");
        std::fs::write(&file, r#"{"ids": {"user": "time=41,worker=10,seq=12,epoch=2020-01-01"}, "worker": 5}"#)
            .unwrap();
        let args =
            ServeArgs { ids: vec!["order=preset=leaf".into()], config: Some(file.clone()), ..Default::default() };
        let env = |var: &str| (var == IDS_ENV).then(|| "tweet=twitter".to_owned());
        let config = args.resolve_with(&env).unwrap();
        let names: Vec<&str> = config.ids.iter().map(|i| i.name.as_str()).collect();
        assert_eq!(names, ["order", "tweet", "user"]);
        assert_eq!(config.worker, WorkerConfig::Fixed(5));

        // SNOWFLAKE_WORKER_ID wins over the file's "worker", as a variable wins over the file.
        let worker_env = |var: &str| match var {
            IDS_ENV => Some("tweet=twitter".to_owned()),
            WORKER_ID_ENV => Some("9".to_owned()),
            _ => None,
        };
        assert_eq!(args.resolve_with(&worker_env).unwrap().worker, WorkerConfig::EnvOrZero);
        let flagged = ServeArgs { worker: Some(4), ..args.clone() };
        assert_eq!(flagged.resolve_with(&worker_env).unwrap().worker, WorkerConfig::Fixed(4));

        let twice = |var: &str| (var == IDS_ENV).then(|| "order=twitter".to_owned());
        let e = args.resolve_with(&twice).unwrap_err();
        assert!(e.0.contains("\"order\" is given twice: in --id and in SNOWFLAKE_IDS"), "{e}");
        std::fs::write(&file, r#"{"ids": {}, "wrokers": 5}"#).unwrap();
        let e = args.resolve_with(&no_env).unwrap_err();
        assert!(e.0.contains("unknown field `wrokers`"), "{e}");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn bad_specs_say_why() {
        for (spec, says) in [
            ("order", "name=layout"),
            ("=preset=leaf", "not an ID type name"),
            ("a/b=preset=leaf", "not an ID type name"),
            ("order=snowflake", "neither a layout"),
            ("order=time=42,worker=5", "missing `seq`, `epoch`"),
            ("order=time=42,worker=5,seq=16,epoch=1960-01-01", "ID type \"order\""),
        ] {
            let e = IdSpec::parse(spec).unwrap_err();
            assert!(e.0.contains(says), "{spec}: {e}");
        }
        let e = ServeArgs::default().resolve_with(&no_env).unwrap_err();
        assert!(e.0.starts_with("no ID type to serve"), "{e}");
    }

    #[test]
    fn worker_sources() {
        let base = ServeArgs { ids: vec!["order=preset=leaf".into()], ..Default::default() };
        let lease = ServeArgs { lease: Some("redis://127.0.0.1:6379".into()), ..base.clone() };
        let env = |var: &str| match var {
            "SNOWFLAKE_NAMESPACE" => Some("shop".to_owned()),
            "SNOWFLAKE_LEASE_TTL" => Some("3s".to_owned()),
            _ => None,
        };
        let WorkerConfig::Lease(l) = lease.resolve_with(&env).unwrap().worker else { panic!() };
        assert_eq!((l.namespace.as_str(), l.ttl, l.wait), ("shop", Some(Duration::from_secs(3)), None));
        // The flag wins over the environment.
        let flagged = ServeArgs { namespace: Some("orders".into()), ..lease.clone() };
        let WorkerConfig::Lease(l) = flagged.resolve_with(&env).unwrap().worker else { panic!() };
        assert_eq!(l.namespace, "orders");

        let blank = |var: &str| (var == WORKER_LEASE_ENV).then(|| " ".to_owned());
        let e = base.resolve_with(&blank).unwrap_err();
        assert!(
            e.0.contains("SNOWFLAKE_WORKER_LEASE=\" \" cannot be used: it is set but blank"),
            "the library's rule: {e}"
        );
        let both = |var: &str| (var == WORKER_ID_ENV).then(|| "3".to_owned());
        assert!(lease.resolve_with(&both).unwrap_err().0.contains("SNOWFLAKE_WORKER_ID and a lease"));
        // SNOWFLAKE_WORKER_SPACE by the library's rule: no wider than the narrowest type's field.
        let wide = |var: &str| (var == "SNOWFLAKE_WORKER_SPACE").then(|| "2048".to_owned());
        let e = lease.resolve_with(&wide).unwrap_err();
        assert!(e.0.contains("wider than the worker field of order"), "{e}");
        let narrow = |var: &str| (var == "SNOWFLAKE_WORKER_SPACE").then(|| "16".to_owned());
        assert_eq!(lease.resolve_with(&narrow).unwrap().lease_space(), 16);
        let spaced = ServeArgs { worker_space: Some("64".into()), ..lease.clone() };
        let config = spaced.resolve_with(&no_env).unwrap();
        assert_eq!(config.lease_space(), 64);
        assert_eq!(lease.resolve_with(&no_env).unwrap().lease_space(), 1024, "Leaf's whole 10-bit field");
        for bad in ["0", "1025", "-1", "many"] {
            let args = ServeArgs { worker_space: Some(bad.into()), ..lease.clone() };
            assert!(args.resolve_with(&no_env).unwrap_err().0.contains("from 1 to 1024"), "{bad}");
        }
        let bad_ttl = ServeArgs { lease_ttl: Some("ten".into()), ..lease };
        assert!(bad_ttl.resolve_with(&no_env).unwrap_err().0.contains("--lease-ttl \"ten\""));
        assert_eq!(base.resolve_with(&no_env).unwrap().worker, WorkerConfig::EnvOrZero);
        let host = ServeArgs { worker_from_hostname: true, ..base.clone() };
        assert_eq!(host.resolve_with(&no_env).unwrap().worker, WorkerConfig::HostnameOrdinal);
        let listen = ServeArgs { listen: Some("localhost".into()), ..base };
        assert!(listen.resolve_with(&no_env).unwrap_err().0.contains("--listen"));
    }

    /// The drain: the flag, else the variable, else the file, else 5 s; 0 is "at once".
    #[test]
    fn drain() {
        let base = ServeArgs { ids: vec!["order=preset=leaf".into()], ..Default::default() };
        assert_eq!(base.resolve_with(&no_env).unwrap().drain, DEFAULT_DRAIN);
        let env = |var: &str| (var == DRAIN_ENV).then(|| "0".to_owned());
        assert_eq!(base.resolve_with(&env).unwrap().drain, Duration::ZERO);
        let flagged = ServeArgs { drain: Some("1500ms".into()), ..base.clone() };
        assert_eq!(flagged.resolve_with(&env).unwrap().drain, Duration::from_millis(1500));
        let bad = |var: &str| (var == DRAIN_ENV).then(|| "soon".to_owned());
        let e = base.resolve_with(&bad).unwrap_err();
        assert!(e.0.starts_with("SNOWFLAKE_DRAIN \"soon\": expected a duration"), "{e}");
    }

    /// `SO_REUSEPORT`: the flag, or the variable (by the library's yes-or-no rule), or the file.
    #[test]
    fn reuse_port() {
        let base = ServeArgs { ids: vec!["order=preset=leaf".into()], ..Default::default() };
        assert!(!base.resolve_with(&no_env).unwrap().reuse_port, "off by default");
        let flagged = ServeArgs { reuse_port: true, ..base.clone() };
        assert!(flagged.resolve_with(&no_env).unwrap().reuse_port);
        let env = |var: &str| (var == REUSE_PORT_ENV).then(|| "true".to_owned());
        assert!(base.resolve_with(&env).unwrap().reuse_port);
        let bad = |var: &str| (var == REUSE_PORT_ENV).then(|| "yes please".to_owned());
        let e = base.resolve_with(&bad).unwrap_err();
        assert!(e.0.contains("SNOWFLAKE_REUSE_PORT") && e.0.contains("expected 1 or true"), "{e}");
    }

    /// A lease URL of a store this build left out is refused at start with what to install.
    #[test]
    fn a_store_left_out_of_the_build_names_the_install_command() {
        let base = ServeArgs { ids: vec!["order=preset=leaf".into()], ..Default::default() };
        let zks = ServeArgs { lease: Some("zks://zk:2281/".into()), ..base.clone() };
        let resolved = zks.resolve_with(&no_env);
        assert_eq!(resolved.is_ok(), cfg!(feature = "lease-zookeeper-tls"), "{resolved:?}");
        if let Err(e) = resolved {
            assert!(
                e.0.contains("install `cargo install --locked snowflake-cli --features full,zookeeper-tls`"),
                "{e}"
            );
        }
        // From the environment too, before anything else is read.
        let env = |var: &str| (var == "SNOWFLAKE_WORKER_LEASE").then(|| "zk+tls://zk:2281/".to_owned());
        if !cfg!(feature = "lease-zookeeper-tls") {
            assert!(base.resolve_with(&env).unwrap_err().0.contains("this build has no zk+tls:// lease store"));
        }
    }

    #[test]
    fn prefixes_are_checked_and_name_one_type() {
        let order = IdSpec::parse("order=prefix=ord,preset=leaf,epoch=2020-01-01").unwrap();
        assert_eq!((order.prefix.as_deref(), order.layout.epoch_ms()), (Some("ord"), 1_577_836_800_000));
        assert_eq!(IdSpec::parse("tweet=twitter,prefix=tw").unwrap().prefix.as_deref(), Some("tw"));
        assert_eq!(IdSpec::parse("tweet=twitter").unwrap().prefix, None);
        let e = IdSpec::parse("order=prefix=Ord,preset=leaf").unwrap_err();
        assert!(e.0.contains("ID type \"order\": prefix=\"Ord\": a prefix is lowercase"), "{e}");
        assert!(IdSpec::parse("order=prefix=ord,prefix=o,preset=leaf").unwrap_err().0.contains("twice"));
        let args = ServeArgs {
            ids: vec!["order=prefix=ord,preset=leaf".into(), "user=preset=twitter,prefix=ord".into()],
            ..Default::default()
        };
        let e = args.resolve_with(&no_env).unwrap_err();
        assert!(e.0.contains("have the same prefix \"ord\""), "{e}");
    }

    #[test]
    fn tls_from_flags_environment_and_file_with_its_pairs_checked() {
        let base = ServeArgs { ids: vec!["order=preset=leaf".into()], ..Default::default() };
        assert_eq!(base.resolve_with(&no_env).unwrap().tls, None, "plain text by default");
        let flags = ServeArgs { tls_cert: Some("s.pem".into()), tls_key: Some("s.key".into()), ..base.clone() };
        let env = |var: &str| (var == TLS_CLIENT_CA_ENV).then(|| "ca.pem".to_owned());
        let tls = flags.resolve_with(&env).unwrap().tls.unwrap();
        assert_eq!((tls.cert, tls.key, tls.client_ca), ("s.pem".into(), "s.key".into(), Some("ca.pem".into())));
        let half = ServeArgs { tls_cert: Some("s.pem".into()), ..base.clone() };
        assert!(half.resolve_with(&no_env).unwrap_err().0.contains("--tls-cert without --tls-key"));
        let e = base.resolve_with(&env).unwrap_err();
        assert!(e.0.contains("--tls-client-ca needs --tls-cert and --tls-key"), "{e}");
    }

    #[test]
    fn durations() {
        assert_eq!(parse_duration("1500ms"), Ok(Duration::from_millis(1500)));
        assert_eq!(parse_duration("2m"), Ok(Duration::from_secs(120)));
        assert_eq!(parse_duration("7"), Ok(Duration::from_secs(7)));
        for bad in ["", "-1s", "1.5s", "1h", "86401s"] {
            assert!(parse_duration(bad).is_err(), "{bad:?}");
        }
    }
}
