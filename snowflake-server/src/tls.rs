//! TLS for both faces of the port (HTTP and gRPC): a certificate chain and key from PEM files,
//! client certificates required when a CA is given (mTLS), the files read again when they
//! change (a renewed certificate is served to new connections, without a restart).
//!
//! A file that cannot be read at start stops the server with the reason; one that cannot be
//! read later (a half-written renewal) leaves the previous certificate in force, with a WARN
//! line, until the files are whole again.
//!
//! A handshake that fails is logged with its reason (a client certificate missing or not
//! accepted: WARN), and the connection is closed only after the client had the alert, so
//! that the client can say why (curl: `alert certificate required`) instead of a reset.

use std::io;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::{Arc, RwLock};
use std::time::{Duration, SystemTime};

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use rustls::server::WebPkiClientVerifier;
use rustls::{RootCertStore, ServerConfig};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::mpsc;
use tokio_rustls::TlsAcceptor;
use tokio_rustls::server::TlsStream;

use crate::StartError;

/// The files of TLS (`--tls-cert`, `--tls-key`, `--tls-client-ca`).
///
/// ```
/// use snowflake_server::tls::TlsFiles;
///
/// let files = TlsFiles { cert: "server.pem".into(), key: "server.key".into(), client_ca: None };
/// assert!(files.client_ca.is_none()); // no client certificates asked for
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TlsFiles {
    /// The certificate chain, PEM: the server's certificate first.
    pub cert: PathBuf,
    /// The private key, PEM (PKCS #8, PKCS #1 or SEC1).
    pub key: PathBuf,
    /// The CA whose certificates clients must present (mTLS); `None`: no client certificates.
    pub client_ca: Option<PathBuf>,
}

/// How often the files are checked for a change.
const RELOAD_EVERY: Duration = Duration::from_secs(1);

/// How long a client has for its handshake.
const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);

/// The modification times of the files, to see them change.
fn stamps(files: &TlsFiles) -> Vec<Option<SystemTime>> {
    [Some(&files.cert), Some(&files.key), files.client_ca.as_ref()]
        .into_iter()
        .flatten()
        .map(|path| std::fs::metadata(path).and_then(|m| m.modified()).ok())
        .collect()
}

fn certificates(path: &Path, what: &str) -> Result<Vec<CertificateDer<'static>>, String> {
    let certs = CertificateDer::pem_file_iter(path)
        .and_then(|certs| certs.collect::<Result<Vec<_>, _>>())
        .map_err(|e| format!("{what} {}: {e}", path.display()))?;
    if certs.is_empty() {
        return Err(format!("{what} {}: no PEM certificate in it", path.display()));
    }
    Ok(certs)
}

/// rustls's ring provider. rustls 0.23.48 deprecates `ring::default_provider` because ring has
/// no post-quantum key exchange; its replacement, aws-lc-rs, is a C library built from source,
/// which the server leaves out (as the lease stores' TLS does), so ring stays, on purpose.
#[allow(deprecated)]
fn ring_provider() -> rustls::crypto::CryptoProvider {
    rustls::crypto::ring::default_provider()
}

/// The server's TLS configuration from `files`: HTTP/2 (gRPC) and HTTP/1.1 by ALPN.
fn load(files: &TlsFiles) -> Result<ServerConfig, String> {
    let certs = certificates(&files.cert, "--tls-cert")?;
    let key =
        PrivateKeyDer::from_pem_file(&files.key).map_err(|e| format!("--tls-key {}: {e}", files.key.display()))?;
    let provider = Arc::new(ring_provider());
    let builder = ServerConfig::builder_with_provider(Arc::clone(&provider))
        .with_safe_default_protocol_versions()
        .map_err(|e| e.to_string())?;
    let builder = match &files.client_ca {
        None => builder.with_no_client_auth(),
        Some(ca) => {
            let mut roots = RootCertStore::empty();
            for cert in certificates(ca, "--tls-client-ca")? {
                roots.add(cert).map_err(|e| format!("--tls-client-ca {}: {e}", ca.display()))?;
            }
            let verifier = WebPkiClientVerifier::builder_with_provider(Arc::new(roots), provider)
                .build()
                .map_err(|e| format!("--tls-client-ca {}: {e}", ca.display()))?;
            builder.with_client_cert_verifier(verifier)
        }
    };
    let mut config = builder
        .with_single_cert(certs, key)
        .map_err(|e| format!("--tls-cert {} with --tls-key {}: {e}", files.cert.display(), files.key.display()))?;
    config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    Ok(config)
}

/// A listener that hands out TLS connections: TCP accepted and handshakes done in the
/// background (a slow handshake holds up no other), with the configuration read at each
/// handshake (so a reload applies to the next connection).
pub(crate) struct TlsListener {
    connections: mpsc::Receiver<(TlsStream<TcpStream>, SocketAddr)>,
    local: SocketAddr,
    tasks: Vec<tokio::task::JoinHandle<()>>,
}

impl TlsListener {
    /// TLS on `tcp` with the configuration of `files`, which must be readable now.
    pub(crate) fn new(tcp: TcpListener, files: &TlsFiles) -> Result<TlsListener, StartError> {
        let local = tcp.local_addr().map_err(|e| StartError(e.to_string()))?;
        let config = load(files).map_err(|e| StartError(format!("TLS: {e}")))?;
        let current = Arc::new(RwLock::new(Arc::new(config)));
        let reload = tokio::spawn(reload(files.clone(), Arc::clone(&current)));
        let (tx, connections) = mpsc::channel(64);
        let accept = tokio::spawn(async move {
            loop {
                let (stream, peer) = match tcp.accept().await {
                    Ok(accepted) => accepted,
                    Err(e) => {
                        // Out of file descriptors, say: wait, as axum's own listener does.
                        tracing::warn!(error = %e, "accepting a connection");
                        tokio::time::sleep(Duration::from_millis(100)).await;
                        continue;
                    }
                };
                if tx.is_closed() {
                    return;
                }
                let config = Arc::clone(&current.read().unwrap_or_else(|p| p.into_inner()));
                let tx = tx.clone();
                tokio::spawn(async move {
                    let _ = stream.set_nodelay(true);
                    let handshake = TlsAcceptor::from(config).accept(stream).into_fallible();
                    match tokio::time::timeout(HANDSHAKE_TIMEOUT, handshake).await {
                        Ok(Ok(tls)) => {
                            let _ = tx.send((tls, peer)).await;
                        }
                        Ok(Err((e, stream))) => {
                            refused(peer, &e);
                            close_after_alert(stream).await;
                        }
                        Err(_) => tracing::debug!(%peer, "TLS handshake timed out"),
                    }
                });
            }
        });
        Ok(TlsListener { connections, local, tasks: vec![reload, accept] })
    }
}

/// Logs a failed handshake with its reason: a client certificate refused (missing, of another
/// CA, expired) as a WARN line, since it is a client that cannot get in; a client that ended
/// the handshake (it does not trust the server's certificate) or that does not speak TLS as an
/// INFO line; a connection closed during the handshake (a TCP health check) at DEBUG.
fn refused(peer: SocketAddr, e: &io::Error) {
    let Some(tls) = e.get_ref().and_then(|inner| inner.downcast_ref::<rustls::Error>()) else {
        tracing::debug!(%peer, error = %e, "TLS handshake failed");
        return;
    };
    match tls {
        rustls::Error::NoCertificatesPresented => tracing::warn!(
            %peer,
            reason = "the client presented no certificate",
            "TLS handshake refused: --tls-client-ca requires a client certificate signed by that CA"
        ),
        rustls::Error::InvalidCertificate(why) => tracing::warn!(
            %peer,
            reason = %format!("the client's certificate is not accepted: {why:?}"),
            "TLS handshake refused: --tls-client-ca requires a client certificate signed by that CA"
        ),
        rustls::Error::AlertReceived(alert) => tracing::info!(
            %peer,
            reason = %format!("the client ended the handshake with the alert {alert:?}"),
            "TLS handshake failed (a client that does not trust the server's certificate says bad_certificate or unknown_ca)"
        ),
        rustls::Error::InvalidMessage(_) => tracing::info!(
            %peer,
            reason = %tls,
            "TLS handshake failed: the client does not speak TLS (plain HTTP or gRPC to the TLS port?)"
        ),
        other => tracing::info!(%peer, reason = %other, "TLS handshake failed"),
    }
}

/// Closes a connection whose handshake failed so that the client reads the server's alert
/// (`certificate required`, say) rather than a reset: the alert is sent already; the write
/// side is shut, and what the client still sends (the rest of its handshake, its first
/// request) is read and dropped, for a second at most. Closed with that data unread, the
/// socket would answer with a reset, which clients show as "connection reset" or
/// `getpeername` errors instead of the alert.
async fn close_after_alert(mut stream: TcpStream) {
    use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};

    let _ = stream.shutdown().await;
    let drain = async {
        let mut buffer = [0u8; 4096];
        let mut left: usize = 64 * 1024;
        while left > 0 {
            match stream.read(&mut buffer).await {
                Ok(0) | Err(_) => return,
                Ok(n) => left = left.saturating_sub(n),
            }
        }
    };
    let _ = tokio::time::timeout(Duration::from_secs(1), drain).await;
}

impl Drop for TlsListener {
    fn drop(&mut self) {
        for task in &self.tasks {
            task.abort();
        }
    }
}

/// Reads the files again whenever one of them changes, and serves what they hold from the
/// next connection on; keeps the configuration in force while they cannot be read.
async fn reload(files: TlsFiles, current: Arc<RwLock<Arc<ServerConfig>>>) {
    let mut seen = stamps(&files);
    let mut tick = tokio::time::interval(RELOAD_EVERY);
    loop {
        tick.tick().await;
        let now = stamps(&files);
        if now == seen {
            continue;
        }
        seen = now;
        match load(&files) {
            Ok(config) => {
                *current.write().unwrap_or_else(|p| p.into_inner()) = Arc::new(config);
                tracing::info!(cert = %files.cert.display(), "TLS certificate reloaded");
            }
            // A renewal half written: read again at the files' next change.
            Err(e) => {
                tracing::warn!(error = %e, "TLS files changed but cannot be read; the previous ones stay in force")
            }
        }
    }
}

impl axum::serve::Listener for TlsListener {
    type Io = TlsStream<TcpStream>;
    type Addr = SocketAddr;

    async fn accept(&mut self) -> (Self::Io, Self::Addr) {
        match self.connections.recv().await {
            Some(connection) => connection,
            // The accepting task is gone (the runtime shuts down): no more connections.
            None => std::future::pending().await,
        }
    }

    fn local_addr(&self) -> io::Result<Self::Addr> {
        Ok(self.local)
    }
}
