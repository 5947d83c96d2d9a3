//! What a call or a connection can end with.

use std::path::PathBuf;
use std::time::Duration;

use snowflake_types::LayoutError;

/// Why a call, a typed check or a connection failed.
///
/// ```
/// use snowflake_client::Error;
///
/// fn advice(e: &Error) -> &'static str {
///     match e {
///         Error::LayoutMismatch { .. } => "serve the type's own layout under its name",
///         Error::Status { .. } if e.code() == Some(tonic::Code::NotFound) => "no such type",
///         _ => "see the message",
///     }
/// }
/// # let _ = advice;
/// ```
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The URL is not an `http://` or `https://` URL tonic can connect to.
    #[error("{url:?} is not a server URL (http://host:port or https://host:port): {source}")]
    InvalidUrl {
        /// The URL given.
        url: String,
        /// tonic's reason.
        #[source]
        source: tonic::transport::Error,
    },
    /// The connection could not be made (nothing listens there, the TLS handshake failed).
    #[error("cannot connect to {url}: {source}{}", cause_chain(source))]
    Connect {
        /// The URL.
        url: String,
        /// tonic's reason.
        #[source]
        source: tonic::transport::Error,
    },
    /// A TLS setting that cannot be used: `https://` without the `tls` feature or a CA, a
    /// client certificate over `http://`.
    #[error("{url}: {reason}")]
    Tls {
        /// The URL.
        url: String,
        /// What to change.
        reason: String,
    },
    /// A certificate or key file that cannot be read.
    #[error("cannot read the {what} {}: {source}", path.display())]
    File {
        /// Which file it is (`CA certificate`, `client certificate`, `client key`).
        what: &'static str,
        /// Its path.
        path: PathBuf,
        /// The reason.
        #[source]
        source: std::io::Error,
    },
    /// The server refused the call (the last refusal, when it was retried).
    #[error("{}{} ({:?}){}{}", status.message(), status_causes(status), status.code(), after(status), tries(*attempts))]
    Status {
        /// The server's (or the transport's) status.
        status: Box<tonic::Status>,
        /// How many times the call was sent.
        attempts: u32,
    },
    /// The server serves no type under the name a typed call asked for.
    #[error(
        "the server serves no type named {name:?} for {rust} (it serves: {}); serve it (--id {name}={layout}) or name the server's type with client.set_name::<{rust}>(\"…\")",
        served.join(", ")
    )]
    UnknownType {
        /// The Rust type.
        rust: &'static str,
        /// The server name asked for.
        name: String,
        /// The Rust type's layout, in the text form.
        layout: String,
        /// The names the server serves.
        served: Vec<String>,
    },
    /// The server's layout for the type's name is not the Rust type's own: its IDs would
    /// decode to other times, workers or sequences.
    #[error(
        "the server's type {name:?} has the layout {server}, and {rust} has {local}: its IDs are not {rust}s; serve {rust}'s layout under {name:?} (--id {name}={local}) or name another type with client.set_name::<{rust}>(\"…\")"
    )]
    LayoutMismatch {
        /// The Rust type.
        rust: &'static str,
        /// The server's name for it.
        name: String,
        /// The server's layout, as `ListTypes` gives it.
        server: String,
        /// The Rust type's layout, in the same text form.
        local: String,
    },
    /// The server answered an ID that is not one of the type's (a bit outside its layout).
    #[error("the server answered {id}, which is not a {rust}: {source}")]
    NotAnId {
        /// The Rust type.
        rust: &'static str,
        /// The ID's 64 bits.
        id: u64,
        /// Why the layout refuses it.
        #[source]
        source: LayoutError,
    },
}

fn after(status: &tonic::Status) -> String {
    crate::retry::retry_after(status).map(|d| format!(", retry after {d:?}")).unwrap_or_default()
}

fn tries(attempts: u32) -> String {
    if attempts > 1 { format!(", after {attempts} attempts") } else { String::new() }
}

/// The reasons under a status the transport made (`transport error: … received fatal alert:
/// CertificateRequired`); nothing for a server's own refusal.
fn status_causes(status: &tonic::Status) -> String {
    causes(status.message(), std::error::Error::source(status))
}

/// tonic's transport errors say "transport error" and keep the reason in their sources.
fn cause_chain(error: &tonic::transport::Error) -> String {
    causes("transport error", std::error::Error::source(error))
}

/// `: reason` for each cause after `said`, a reason said twice in a row (tonic's "transport
/// error" over tonic's "transport error") once.
fn causes(said: &str, first: Option<&(dyn std::error::Error + 'static)>) -> String {
    let mut text = String::new();
    let mut last = said.to_owned();
    let mut cause = first;
    while let Some(e) = cause {
        let reason = e.to_string();
        if reason != last {
            text.push_str(": ");
            text.push_str(&reason);
        }
        last = reason;
        cause = e.source();
    }
    text
}

impl Error {
    pub(crate) fn status(status: tonic::Status, attempts: u32) -> Error {
        Error::Status { status: Box::new(status), attempts }
    }

    /// The gRPC status code of a refused call, `None` for the other errors.
    ///
    /// ```
    /// let e = snowflake_client::Error::Tls { url: "http://x".into(), reason: "…".into() };
    /// assert_eq!(e.code(), None);
    /// ```
    pub fn code(&self) -> Option<tonic::Code> {
        match self {
            Error::Status { status, .. } => Some(status.code()),
            _ => None,
        }
    }

    /// The wait the server asked for (its `retry-after`), when it refused with one.
    ///
    /// ```
    /// let e = snowflake_client::Error::Tls { url: "http://x".into(), reason: "…".into() };
    /// assert_eq!(e.retry_after(), None);
    /// ```
    pub fn retry_after(&self) -> Option<Duration> {
        match self {
            Error::Status { status, .. } => crate::retry::retry_after(status),
            _ => None,
        }
    }
}
