//! Errors: every way an ID, a layout or a generation can go wrong, each saying why.

use std::path::PathBuf;
use std::sync::Arc;

use thiserror::Error;

pub use crate::fence::FenceReason;

/// A layout that cannot work. The derive reports these at compile time; hand-written
/// [`Layout`](crate::Layout)s get them from the `const fn` constructors.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum InvalidLayout {
    /// The time field has no bits.
    #[error("the time field needs at least 1 bit")]
    ZeroTime,
    /// The sequence field has no bits.
    #[error("the sequence field needs at least 1 bit")]
    ZeroSequence,
    /// The widths do not fit in 64 bits.
    #[error("the widths sum to {total}; at most 64 fit in an ID (63 in an i64 beside the sign bit)")]
    TooWide {
        /// The sum of the widths.
        total: u32,
    },
    /// A split node field with an empty half.
    #[error("datacenter and machine need at least 1 bit each")]
    EmptyNodeHalf,
    /// An epoch before the Unix epoch.
    #[error("the epoch {epoch_ms} lies before 1970-01-01")]
    EpochBefore1970 {
        /// The epoch, in Unix milliseconds.
        epoch_ms: i64,
    },
}

/// A value that is not an ID of the layout, or a part that does not fit in it.
///
/// ```
/// use typed_snowflake::{Layout, LayoutError};
///
/// let layout = Layout::new(41, 10, 12, 1_288_834_974_657)?;
/// let err = layout.validate(-5).unwrap_err();
/// assert_eq!(err.to_string(), "-5 is negative; a Snowflake ID is a positive i64");
/// Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum LayoutError {
    /// A negative value.
    #[error("{value} is negative; a Snowflake ID is a positive i64")]
    Negative {
        /// The value.
        value: i64,
    },
    /// A value with a bit set above the layout's widths.
    #[error("{value} sets bits above the layout's {used_bits} bits; it is not an ID of this type")]
    OutOfLayout {
        /// The value.
        value: u64,
        /// The bits the layout uses.
        used_bits: u32,
    },
    /// A time before the layout's epoch.
    #[error("time {unix_ms} (Unix ms) lies before the epoch {epoch_ms}")]
    BeforeEpoch {
        /// The time, in Unix milliseconds.
        unix_ms: i64,
        /// The epoch, in Unix milliseconds.
        epoch_ms: i64,
    },
    /// A time after the last one the time field can hold.
    #[error("time {unix_ms} (Unix ms) lies after {max_ms}, the last time the layout's time field holds")]
    TimeOverflow {
        /// The time, in Unix milliseconds.
        unix_ms: i64,
        /// The last Unix millisecond the layout holds.
        max_ms: i64,
    },
    /// A node value wider than the node field.
    #[error("worker {worker} is out of range; the layout holds 0..={max}")]
    WorkerOutOfRange {
        /// The value.
        worker: u64,
        /// The largest value that fits.
        max: u64,
    },
    /// A datacenter value wider than its half of the node field.
    #[error("datacenter {datacenter} is out of range; the layout holds 0..={max}")]
    DatacenterOutOfRange {
        /// The value.
        datacenter: u64,
        /// The largest value that fits.
        max: u64,
    },
    /// A machine value wider than its half of the node field.
    #[error("machine {machine} is out of range; the layout holds 0..={max}")]
    MachineOutOfRange {
        /// The value.
        machine: u64,
        /// The largest value that fits.
        max: u64,
    },
    /// A sequence number wider than the sequence field.
    #[error("sequence {sequence} is out of range; the layout holds 0..={max}")]
    SequenceOutOfRange {
        /// The value.
        sequence: u64,
        /// The largest value that fits.
        max: u64,
    },
    /// Datacenter and machine given for a layout whose node field is not split.
    #[error("the layout has no datacenter/machine split; declare it with `datacenter = N, machine = M`")]
    NotSplit,
}

/// Text that is not an ID: what [`FromStr`](core::str::FromStr) returns.
///
/// ```
/// use typed_snowflake::{Layout, ParseIdError};
///
/// let layout = Layout::new(41, 10, 12, 1_288_834_974_657)?;
/// assert_eq!(ParseIdError::parse(&layout, "12a"), Err(ParseIdError::InvalidDigit { position: 2, found: 'a' }));
/// assert_eq!(ParseIdError::parse(&layout, ""), Err(ParseIdError::Empty));
/// assert_eq!(ParseIdError::parse(&layout, "0042"), Ok(42));
/// Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum ParseIdError {
    /// Empty text.
    #[error("empty text is not an ID")]
    Empty,
    /// A leading `+` or `-`.
    #[error("an ID is written without a sign; found {sign:?} at the start")]
    Sign {
        /// The sign found.
        sign: char,
    },
    /// A character other than an ASCII digit.
    #[error("an ID is written in decimal digits; found {found:?} at byte {position}")]
    InvalidDigit {
        /// Byte offset of the character.
        position: usize,
        /// The character.
        found: char,
    },
    /// More than `i64::MAX`, for a layout of at most 63 bits.
    #[error("the number is larger than i64::MAX (9223372036854775807)")]
    Overflow,
    /// More than `u64::MAX`, for a 64-bit layout.
    #[error("the number is larger than u64::MAX (18446744073709551615)")]
    OverflowU64,
    /// A number that is not an ID of this layout.
    #[error(transparent)]
    Layout(#[from] LayoutError),
}

impl ParseIdError {
    /// Parses decimal text as an ID of `layout`: ASCII digits only (leading zeros allowed,
    /// as in zero-padded Redis members), no sign, no spaces, at most `i64::MAX` (`u64::MAX`
    /// for a 64-bit layout, whose IDs at or above 2^63 come back as their bit pattern), and
    /// no bit above the layout's widths.
    pub fn parse(layout: &crate::Layout, text: &str) -> Result<i64, ParseIdError> {
        let bytes = text.as_bytes();
        match bytes.first() {
            None => return Err(ParseIdError::Empty),
            Some(&sign @ (b'+' | b'-')) => return Err(ParseIdError::Sign { sign: char::from(sign) }),
            Some(_) => {}
        }
        // A character that is not a digit is reported first, wherever it is: a number too
        // large for an i64 followed by garbage is garbage, not an overflow.
        if let Some(position) = bytes.iter().position(|byte| !byte.is_ascii_digit()) {
            // Every byte before it is an ASCII digit, so `position` is a character boundary.
            let found = text[position..].chars().next().unwrap_or(char::REPLACEMENT_CHARACTER);
            return Err(ParseIdError::InvalidDigit { position, found });
        }
        let mut value: u64 = 0;
        for &byte in bytes {
            value = value
                .checked_mul(10)
                .and_then(|v| v.checked_add(u64::from(byte - b'0')))
                .ok_or(if layout.fits_i64() { ParseIdError::Overflow } else { ParseIdError::OverflowU64 })?;
        }
        if layout.fits_i64() && i64::try_from(value).is_err() {
            return Err(ParseIdError::Overflow);
        }
        Ok(layout.validate_u64(value)?)
    }
}

/// Text that is not a layout: what [`Layout`](crate::Layout)'s `FromStr` returns. The
/// messages are the derive's, with the keys written as the text form writes them.
///
/// ```
/// use typed_snowflake::{Layout, ParseLayoutError};
///
/// let err = "time=42,worker=5".parse::<Layout>().unwrap_err();
/// assert_eq!(err.to_string(), "the layout is missing `seq`, `epoch`: add `seq=12`, `epoch=2024-01-01` \
///     (a date, an RFC 3339 instant or Unix milliseconds)");
/// assert!(matches!("time=42,wroker=5".parse::<Layout>(), Err(ParseLayoutError::UnknownKey { .. })));
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum ParseLayoutError {
    /// Empty text.
    #[error("an empty layout; write e.g. `time=42,worker=5,seq=16,epoch=2021-05-05` or `preset=twitter`")]
    Empty,
    /// A part without `=`.
    #[error("expected `key=value`, found {part:?}")]
    NotKeyValue {
        /// The part of the text.
        part: String,
    },
    /// A value with a quote at one end only (`epoch="2021-05-05`).
    #[error(
        "the value of `{key}` has an unbalanced quote: {value}; quote the whole value (`{key} = \"...\"`) or not at all"
    )]
    UnbalancedQuote {
        /// The key.
        key: String,
        /// The value found.
        value: String,
    },
    /// A key that is not one of the known keys.
    #[error("unknown key `{key}`; the known keys are: {known}")]
    UnknownKey {
        /// The key.
        key: String,
        /// The known keys, comma-separated.
        known: &'static str,
    },
    /// A key given twice.
    #[error("duplicate key `{key}`; give each key once")]
    DuplicateKey {
        /// The key.
        key: String,
    },
    /// A width that is not an integer from 0 to 64.
    #[error("`{key}` is a width in bits: expected an integer from 0 to 64, e.g. `{key}=12`; found {value:?}")]
    BadWidth {
        /// The key.
        key: &'static str,
        /// The value found.
        value: String,
    },
    /// An epoch that is not a date, an instant or Unix milliseconds.
    #[error(
        "the epoch {value:?} is not usable: {reason}; expected `epoch=YYYY-MM-DD`, an RFC 3339 instant such as \
         2010-11-04T01:42:54.657Z, or Unix milliseconds such as `epoch=1288834974657`"
    )]
    BadEpoch {
        /// The value found.
        value: String,
        /// Why it is refused.
        reason: String,
    },
    /// A tick unit other than `1ms`, `10ms` or `1s`.
    #[error(
        "expected `unit=1ms` (the default), `unit=10ms` (Sonyflake) or `unit=1s` (Baidu uid-generator); found {value:?}"
    )]
    BadUnit {
        /// The value found.
        value: String,
    },
    /// A field order other than the two the engine knows.
    #[error("expected `order=time-worker-seq` (the default) or `order=time-seq-worker` (Sonyflake); found {value:?}")]
    BadOrder {
        /// The value found.
        value: String,
    },
    /// A preset name that is not known.
    #[error("unknown preset {name:?}; the presets are: {known}")]
    UnknownPreset {
        /// The name found.
        name: String,
        /// The preset names, comma-separated.
        known: &'static str,
    },
    /// A key that the chosen preset fixes.
    #[error("the {preset} preset fixes `{key}`: {reason}")]
    FixedByPreset {
        /// The preset.
        preset: &'static str,
        /// The key.
        key: &'static str,
        /// What the scheme leaves to the user.
        reason: &'static str,
    },
    /// Required keys that are absent.
    #[error("the layout is missing {keys}: add {examples}")]
    Missing {
        /// The absent keys, each in backticks.
        keys: String,
        /// An example for each.
        examples: String,
    },
    /// The node field given as `worker` and as `datacenter`/`machine`, or half of a split.
    #[error("{0}")]
    Node(&'static str),
    /// Widths, epoch or halves that do not make a layout.
    #[error(transparent)]
    Invalid(#[from] InvalidLayout),
}

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
    Lease(#[from] crate::worker::lease::LeaseError),
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
    use super::ParseIdError;
    use crate::Layout;

    #[test]
    fn a_bad_character_is_reported_before_overflow() -> Result<(), crate::InvalidLayout> {
        let layout = Layout::new(41, 10, 12, 1_288_834_974_657)?;
        let parse = |text: &str| ParseIdError::parse(&layout, text);
        assert_eq!(parse("99999999999999999999x"), Err(ParseIdError::InvalidDigit { position: 20, found: 'x' }));
        assert_eq!(parse("99999999999999999999 "), Err(ParseIdError::InvalidDigit { position: 20, found: ' ' }));
        assert_eq!(parse("9223372036854775808é"), Err(ParseIdError::InvalidDigit { position: 19, found: 'é' }));
        assert_eq!(parse("1x99999999999999999999"), Err(ParseIdError::InvalidDigit { position: 1, found: 'x' }));
        // All digits: overflow, then the layout.
        assert_eq!(parse("99999999999999999999"), Err(ParseIdError::Overflow));
        assert_eq!(parse("9223372036854775808"), Err(ParseIdError::Overflow));
        assert_eq!(parse("9223372036854775807"), Ok(i64::MAX));
        assert_eq!(parse("00000000000000000000000042"), Ok(42));
        Ok(())
    }

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
