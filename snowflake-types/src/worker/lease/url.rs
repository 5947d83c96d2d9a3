//! A lease store's URL, parsed once into a [`StoreUrl`] that every store adapter receives.

use std::error::Error;
use std::fmt;
use std::str::FromStr;
use std::sync::Arc;

use super::store::support::percent_decode;
use super::store::{CA_ENV, LeaseError, redact_url as redact};

/// The store a [`StoreUrl`] names.
///
/// ```
/// use typed_snowflake::worker::lease::{StoreKind, StoreUrl};
///
/// let url: StoreUrl = "etcds://10.0.0.1,10.0.0.2/apps".parse()?;
/// assert_eq!((url.kind(), url.kind().feature()), (StoreKind::Etcd, "lease-etcd"));
/// Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum StoreKind {
    /// One Redis or Valkey server: `redis://`, `rediss://`, `valkey://`, `valkeys://`.
    Redis,
    /// The master that Redis Sentinel names: `redis+sentinel://`, `rediss+sentinel://`.
    RedisSentinel,
    /// PostgreSQL: `postgres://`, `postgresql://`.
    Postgres,
    /// MySQL or MariaDB: `mysql://`, `mariadb://`.
    MySql,
    /// etcd v3: `etcd://`, `etcd+http://`, `etcds://`, `etcd+https://`.
    Etcd,
    /// ZooKeeper: `zk://`, `zks://`, `zk+tls://`.
    ZooKeeper,
}

impl StoreKind {
    /// The cargo feature that compiles this store in (`zks://` needs `lease-zookeeper-tls` too).
    pub fn feature(self) -> &'static str {
        match self {
            StoreKind::Redis | StoreKind::RedisSentinel => "lease-redis",
            StoreKind::Postgres => "lease-postgres",
            StoreKind::MySql => "lease-mysql",
            StoreKind::Etcd => "lease-etcd",
            StoreKind::ZooKeeper => "lease-zookeeper",
        }
    }

    /// The port of a server the URL names without one.
    fn default_port(self, tls: bool) -> u16 {
        match self {
            StoreKind::Redis => 6379,
            StoreKind::RedisSentinel => 26379,
            StoreKind::Postgres => 5432,
            StoreKind::MySql => 3306,
            StoreKind::Etcd => 2379,
            StoreKind::ZooKeeper if tls => 2281,
            StoreKind::ZooKeeper => 2181,
        }
    }

    /// The query parameter that names a CA file, for the stores that read it themselves.
    fn ca_param(self) -> Option<&'static str> {
        match self {
            StoreKind::Redis | StoreKind::RedisSentinel => Some(REDIS_CA_PARAM),
            StoreKind::Etcd | StoreKind::ZooKeeper => Some(CLUSTER_CA_PARAM),
            StoreKind::Postgres | StoreKind::MySql => None,
        }
    }
}

/// The schemes, the store each names and whether it asks for TLS.
const SCHEMES: &[(&str, StoreKind, bool)] = &[
    ("redis", StoreKind::Redis, false),
    ("rediss", StoreKind::Redis, true),
    ("valkey", StoreKind::Redis, false),
    ("valkeys", StoreKind::Redis, true),
    ("redis+sentinel", StoreKind::RedisSentinel, false),
    ("rediss+sentinel", StoreKind::RedisSentinel, true),
    ("postgres", StoreKind::Postgres, false),
    ("postgresql", StoreKind::Postgres, false),
    ("mysql", StoreKind::MySql, false),
    ("mariadb", StoreKind::MySql, false),
    ("etcd", StoreKind::Etcd, false),
    ("etcd+http", StoreKind::Etcd, false),
    ("etcds", StoreKind::Etcd, true),
    ("etcd+https", StoreKind::Etcd, true),
    ("zk", StoreKind::ZooKeeper, false),
    ("zks", StoreKind::ZooKeeper, true),
    ("zk+tls", StoreKind::ZooKeeper, true),
];

/// Redis's CA parameter, as redis-rs's own URLs name it.
pub(crate) const REDIS_CA_PARAM: &str = "ssl_ca_certs";
/// Redis's count of replicas that must acknowledge a write.
pub(crate) const MIN_REPLICAS_PARAM: &str = "min_replicas";
/// etcd's and ZooKeeper's CA parameter.
pub(crate) const CLUSTER_CA_PARAM: &str = "ca";
/// Why a ZooKeeper URL takes no user name or password.
const ZK_NO_AUTH: &str =
    "authentication is not supported: a user name or password cannot be used; name the servers alone";
/// Whether a query parameter holds a secret (`password`, in any case): never shown.
fn is_secret(key: &str) -> bool {
    key.eq_ignore_ascii_case("password")
}

/// A lease store's URL, parsed and checked once (a bad one is a [`LeaseError::BadUrl`]); the
/// password never shows in `Display`, `Debug` or an error. `docs/stores.md` lists the forms.
///
/// ```
/// use typed_snowflake::worker::lease::{LeaseError, StoreKind, StoreUrl};
///
/// let url = StoreUrl::parse("rediss://app:s3cret@cache.internal/2?ssl_ca_certs=%2Fetc%2Fca.pem")?;
/// assert_eq!(url.kind(), StoreKind::Redis);
/// assert!(url.is_tls());
/// assert_eq!(url.servers(), ["cache.internal:6379"]);
/// assert_eq!((url.user(), url.has_password()), (Some("app"), true));
/// assert_eq!(url.path(), "/2");
/// assert_eq!(url.param("ssl_ca_certs"), Some("/etc/ca.pem"));
/// assert_eq!(url.to_string(), "rediss://app@cache.internal:6379/2?ssl_ca_certs=/etc/ca.pem");
/// assert!(!format!("{url:?}").contains("s3cret"));
///
/// let Err(LeaseError::BadUrl { url, reason, .. }) = StoreUrl::parse("redis://:s3cret@cache:x") else { panic!() };
/// assert_eq!((url.as_str(), reason.as_str()), ("redis://cache:x", "\"cache:x\": bad port \"x\""));
/// Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, PartialEq, Eq)]
pub struct StoreUrl {
    kind: StoreKind,
    scheme: String,
    tls: bool,
    servers: Vec<String>,
    user: Option<String>,
    password: Option<String>,
    path: String,
    params: Vec<(String, String)>,
}

impl StoreUrl {
    /// Parses and checks `url`; see the type's docs for the forms.
    ///
    /// ```
    /// use typed_snowflake::worker::lease::StoreUrl;
    ///
    /// let url = StoreUrl::parse("zk://zk1,zk2:3181/apps")?;
    /// assert_eq!(url.servers(), ["zk1:2181", "zk2:3181"]);
    /// assert!(StoreUrl::parse("zk://user:pw@zk1").is_err());
    /// Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn parse(url: &str) -> Result<Self, LeaseError> {
        let bad = |reason: String| LeaseError::BadUrl { url: redact(url), reason, source: None };
        let scheme = url.split_once("://").map_or(String::new(), |(scheme, _)| scheme.to_ascii_lowercase());
        let Some(&(_, kind, tls)) = SCHEMES.iter().find(|(name, ..)| *name == scheme) else {
            return Err(bad("expected redis://, rediss://, redis+sentinel://, postgres://, postgresql://, mysql://, \
                 mariadb://, etcd://, etcds://, zk:// or zks://"
                .into()));
        };
        let rest = &url[scheme.len() + 3..];
        // An `@` past the servers is a password's `/`, `?` or `#` left raw: refused before any
        // part of the URL is quoted, so that no part of the password is.
        let authority_end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
        if rest[authority_end..].contains('@') {
            return Err(bad(if kind == StoreKind::ZooKeeper {
                format!("{ZK_NO_AUTH} (in `ca=`, write an `@` as `%40`)")
            } else {
                "an @ after the servers: percent-encode / ? # @ in a password or a parameter (%2F %3F %23 %40)".into()
            }));
        }
        if rest.contains('#') {
            return Err(bad("a fragment (`#…`) is not supported".into()));
        }
        let (rest, query) = rest.split_once('?').unwrap_or((rest, ""));
        let (authority, path) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
        let (userinfo, hosts) =
            authority.rsplit_once('@').map_or((None, authority), |(user, hosts)| (Some(user), hosts));
        let (user, password) = credentials(kind, userinfo).map_err(&bad)?;
        let servers = servers(kind, tls, hosts).map_err(&bad)?;
        let path = path_of(kind, path).map_err(&bad)?;
        let params = params(kind, tls, query).map_err(&bad)?;
        Ok(StoreUrl { kind, scheme, tls, servers, user, password, path, params })
    }

    /// The store the URL names.
    ///
    /// ```
    /// use typed_snowflake::worker::lease::{StoreKind, StoreUrl};
    ///
    /// assert_eq!(StoreUrl::parse("mariadb://root@db/test")?.kind(), StoreKind::MySql);
    /// Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn kind(&self) -> StoreKind {
        self.kind
    }

    /// The scheme as written, in lower case.
    ///
    /// ```
    /// use typed_snowflake::worker::lease::StoreUrl;
    ///
    /// assert_eq!(StoreUrl::parse("ETCD+HTTPS://h")?.scheme(), "etcd+https");
    /// Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn scheme(&self) -> &str {
        &self.scheme
    }

    /// Whether the scheme asks for TLS (`rediss`, `etcds`, `zks`, …); never for SQL, whose
    /// drivers' parameters choose it.
    ///
    /// ```
    /// use typed_snowflake::worker::lease::StoreUrl;
    ///
    /// assert!(StoreUrl::parse("zk+tls://zk1")?.is_tls());
    /// assert!(!StoreUrl::parse("redis://cache")?.is_tls());
    /// Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn is_tls(&self) -> bool {
        self.tls
    }

    /// The servers, each `host:port`, the store's default port added: one for Redis and SQL
    /// (none where a SQL URL leaves the host to its driver's parameters), one or more otherwise.
    ///
    /// ```
    /// use typed_snowflake::worker::lease::StoreUrl;
    ///
    /// assert_eq!(StoreUrl::parse("etcd://[::1],h:2380")?.servers(), ["[::1]:2379", "h:2380"]);
    /// Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn servers(&self) -> &[String] {
        &self.servers
    }

    /// The user name (percent-decoded), when the URL names one.
    ///
    /// ```
    /// use typed_snowflake::worker::lease::StoreUrl;
    ///
    /// assert_eq!(StoreUrl::parse("postgres://app%20one:pw@db/ids")?.user(), Some("app one"));
    /// assert_eq!(StoreUrl::parse("redis://:pw@cache")?.user(), None);
    /// Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn user(&self) -> Option<&str> {
        self.user.as_deref()
    }

    /// Whether the URL carries a password (which only the store's driver sees).
    ///
    /// ```
    /// use typed_snowflake::worker::lease::StoreUrl;
    ///
    /// assert!(StoreUrl::parse("redis://:pw@cache")?.has_password());
    /// Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn has_password(&self) -> bool {
        self.password.is_some()
    }

    /// The password, percent-decoded, for a driver's connection options.
    #[cfg_attr(not(feature = "lease-etcd"), allow(dead_code))]
    pub(crate) fn password(&self) -> Option<&str> {
        self.password.as_deref()
    }

    /// The path after the servers, normalised (Redis's database, Sentinel's master name and
    /// database, the SQL database, etcd's prefix, ZooKeeper's chroot).
    ///
    /// ```
    /// use typed_snowflake::worker::lease::StoreUrl;
    ///
    /// assert_eq!(StoreUrl::parse("redis+sentinel://s1,s2/main")?.path(), "/main/0");
    /// assert_eq!(StoreUrl::parse("etcd://h/apps/shop/")?.path(), "/apps/shop");
    /// Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn path(&self) -> &str {
        &self.path
    }

    /// The value of the query parameter `key` (percent-decoded), if the URL gives it.
    ///
    /// ```
    /// use typed_snowflake::worker::lease::StoreUrl;
    ///
    /// let url = StoreUrl::parse("postgres://db/ids?sslmode=verify-full&sslrootcert=%2Fetc%2Fca.pem")?;
    /// assert_eq!(url.param("sslrootcert"), Some("/etc/ca.pem"));
    /// Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn param(&self, key: &str) -> Option<&str> {
        self.params.iter().find(|(k, _)| k == key).map(|(_, value)| value.as_str())
    }

    /// Whether the query names one of `keys`, in any case (a CA file a SQL driver reads itself).
    #[cfg_attr(not(any(feature = "lease-postgres", feature = "lease-mysql")), allow(dead_code))]
    pub(crate) fn names_param(&self, keys: &[&str]) -> bool {
        self.params.iter().any(|(k, _)| keys.iter().any(|key| k.eq_ignore_ascii_case(key)))
    }

    /// The CA file to trust for TLS: the URL's own (`ssl_ca_certs=` for Redis, `ca=` for etcd
    /// and ZooKeeper; SQL drivers read theirs themselves), else the one [`CA_ENV`] names.
    ///
    /// ```
    /// use typed_snowflake::worker::lease::StoreUrl;
    ///
    /// let url = StoreUrl::parse("etcds://h?ca=%2Fetc%2Fetcd-ca.pem")?;
    /// assert_eq!(url.ca_file().as_deref(), Some("/etc/etcd-ca.pem"));
    /// Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn ca_file(&self) -> Option<String> {
        let from_url = self.kind.ca_param().and_then(|key| self.param(key)).map(str::to_owned);
        from_url.or_else(|| std::env::var(CA_ENV).ok().filter(|path| !path.trim().is_empty()))
    }

    /// The path and text of [`ca_file`](Self::ca_file), read now (unreadable: a bad URL).
    #[cfg_attr(
        not(any(feature = "lease-redis", feature = "lease-etcd", feature = "lease-zookeeper-tls")),
        allow(dead_code)
    )]
    pub(crate) fn read_ca_file(&self) -> Result<Option<(String, Vec<u8>)>, LeaseError> {
        let Some(path) = self.ca_file() else { return Ok(None) };
        match std::fs::read(&path) {
            Ok(pem) => Ok(Some((path, pem))),
            Err(e) => Err(self.bad(format!("the CA file {path:?} could not be read: {e}"), Some(Arc::new(e)))),
        }
    }

    /// A [`LeaseError::BadUrl`] for this URL, shown without its password.
    pub(crate) fn bad(&self, reason: impl Into<String>, source: Option<Arc<dyn Error + Send + Sync>>) -> LeaseError {
        LeaseError::BadUrl { url: self.to_string(), reason: reason.into(), source }
    }

    /// The URL for a driver that takes one, every part percent-encoded again, the parameters
    /// named in `drop` left out. It holds the password: never shown.
    #[cfg_attr(
        not(any(feature = "lease-redis", feature = "lease-postgres", feature = "lease-mysql")),
        allow(dead_code)
    )]
    pub(crate) fn driver_url(&self, scheme: &str, drop: &[&str]) -> String {
        format!(
            "{scheme}://{}{}{}{}",
            self.userinfo(),
            self.servers.join(","),
            self.path,
            self.query(|key| !drop.contains(&key))
        )
    }

    /// `?key=value&…` (percent-encoded, `/ : ,` kept) of the parameters whose key is `kept`; empty for none.
    fn query(&self, kept: impl Fn(&str) -> bool) -> String {
        let kept: Vec<String> = (self.params.iter())
            .filter(|(key, _)| kept(key))
            .map(|(key, value)| format!("{key}={}", encode(value, b"/:,")))
            .collect();
        if kept.is_empty() { String::new() } else { format!("?{}", kept.join("&")) }
    }

    /// `user:password@`, `user@`, `:password@` or nothing, for a driver's URL: never shown.
    pub(crate) fn userinfo(&self) -> String {
        if self.user.is_none() && self.password.is_none() {
            return String::new();
        }
        let user = percent_encode(self.user.as_deref().unwrap_or_default());
        match &self.password {
            Some(password) => format!("{user}:{}@", percent_encode(password)),
            None => format!("{user}@"),
        }
    }

    /// `user@` (percent-encoded), or nothing: the URL's user as it is shown.
    fn shown_user(&self) -> String {
        self.user.as_deref().map(|user| format!("{}@", percent_encode(user))).unwrap_or_default()
    }

    /// `scheme://[user@]servers path` (`/` for no path): how a store describes itself.
    #[cfg_attr(not(any(feature = "lease-etcd", feature = "lease-zookeeper")), allow(dead_code))]
    pub(crate) fn describe_as(&self, scheme: &str) -> String {
        let user = self.shown_user();
        let path = if self.path.is_empty() { "/" } else { &self.path };
        format!("{scheme}://{user}{}{path}", self.servers.join(","))
    }
}

impl FromStr for StoreUrl {
    type Err = LeaseError;

    fn from_str(url: &str) -> Result<Self, LeaseError> {
        StoreUrl::parse(url)
    }
}

/// `scheme://[user@]servers path[?params]`: everything but the password.
impl fmt::Display for StoreUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let user = self.shown_user();
        let (servers, query) = (self.servers.join(","), self.query(|key| !is_secret(key)));
        write!(f, "{}://{user}{servers}{}{query}", self.scheme, self.path)
    }
}

/// Every part but the password, which shows as `"…"` when there is one.
impl fmt::Debug for StoreUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let params: Vec<(&str, &str)> = (self.params.iter())
            .map(|(key, value)| (key.as_str(), if is_secret(key) { "…" } else { value.as_str() }))
            .collect();
        f.debug_struct("StoreUrl")
            .field("kind", &self.kind)
            .field("scheme", &self.scheme)
            .field("tls", &self.tls)
            .field("servers", &self.servers)
            .field("user", &self.user)
            .field("password", &self.password.as_ref().map(|_| "…"))
            .field("path", &self.path)
            .field("params", &params)
            .finish()
    }
}

/// The user name and password of `userinfo` (`user:password`), as `kind` allows them.
fn credentials(kind: StoreKind, userinfo: Option<&str>) -> Result<(Option<String>, Option<String>), String> {
    let Some(userinfo) = userinfo else { return Ok((None, None)) };
    if kind == StoreKind::ZooKeeper {
        return Err(ZK_NO_AUTH.into());
    }
    let (user, password) = userinfo.split_once(':').map_or((userinfo, None), |(user, password)| (user, Some(password)));
    let user = percent_decode(user).map_err(|reason| format!("the user name: {reason}"))?;
    // The password's own words never go into a message.
    let password =
        password.map(percent_decode).transpose().map_err(|_| "the password is not percent-encoded UTF-8".to_owned())?;
    if kind == StoreKind::Etcd {
        if password.is_none() {
            return Err("a user name without a password; write user:password@ before the servers".into());
        }
        if user.is_empty() {
            return Err("a password without a user name".into());
        }
    }
    Ok(((!user.is_empty()).then_some(user), password))
}

/// The servers of `hosts` (`h1[:p1],h2[:p2]`), each `host:port`, as many as `kind` takes.
fn servers(kind: StoreKind, tls: bool, hosts: &str) -> Result<Vec<String>, String> {
    let sql = matches!(kind, StoreKind::Postgres | StoreKind::MySql);
    if sql && hosts.is_empty() {
        // The driver's parameters (`host=`, `socket=`) or its default name the server.
        return Ok(Vec::new());
    }
    let servers = (hosts.split(','))
        .map(|server| host_port(server, kind.default_port(tls)).map_err(|reason| format!("{server:?}: {reason}")))
        .collect::<Result<Vec<_>, _>>()?;
    if servers.len() > 1 && (sql || kind == StoreKind::Redis) {
        let hint =
            if kind == StoreKind::Redis { "; several sentinels are redis+sentinel://s1,s2/<master-name>" } else { "" };
        return Err(format!("one server only, not {}{hint}", servers.len()));
    }
    Ok(servers)
}

/// `host[:port]` with the port checked, or the default added.
fn host_port(server: &str, default_port: u16) -> Result<String, String> {
    let (host, port) = if let Some(bracketed) = server.strip_prefix('[') {
        let (host, after) = bracketed.split_once(']').ok_or("an IPv6 host lacks its closing bracket")?;
        if !after.is_empty() && !after.starts_with(':') {
            return Err("not a host name or address".into());
        }
        (format!("[{host}]"), after.strip_prefix(':'))
    } else {
        server.split_once(':').map_or((server.to_owned(), None), |(host, port)| (host.to_owned(), Some(port)))
    };
    if host.is_empty() || host == "[]" {
        return Err("no host".into());
    }
    if !host.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'-' | b'_' | b'[' | b']' | b':')) {
        return Err("not a host name or address".into());
    }
    let port = match port {
        None => default_port,
        Some(port) => port.parse::<u16>().ok().filter(|&p| p != 0).ok_or_else(|| format!("bad port {port:?}"))?,
    };
    Ok(format!("{host}:{port}"))
}

/// The path (`""` or starting with `/`) checked and normalised for `kind`.
fn path_of(kind: StoreKind, path: &str) -> Result<String, String> {
    let parts = || path.split('/').filter(|part| !part.is_empty());
    match kind {
        StoreKind::Redis => {
            let mut parts = parts();
            let db = parts.next().unwrap_or("0");
            if parts.next().is_some() || !is_db(db) {
                return Err(format!("expected /<db>, a database number, after the server, not {path:?}"));
            }
            Ok(format!("/{}", db.parse::<u32>().expect("checked")))
        }
        StoreKind::RedisSentinel => {
            let mut parts = parts();
            let master = parts.next().ok_or("the master's name is missing: …/<master-name>")?;
            let db = parts.next().unwrap_or("0");
            if parts.next().is_some() || !is_db(db) {
                return Err("expected …/<master-name>[/<db>] after the sentinels".into());
            }
            if !master.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-')) {
                return Err("the master's name must be made of A-Z a-z 0-9 _ . -".into());
            }
            Ok(format!("/{master}/{}", db.parse::<u32>().expect("checked")))
        }
        StoreKind::Postgres | StoreKind::MySql => {
            percent_decode(path).map_err(|reason| format!("the database name: {reason}"))?;
            Ok(if path == "/" { String::new() } else { path.to_owned() })
        }
        StoreKind::Etcd | StoreKind::ZooKeeper => {
            let path = path.trim_end_matches('/');
            let mut normal = String::new();
            for segment in path.split('/').skip(1) {
                if segment.is_empty()
                    || segment == "."
                    || segment == ".."
                    || !segment.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-'))
                {
                    return Err(format!(
                        "the path {path:?} must be segments of A-Z a-z 0-9 _ . - separated by single slashes"
                    ));
                }
                normal.push('/');
                normal.push_str(segment);
            }
            Ok(normal)
        }
    }
}

/// A Redis database number: decimal digits, below 2^31.
fn is_db(text: &str) -> bool {
    !text.is_empty() && text.len() <= 10 && text.bytes().all(|b| b.is_ascii_digit()) && text.parse::<i32>().is_ok()
}

/// The query's parameters, percent-decoded, each at most once, as `kind` takes them.
fn params(kind: StoreKind, tls: bool, query: &str) -> Result<Vec<(String, String)>, String> {
    let allowed: Option<&[&str]> = match kind {
        // redis-rs's own parameters (`protocol=resp3`) pass through to it.
        StoreKind::Redis | StoreKind::Postgres | StoreKind::MySql => None,
        StoreKind::RedisSentinel => Some(&[REDIS_CA_PARAM, MIN_REPLICAS_PARAM]),
        StoreKind::Etcd => Some(&[CLUSTER_CA_PARAM]),
        StoreKind::ZooKeeper if tls => Some(&[CLUSTER_CA_PARAM]),
        StoreKind::ZooKeeper => Some(&[]),
    };
    let mut taken: Vec<(String, String)> = Vec::new();
    for pair in query.split('&').filter(|pair| !pair.is_empty()) {
        let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
        if let Some(allowed) = allowed.filter(|allowed| !allowed.contains(&key)) {
            return Err(match (kind, allowed) {
                (StoreKind::ZooKeeper, []) if key == CLUSTER_CA_PARAM => "`ca=` is for TLS: write zks://".into(),
                (_, []) => format!("unknown query parameter {key:?}: none is supported"),
                _ => {
                    let known = allowed.iter().map(|p| format!("{p}=")).collect::<Vec<_>>().join(", ");
                    format!("unknown query parameter {key:?}; the parameters are {known}")
                }
            });
        }
        if taken.iter().any(|(k, _)| k == key) {
            return Err(format!("the parameter {key}= is given twice"));
        }
        let value = match percent_decode(value) {
            Ok(value) => value,
            // redis-rs keeps a `%` that starts no escape as written: so does a Redis URL here.
            Err(_) if matches!(kind, StoreKind::Redis | StoreKind::RedisSentinel) => value.to_owned(),
            Err(reason) => return Err(format!("the parameter {key}=: {reason}")),
        };
        if Some(key) == kind.ca_param() && value.trim().is_empty() {
            return Err(format!("`{key}=` names no file"));
        }
        if key == MIN_REPLICAS_PARAM && matches!(kind, StoreKind::Redis | StoreKind::RedisSentinel) {
            min_replicas(&value)?;
        }
        taken.push((key.to_owned(), value));
    }
    Ok(taken)
}

/// A count of replicas: decimal digits, 0 to 65535.
pub(crate) fn min_replicas(value: &str) -> Result<u16, String> {
    Some(value)
        .filter(|v| !v.is_empty() && v.bytes().all(|b| b.is_ascii_digit()))
        .and_then(|v| v.parse::<u16>().ok())
        .ok_or_else(|| {
            format!(
                "{MIN_REPLICAS_PARAM}={value:?}: expected how many replicas must acknowledge each write, a whole \
                 number from 0 to {}",
                u16::MAX
            )
        })
}

/// Text as a URL's user name or password writes it: unreserved bytes as they are, others `%XX`.
fn percent_encode(text: &str) -> String {
    encode(text, b"")
}

/// `text` percent-encoded, its unreserved bytes and those of `keep` as they are.
fn encode(text: &str, keep: &[u8]) -> String {
    let mut out = String::with_capacity(text.len());
    for b in text.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-' | b'~') || keep.contains(&b) {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reason(url: &str) -> String {
        let err = StoreUrl::parse(url).expect_err(url);
        let LeaseError::BadUrl { reason, url: shown, .. } = &err else { panic!("{url}: {err:?}") };
        for part in ["secret", "sec", "ret"] {
            assert!(!shown.contains(part) && !reason.contains(part), "{url}: {err}");
        }
        reason.clone()
    }

    #[test]
    fn each_store_parses_its_forms() {
        let url = StoreUrl::parse("etcd://10.0.0.1,10.0.0.2:2380,[::1]/apps/shop/").unwrap();
        assert_eq!(url.servers(), ["10.0.0.1:2379", "10.0.0.2:2380", "[::1]:2379"]);
        assert_eq!(url.path(), "/apps/shop");
        assert_eq!(url.describe_as("etcd"), "etcd://10.0.0.1:2379,10.0.0.2:2380,[::1]:2379/apps/shop");
        let url = StoreUrl::parse("ZK://zk1:2181").unwrap();
        assert_eq!((url.servers(), url.path()), (&["zk1:2181".to_owned()][..], ""));
        assert_eq!(StoreUrl::parse("zk://zk1/").unwrap().describe_as("zk"), "zk://zk1:2181/");
        assert_eq!(StoreUrl::parse("zks://zk1").unwrap().servers(), ["zk1:2281"]);
        let url = StoreUrl::parse("redis+sentinel://:pw@s1,s2:5000/main/3?min_replicas=2").unwrap();
        assert_eq!(
            (url.kind(), url.servers()),
            (StoreKind::RedisSentinel, &["s1:26379".to_owned(), "s2:5000".into()][..])
        );
        assert_eq!((url.path(), url.param("min_replicas")), ("/main/3", Some("2")));
        assert_eq!(url.to_string(), "redis+sentinel://s1:26379,s2:5000/main/3?min_replicas=2");
        let url = StoreUrl::parse("postgres:///ids?host=/var/run/postgresql").unwrap();
        assert_eq!((url.servers(), url.path()), (&[][..], "/ids"));
        let url = StoreUrl::parse("mysql://root@127.0.0.1").unwrap();
        assert_eq!((url.servers(), url.path(), url.user()), (&["127.0.0.1:3306".to_owned()][..], "", Some("root")));
        assert_eq!(StoreUrl::parse("redis://cache/").unwrap().path(), "/0");
        assert_eq!(StoreUrl::parse("valkeys://cache/07").unwrap().to_string(), "valkeys://cache:6379/7");
    }

    #[test]
    fn credentials_and_parameters() {
        let url = StoreUrl::parse(
            "ETCDS://root:p%40ss%3Aw%2Frd%3F%23%25%20%C3%A9@a,b:2380/apps/?ca=%2Fetc%2Fca%20dir%2Fca.pem",
        )
        .unwrap();
        assert_eq!((url.scheme(), url.is_tls()), ("etcds", true));
        assert_eq!(url.servers(), ["a:2379", "b:2380"]);
        assert_eq!(url.path(), "/apps");
        assert_eq!((url.user(), url.password()), (Some("root"), Some("p@ss:w/rd?#% é")));
        assert_eq!(url.param("ca"), Some("/etc/ca dir/ca.pem"));
        assert_eq!(url.ca_file().as_deref(), Some("/etc/ca dir/ca.pem"));
        assert_eq!(url.describe_as("etcds"), "etcds://root@a:2379,b:2380/apps");
        // The driver's URL holds the password, encoded again; nothing shown does.
        assert_eq!(
            url.driver_url("https", &["ca"]),
            "https://root:p%40ss%3Aw%2Frd%3F%23%25%20%C3%A9@a:2379,b:2380/apps"
        );
        for shown in [url.to_string(), format!("{url:?}")] {
            assert!(!shown.contains("p@ss") && !shown.contains("p%40ss"), "{shown}");
        }
        // An `@` and a `:` in a password are taken as they are; the user name is shown encoded.
        let url = StoreUrl::parse("etcd://u%20v:p@ss:x@h").unwrap();
        assert_eq!((url.user(), url.password()), (Some("u v"), Some("p@ss:x")));
        assert_eq!(url.describe_as("etcd"), "etcd://u%20v@h:2379/");
        assert_eq!(StoreUrl::parse("etcd://u:@h?").unwrap().password(), Some(""));
        assert_eq!(StoreUrl::parse("etcd://h").unwrap().params, []);
        // SQL parameters pass through; a `password` parameter is never shown.
        let url = StoreUrl::parse("postgres://app@db/ids?sslmode=verify-full&password=secret").unwrap();
        assert_eq!(url.to_string(), "postgres://app@db:5432/ids?sslmode=verify-full");
        assert!(!format!("{url:?}").contains("secret"));
        assert!(url.names_param(&["SSLMODE"]));
    }

    #[test]
    fn hostile_urls_are_refused_without_their_passwords() {
        for (bad, expected) in [
            ("gopher://h", "expected redis://"),
            ("", "expected redis://"),
            ("127.0.0.1:6379", "expected redis://"),
            ("etcd:x", "expected redis://"),
            ("etcd://", "no host"),
            ("etcd://a,,b", "no host"),
            ("etcd://a:0", "bad port"),
            ("etcd://a:x", "bad port"),
            ("etcd://a:70000", "bad port"),
            ("etcd://[::1", "lacks its closing bracket"),
            ("etcd://[::1]x", "not a host"),
            ("etcd://a/x?y=1", "unknown query parameter \"y\"; the parameters are ca="),
            ("etcd://a/x//y", "segments"),
            ("etcd://a/../y", "segments"),
            ("etcd://a/x y", "segments"),
            ("etcd://a b/", "not a host"),
            ("etcds://root:secret@", "no host"),
            ("etcds://root:secret@/apps", "no host"),
            ("etcds://root:secret@a:99999", "bad port"),
            ("etcds://root:secret@a:-1", "bad port"),
            ("etcds://:secret@a", "a password without a user name"),
            ("etcds://root@a", "a user name without a password"),
            ("etcds://root:secret%zz@a", "the password is not percent-encoded UTF-8"),
            ("etcds://root:secret%FF@a", "the password is not percent-encoded UTF-8"),
            ("etcds://r%zz:secret@a", "the user name: bad percent-encoding"),
            ("etcds://root:sec/ret@a", "an @ after the servers"),
            ("etcds://root:sec?ret@a", "an @ after the servers"),
            ("etcds://root:sec#ret@a", "an @ after the servers"),
            ("redis://:sec/ret@a", "an @ after the servers"),
            ("postgres://app:sec?ret@db/ids", "an @ after the servers"),
            ("etcds://root:secret@a?ca=%zz", "the parameter ca=: bad percent-encoding"),
            ("etcds://root:secret@a?ca=1&ca=2", "the parameter ca= is given twice"),
            ("etcds://root:secret@a?ca=", "`ca=` names no file"),
            ("etcds://root:secret@a#x", "a fragment"),
            ("zk://user:secret@zk1", "authentication is not supported"),
            ("zk://zk1?ca=/c.pem", "`ca=` is for TLS: write zks://"),
            ("zk://zk1?x=1", "unknown query parameter \"x\": none is supported"),
            ("redis://:secret@a,b", "one server only, not 2; several sentinels are redis+sentinel://"),
            ("redis://:secret@cache/x", "expected /<db>"),
            ("redis://:secret@cache/1/2", "expected /<db>"),
            ("redis://:secret@cache/99999999999", "expected /<db>"),
            ("redis://:secret@cache/-1", "expected /<db>"),
            ("redis://:secret@cache?min_replicas=-1", "min_replicas=\"-1\""),
            ("redis://:secret@cache?min_replicas=65536", "min_replicas=\"65536\""),
            ("redis+sentinel://:secret@s1", "the master's name is missing"),
            ("redis+sentinel://:secret@s1/m/x", "expected …/<master-name>[/<db>]"),
            ("redis+sentinel://:secret@s1/m?protocol=resp3", "the parameters are ssl_ca_certs=, min_replicas="),
            ("redis+sentinel://:secret@s1/m{x}", "the master's name must be"),
            ("mysql://root:secret@a,b/test", "one server only, not 2"),
            ("postgres://app:secret@db/i%zz", "the database name: bad percent-encoding"),
        ] {
            let why = reason(bad);
            assert!(why.contains(expected), "{bad}: {why}");
        }
    }

    #[test]
    fn urls_shown_in_errors_hide_every_password() {
        for (url, shown) in [
            ("etcd://a:2379/x", "etcd://a:2379/x"),
            ("etcds://root:pw@a/x?ca=/c.pem", "etcds://root@a/x?ca=/c.pem"),
            ("etcds://:pw@a", "etcds://a"),
            ("etcds://root:p/w@a", "etcds://root@a"),
            ("etcds://root:p?w@a", "etcds://root@a"),
            ("etcds://ro ot:pw@a", "etcds://…@a"),
            ("redis://:secret@127.0.0.1:6379/2", "redis://127.0.0.1:6379/2"),
            ("postgres://app:s3cr@t@db:5432/test?sslmode=disable", "postgres://app@db:5432/test?sslmode=disable"),
            ("mysql://root:pw@127.0.0.1", "mysql://root@127.0.0.1"),
            ("not a url", "not a url"),
        ] {
            assert_eq!(redact(url), shown);
        }
    }

    #[test]
    fn every_scheme_names_its_kind_and_parses_back_from_its_display() {
        for (scheme, kind, tls) in SCHEMES {
            let path = match kind {
                StoreKind::Redis => "/1",
                StoreKind::RedisSentinel => "/main",
                StoreKind::ZooKeeper => "",
                _ => "/x",
            };
            // etcd wants a password with a user name, which the display leaves out.
            let user = if matches!(kind, StoreKind::ZooKeeper | StoreKind::Etcd) { "" } else { "u:p@" };
            let url = StoreUrl::parse(&format!("{scheme}://{user}h{path}")).unwrap();
            assert_eq!((url.kind(), url.is_tls()), (*kind, *tls), "{scheme}");
            let again = StoreUrl::parse(&url.to_string()).unwrap();
            assert_eq!((again.servers(), again.path(), again.user()), (url.servers(), url.path(), url.user()));
        }
    }
}
