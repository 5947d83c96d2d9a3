//! ZooKeeper over TLS (`zks://`, feature `lease-zookeeper-tls`): what the store trusts, and
//! the diagnosis of a handshake zookeeper-client failed without saying why.

use std::sync::Arc;
use std::time::Instant;

use zookeeper_client as zk;

use super::super::store::support::install_crypto_provider;
use super::super::store::{CA_ENV, LeaseError};
use super::super::url::StoreUrl;

/// What a `zks://` store trusts: the client's options, and the same roots for diagnosing a
/// handshake the client failed (its error does not say why).
pub(super) struct Tls {
    /// What the client is given.
    pub(super) options: zk::TlsOptions,
    roots: Arc<rustls::RootCertStore>,
}

/// A TLS handshake with a server that failed, and why: the error a store reports when its
/// client could not connect over TLS.
#[derive(Debug)]
pub(super) struct TlsHandshakeFailed {
    server: String,
    cause: HandshakeCause,
}

#[derive(Debug)]
enum HandshakeCause {
    /// rustls refused: an untrusted certificate, a name it is not for, no common protocol.
    Tls(rustls::Error),
    /// The connection broke or ended: a server that does not speak TLS on that port, say.
    Io(std::io::Error),
}

impl std::fmt::Display for TlsHandshakeFailed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "the TLS handshake with {} failed: ", self.server)?;
        match &self.cause {
            HandshakeCause::Tls(rustls::Error::InvalidCertificate(
                rustls::CertificateError::NotValidForName | rustls::CertificateError::NotValidForNameContext { .. },
            )) => write!(f, "the server's certificate is not valid for the host name"),
            HandshakeCause::Tls(rustls::Error::InvalidCertificate(_)) => {
                write!(f, "the server's certificate was not trusted")
            }
            HandshakeCause::Tls(_) => write!(f, "TLS refused"),
            HandshakeCause::Io(error) if error.kind() == std::io::ErrorKind::UnexpectedEof => {
                write!(f, "the server ended the connection (is this port TLS: ZooKeeper's secureClientPort?)")
            }
            HandshakeCause::Io(_) => {
                write!(f, "the connection failed (is this port TLS: ZooKeeper's secureClientPort?)")
            }
        }
    }
}

impl std::error::Error for TlsHandshakeFailed {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match &self.cause {
            HandshakeCause::Tls(error) => Some(error),
            HandshakeCause::Io(error) => Some(error),
        }
    }
}

impl Tls {
    /// The client's TLS options, trusting the CA certificates of `ca_file`, or the system's
    /// roots when there is none (see [`StoreUrl::ca_file`]).
    pub(super) fn new(url: &StoreUrl) -> Result<Self, LeaseError> {
        // zookeeper-client builds its rustls configuration with the process's default
        // provider (with two providers compiled in, as here, rustls picks none by itself).
        install_crypto_provider();
        let ca_file = url.read_ca_file()?;
        let (pem, certificates) = match &ca_file {
            Some((path, pem)) => {
                let pem = String::from_utf8(pem.clone())
                    .map_err(|_| url.bad(format!("the CA file {path:?} is not PEM text"), None))?;
                let certificates = pem_certificates(&pem);
                if certificates.is_empty() {
                    return Err(url.bad(format!("the CA file {path:?} holds no PEM certificate"), None));
                }
                (pem, certificates)
            }
            None => {
                let certificates = rustls_native_certs::load_native_certs().certs;
                if certificates.is_empty() {
                    return Err(url.bad(
                        format!(
                            "no CA file is named (`ca=` or {CA_ENV}) and the system's trusted roots could not be \
                             read"
                        ),
                        None,
                    ));
                }
                let pem = certificates.iter().map(|der| to_pem(der)).collect::<String>();
                (pem, certificates)
            }
        };
        let mut roots = rustls::RootCertStore::empty();
        // Certificates rustls cannot use as roots are left out, as zookeeper-client does.
        let (_added, _ignored) = roots.add_parsable_certificates(certificates);
        if roots.is_empty() {
            let place = ca_file.as_ref().map_or("the system's roots", |(path, _)| path.as_str());
            return Err(url.bad(format!("no usable CA certificate in {place}"), None));
        }
        let options = zk::TlsOptions::new()
            .with_pem_ca(&pem)
            .map_err(|e| url.bad(format!("the CA certificates could not be used: {e}"), Some(Arc::new(e))))?;
        Ok(Tls { options, roots: Arc::new(roots) })
    }

    /// Why a connection the client failed did not get through, if a handshake of its own with
    /// one of `addresses` (`host:port`) tells, before `deadline`; on a blocking thread.
    pub(super) async fn diagnose(&self, addresses: Vec<String>, deadline: Instant) -> Option<TlsHandshakeFailed> {
        let roots = Arc::clone(&self.roots);
        let diagnosis = tokio::task::spawn_blocking(move || {
            addresses.iter().find_map(|server| handshake(server, &roots, deadline))
        });
        tokio::time::timeout_at(deadline.into(), diagnosis).await.ok()?.ok()?
    }
}

/// The certificates of a PEM text (other sections are skipped).
fn pem_certificates(pem: &str) -> Vec<rustls::pki_types::CertificateDer<'static>> {
    use rustls::pki_types::pem::PemObject;
    rustls::pki_types::CertificateDer::pem_slice_iter(pem.as_bytes()).filter_map(Result::ok).collect()
}

/// A DER certificate as PEM text.
fn to_pem(der: &[u8]) -> String {
    use base64::Engine;
    let body = base64::engine::general_purpose::STANDARD.encode(der);
    let mut pem = String::from("-----BEGIN CERTIFICATE-----\n");
    for line in body.as_bytes().chunks(64) {
        pem.push_str(std::str::from_utf8(line).expect("base64 is ASCII"));
        pem.push('\n');
    }
    pem.push_str("-----END CERTIFICATE-----\n");
    pem
}

/// A TLS handshake with `server` (`host:port`) trusting `roots`, before `deadline`: why it
/// failed, or `None` when it succeeded or the server could not be reached at all.
fn handshake(server: &str, roots: &Arc<rustls::RootCertStore>, deadline: Instant) -> Option<TlsHandshakeFailed> {
    use std::io::Write;
    use std::net::ToSocketAddrs;
    let left = || deadline.checked_duration_since(Instant::now()).filter(|left| !left.is_zero());
    let (host, _) = server.rsplit_once(':')?;
    let host = host.trim_start_matches('[').trim_end_matches(']');
    let name = rustls::pki_types::ServerName::try_from(host.to_owned()).ok()?;
    let provider = rustls::crypto::CryptoProvider::get_default()
        .cloned()
        .unwrap_or_else(|| Arc::new(rustls::crypto::ring::default_provider()));
    let config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .ok()?
        .with_root_certificates(Arc::clone(roots))
        .with_no_client_auth();
    let mut connection = rustls::ClientConnection::new(Arc::new(config), name).ok()?;
    let address = server.to_socket_addrs().ok()?.next()?;
    let mut socket = std::net::TcpStream::connect_timeout(&address, left()?).ok()?;
    let failed = |cause| Some(TlsHandshakeFailed { server: server.to_owned(), cause });
    while connection.is_handshaking() {
        let left = left()?;
        socket.set_read_timeout(Some(left)).ok()?;
        socket.set_write_timeout(Some(left)).ok()?;
        match connection.complete_io(&mut socket) {
            Ok(_) => {}
            Err(error) => {
                let tls = error.get_ref().and_then(|inner| inner.downcast_ref::<rustls::Error>()).cloned();
                return match tls {
                    Some(tls) => failed(HandshakeCause::Tls(tls)),
                    None if matches!(error.kind(), std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut) => {
                        None
                    }
                    None => failed(HandshakeCause::Io(error)),
                };
            }
        }
    }
    connection.send_close_notify();
    let _ = connection.complete_io(&mut socket);
    let _ = socket.flush();
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_handshake_failure_names_its_cause() {
        let untrusted = TlsHandshakeFailed {
            server: "zk1:2281".into(),
            cause: HandshakeCause::Tls(rustls::Error::InvalidCertificate(rustls::CertificateError::UnknownIssuer)),
        };
        let message = untrusted.to_string();
        assert_eq!(message, "the TLS handshake with zk1:2281 failed: the server's certificate was not trusted");
        let source = std::error::Error::source(&untrusted).unwrap().to_string();
        assert!(source.contains("invalid peer certificate") && source.contains("UnknownIssuer"), "{source}");
        let eof = TlsHandshakeFailed {
            server: "zk1:2181".into(),
            cause: HandshakeCause::Io(std::io::ErrorKind::UnexpectedEof.into()),
        };
        assert!(eof.to_string().contains("secureClientPort"), "{eof}");
    }
}
