//! How the client connects: the URL, TLS, keepalive, timeouts and the retry policy.

use std::path::PathBuf;
use std::time::Duration;

use tonic::transport::Endpoint;

use crate::{Error, RetryPolicy, SnowflakeClient};

/// PEM text, given or to be read from a file at [`ClientBuilder::connect`].
#[derive(Clone, Debug)]
enum Pem {
    Text(Vec<u8>),
    File(PathBuf),
}

impl Pem {
    #[cfg_attr(not(feature = "tls"), allow(dead_code))]
    fn read(&self, what: &'static str) -> Result<Vec<u8>, Error> {
        match self {
            Pem::Text(text) => Ok(text.clone()),
            Pem::File(path) => std::fs::read(path).map_err(|source| Error::File { what, path: path.clone(), source }),
        }
    }
}

/// The settings of a connection, for [`SnowflakeClient::builder`]: TLS with a CA of your own
/// and a client certificate, keepalive, timeouts, the [`RetryPolicy`].
///
/// The defaults ride through a server's restart: HTTP/2 keepalive pings every 20 s (also
/// while idle) find a connection whose server went away without closing it, a call refused
/// meanwhile is retried ([`RetryPolicy::default`]), and a connection that closed is opened
/// again at the next call.
///
/// ```no_run
/// use std::time::Duration;
/// use snowflake_client::{RetryPolicy, SnowflakeClient};
///
/// # async fn run() -> Result<(), Box<dyn std::error::Error>> {
/// let client = SnowflakeClient::builder("https://ids.internal:8443")
///     .ca_certificate_file("/etc/ids/ca.pem")
///     .identity_files("/etc/ids/client.pem", "/etc/ids/client.key")
///     .timeout(Duration::from_secs(2))
///     .retry(RetryPolicy::default().with_max_wait(Duration::from_secs(30)))
///     .connect()
///     .await?;
/// # Ok(()) }
/// ```
#[derive(Clone, Debug)]
#[must_use]
pub struct ClientBuilder {
    url: String,
    ca: Option<Pem>,
    identity: Option<(Pem, Pem)>,
    domain: Option<String>,
    retry: RetryPolicy,
    keep_alive: Option<Duration>,
    connect_timeout: Duration,
    timeout: Option<Duration>,
}

impl ClientBuilder {
    pub(crate) fn new(url: String) -> ClientBuilder {
        ClientBuilder {
            url,
            ca: None,
            identity: None,
            domain: None,
            retry: RetryPolicy::default(),
            keep_alive: Some(Duration::from_secs(20)),
            connect_timeout: Duration::from_secs(5),
            timeout: None,
        }
    }

    /// Trust the server certificates this CA signed (PEM, one certificate or more), read
    /// from `path` when connecting. For `https://` only.
    ///
    /// ```
    /// let builder = snowflake_client::SnowflakeClient::builder("https://127.0.0.1:8443").ca_certificate_file("ca.pem");
    /// # let _ = builder;
    /// ```
    pub fn ca_certificate_file(mut self, path: impl Into<PathBuf>) -> ClientBuilder {
        self.ca = Some(Pem::File(path.into()));
        self
    }

    /// Trust the server certificates this CA signed (PEM text). For `https://` only.
    ///
    /// ```
    /// let pem = b"-----BEGIN CERTIFICATE-----\n...\n-----END CERTIFICATE-----\n";
    /// let builder = snowflake_client::SnowflakeClient::builder("https://127.0.0.1:8443").ca_certificate_pem(pem);
    /// # let _ = builder;
    /// ```
    pub fn ca_certificate_pem(mut self, pem: impl Into<Vec<u8>>) -> ClientBuilder {
        self.ca = Some(Pem::Text(pem.into()));
        self
    }

    /// Present this client certificate (its chain, PEM) and key (PEM) to a server that asks
    /// for one (`--tls-client-ca`: mutual TLS), read from their files when connecting.
    ///
    /// ```
    /// let builder = snowflake_client::SnowflakeClient::builder("https://127.0.0.1:8443")
    ///     .ca_certificate_file("ca.pem")
    ///     .identity_files("client.pem", "client.key");
    /// # let _ = builder;
    /// ```
    pub fn identity_files(mut self, cert: impl Into<PathBuf>, key: impl Into<PathBuf>) -> ClientBuilder {
        self.identity = Some((Pem::File(cert.into()), Pem::File(key.into())));
        self
    }

    /// Present this client certificate and key (PEM text): see [`ClientBuilder::identity_files`].
    ///
    /// ```
    /// # let (cert, key) = (Vec::<u8>::new(), Vec::<u8>::new());
    /// let builder = snowflake_client::SnowflakeClient::builder("https://127.0.0.1:8443").identity_pem(cert, key);
    /// # let _ = builder;
    /// ```
    pub fn identity_pem(mut self, cert: impl Into<Vec<u8>>, key: impl Into<Vec<u8>>) -> ClientBuilder {
        self.identity = Some((Pem::Text(cert.into()), Pem::Text(key.into())));
        self
    }

    /// The name the server's certificate must hold, when it is not the URL's host (a
    /// connection to an IP address whose certificate names a host).
    ///
    /// ```
    /// let builder = snowflake_client::SnowflakeClient::builder("https://10.0.0.7:8443").domain_name("ids.internal");
    /// # let _ = builder;
    /// ```
    pub fn domain_name(mut self, name: impl Into<String>) -> ClientBuilder {
        self.domain = Some(name.into());
        self
    }

    /// The retries of calls refused with `UNAVAILABLE` ([`RetryPolicy::default`] unless given).
    ///
    /// ```
    /// use snowflake_client::{RetryPolicy, SnowflakeClient};
    ///
    /// let builder = SnowflakeClient::builder("http://127.0.0.1:8080").retry(RetryPolicy::none());
    /// # let _ = builder;
    /// ```
    pub fn retry(mut self, policy: RetryPolicy) -> ClientBuilder {
        self.retry = policy;
        self
    }

    /// HTTP/2 keepalive: a ping every `interval` (also while no call is open), and the
    /// connection closed when one is not answered within 10 s; `None` turns it off. 20 s
    /// unless given.
    ///
    /// ```
    /// use std::time::Duration;
    ///
    /// let builder = snowflake_client::SnowflakeClient::builder("http://127.0.0.1:8080").keep_alive(Some(Duration::from_secs(60)));
    /// # let _ = builder;
    /// ```
    pub fn keep_alive(mut self, interval: Option<Duration>) -> ClientBuilder {
        self.keep_alive = interval;
        self
    }

    /// How long opening a connection may take (5 s unless given).
    ///
    /// ```
    /// use std::time::Duration;
    ///
    /// let builder = snowflake_client::SnowflakeClient::builder("http://127.0.0.1:8080").connect_timeout(Duration::from_secs(1));
    /// # let _ = builder;
    /// ```
    pub fn connect_timeout(mut self, timeout: Duration) -> ClientBuilder {
        self.connect_timeout = timeout;
        self
    }

    /// How long one attempt of a call may take (no limit unless given); an attempt past it
    /// ends with `CANCELLED`, which is not retried.
    ///
    /// ```
    /// use std::time::Duration;
    ///
    /// let builder = snowflake_client::SnowflakeClient::builder("http://127.0.0.1:8080").timeout(Duration::from_secs(2));
    /// # let _ = builder;
    /// ```
    pub fn timeout(mut self, timeout: Duration) -> ClientBuilder {
        self.timeout = Some(timeout);
        self
    }

    /// Connects now: an error when the server cannot be reached or the TLS handshake fails.
    ///
    /// ```no_run
    /// # async fn run() -> Result<(), Box<dyn std::error::Error>> {
    /// let client = snowflake_client::SnowflakeClient::builder("http://127.0.0.1:8080").connect().await?;
    /// # let _ = client; Ok(()) }
    /// ```
    pub async fn connect(self) -> Result<SnowflakeClient, Error> {
        let endpoint = self.endpoint()?;
        let channel = endpoint.connect().await.map_err(|source| Error::Connect { url: self.url.clone(), source })?;
        Ok(SnowflakeClient::new(channel, self.retry))
    }

    /// Connects at the first call (a server not up yet is no error here; the first call is
    /// retried by the [`RetryPolicy`] until it is).
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let client = snowflake_client::SnowflakeClient::builder("http://127.0.0.1:8080").connect_lazy()?;
    /// # let _ = client; Ok(()) }
    /// ```
    pub fn connect_lazy(self) -> Result<SnowflakeClient, Error> {
        let endpoint = self.endpoint()?;
        Ok(SnowflakeClient::new(endpoint.connect_lazy(), self.retry))
    }

    fn endpoint(&self) -> Result<Endpoint, Error> {
        let invalid = |source| Error::InvalidUrl { url: self.url.clone(), source };
        let mut endpoint = Endpoint::from_shared(self.url.clone())
            .map_err(invalid)?
            .connect_timeout(self.connect_timeout)
            .tcp_nodelay(true);
        if let Some(interval) = self.keep_alive {
            endpoint = endpoint
                .http2_keep_alive_interval(interval)
                .keep_alive_timeout(Duration::from_secs(10))
                .keep_alive_while_idle(true);
        }
        if let Some(timeout) = self.timeout {
            endpoint = endpoint.timeout(timeout);
        }
        let tls_error = |reason: &str| Error::Tls { url: self.url.clone(), reason: reason.to_owned() };
        match endpoint.uri().scheme_str() {
            Some("https") => self.tls(endpoint),
            Some("http") if self.ca.is_some() || self.identity.is_some() => {
                Err(tls_error("a CA or a client certificate is for https:// URLs; this one is plain text"))
            }
            Some("http") => Ok(endpoint),
            _ => Err(tls_error("expected http:// (plain text) or https:// (TLS)")),
        }
    }

    #[cfg(feature = "tls")]
    fn tls(&self, endpoint: Endpoint) -> Result<Endpoint, Error> {
        use tonic::transport::{Certificate, ClientTlsConfig, Identity};

        let mut config = ClientTlsConfig::new();
        match &self.ca {
            Some(ca) => config = config.ca_certificate(Certificate::from_pem(ca.read("CA certificate")?)),
            None if cfg!(feature = "tls-native-roots") => config = config.with_enabled_roots(),
            None => {
                return Err(Error::Tls {
                    url: self.url.clone(),
                    reason: "https:// needs a CA: give .ca_certificate_file(…), or turn on the feature tls-native-roots for the system's trusted roots".to_owned(),
                });
            }
        }
        if let Some((cert, key)) = &self.identity {
            config = config.identity(Identity::from_pem(cert.read("client certificate")?, key.read("client key")?));
        }
        if let Some(domain) = &self.domain {
            config = config.domain_name(domain.clone());
        }
        endpoint.tls_config(config).map_err(|source| Error::Connect { url: self.url.clone(), source })
    }

    #[cfg(not(feature = "tls"))]
    fn tls(&self, _endpoint: Endpoint) -> Result<Endpoint, Error> {
        Err(Error::Tls {
            url: self.url.clone(),
            reason: "https:// needs the feature tls of snowflake-client".to_owned(),
        })
    }
}
