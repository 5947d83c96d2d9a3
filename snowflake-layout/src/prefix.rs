//! The rule for a type prefix (`ord` in `ord_0sb3bcfh5q7zz`), once: the derive checks
//! `#[snowflake(prefix = "…")]` with it at compile time, `snowflake serve` checks the prefixes
//! of its configuration with it at start. The text form itself (the base32 suffix) belongs to
//! the runtime (`typed_snowflake::prefixed`).
//!
//! The rule is the TypeID specification's for a non-empty prefix: 1 to 63 characters, each a
//! lowercase ASCII letter or `_`, the first and the last a letter (`^[a-z]([a-z_]{0,61}[a-z])?$`).

use core::fmt;

/// The longest prefix, in characters (the TypeID specification's limit).
pub const MAX_PREFIX_LEN: usize = 63;

/// Checks a type prefix: 1 to 63 characters, lowercase ASCII letters and `_`, starting and
/// ending with a letter.
///
/// ```
/// use snowflake_layout::{PrefixError, check_prefix};
///
/// assert_eq!(check_prefix("ord"), Ok(()));
/// assert_eq!(check_prefix("line_item"), Ok(()));
/// assert_eq!(check_prefix(""), Err(PrefixError::Empty));
/// assert_eq!(check_prefix("Ord"), Err(PrefixError::InvalidChar { position: 0, found: 'O' }));
/// assert_eq!(check_prefix("ord_"), Err(PrefixError::Underscore { at_start: false }));
/// assert_eq!(
///     check_prefix("ord2").unwrap_err().to_string(),
///     "a prefix is lowercase ASCII letters and `_`; found '2' at byte 3"
/// );
/// ```
pub const fn check_prefix(prefix: &str) -> Result<(), PrefixError> {
    let bytes = prefix.as_bytes();
    if bytes.is_empty() {
        return Err(PrefixError::Empty);
    }
    let mut i = 0;
    while i < bytes.len() {
        let byte = bytes[i];
        if !(byte.is_ascii_lowercase() || byte == b'_') {
            return Err(PrefixError::InvalidChar { position: i, found: char_at(bytes, i) });
        }
        i += 1;
    }
    if bytes.len() > MAX_PREFIX_LEN {
        return Err(PrefixError::TooLong { len: bytes.len() });
    }
    if bytes[0] == b'_' {
        return Err(PrefixError::Underscore { at_start: true });
    }
    if bytes[bytes.len() - 1] == b'_' {
        return Err(PrefixError::Underscore { at_start: false });
    }
    Ok(())
}

/// The character starting at byte `i` of UTF-8 text (`i` is a boundary: every byte before it
/// was ASCII); U+FFFD if it cannot be read.
const fn char_at(bytes: &[u8], i: usize) -> char {
    let b0 = bytes[i];
    let (len, init) = match b0 {
        0x00..=0x7F => return b0 as char,
        0xC0..=0xDF => (2, (b0 & 0x1F) as u32),
        0xE0..=0xEF => (3, (b0 & 0x0F) as u32),
        0xF0..=0xF7 => (4, (b0 & 0x07) as u32),
        _ => return char::REPLACEMENT_CHARACTER,
    };
    if i + len > bytes.len() {
        return char::REPLACEMENT_CHARACTER;
    }
    let mut code = init;
    let mut k = 1;
    while k < len {
        code = (code << 6) | (bytes[i + k] & 0x3F) as u32;
        k += 1;
    }
    match char::from_u32(code) {
        Some(c) => c,
        None => char::REPLACEMENT_CHARACTER,
    }
}

/// A type prefix that breaks the rule of [`check_prefix`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum PrefixError {
    /// An empty prefix (a type without a prefix omits the key instead).
    Empty,
    /// More than 63 characters.
    TooLong {
        /// The prefix's length.
        len: usize,
    },
    /// A character other than a lowercase ASCII letter or `_`.
    InvalidChar {
        /// Byte offset of the character.
        position: usize,
        /// The character.
        found: char,
    },
    /// `_` as the first or the last character.
    Underscore {
        /// Whether it is the first character (else the last).
        at_start: bool,
    },
}

impl fmt::Display for PrefixError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PrefixError::Empty => {
                f.write_str("an empty prefix; write one such as \"ord\", or leave the prefix out for decimal IDs")
            }
            PrefixError::TooLong { len } => {
                write!(f, "the prefix has {len} characters; at most {MAX_PREFIX_LEN} are allowed")
            }
            PrefixError::InvalidChar { position, found } if found.is_ascii_uppercase() => write!(
                f,
                "a prefix is lowercase ASCII letters and `_`; found {found:?} at byte {position} (write {:?})",
                found.to_ascii_lowercase()
            ),
            PrefixError::InvalidChar { position, found } => {
                write!(f, "a prefix is lowercase ASCII letters and `_`; found {found:?} at byte {position}")
            }
            PrefixError::Underscore { at_start } => write!(
                f,
                "a prefix {} with a letter, not `_` (`_` separates the prefix from the ID)",
                if *at_start { "starts" } else { "ends" }
            ),
        }
    }
}

impl core::error::Error for PrefixError {}

#[cfg(test)]
mod tests {
    extern crate std;
    use std::string::ToString;

    use super::{PrefixError, check_prefix};

    #[test]
    fn the_typeid_rule() {
        for good in
            ["a", "ord", "line_item", "a_b_c", "abcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyzabcdefghijk"]
        {
            assert_eq!(check_prefix(good), Ok(()), "{good}");
        }
        let long = "a".repeat(64);
        assert_eq!(check_prefix(&long), Err(PrefixError::TooLong { len: 64 }));
        assert_eq!(check_prefix("_ord"), Err(PrefixError::Underscore { at_start: true }));
        assert_eq!(check_prefix("_"), Err(PrefixError::Underscore { at_start: true }));
        assert_eq!(check_prefix("ord-x"), Err(PrefixError::InvalidChar { position: 3, found: '-' }));
        assert_eq!(check_prefix("ordé"), Err(PrefixError::InvalidChar { position: 3, found: 'é' }));
        assert_eq!(check_prefix("o€"), Err(PrefixError::InvalidChar { position: 1, found: '€' }));
        assert_eq!(check_prefix("😀"), Err(PrefixError::InvalidChar { position: 0, found: '😀' }));
        assert_eq!(check_prefix("ord "), Err(PrefixError::InvalidChar { position: 3, found: ' ' }));
        assert_eq!(check_prefix("ORD"), Err(PrefixError::InvalidChar { position: 0, found: 'O' }));
        assert!(check_prefix("ORD").unwrap_err().to_string().contains("(write 'o')"));
    }
}
