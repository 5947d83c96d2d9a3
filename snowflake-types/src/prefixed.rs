//! Prefixed IDs: `ord_0sb3bcfh5q7zz`, an ID that keeps its type in JSON, URLs, logs and other
//! languages.
//!
//! A type declared with `#[snowflake(prefix = "ord")]` writes itself as its prefix, `_`, and
//! its 64 bits in 13 characters of lowercase Crockford base32. `Display`, `FromStr`, serde (a
//! string), the JSON and OpenAPI schemas (a `pattern`) and the GraphQL scalar use that form;
//! the integer is unchanged, so every database and Redis integration stores the same `BIGINT`
//! as before. `Debug` is left to the type's derive list, so a prefix drops into any list.
//!
//! ```
//! use typed_snowflake::SnowflakeId;
//!
//! #[derive(SnowflakeId, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Debug)]
//! #[layout(time = 41, worker = 10, seq = 12, epoch = 1288834974657)]
//! #[snowflake(prefix = "ord")]
//! struct OrderId(i64);
//!
//! let id = OrderId::try_from(1_724_551_110_457_221_119i64)?;
//! assert_eq!(id.to_string(), "ord_1fvpp347wxqzz");
//! assert_eq!(format!("{id:?}"), "OrderId(1724551110457221119)"); // the derive list's Debug
//! assert_eq!("ord_1fvpp347wxqzz".parse::<OrderId>()?, id);
//! assert_eq!(id.get(), 1_724_551_110_457_221_119); // the stored integer
//! let err = "usr_1fvpp347wxqzz".parse::<OrderId>().err().ok_or("accepted")?;
//! assert_eq!(err.to_string(), "expected an ord_ ID, found usr_…");
//! Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # The form
//!
//! - **Prefix**: 1 to 63 characters, lowercase ASCII letters and `_`, first and last a letter
//!   (the TypeID specification's rule; checked at compile time).
//! - **Separator**: `_`. A reader splits at the *last* `_`: the suffix never holds one.
//! - **Suffix**: always 13 characters from [`ALPHABET`], `0123456789abcdefghjkmnpqrstvwxyz`
//!   (Crockford's base32 in lowercase: no `i`, `l`, `o`, `u`), the most significant first.
//!   13 × 5 = 65 bits hold 64, so the first character carries only the top 4 bits and is `0`
//!   to `f`; for a type over `i64`, whose sign bit is always 0, it is `0` to `7`.
//! - **Order**: the alphabet is in ASCII order and the width is fixed, so comparing two
//!   suffixes as text compares the IDs as unsigned numbers: time order, as the integers sort.
//!   A 64-bit layout's IDs at or above 2^63 (a `u64` field) are written from their `u64`
//!   value, as their decimal `Display` is, so they sort after every smaller ID here too
//!   (a `BIGINT` column stores them negative and sorts them first: see `EncodeIdError`).
//!
//! # Reading
//!
//! Strict, as the TypeID specification asks: lowercase only (an uppercase letter, in the
//! prefix or the suffix, is an error that says to write it in lowercase), no hyphens, no
//! padding, and none of Crockford's decoding aliases (`i`, `l` for `1`, `o` for `0`): each ID
//! has exactly one spelling, so text that compares equal is the same ID. A first character
//! above `f` is an overflow; a value outside the type's layout is refused like every other
//! decoder refuses it. A bare number is refused with its own message, which names the
//! prefixed spelling when the number is an ID of the type; a type moving from decimal text
//! accepts both with `#[snowflake(prefix = "ord", accept_decimal)]` (see
//! `docs/prefixed-ids.md` in the repository for the migration).

use std::fmt;

use thiserror::Error;

use crate::ascii::Ascii;
use crate::error::LayoutError;
use crate::layout::Layout;

pub use snowflake_layout::{MAX_PREFIX_LEN, PrefixError, check_prefix};

/// The 32 characters of the suffix, value 0 to 31: Crockford's base32 alphabet in lowercase.
pub const ALPHABET: &[u8; 32] = b"0123456789abcdefghjkmnpqrstvwxyz";

/// The suffix's width: 13 characters for 64 bits.
pub const SUFFIX_LEN: usize = 13;

/// The longest prefixed ID: a 63-character prefix, `_` and the suffix.
pub const MAX_LEN: usize = MAX_PREFIX_LEN + 1 + SUFFIX_LEN;

/// Each byte's value in [`ALPHABET`], or `NOT_BASE32`.
const NOT_BASE32: u8 = 0xFF;
const DECODE: [u8; 256] = {
    let mut table = [NOT_BASE32; 256];
    let mut i = 0;
    while i < 32 {
        table[ALPHABET[i] as usize] = i as u8;
        i += 1;
    }
    table
};

/// Every pair of characters of [`ALPHABET`], `"00"` to `"zz"`, at its 10-bit value (the first
/// character's 5 bits above the second's): two characters per lookup, as decimal writers take
/// two digits per lookup. 2 KiB, in cache wherever IDs are written often; a first call reads
/// at most seven of its lines.
static PAIRS: [[u8; 2]; 1024] = {
    let mut pairs = [[0u8; 2]; 1024];
    let mut i = 0;
    while i < 1024 {
        pairs[i] = [ALPHABET[i >> 5], ALPHABET[i & 31]];
        i += 1;
    }
    pairs
};

/// The 13-character suffix of a raw ID (its `u64` bit pattern), most significant first.
///
/// The first character from the top 4 bits, then six pairs of characters, each looked up from
/// 10 bits in a table of every pair. The seven loads depend only on the ID, so they run side
/// by side and every character is known a few cycles after the ID is: `Display` and serde
/// hand the text on at once, and the copy that reads it back waits for exactly that.
/// Arithmetic on 5-bit lanes needs no table but chains about 20 dependent operations before a
/// character is known, which that copy then waits out (BENCHMARKS.md, "Text forms").
///
/// ```
/// use typed_snowflake::prefixed::encode_suffix;
///
/// assert_eq!(&encode_suffix(0), b"0000000000000");
/// assert_eq!(&encode_suffix(31), b"000000000000z");
/// assert_eq!(&encode_suffix(i64::MAX), b"7zzzzzzzzzzzz");
/// assert_eq!(&encode_suffix(-1), b"fzzzzzzzzzzzz"); // u64::MAX, a 64-bit layout's largest
/// ```
#[inline]
pub const fn encode_suffix(raw: i64) -> [u8; SUFFIX_LEN] {
    let value = raw.cast_unsigned();
    let mut suffix = [0u8; SUFFIX_LEN];
    // The top 4 bits: the second character of a pair whose first is `0`.
    suffix[0] = PAIRS[(value >> 60) as usize][1];
    let mut i = 0;
    while i < 6 {
        // Bits 50 - 10i to 59 - 10i: characters 1 + 2i and 2 + 2i.
        let pair = PAIRS[((value >> (50 - 10 * i)) & 0x3FF) as usize];
        suffix[1 + 2 * i] = pair[0];
        suffix[2 + 2 * i] = pair[1];
        i += 1;
    }
    suffix
}

/// The value of a 13-character suffix, or `None` when a character is outside [`ALPHABET`] or
/// the first is above `f` (more than 64 bits): the check folded into the one pass that reads
/// the value. [`parse`] and a prefixed type's `FromStr` call it, then say what was wrong.
///
/// ```
/// use typed_snowflake::prefixed::decode_suffix;
///
/// assert_eq!(decode_suffix(b"1fvpp347wxqzz"), Some(1_724_551_110_457_221_119));
/// assert_eq!(decode_suffix(b"fzzzzzzzzzzzz"), Some(u64::MAX));
/// assert_eq!(decode_suffix(b"gzzzzzzzzzzzz"), None); // 65 bits
/// assert_eq!(decode_suffix(b"1FVPP347WXQZZ"), None); // lowercase only
/// ```
#[inline]
pub const fn decode_suffix(suffix: &[u8; SUFFIX_LEN]) -> Option<u64> {
    // `NOT_BASE32` sets bits 5 to 7 of `seen`; the first character carries 4 bits, so a value
    // of 16 or more there (bits 4 to 7) is an overflow or a character outside the alphabet.
    let first = DECODE[suffix[0] as usize];
    let mut seen = 0u8;
    let mut value = first as u64;
    let mut i = 1;
    while i < SUFFIX_LEN {
        let digit = DECODE[suffix[i] as usize];
        seen |= digit;
        value = (value << 5) | digit as u64;
        i += 1;
    }
    if (first & 0xF0) | (seen & 0xE0) == 0 { Some(value) } else { None }
}

/// A prefixed ID written on the stack (at most [`MAX_LEN`] bytes): what `Display` and serde
/// write from, without allocating, and read back as text without a UTF-8 check.
///
/// ```
/// use typed_snowflake::prefixed::Written;
///
/// let written = Written::new("ord", 42);
/// assert_eq!(written.as_str(), "ord_000000000001a");
/// assert_eq!(written.as_bytes(), b"ord_000000000001a");
/// ```
#[derive(Clone, Copy)]
pub struct Written {
    text: Ascii<MAX_LEN>,
    len: usize,
}

impl Written {
    /// `prefix`, `_`, and the suffix of `raw`. A prefix is ASCII and at most 63 bytes (the
    /// prefix rule, [`check_prefix`]); one that is not (never a type's) is cut at 63 bytes
    /// and its bytes above ASCII lose their top bit.
    #[inline]
    pub fn new(prefix: &str, raw: i64) -> Self {
        let prefix = &prefix.as_bytes()[..prefix.len().min(MAX_PREFIX_LEN)];
        let (text, len) = Ascii::concat(&[prefix, b"_", &encode_suffix(raw)]);
        Self { text, len }
    }

    /// The text.
    #[inline]
    pub fn as_str(&self) -> &str {
        self.text.as_str(0..self.len)
    }

    /// The text's bytes.
    #[inline]
    pub fn as_bytes(&self) -> &[u8] {
        self.text.as_bytes(0..self.len)
    }
}

impl fmt::Display for Written {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(self.as_str())
    }
}

impl fmt::Debug for Written {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.as_str(), f)
    }
}

/// Calls `write` with `prefix`, `_` and the suffix of `raw`, written once into `N` bytes on
/// the stack, `N` being the text's length: a prefixed type's `Display` and serde (the derive
/// gives `N` from the type's prefix). [`Written`] holds room for the longest prefix instead.
///
/// Panics if `N` is not the text's length (`prefix.len() + 14`): a check the compiler
/// removes where the prefix is a constant.
///
/// ```
/// use typed_snowflake::prefixed::with_text;
///
/// assert_eq!(with_text::<17, _>("ord", 1_724_551_110_457_221_119, str::to_owned), "ord_1fvpp347wxqzz");
/// ```
#[inline(always)]
pub fn with_text<const N: usize, R>(prefix: &str, raw: i64, write: impl FnOnce(&str) -> R) -> R {
    assert!(prefix.len() + 1 + SUFFIX_LEN == N, "a prefixed text of another length than its buffer");
    let (text, len) = Ascii::<N>::concat(&[prefix.as_bytes(), b"_", &encode_suffix(raw)]);
    let text = OneLine(text);
    write(text.0.as_str(0..len))
}

/// A value aligned to a cache line (64 bytes), so that a text of up to 64 bytes lies in one.
///
/// The text is stored and at once read back by the writer's copy (`memcpy`: for 17 bytes, two
/// overlapping 16-byte loads), whose loads span several of the stores and so wait for them
/// to reach the cache. Where the stack put the text across two lines, each load also split
/// in two, and `Display` took half as long again (11 ns or 16 ns per ID, by where the
/// process's stack began: BENCHMARKS.md, "Text forms").
#[repr(C, align(64))]
struct OneLine<T>(T);

/// `prefix`, `_` and the suffix of `raw`, as a `String`.
///
/// ```
/// use typed_snowflake::prefixed::format;
///
/// assert_eq!(format("ord", 1_724_551_110_457_221_119), "ord_1fvpp347wxqzz");
/// ```
pub fn format(prefix: &str, raw: i64) -> String {
    Written::new(prefix, raw).as_str().to_owned()
}

/// Splits prefixed text at its last `_`: `("ord", "1fvpp347wxqzz")`, or `None` without one.
///
/// ```
/// use typed_snowflake::prefixed::split;
///
/// assert_eq!(split("line_item_0000000000001"), Some(("line_item", "0000000000001")));
/// assert_eq!(split("1724551110457221119"), None);
/// ```
pub fn split(text: &str) -> Option<(&str, &str)> {
    // `_` is ASCII: its byte never sits inside a multi-byte character.
    let at = text.as_bytes().iter().rposition(|&b| b == b'_')?;
    Some((&text[..at], &text[at + 1..]))
}

/// Whether bare numbers are accepted beside the prefixed form (during a migration from
/// decimal text).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Decimal {
    /// Only the prefixed form: a bare number is an error (the default).
    Refuse,
    /// The prefixed form and decimal digits (`#[snowflake(accept_decimal)]`).
    Accept,
}

/// Parses prefixed text for a prefix and a layout: the raw ID, checked against the layout.
/// The type-free form of a prefixed type's `FromStr`, for tools that know their types at run
/// time (the `snowflake` command, the HTTP service).
///
/// Text of the expected length that starts with the prefix and `_` is decoded in one pass
/// ([`decode_suffix`]); anything else, and any error, takes the slow path, which says what
/// is wrong.
///
/// ```
/// use typed_snowflake::Layout;
/// use typed_snowflake::prefixed::{Decimal, PrefixedIdError, parse};
///
/// assert_eq!(parse("ord", &Layout::TWITTER, Decimal::Refuse, "ord_1fvpp347wxqzz"), Ok(1_724_551_110_457_221_119));
/// assert!(matches!(
///     parse("ord", &Layout::TWITTER, Decimal::Refuse, "1724551110457221119"),
///     Err(PrefixedIdError::BareNumber { .. })
/// ));
/// assert_eq!(parse("ord", &Layout::TWITTER, Decimal::Accept, "1724551110457221119"), Ok(1_724_551_110_457_221_119));
/// ```
#[inline]
pub fn parse(prefix: &str, layout: &Layout, decimal: Decimal, text: &str) -> Result<i64, PrefixedIdError> {
    match parse_exact(prefix, layout, text.as_bytes()) {
        Some(raw) => Ok(raw),
        None => parse_slow(prefix, layout, decimal, text),
    }
}

/// [`parse`] on bytes (a request path, a buffer read from a socket), without first checking
/// them as UTF-8. Errors are those of [`parse`] on the text with each invalid sequence
/// replaced by `U+FFFD`, which no ID holds.
///
/// ```
/// use typed_snowflake::Layout;
/// use typed_snowflake::prefixed::{Decimal, PrefixedIdError, parse_bytes};
///
/// assert_eq!(parse_bytes("ord", &Layout::TWITTER, Decimal::Refuse, b"ord_1fvpp347wxqzz"), Ok(1_724_551_110_457_221_119));
/// assert_eq!(
///     parse_bytes("ord", &Layout::TWITTER, Decimal::Refuse, b"ord_1fvpp347wxqz\xff"),
///     Err(PrefixedIdError::InvalidChar { position: 16, found: char::REPLACEMENT_CHARACTER })
/// );
/// ```
#[inline]
pub fn parse_bytes(prefix: &str, layout: &Layout, decimal: Decimal, bytes: &[u8]) -> Result<i64, PrefixedIdError> {
    match parse_exact(prefix, layout, bytes) {
        Some(raw) => Ok(raw),
        None => parse_bytes_slow(prefix, layout, decimal, bytes),
    }
}

/// The fast path: `prefix`, `_` and 13 characters that decode to an ID of the layout; `None`
/// for anything else (which the slow path then explains, or accepts as decimal text). What
/// it accepts, the slow path accepts with the same value: the suffix holds no `_`, so the
/// last `_` is the one after the prefix.
#[inline(always)]
fn parse_exact(prefix: &str, layout: &Layout, bytes: &[u8]) -> Option<i64> {
    let (head, suffix) = bytes.split_at_checked(prefix.len() + 1)?;
    let suffix: &[u8; SUFFIX_LEN] = suffix.try_into().ok()?;
    let (found, separator) = head.split_at(prefix.len());
    if found != prefix.as_bytes() || separator != b"_" {
        return None;
    }
    layout.validate_u64(decode_suffix(suffix)?).ok()
}

#[cold]
#[inline(never)]
fn parse_bytes_slow(prefix: &str, layout: &Layout, decimal: Decimal, bytes: &[u8]) -> Result<i64, PrefixedIdError> {
    match std::str::from_utf8(bytes) {
        Ok(text) => parse_slow(prefix, layout, decimal, text),
        Err(_) => parse_slow(prefix, layout, decimal, &String::from_utf8_lossy(bytes)),
    }
}

/// Every rule of [`parse`] in order, for text the fast path did not take.
#[cold]
#[inline(never)]
fn parse_slow(prefix: &str, layout: &Layout, decimal: Decimal, text: &str) -> Result<i64, PrefixedIdError> {
    let expected = || prefix.to_owned();
    let bytes = text.as_bytes();
    if bytes.is_empty() {
        return Err(PrefixedIdError::Empty { expected: expected() });
    }
    if bytes.iter().all(u8::is_ascii_digit) {
        let parsed = layout.parse_id(text);
        return match (decimal, parsed) {
            (Decimal::Accept, Ok(raw)) => Ok(raw),
            (Decimal::Accept, Err(e)) => Err(PrefixedIdError::Decimal(e)),
            (Decimal::Refuse, parsed) => Err(PrefixedIdError::BareNumber {
                expected: expected(),
                number: shorten(text),
                spelled: parsed.ok().map(|raw| format(prefix, raw)),
            }),
        };
    }
    let Some((found, suffix)) = split(text) else {
        return Err(PrefixedIdError::MissingPrefix { expected: expected(), found: shorten(text) });
    };
    if found != prefix {
        return Err(PrefixedIdError::WrongPrefix { expected: expected(), found: shorten(found) });
    }
    let value = suffix_value(suffix, prefix.len() + 1, prefix)?;
    layout.validate_u64(value).map_err(PrefixedIdError::Layout)
}

/// Parses prefixed text whatever its prefix, for a tool that was given the layout: the
/// prefix found (checked against the prefix rule) and the raw ID, checked against the layout.
///
/// ```
/// use typed_snowflake::Layout;
///
/// let (prefix, raw) = typed_snowflake::prefixed::parse_any(&Layout::TWITTER, "usr_1fvpp347wxqzz")?;
/// assert_eq!((prefix, raw), ("usr", 1_724_551_110_457_221_119));
/// assert!(typed_snowflake::prefixed::parse_any(&Layout::TWITTER, "1724551110457221119").is_err());
/// assert!(typed_snowflake::prefixed::parse_any(&Layout::TWITTER, "USR_1fvpp347wxqzz").is_err());
/// Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn parse_any<'t>(layout: &Layout, text: &'t str) -> Result<(&'t str, i64), PrefixedIdError> {
    let Some((prefix, suffix)) = split(text) else {
        return Err(PrefixedIdError::NotPrefixed { found: shorten(text) });
    };
    if let Err(reason) = check_prefix(prefix) {
        return Err(PrefixedIdError::BadPrefix { found: shorten(prefix), reason });
    }
    let value = suffix_value(suffix, prefix.len() + 1, prefix)?;
    let raw = layout.validate_u64(value).map_err(PrefixedIdError::Layout)?;
    Ok((prefix, raw))
}

/// Takes the `prefix=…` entry out of a layout's text form, as `snowflake serve --id` and
/// `snowflake inspect --id` read a type (`order=prefix=ord,preset=leaf,epoch=2020-01-01`):
/// the checked prefix (if any) and the layout's text without it.
///
/// ```
/// use typed_snowflake::prefixed::{PrefixKeyError, take_prefix};
///
/// assert_eq!(take_prefix("prefix=ord,preset=leaf")?, (Some("ord".to_owned()), "preset=leaf".to_owned()));
/// assert_eq!(take_prefix("twitter, prefix = \"usr\"")?, (Some("usr".to_owned()), "twitter".to_owned()));
/// assert_eq!(take_prefix("preset=leaf")?, (None, "preset=leaf".to_owned()));
/// assert!(matches!(take_prefix("prefix=Ord,preset=leaf"), Err(PrefixKeyError::Invalid { .. })));
/// assert_eq!(take_prefix("prefix=a,prefix=b,twitter"), Err(PrefixKeyError::Duplicate));
/// Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn take_prefix(text: &str) -> Result<(Option<String>, String), PrefixKeyError> {
    let mut prefix = None;
    let mut rest = Vec::new();
    for part in text.split(',') {
        let value = part.split_once('=').filter(|(key, _)| key.trim() == "prefix").map(|(_, value)| value.trim());
        let Some(value) = value else {
            rest.push(part.trim());
            continue;
        };
        if prefix.is_some() {
            return Err(PrefixKeyError::Duplicate);
        }
        let value = value.strip_prefix('"').and_then(|v| v.strip_suffix('"')).unwrap_or(value);
        check_prefix(value).map_err(|reason| PrefixKeyError::Invalid { value: shorten(value), reason })?;
        prefix = Some(value.to_owned());
    }
    Ok((prefix, rest.join(",")))
}

/// A `prefix=…` entry that [`take_prefix`] refuses.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum PrefixKeyError {
    /// `prefix=` given twice.
    #[error("`prefix` is given twice; give each key once")]
    Duplicate,
    /// A value that breaks the prefix rule.
    #[error("prefix={value:?}: {reason}")]
    Invalid {
        /// The value (at most 40 characters, then `…`).
        value: String,
        /// Why.
        reason: PrefixError,
    },
}

/// The value of a 13-character suffix that starts at byte `offset` of the text (for the
/// positions errors give), or what is wrong with it.
fn suffix_value(suffix: &str, offset: usize, prefix: &str) -> Result<u64, PrefixedIdError> {
    let bytes = suffix.as_bytes();
    // A character outside the alphabet first, wherever it is: `ORD_…` in capitals or a stray
    // space says more than a length would.
    if let Some(at) = bytes.iter().position(|&b| DECODE[b as usize] == NOT_BASE32) {
        // Every byte before `at` is ASCII, so `at` is a character boundary.
        let found = suffix[at..].chars().next().unwrap_or(char::REPLACEMENT_CHARACTER);
        return Err(PrefixedIdError::InvalidChar { position: offset + at, found });
    }
    let Ok(exact) = <&[u8; SUFFIX_LEN]>::try_from(bytes) else {
        return Err(PrefixedIdError::Length { expected: prefix.to_owned(), len: bytes.len() });
    };
    // Every character is in the alphabet: only a first one above `f` is left to refuse.
    decode_suffix(exact).ok_or(PrefixedIdError::Overflow { found: char::from(bytes[0]) })
}

/// At most 40 characters of text, for an error message.
fn shorten(text: &str) -> String {
    match text.char_indices().nth(40) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text.to_owned(),
    }
}

/// `a` or `an` before a word in a message (a prefix, a type's name), by the sound of its
/// first letter: `an` before a, e, i and o (in either case), `a` before anything else, `u`
/// included (`a user ID`, `a usr_ ID`).
///
/// ```
/// use typed_snowflake::prefixed::article;
///
/// assert_eq!(format!("not {} order ID", article("order")), "not an order ID");
/// assert_eq!(format!("not {} OrderId", article("OrderId")), "not an OrderId");
/// assert_eq!(format!("not {} tweet ID", article("tweet")), "not a tweet ID");
/// assert_eq!(format!("not {} usr_ ID", article("usr")), "not a usr_ ID");
/// Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn article(word: &str) -> &'static str {
    match word.as_bytes().first().map(u8::to_ascii_lowercase) {
        Some(b'a' | b'e' | b'i' | b'o') => "an",
        _ => "a",
    }
}

fn wrong_prefix_hint(expected: &str, found: &str) -> &'static str {
    if found.eq_ignore_ascii_case(expected) { " (prefixes are written in lowercase)" } else { "" }
}

fn bare_number_hint(expected: &str, spelled: Option<&String>) -> String {
    match spelled {
        Some(spelled) => format!(": it is written {spelled}"),
        None => format!(" ({expected}_ and 13 lowercase base32 characters)"),
    }
}

fn invalid_char_hint(found: char) -> &'static str {
    match found {
        'A'..='Z' => "IDs are written in lowercase",
        'i' | 'l' | 'o' | 'u' => "the alphabet (Crockford's base32) leaves out i, l, o and u",
        _ => "an ID's characters are 0-9 and a-z without i, l, o, u",
    }
}

/// Text that is not a prefixed ID of a type: what a prefixed type's `FromStr` returns.
///
/// ```
/// use typed_snowflake::Layout;
/// use typed_snowflake::prefixed::{Decimal, PrefixedIdError, parse};
///
/// let parse = |text: &str| parse("ord", &Layout::TWITTER, Decimal::Refuse, text);
/// let says = |text: &str| parse(text).err().map(|e| e.to_string()).unwrap_or_default();
/// assert_eq!(says("usr_1fvpp347wxqzz"), "expected an ord_ ID, found usr_…");
/// assert_eq!(says("1724551110457221119"), "found the bare number 1724551110457221119 where an ord_ ID \
///     belongs: it is written ord_1fvpp347wxqzz");
/// assert_eq!(says("ord_1hvq3fyr0gZzz"), "'Z' at byte 14 is not a base32 character: IDs are written in lowercase");
/// assert_eq!(says("ord_1hvq3fyr0gzz"), "An ord_ ID has 13 characters after `ord_`; found 12");
/// assert_eq!(says("ord_zzzzzzzzzzzzz"), "'z' cannot start an ID: 13 characters hold 65 bits, so the first \
///     carries the top 4 and is 0 to f");
/// assert!(matches!(parse("ord_fzzzzzzzzzzzz"), Err(PrefixedIdError::Layout(_)))); // above 2^63
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum PrefixedIdError {
    /// Empty text.
    #[error("empty text is not an ID; expected {} {expected}_ ID", article(expected))]
    Empty {
        /// The type's prefix.
        expected: String,
    },
    /// Decimal digits only, where the prefixed form is expected.
    #[error(
        "found the bare number {number} where {} {expected}_ ID belongs{}",
        article(expected),
        bare_number_hint(expected, spelled.as_ref())
    )]
    BareNumber {
        /// The type's prefix.
        expected: String,
        /// The digits (at most 40, then `…`).
        number: String,
        /// The number in the prefixed form, when it is an ID of the type.
        spelled: Option<String>,
    },
    /// Text without `_` that is not a number either.
    #[error("expected {} {expected}_ ID, found {found:?}", article(expected))]
    MissingPrefix {
        /// The type's prefix.
        expected: String,
        /// The text (at most 40 characters, then `…`).
        found: String,
    },
    /// Another type's prefix (or this one in the wrong case).
    #[error("expected {} {expected}_ ID, found {}_…{}", article(expected), found.escape_debug(), wrong_prefix_hint(expected, found))]
    WrongPrefix {
        /// The type's prefix.
        expected: String,
        /// The prefix found (at most 40 characters, then `…`).
        found: String,
    },
    /// Text without `_`, where any prefix is accepted ([`parse_any`]).
    #[error("expected a prefixed ID (a prefix, `_` and 13 base32 characters), found {found:?}")]
    NotPrefixed {
        /// The text (at most 40 characters, then `…`).
        found: String,
    },
    /// A prefix that breaks the prefix rule, where any prefix is accepted
    /// ([`parse_any`]).
    #[error("{found:?} is not a prefix: {reason}")]
    BadPrefix {
        /// The prefix found (at most 40 characters, then `…`).
        found: String,
        /// Why.
        reason: PrefixError,
    },
    /// A character of the suffix outside the alphabet.
    #[error("{found:?} at byte {position} is not a base32 character: {}", invalid_char_hint(*found))]
    InvalidChar {
        /// Byte offset of the character in the whole text.
        position: usize,
        /// The character.
        found: char,
    },
    /// A suffix of another length than 13.
    #[error("{} {expected}_ ID has 13 characters after `{expected}_`; found {len}", capital(article(expected)))]
    Length {
        /// The type's prefix.
        expected: String,
        /// The suffix's length in bytes.
        len: usize,
    },
    /// A first character above `f`: more than 64 bits.
    #[error("{found:?} cannot start an ID: 13 characters hold 65 bits, so the first carries the top 4 and is 0 to f")]
    Overflow {
        /// The first character of the suffix.
        found: char,
    },
    /// Decimal text (accepted during a migration) that is not an ID.
    #[error(transparent)]
    Decimal(crate::error::ParseIdError),
    /// A value that is not an ID of the type's layout.
    #[error(transparent)]
    Layout(LayoutError),
}

fn capital(article: &str) -> &'static str {
    if article == "an" { "An" } else { "A" }
}

/// The regular expression of a prefixed ID of `layout`, for schemas: the prefix, `_`, a first
/// character `0`-`7` (a layout of at most 63 bits) or `0`-`f` (64 bits), twelve more.
///
/// ```
/// use typed_snowflake::Layout;
///
/// assert_eq!(typed_snowflake::prefixed::pattern("ord", &Layout::TWITTER), "^ord_[0-7][0-9a-hjkmnp-tv-z]{12}$");
/// assert_eq!(typed_snowflake::prefixed::pattern("ord", &Layout::DISCORD), "^ord_[0-9a-f][0-9a-hjkmnp-tv-z]{12}$");
/// ```
pub fn pattern(prefix: &str, layout: &Layout) -> String {
    let first = if layout.fits_i64() { "[0-7]" } else { "[0-9a-f]" };
    format!("^{prefix}_{first}[0-9a-hjkmnp-tv-z]{{12}}$")
}

#[cfg(test)]
mod tests {
    use super::{ALPHABET, DECODE, Decimal, PrefixedIdError, SUFFIX_LEN, encode_suffix, parse, pattern};
    use crate::layout::Layout;

    fn decode(suffix: &str) -> Result<u64, PrefixedIdError> {
        super::suffix_value(suffix, 0, "x")
    }

    #[test]
    fn a_buffer_of_the_texts_own_length_holds_what_the_longest_buffer_holds() {
        let raws = [0, 1, 31, 32, -1, i64::MAX, i64::MIN, 1_724_551_110_457_221_119, 0x0123_4567_89AB_CDEF];
        let prefix63 = "p".repeat(63);
        for raw in
            raws.into_iter().chain((0..2_000).map(|i: i64| i.wrapping_mul(0x9E37_79B9_7F4A_7C15_u64.cast_signed())))
        {
            assert_eq!(super::with_text::<15, _>("a", raw, str::to_owned), super::format("a", raw));
            assert_eq!(super::with_text::<16, _>("ab", raw, str::to_owned), super::format("ab", raw));
            assert_eq!(super::with_text::<17, _>("ord", raw, str::to_owned), super::format("ord", raw));
            assert_eq!(super::with_text::<24, _>("line_items", raw, str::to_owned), super::format("line_items", raw));
            assert_eq!(super::with_text::<77, _>(&prefix63, raw, str::to_owned), super::format(&prefix63, raw));
        }
    }

    #[test]
    fn the_text_lies_in_one_cache_line() {
        let starts = |text: &str| text.as_ptr().addr() % 64;
        assert_eq!(super::with_text::<17, _>("ord", -1, starts), 0);
        assert_eq!(super::with_text::<77, _>(&"p".repeat(63), 1, starts), 0);
    }

    #[test]
    fn the_alphabet_is_crockfords_in_ascii_order() {
        assert_eq!(ALPHABET.len(), 32);
        assert!(ALPHABET.windows(2).all(|w| w[0] < w[1]), "ASCII order is numeric order");
        for c in b"ilou" {
            assert!(!ALPHABET.contains(c));
        }
        for (i, &c) in ALPHABET.iter().enumerate() {
            assert_eq!(DECODE[c as usize] as usize, i);
        }
        assert_eq!(DECODE.iter().filter(|&&v| v != super::NOT_BASE32).count(), 32);
    }

    #[test]
    fn pairs_write_what_one_character_at_a_time_writes() {
        // Character by character from the alphabet: the plain reference.
        let reference = |value: u64| -> [u8; SUFFIX_LEN] {
            std::array::from_fn(|i| ALPHABET[usize::try_from((value >> (60 - 5 * i)) & 31).unwrap()])
        };
        let mut x = 0x9E37_79B9_7F4A_7C15_u64;
        let walk = std::iter::from_fn(|| {
            x = x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
            Some(x)
        });
        let edges = [0, 1, 31, 32, 1023, 1024, u64::MAX, u64::MAX >> 1, 1 << 63, 0x0123_4567_89AB_CDEF];
        for value in edges.into_iter().chain(walk.take(100_000)) {
            assert_eq!(encode_suffix(value.cast_signed()), reference(value), "{value:#x}");
        }
        for (i, pair) in super::PAIRS.iter().enumerate() {
            assert_eq!(*pair, [ALPHABET[i >> 5], ALPHABET[i & 31]]);
        }
    }

    #[test]
    fn every_bit_lands_in_its_place() {
        for bit in 0..64 {
            let value = 1u64 << bit;
            let text = encode_suffix(value.cast_signed());
            assert_eq!(text.len(), SUFFIX_LEN);
            assert_eq!(decode(std::str::from_utf8(&text).unwrap()), Ok(value), "bit {bit}");
            // The character that holds the bit, and only it, is not '0'.
            let position = SUFFIX_LEN - 1 - bit / 5;
            for (i, &c) in text.iter().enumerate() {
                assert_eq!(c != b'0', i == position, "bit {bit}, char {i}");
            }
        }
        assert_eq!(decode("fzzzzzzzzzzzz"), Ok(u64::MAX));
        assert_eq!(decode("0000000000000"), Ok(0));
    }

    #[test]
    fn hostile_suffixes_are_errors() {
        assert_eq!(decode("gzzzzzzzzzzzz"), Err(PrefixedIdError::Overflow { found: 'g' }));
        assert_eq!(decode("z000000000000"), Err(PrefixedIdError::Overflow { found: 'z' }));
        assert_eq!(decode(""), Err(PrefixedIdError::Length { expected: "x".into(), len: 0 }));
        assert_eq!(decode("00000000000000"), Err(PrefixedIdError::Length { expected: "x".into(), len: 14 }));
        assert_eq!(decode("000000000000é"), Err(PrefixedIdError::InvalidChar { position: 12, found: 'é' }));
        assert_eq!(decode("0000000000000\0"), Err(PrefixedIdError::InvalidChar { position: 13, found: '\0' }));
        for alias in ['i', 'l', 'o', 'u', 'I', 'O', '-', ' ', '_'] {
            let text = format!("00000{alias}0000000");
            assert_eq!(decode(&text), Err(PrefixedIdError::InvalidChar { position: 5, found: alias }), "{text}");
        }
    }

    #[test]
    fn hostile_texts_are_errors_with_their_own_messages() {
        let p = |text: &str| parse("ord", &Layout::TWITTER, Decimal::Refuse, text);
        let says = |text: &str| p(text).unwrap_err().to_string();
        assert_eq!(says(""), "empty text is not an ID; expected an ord_ ID");
        assert_eq!(says("ord_"), "An ord_ ID has 13 characters after `ord_`; found 0");
        assert_eq!(says("ord"), "expected an ord_ ID, found \"ord\"");
        assert_eq!(says("_1fvpp347wxqzz"), "expected an ord_ ID, found _…");
        assert_eq!(says("ORD_1fvpp347wxqzz"), "expected an ord_ ID, found ORD_… (prefixes are written in lowercase)");
        assert_eq!(says("ord_1HVQ3FYR0GZZZ"), "'H' at byte 5 is not a base32 character: IDs are written in lowercase");
        assert_eq!(says("ord_1fvpp347wxqzzz"), "An ord_ ID has 13 characters after `ord_`; found 14");
        assert_eq!(
            says("ord_1hvq3fyr0gzz\u{301}"),
            "'\\u{301}' at byte 16 is not a base32 character: an ID's characters are 0-9 and a-z without i, l, o, u"
        );
        assert_eq!(
            says("ord_1hvq3fyr0glzz"),
            "'l' at byte 14 is not a base32 character: the alphabet (Crockford's base32) leaves out i, l, o and u"
        );
        assert_eq!(says("-5"), "expected an ord_ ID, found \"-5\"");
        assert_eq!(
            says("99999999999999999999"),
            "found the bare number 99999999999999999999 where an ord_ ID belongs (ord_ and 13 lowercase base32 characters)"
        );
        assert!(says(&"9".repeat(100)).contains(&format!("{}…", "9".repeat(40))));
        assert!(
            says(&format!("{}_0000000000000", "x".repeat(100)))
                .starts_with(&format!("expected an ord_ ID, found {}…_…", "x".repeat(40)))
        );
        assert_eq!(says("usr\n_0000000000000"), "expected an ord_ ID, found usr\\n_…");
        assert_eq!(
            says("ord_1fvpp347wxqzz "),
            "' ' at byte 17 is not a base32 character: an ID's characters are 0-9 and a-z without i, l, o, u"
        );
        assert_eq!(
            p("ord_ord_1fvpp347wxqzz"),
            Err(PrefixedIdError::WrongPrefix { expected: "ord".into(), found: "ord_ord".into() })
        );
        // 8 to f: above 2^63, not an ID of a 63-bit layout.
        assert!(matches!(p("ord_8000000000000"), Err(PrefixedIdError::Layout(_))));
        // In layout bits, but above the 63 used: refused by the layout.
        let small = Layout::new(30, 4, 8, 1_600_000_000_000).unwrap();
        assert!(matches!(parse("ord", &small, Decimal::Refuse, "ord_0100000000000"), Err(PrefixedIdError::Layout(_))));
        assert!(parse("ord", &small, Decimal::Accept, "-1").is_err());
        assert!(matches!(
            parse("ord", &small, Decimal::Accept, "99999999999999999999"),
            Err(PrefixedIdError::Decimal(_))
        ));
        // The last valid one of a 64-bit layout.
        assert_eq!(parse("d", &Layout::DISCORD, Decimal::Refuse, "d_fzzzzzzzzzzzz"), Ok(-1));
        assert_eq!(pattern("d", &Layout::DISCORD), "^d_[0-9a-f][0-9a-hjkmnp-tv-z]{12}$");
    }
}
