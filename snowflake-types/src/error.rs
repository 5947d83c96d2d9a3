//! Errors: every way an ID, a layout or a generation can go wrong, each saying why.

use std::path::PathBuf;
use std::sync::Arc;

use thiserror::Error;

pub use crate::fence::FenceReason;

/// `LeaseError`, below this file and the leases; `worker::lease` re-exports it.
pub(crate) mod lease;

// The layout's own errors live with the layout rules (`snowflake-layout`), which the derive
// shares; they are errors of this crate as much as the others.
pub use snowflake_layout::{InvalidLayout, LayoutError, ParseIdError, ParseLayoutError};

/// A worker ID that could not be resolved.
///
/// ```
/// use typed_snowflake::{WorkerError, WorkerSource};
///
/// let err = WorkerSource::hostname_ordinal_of("no-ordinal").unwrap_err();
/// assert!(matches!(err, WorkerError::NoOrdinal { .. }));
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum WorkerError {
    /// An environment variable that is set but not a worker ID.
    #[error("environment variable {var}={value:?} is not a worker ID: {reason}")]
    BadEnv {
        /// The variable's name.
        var: String,
        /// Its value.
        value: String,
        /// Why it was refused.
        reason: String,
    },
    /// An environment variable that is set to a value its setting cannot use: an empty or
    /// blank `SNOWFLAKE_WORKER_LEASE` (`SNOWFLAKE_WORKER_LEASE=$REDIS_URL` with `REDIS_URL`
    /// unset), a `SNOWFLAKE_WORKER_SPACE` wider than the worker field of the type it serves,
    /// a value that is not UTF-8. It is refused rather than read as unset or cut down, which
    /// would give the process another worker ID without a word.
    #[error("environment variable {var}={value:?} cannot be used: {reason}")]
    UnusableEnv {
        /// The variable's name.
        var: String,
        /// Its value (not valid UTF-8: with the invalid bytes replaced by U+FFFD).
        value: String,
        /// Why it was refused, and what to do.
        reason: String,
    },
    /// An environment variable that is not set, for a source that requires it.
    #[error("environment variable {var} is not set")]
    MissingEnv {
        /// The variable's name.
        var: String,
    },
    /// A hostname without a trailing `-N` ordinal.
    #[error("hostname {hostname:?} has no StatefulSet ordinal (a trailing `-N`, as in `orders-7`)")]
    NoOrdinal {
        /// The hostname.
        hostname: String,
    },
    /// Two settings that exclude each other.
    #[error("{reason}")]
    Conflict {
        /// Which, and what to drop.
        reason: String,
    },
    /// The worker ID could not be leased.
    #[error(transparent)]
    Lease(#[from] lease::LeaseError),
    /// The hostname could not be read: `HOSTNAME` is unset or empty, and so are the
    /// hostname files (`/proc/sys/kernel/hostname`, `/etc/hostname`).
    #[error("the hostname could not be read: HOSTNAME is unset and {path} gave no name")]
    NoHostname {
        /// The last file tried.
        path: PathBuf,
        /// Why that file could not be read (`None` when it was empty).
        #[source]
        source: Option<IoError>,
    },
}

/// Why an ID could not be generated.
///
/// ```
/// use typed_snowflake::{GenerateError, SnowflakeId};
///
/// #[derive(SnowflakeId, Debug)]
/// #[layout(time = 42, worker = 5, seq = 16, epoch = "2021-05-05")]
/// struct OrderId(i64);
///
/// let err = OrderId::generate_batch(10_000_000).unwrap_err();
/// assert!(matches!(err, GenerateError::BatchTooLarge { .. }));
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum GenerateError {
    /// The clock is behind the last issued tick, and the clock's [`StepBack`](crate::StepBack)
    /// policy refused to go on.
    #[error("the clock is {behind_ms} ms behind the last issued ID; refusing to issue (clock step-back policy)")]
    ClockBackwards {
        /// How far behind, in milliseconds.
        behind_ms: i64,
    },
    /// The clock reads a time before the type's epoch.
    #[error("the clock reads {now_ms} (Unix ms), before the epoch {epoch_ms}")]
    ClockBeforeEpoch {
        /// The clock's reading.
        now_ms: i64,
        /// The type's epoch.
        epoch_ms: i64,
    },
    /// The time field is full: the clock has passed `MAX_TIMESTAMP_MS`.
    #[error(
        "the time field of {type_name} ran out at {max_ms} (Unix ms); the layout needs more time bits or a later epoch"
    )]
    TimeExhausted {
        /// The ID type.
        type_name: &'static str,
        /// The last Unix millisecond the layout holds.
        max_ms: i64,
    },
    /// The type is declared `#[snowflake(decode_only)]`: it decodes IDs and has no
    /// generator. Only generic code can ask (through [`SnowflakeId`](crate::SnowflakeId)):
    /// such a type has no inherent generation methods.
    #[error("{type_name} is #[snowflake(decode_only)]: it decodes IDs and has no generator")]
    DecodeOnly {
        /// The ID type.
        type_name: &'static str,
    },
    /// The worker ID does not fit in the type's node field.
    #[error("worker ID {worker} does not fit {type_name}, whose layout holds 0..={max}")]
    WorkerOutOfRange {
        /// The ID type.
        type_name: &'static str,
        /// The worker ID.
        worker: u64,
        /// The largest value that fits.
        max: u64,
    },
    /// The worker ID could not be resolved.
    #[error(transparent)]
    Worker(#[from] WorkerError),
    /// A batch larger than the limit.
    #[error("a batch of {requested} IDs exceeds the limit of {limit}")]
    BatchTooLarge {
        /// The size asked for.
        requested: usize,
        /// The limit (see `RegistryBuilder::batch_limit`).
        limit: usize,
    },
    /// The high-water file could not be read or written.
    #[error("high-water file {}: {reason}", path.display())]
    HighWater {
        /// The file.
        path: PathBuf,
        /// What went wrong.
        reason: String,
        /// The I/O error behind it, if any (its [`IoError::kind`] is matchable).
        #[source]
        source: Option<IoError>,
    },
    /// The worker ID's lease does not allow issuing: it was not renewed in time, it was
    /// lost or released. Generation resumes when a renewal succeeds (if the lease was not
    /// lost or released).
    #[error("worker ID {worker} in namespace {namespace:?} is fenced: {reason}")]
    Fenced {
        /// The lease's namespace.
        namespace: Arc<str>,
        /// The leased worker ID.
        worker: u64,
        /// Why.
        reason: FenceReason,
    },
    /// A leased worker ID does not fit the type's node field.
    #[error(
        "worker ID {worker} leased in namespace {namespace:?} does not fit {type_name}, whose layout holds 0..={max}: lease from a space no wider than the narrowest worker field"
    )]
    LeasedWorkerOutOfRange {
        /// The ID type.
        type_name: &'static str,
        /// The lease's namespace.
        namespace: Arc<str>,
        /// The leased worker ID.
        worker: u64,
        /// The largest value that fits.
        max: u64,
    },
    /// The registry's `install()` failed, so no ID is issued until an install succeeds
    /// (rather than under the defaults, which could give two replicas one worker ID).
    #[error("no ID is issued because the registry's install() failed: {0}")]
    Registry(#[source] RegistryError),
}

/// A registry that could not be installed.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum RegistryError {
    /// `install()` was called after a generator had been built from the configuration in
    /// force (an installed one, or the defaults).
    #[error(
        "the registry is already in use: generators were built from {} with worker ID {worker}; install() must run before the first ID is generated",
        if *from_defaults { "the default configuration" } else { "an installed configuration" }
    )]
    AlreadyInstalled {
        /// The worker ID in use.
        worker: u64,
        /// Whether that configuration came from the defaults (no `install()` before the first ID).
        from_defaults: bool,
    },
    /// The worker source could not be resolved.
    #[error(transparent)]
    Worker(#[from] WorkerError),
    /// The high-water directory is not usable.
    #[error("high-water directory {}: {reason}", path.display())]
    HighWater {
        /// The directory.
        path: PathBuf,
        /// What went wrong.
        reason: String,
        /// The I/O error behind it, if any.
        #[source]
        source: Option<IoError>,
    },
}

/// An error followed by its causes, each named once: `error: cause: cause of the cause`.
///
/// The convention of this crate's errors: every cause is returned by `source()`, and a
/// message may or may not name it too. Most leave it out (a high-water file's "cannot be
/// read" is followed by the I/O error); [`LeaseError`](crate::worker::lease::LeaseError)'s
/// messages name it, because the lease thread logs them on their own; and some drivers' do
/// (a Redis I/O error prints as the `std::io::Error` it also returns from `source()`). So a
/// printer of the chain appends a cause only when its text is not already in what it printed:
/// each cause appears once, whichever way the error in front of it was written.
/// `generate()`'s panic message and [`CheckError`](crate::CheckError)'s report print chains
/// this way.
pub(crate) struct Chain<'a>(pub(crate) &'a (dyn std::error::Error + 'static));

impl std::fmt::Display for Chain<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut text = self.0.to_string();
        let mut cause = self.0.source();
        while let Some(inner) = cause {
            let said = inner.to_string();
            if !said.is_empty() && !text.contains(&said) {
                text.push_str(": ");
                text.push_str(&said);
            }
            cause = inner.source();
        }
        f.write_str(&text)
    }
}

/// An [`std::io::Error`] kept as the cause of another error: shared, so the error that
/// holds it stays `Clone`, and compared by kind and message, so it stays `Eq`.
///
/// ```
/// use std::error::Error;
/// use std::io::ErrorKind;
/// use typed_snowflake::{GenerateError, Generator, Layout};
///
/// let dir = std::env::temp_dir().join(format!("typed-snowflake-doc-{}", std::process::id()));
/// std::fs::create_dir_all(&dir)?;
/// std::fs::create_dir_all(dir.join("mark.hwm"))?; // a directory where the file should be
/// let err = Generator::builder(Layout::new(41, 10, 12, 0)?)
///     .high_water(dir.join("mark.hwm"), std::time::Duration::from_secs(1))
///     .build()
///     .unwrap_err();
/// let GenerateError::HighWater { source: Some(io), .. } = &err else { panic!("{err}") };
/// assert_eq!(io.kind(), ErrorKind::IsADirectory);
/// assert!(err.source().is_some());
/// std::fs::remove_dir_all(&dir)?;
/// Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Debug)]
pub struct IoError(Arc<std::io::Error>);

impl IoError {
    /// The error's kind.
    pub fn kind(&self) -> std::io::ErrorKind {
        self.0.kind()
    }

    /// The I/O error itself.
    pub fn get_ref(&self) -> &std::io::Error {
        &self.0
    }
}

impl From<std::io::Error> for IoError {
    fn from(error: std::io::Error) -> IoError {
        IoError(Arc::new(error))
    }
}

impl PartialEq for IoError {
    fn eq(&self, other: &IoError) -> bool {
        self.kind() == other.kind() && self.0.to_string() == other.0.to_string()
    }
}

impl Eq for IoError {}

impl std::fmt::Display for IoError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}

impl std::error::Error for IoError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.0.source()
    }
}

#[cfg(test)]
mod tests {
    /// A driver's error that prints as its cause and returns it from `source()`, as a Redis
    /// I/O error does.
    #[derive(Debug)]
    struct PrintsItsCause(std::io::Error);

    impl std::fmt::Display for PrintsItsCause {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            self.0.fmt(f)
        }
    }

    impl std::error::Error for PrintsItsCause {
        fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
            Some(&self.0)
        }
    }

    #[test]
    fn chains_name_each_cause_once() {
        use super::{Chain, GenerateError, IoError, WorkerError};
        use crate::worker::lease::LeaseError;

        let refused =
            || std::io::Error::new(std::io::ErrorKind::ConnectionRefused, "Connection refused (os error 111)");
        // A message that names its cause, in front of a cause that prints as its own cause.
        let lease = LeaseError::Store {
            store: "redis://127.0.0.1:1/0".into(),
            what: "reading the clock".into(),
            source: std::sync::Arc::new(PrintsItsCause(refused())),
        };
        let error = GenerateError::Worker(WorkerError::Lease(lease));
        assert_eq!(
            Chain(&error).to_string(),
            "lease store redis://127.0.0.1:1/0: reading the clock failed: Connection refused (os error 111)"
        );
        // A message that leaves its cause out is followed by it.
        let high_water = GenerateError::HighWater {
            path: "/var/lib/ids/OrderId-3.hwm".into(),
            reason: "cannot be read".into(),
            source: Some(IoError::from(std::io::Error::new(std::io::ErrorKind::IsADirectory, "Is a directory"))),
        };
        assert_eq!(
            Chain(&high_water).to_string(),
            "high-water file /var/lib/ids/OrderId-3.hwm: cannot be read: Is a directory"
        );
        // A registry that failed to install: the generation error's source is the registry
        // error, whose source is the I/O error; each named once.
        let registry = GenerateError::Registry(super::RegistryError::HighWater {
            path: "/var/lib/ids".into(),
            reason: "is not writable".into(),
            source: Some(IoError::from(std::io::Error::new(std::io::ErrorKind::PermissionDenied, "Permission denied"))),
        });
        let cause = std::error::Error::source(&registry).expect("the registry error");
        assert!(cause.downcast_ref::<super::RegistryError>().is_some(), "{cause:?}");
        let io = cause.source().expect("the I/O error");
        assert_eq!(io.downcast_ref::<IoError>().map(IoError::kind), Some(std::io::ErrorKind::PermissionDenied));
        assert_eq!(
            Chain(&registry).to_string(),
            "no ID is issued because the registry's install() failed: high-water directory /var/lib/ids: is not writable: Permission denied"
        );
        // No cause: the message alone.
        let plain = GenerateError::BatchTooLarge { requested: 3, limit: 2 };
        assert_eq!(Chain(&plain).to_string(), plain.to_string());
    }
}
