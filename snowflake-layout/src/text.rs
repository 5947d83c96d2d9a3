//! The text form of a layout: `time=42,worker=5,seq=16,epoch=2021-05-05`, with `unit=`,
//! `datacenter=`/`machine=`, `order=` and `preset=`. The same rules and messages as
//! `#[layout(...)]`, and the attribute's own spelling is read too: spaces around `=`, quoted
//! values (`epoch = "2021-05-05"`), and the whole attribute pasted (`#[layout(...)]`).

use alloc::borrow::ToOwned;
use alloc::string::ToString;
use core::fmt;
use core::str::FromStr;

use crate::civil;
use crate::error::{EpochError, ParseLayoutError};
use crate::layout::{FieldOrder, Layout, TickUnit};
use crate::preset::Preset;
use crate::rules::{self, Given, KEYS, Keys};

fn set<T>(slot: &mut Given<T>, key: &str, value: T) -> Result<(), ParseLayoutError> {
    if slot.is_given() {
        return Err(ParseLayoutError::DuplicateKey { key: key.to_owned() });
    }
    *slot = Given::Value(value);
    Ok(())
}

fn width(key: &'static str, value: &str) -> Result<u32, ParseLayoutError> {
    let bad = || ParseLayoutError::BadWidth { key, value: value.to_owned() };
    if value.is_empty() || !value.bytes().all(|b| b.is_ascii_digit()) {
        return Err(bad());
    }
    value.parse::<u32>().ok().filter(|&w| w <= 64).ok_or_else(bad)
}

/// Parses an epoch as the derive does: `YYYY-MM-DD`, an RFC 3339 instant, or Unix
/// milliseconds; not before 1970-01-01. The error says why not.
///
/// ```
/// use snowflake_layout::{EpochError, parse_epoch};
///
/// assert_eq!(parse_epoch("2021-05-05"), Ok(1_620_172_800_000));
/// assert_eq!(parse_epoch("1288834974657"), Ok(1_288_834_974_657));
/// assert!(matches!(parse_epoch("1969-12-31"), Err(EpochError::Before1970 { .. })));
/// assert!(matches!(parse_epoch("-5"), Err(EpochError::Before1970 { .. })));
/// assert!(matches!(parse_epoch("yesterday"), Err(EpochError::Unreadable { .. })));
/// ```
pub fn parse_epoch(value: &str) -> Result<i64, EpochError> {
    let before = |date| EpochError::Before1970 { value: value.to_owned(), date };
    let ms = if !value.is_empty() && value.bytes().all(|b| b.is_ascii_digit()) {
        value.parse::<i64>().map_err(|_| EpochError::TooLarge)?
    } else if value.starts_with('-') && value.len() > 1 && value[1..].bytes().all(|b| b.is_ascii_digit()) {
        return Err(before(false));
    } else {
        civil::parse_date_or_instant(value).map_err(|reason| EpochError::Unreadable { reason })?
    };
    if ms < 0 {
        return Err(before(true));
    }
    Ok(ms)
}

impl FromStr for Layout {
    type Err = ParseLayoutError;

    /// Parses the text form. Keys may come in any order, separated by commas; spaces around
    /// keys and values are ignored, a value may be quoted as in the attribute, and the
    /// attribute may be pasted whole. [`Display`](fmt::Display) prints the canonical form.
    ///
    /// ```
    /// use snowflake_layout::{Layout, TickUnit};
    ///
    /// let order: Layout = "time=42,worker=5,seq=16,epoch=2021-05-05".parse()?;
    /// assert_eq!(order, Layout::new(42, 5, 16, 1_620_172_800_000)?);
    /// // The derive's own spelling, and the attribute pasted from the source.
    /// assert_eq!("time = 42, worker = 5, seq = 16, epoch = \"2021-05-05\"".parse::<Layout>()?, order);
    /// let pasted: Layout = r#"#[layout(time = 42, worker = 5, seq = 16, epoch = "2021-05-05")]"#.parse()?;
    /// assert_eq!(pasted.to_string(), "time=42,worker=5,seq=16,epoch=2021-05-05");
    /// let sony: Layout = "preset=sonyflake, epoch=2024-01-01".parse()?;
    /// assert_eq!((sony.unit(), sony.epoch_ms()), (TickUnit::TenMillis, 1_704_067_200_000));
    /// assert!("preset=discord,epoch=2024-01-01".parse::<Layout>().is_err()); // Discord's epoch is fixed
    /// assert!("time=42,worker=6,seq=17,epoch=0".parse::<Layout>().is_err()); // 65 bits
    /// Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    fn from_str(text: &str) -> Result<Layout, ParseLayoutError> {
        let keys = parse_keys(text)?;
        // The rules of `#[layout(...)]`, with the first mistake reported.
        match rules::resolve(&keys, 64) {
            (Some(layout), _) => Ok(layout),
            (None, issues) => {
                Err(issues.into_iter().next().map_or(ParseLayoutError::Empty, rules::Issue::into_parse_error))
            }
        }
    }
}

/// The keys of a layout's text form, each read and checked alone, before the rules that span
/// several keys ([`rules::resolve`]) and the expiry: what `FromStr` reads, for the derive,
/// which resolves them against its field's width (`#[layout("time=42,…")]`). The error is the
/// first key that cannot be read.
///
/// ```
/// use snowflake_layout::parse_keys;
///
/// let keys = parse_keys("time=42,worker=5,seq=16,epoch=2021-05-05")?;
/// assert_eq!((keys.time.value(), keys.epoch.value()), (Some(42), Some(1_620_172_800_000)));
/// assert!(parse_keys("time=42,wroker=5").is_err());
/// Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn parse_keys(text: &str) -> Result<Keys, ParseLayoutError> {
    let text = attribute_inside(text);
    if text.trim().is_empty() {
        return Err(ParseLayoutError::Empty);
    }
    let mut keys = Keys::default();
    for part in text.split(',') {
        let Some((key, value)) = part.split_once('=') else {
            return Err(ParseLayoutError::NotKeyValue { part: part.trim().to_owned() });
        };
        let key = key.trim();
        // Widths are numbers in the attribute too: only the other values may be quoted.
        let value = match key {
            "time" | "worker" | "datacenter" | "machine" | "seq" => value.trim(),
            _ => unquote(key, value.trim())?,
        };
        match key {
            "time" => set(&mut keys.time, key, width("time", value)?)?,
            "worker" => set(&mut keys.worker, key, width("worker", value)?)?,
            "datacenter" => set(&mut keys.datacenter, key, width("datacenter", value)?)?,
            "machine" => set(&mut keys.machine, key, width("machine", value)?)?,
            "seq" => set(&mut keys.seq, key, width("seq", value)?)?,
            "epoch" => {
                let ms = parse_epoch(value)
                    .map_err(|e| ParseLayoutError::BadEpoch { value: value.to_owned(), reason: e.to_string() })?;
                set(&mut keys.epoch, key, ms)?;
            }
            "unit" => {
                let unit =
                    TickUnit::parse(value).ok_or_else(|| ParseLayoutError::BadUnit { value: value.to_owned() })?;
                set(&mut keys.unit, key, unit)?;
            }
            "order" => {
                let order =
                    FieldOrder::parse(value).ok_or_else(|| ParseLayoutError::BadOrder { value: value.to_owned() })?;
                set(&mut keys.order, key, order)?;
            }
            "preset" => {
                let preset = Preset::get(value)
                    .ok_or_else(|| ParseLayoutError::UnknownPreset { name: value.to_owned(), known: Preset::NAMES })?;
                set(&mut keys.preset, key, preset)?;
            }
            _ => return Err(ParseLayoutError::UnknownKey { key: key.to_owned(), known: KEYS }),
        }
    }
    Ok(keys)
}

/// What lies inside `#[layout(...)]` or `layout(...)` when the attribute was pasted whole;
/// else the text itself.
fn attribute_inside(text: &str) -> &str {
    let trimmed = text.trim();
    let attribute = trimmed.strip_prefix("#[").and_then(|t| t.strip_suffix(']')).map_or(trimmed, str::trim);
    attribute
        .strip_prefix("layout")
        .map(str::trim_start)
        .and_then(|t| t.strip_prefix('('))
        .and_then(|t| t.strip_suffix(')'))
        .unwrap_or(text)
}

/// A value without the double quotes the attribute puts around strings (`"2021-05-05"`); a
/// quote at one end only is an error.
fn unquote<'a>(key: &str, value: &'a str) -> Result<&'a str, ParseLayoutError> {
    match (value.strip_prefix('"'), value.strip_suffix('"')) {
        (Some(_), Some(_)) if value.len() >= 2 => Ok(&value[1..value.len() - 1]),
        (None, None) => Ok(value),
        _ => Err(ParseLayoutError::UnbalancedQuote { key: key.to_owned(), value: value.to_owned() }),
    }
}

impl fmt::Display for Layout {
    /// The text form, which [`FromStr`] reads back: widths, the epoch (a date at UTC
    /// midnight, else an RFC 3339 instant), then `unit` and `order` where not the default.
    ///
    /// ```
    /// use snowflake_layout::Layout;
    ///
    /// assert_eq!(Layout::TWITTER.to_string(), "time=41,datacenter=5,machine=5,seq=12,epoch=2010-11-04T01:42:54.657Z");
    /// assert_eq!(Layout::SONYFLAKE.to_string(), "time=39,worker=16,seq=8,epoch=2014-09-01,unit=10ms,order=time-seq-worker");
    /// assert_eq!(Layout::SONYFLAKE.to_string().parse::<Layout>()?, Layout::SONYFLAKE);
    /// Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "time={}", self.time_bits())?;
        if self.is_split() {
            write!(f, ",datacenter={},machine={}", self.datacenter_bits(), self.machine_bits())?;
        } else {
            write!(f, ",worker={}", self.worker_bits())?;
        }
        write!(f, ",seq={},epoch={}", self.seq_bits(), civil::format_epoch(self.epoch_ms()))?;
        if self.unit() != TickUnit::Millis {
            write!(f, ",unit={}", self.unit().as_str())?;
        }
        if self.order() != FieldOrder::WorkerAboveSeq {
            write!(f, ",order={}", self.order().as_str())?;
        }
        Ok(())
    }
}
