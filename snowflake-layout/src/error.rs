//! The errors of layouts: widths that cannot work, values that are not IDs, text that is not
//! a layout. Each message says why.

use alloc::string::String;
use core::fmt;

use crate::spelling::{self as rules, Spelling};

/// A layout that cannot work. The derive reports these at compile time; hand-written
/// [`Layout`](crate::Layout)s get them from the `const fn` constructors.
///
/// ```
/// use snowflake_layout::{InvalidLayout, Layout};
///
/// assert_eq!(Layout::new(0, 10, 12, 0), Err(InvalidLayout::ZeroTime));
/// assert_eq!(InvalidLayout::ZeroTime.to_string(), "the time field needs at least 1 bit");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum InvalidLayout {
    /// The time field has no bits.
    ZeroTime,
    /// The sequence field has no bits.
    ZeroSequence,
    /// The widths do not fit in 64 bits.
    TooWide {
        /// The sum of the widths.
        total: u32,
    },
    /// A split node field with an empty half.
    EmptyNodeHalf,
    /// An epoch before the Unix epoch.
    EpochBefore1970 {
        /// The epoch, in Unix milliseconds.
        epoch_ms: i64,
    },
}

impl fmt::Display for InvalidLayout {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            InvalidLayout::ZeroTime => f.write_str("the time field needs at least 1 bit"),
            InvalidLayout::ZeroSequence => f.write_str("the sequence field needs at least 1 bit"),
            InvalidLayout::TooWide { total } => {
                write!(f, "the widths sum to {total}; at most 64 fit in an ID (63 in an i64 beside the sign bit)")
            }
            InvalidLayout::EmptyNodeHalf => f.write_str("datacenter and machine need at least 1 bit each"),
            InvalidLayout::EpochBefore1970 { epoch_ms } => write!(f, "the epoch {epoch_ms} lies before 1970-01-01"),
        }
    }
}

impl core::error::Error for InvalidLayout {}

/// A value that is not an ID of the layout, or a part that does not fit in it.
///
/// ```
/// use snowflake_layout::{Layout, LayoutError};
///
/// let layout = Layout::new(41, 10, 12, 1_288_834_974_657)?;
/// let err = layout.validate(-5).unwrap_err();
/// assert_eq!(err.to_string(), "-5 is negative; a Snowflake ID is a positive i64");
/// Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum LayoutError {
    /// A negative value.
    Negative {
        /// The value.
        value: i64,
    },
    /// A value with a bit set above the layout's widths.
    OutOfLayout {
        /// The value.
        value: u64,
        /// The bits the layout uses.
        used_bits: u32,
    },
    /// A time before the layout's epoch.
    BeforeEpoch {
        /// The time, in Unix milliseconds.
        unix_ms: i64,
        /// The epoch, in Unix milliseconds.
        epoch_ms: i64,
    },
    /// A time after the last one the time field can hold.
    TimeOverflow {
        /// The time, in Unix milliseconds.
        unix_ms: i64,
        /// The last Unix millisecond the layout holds.
        max_ms: i64,
    },
    /// A node value wider than the node field.
    WorkerOutOfRange {
        /// The value.
        worker: u64,
        /// The largest value that fits.
        max: u64,
    },
    /// A datacenter value wider than its half of the node field.
    DatacenterOutOfRange {
        /// The value.
        datacenter: u64,
        /// The largest value that fits.
        max: u64,
    },
    /// A machine value wider than its half of the node field.
    MachineOutOfRange {
        /// The value.
        machine: u64,
        /// The largest value that fits.
        max: u64,
    },
    /// A sequence number wider than the sequence field.
    SequenceOutOfRange {
        /// The value.
        sequence: u64,
        /// The largest value that fits.
        max: u64,
    },
    /// Datacenter and machine given for a layout whose node field is not split.
    NotSplit,
}

impl fmt::Display for LayoutError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LayoutError::Negative { value } => write!(f, "{value} is negative; a Snowflake ID is a positive i64"),
            LayoutError::OutOfLayout { value, used_bits } => {
                write!(f, "{value} sets bits above the layout's {used_bits} bits; it is not an ID of this type")
            }
            LayoutError::BeforeEpoch { unix_ms, epoch_ms } => {
                write!(f, "time {unix_ms} (Unix ms) lies before the epoch {epoch_ms}")
            }
            LayoutError::TimeOverflow { unix_ms, max_ms } => {
                write!(f, "time {unix_ms} (Unix ms) lies after {max_ms}, the last time the layout's time field holds")
            }
            LayoutError::WorkerOutOfRange { worker, max } => {
                write!(f, "worker {worker} is out of range; the layout holds 0..={max}")
            }
            LayoutError::DatacenterOutOfRange { datacenter, max } => {
                write!(f, "datacenter {datacenter} is out of range; the layout holds 0..={max}")
            }
            LayoutError::MachineOutOfRange { machine, max } => {
                write!(f, "machine {machine} is out of range; the layout holds 0..={max}")
            }
            LayoutError::SequenceOutOfRange { sequence, max } => {
                write!(f, "sequence {sequence} is out of range; the layout holds 0..={max}")
            }
            LayoutError::NotSplit => {
                f.write_str("the layout has no datacenter/machine split; declare it with `datacenter = N, machine = M`")
            }
        }
    }
}

impl core::error::Error for LayoutError {}

/// Text that is not an ID: what [`Layout::parse_id`](crate::Layout::parse_id) returns, and
/// the `FromStr` of every derived ID type.
///
/// ```
/// use snowflake_layout::{Layout, ParseIdError};
///
/// let layout = Layout::new(41, 10, 12, 1_288_834_974_657)?;
/// assert_eq!(layout.parse_id("12a"), Err(ParseIdError::InvalidDigit { position: 2, found: 'a' }));
/// assert_eq!(layout.parse_id(""), Err(ParseIdError::Empty));
/// assert_eq!(layout.parse_id("0042"), Ok(42));
/// Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ParseIdError {
    /// Empty text.
    Empty,
    /// A leading `+` or `-`.
    Sign {
        /// The sign found.
        sign: char,
    },
    /// A character other than an ASCII digit.
    InvalidDigit {
        /// Byte offset of the character.
        position: usize,
        /// The character.
        found: char,
    },
    /// More than `i64::MAX`, for a layout of at most 63 bits.
    Overflow,
    /// More than `u64::MAX`, for a 64-bit layout.
    OverflowU64,
    /// A number that is not an ID of this layout.
    Layout(LayoutError),
}

impl fmt::Display for ParseIdError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ParseIdError::Empty => f.write_str("empty text is not an ID"),
            ParseIdError::Sign { sign } => write!(f, "an ID is written without a sign; found {sign:?} at the start"),
            ParseIdError::InvalidDigit { position, found } => {
                write!(f, "an ID is written in decimal digits; found {found:?} at byte {position}")
            }
            ParseIdError::Overflow => f.write_str("the number is larger than i64::MAX (9223372036854775807)"),
            ParseIdError::OverflowU64 => f.write_str("the number is larger than u64::MAX (18446744073709551615)"),
            ParseIdError::Layout(e) => e.fmt(f),
        }
    }
}

// `Layout` is transparent, as its message is the layout error's own: it has no source of its
// own to name (the inner error has none either).
impl core::error::Error for ParseIdError {}

impl From<LayoutError> for ParseIdError {
    fn from(e: LayoutError) -> Self {
        ParseIdError::Layout(e)
    }
}

/// An epoch that is not usable: what [`parse_epoch`](crate::parse_epoch) returns.
///
/// ```
/// use snowflake_layout::{EpochError, parse_epoch};
///
/// assert_eq!(parse_epoch("99999999999999999999"), Err(EpochError::TooLarge));
/// assert_eq!(
///     parse_epoch("1969-12-31").unwrap_err().to_string(),
///     "the epoch \"1969-12-31\" lies before 1970-01-01; choose a date at or after the Unix epoch"
/// );
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum EpochError {
    /// Negative Unix milliseconds, or a date or instant before 1970-01-01.
    Before1970 {
        /// The text given.
        value: String,
        /// Whether it was a date or an instant (else a negative number).
        date: bool,
    },
    /// Unix milliseconds beyond `i64::MAX`.
    TooLarge,
    /// Neither a number nor a date nor an RFC 3339 instant.
    Unreadable {
        /// Why, naming the part that is wrong.
        reason: String,
    },
}

impl fmt::Display for EpochError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            EpochError::Before1970 { value, date: false } => write!(
                f,
                "the epoch {value} lies before 1970-01-01; IDs count time from an epoch at or after the Unix epoch"
            ),
            EpochError::Before1970 { value, date: true } => {
                write!(f, "the epoch {value:?} lies before 1970-01-01; choose a date at or after the Unix epoch")
            }
            EpochError::TooLarge => f.write_str("the epoch in Unix milliseconds must fit in an i64"),
            EpochError::Unreadable { reason } => f.write_str(reason),
        }
    }
}

impl core::error::Error for EpochError {}

/// Text that is not a layout: what [`Layout`](crate::Layout)'s `FromStr` returns. The
/// messages are the derive's, with the keys written as the text form writes them.
///
/// ```
/// use snowflake_layout::{Layout, ParseLayoutError};
///
/// let err = "time=42,worker=5".parse::<Layout>().unwrap_err();
/// assert_eq!(err.to_string(), "the layout is missing `seq`, `epoch`: add `seq=12`, `epoch=2024-01-01` \
///     (a date, an RFC 3339 instant or Unix milliseconds)");
/// assert!(matches!("time=42,wroker=5".parse::<Layout>(), Err(ParseLayoutError::UnknownKey { .. })));
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ParseLayoutError {
    /// Empty text.
    Empty,
    /// A part without `=`.
    NotKeyValue {
        /// The part of the text.
        part: String,
    },
    /// A value with a quote at one end only (`epoch="2021-05-05`).
    UnbalancedQuote {
        /// The key.
        key: String,
        /// The value found.
        value: String,
    },
    /// A key that is not one of the known keys.
    UnknownKey {
        /// The key.
        key: String,
        /// The known keys, comma-separated.
        known: &'static str,
    },
    /// A key given twice.
    DuplicateKey {
        /// The key.
        key: String,
    },
    /// A width that is not an integer from 0 to 64.
    BadWidth {
        /// The key.
        key: &'static str,
        /// The value found.
        value: String,
    },
    /// An epoch that is not a date, an instant or Unix milliseconds.
    BadEpoch {
        /// The value found.
        value: String,
        /// Why it is refused.
        reason: String,
    },
    /// A tick unit other than `1ms`, `10ms` or `1s`.
    BadUnit {
        /// The value found.
        value: String,
    },
    /// A field order other than the two the engine knows.
    BadOrder {
        /// The value found.
        value: String,
    },
    /// A preset name that is not known.
    UnknownPreset {
        /// The name found.
        name: String,
        /// The preset names, comma-separated.
        known: &'static str,
    },
    /// A key that the chosen preset fixes.
    FixedByPreset {
        /// The preset.
        preset: &'static str,
        /// The key.
        key: &'static str,
        /// What the scheme leaves to the user.
        reason: &'static str,
    },
    /// Required keys that are absent.
    Missing {
        /// The absent keys, each in backticks.
        keys: String,
        /// An example for each.
        examples: String,
    },
    /// The node field given as `worker` and as `datacenter`/`machine`, or half of a split.
    Node(&'static str),
    /// Widths, epoch or halves that do not make a layout.
    Invalid(InvalidLayout),
}

impl fmt::Display for ParseLayoutError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let text = Spelling::Text;
        match self {
            ParseLayoutError::Empty => f.write_str(
                "an empty layout; write e.g. `time=42,worker=5,seq=16,epoch=2021-05-05` or `preset=twitter`",
            ),
            ParseLayoutError::NotKeyValue { part } => write!(f, "expected `key=value`, found {part:?}"),
            ParseLayoutError::UnbalancedQuote { key, value } => write!(
                f,
                "the value of `{key}` has an unbalanced quote: {value}; quote the whole value (`{key} = \"...\"`) or \
                 not at all"
            ),
            ParseLayoutError::UnknownKey { key, known } => {
                write!(f, "unknown key `{key}`; the known keys are: {known}")
            }
            ParseLayoutError::DuplicateKey { key } => write!(f, "duplicate key `{key}`; give each key once"),
            ParseLayoutError::BadWidth { key, value } => {
                write!(
                    f,
                    "`{key}` is a width in bits: expected an integer from 0 to 64, e.g. `{key}=12`; found {value:?}"
                )
            }
            ParseLayoutError::BadEpoch { value, reason } => {
                write!(f, "the epoch {value:?} is not usable: {reason}; {}", rules::EPOCH_EXPECTED.get(text))
            }
            ParseLayoutError::BadUnit { value } => write!(f, "{}; found {value:?}", rules::UNIT_EXPECTED.get(text)),
            ParseLayoutError::BadOrder { value } => write!(f, "{}; found {value:?}", rules::ORDER_EXPECTED.get(text)),
            ParseLayoutError::UnknownPreset { name, known } => {
                write!(f, "unknown preset {name:?}; the presets are: {known}")
            }
            ParseLayoutError::FixedByPreset { preset, key, reason } => {
                write!(f, "the {preset} preset fixes `{key}`: {reason}")
            }
            ParseLayoutError::Missing { keys, examples } => write!(f, "the layout is missing {keys}: add {examples}"),
            ParseLayoutError::Node(message) => f.write_str(message),
            ParseLayoutError::Invalid(e) => e.fmt(f),
        }
    }
}

impl core::error::Error for ParseLayoutError {}

impl From<InvalidLayout> for ParseLayoutError {
    fn from(e: InvalidLayout) -> Self {
        ParseLayoutError::Invalid(e)
    }
}
