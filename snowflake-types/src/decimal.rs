//! Decimal IDs without allocating: written into a stack buffer, read from bytes.
//!
//! The decimal form is the text of every type without a prefix, and the stored form of
//! every type (a Redis value, a decimal column): the digits of the ID's `u64` bit pattern.
//! Writing takes two digits per table lookup; reading
//! ([`Layout::parse_id_bytes`](crate::Layout::parse_id_bytes), what `FromStr` and serde
//! call) takes eight digits per step, checking them in the same pass. The rules of the text
//! (no sign, no space, leading zeros allowed) are [`Layout::parse_id`](crate::Layout::parse_id)'s.
//!
//! ```
//! use typed_snowflake::Layout;
//! use typed_snowflake::decimal::Written;
//!
//! let written = Written::new(1_724_551_110_457_221_119);
//! assert_eq!(written.as_str(), "1724551110457221119");
//! assert_eq!(Layout::TWITTER.parse_id_bytes(written.as_bytes())?, 1_724_551_110_457_221_119);
//! Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::fmt;

use crate::ascii::Ascii;

/// The longest decimal text: `u64::MAX` has 20 digits.
pub const MAX_LEN: usize = 20;

/// Pairs of digits, `"00"` to `"99"`: two digits per division, as `itoa` does.
const DIGIT_PAIRS: [[u8; 2]; 100] = {
    let mut pairs = [[0u8; 2]; 100];
    let mut i = 0;
    while i < 100 {
        // i < 100, so both quotients fit in a u8.
        #[allow(clippy::cast_possible_truncation)]
        {
            pairs[i] = [b'0' + (i / 10) as u8, b'0' + (i % 10) as u8];
        }
        i += 1;
    }
    pairs
};

/// Writes the two digits of `pair` (below 100) ending at `end`.
#[inline(always)]
fn put_pair(buf: &mut [u8; MAX_LEN], end: usize, pair: u32) {
    let [tens, ones] = DIGIT_PAIRS[pair as usize % 100];
    buf[end - 2] = tens;
    buf[end - 1] = ones;
}

/// Writes `value` in decimal at the end of `buf` and returns where it starts.
///
/// Four digits per 64-bit division, then two per 32-bit one.
#[inline]
fn write(value: u64, buf: &mut [u8; MAX_LEN]) -> usize {
    let mut n = value;
    let mut pos = MAX_LEN;
    while n >= 10_000 {
        // n % 10_000 < 10_000 fits in a u32.
        #[allow(clippy::cast_possible_truncation)]
        let rem = (n % 10_000) as u32;
        n /= 10_000;
        put_pair(buf, pos, rem % 100);
        put_pair(buf, pos - 2, rem / 100);
        pos -= 4;
    }
    // n < 10_000 here.
    #[allow(clippy::cast_possible_truncation)]
    let mut n = n as u32;
    if n >= 100 {
        put_pair(buf, pos, n % 100);
        n /= 100;
        pos -= 2;
    }
    if n >= 10 {
        put_pair(buf, pos, n);
        pos -= 2;
    } else {
        pos -= 1;
        // n < 10 fits in a u8.
        #[allow(clippy::cast_possible_truncation)]
        {
            buf[pos] = b'0' + n as u8;
        }
    }
    pos
}

/// A `u64` written in decimal on the stack (at most [`MAX_LEN`] bytes): what serde writes an
/// ID's digits from, read back as text without a UTF-8 check. A raw ID is written as its
/// `u64` bit pattern (`id.get().cast_unsigned()`, or `u64::from(id)`): the same digits as
/// the `i64` for every ID below 2^63, and the right ones for a 64-bit layout's IDs above it.
///
/// ```
/// use typed_snowflake::decimal::Written;
///
/// assert_eq!(Written::new(0).as_str(), "0");
/// assert_eq!(Written::new(u64::MAX).as_str(), "18446744073709551615");
/// assert_eq!(format!("[{:>5}]", Written::new(42)), "[   42]"); // formats as the integer does
/// ```
#[derive(Clone, Copy)]
pub struct Written {
    text: Ascii<MAX_LEN>,
    start: usize,
}

impl Written {
    /// `value`'s digits.
    #[inline]
    pub fn new(value: u64) -> Self {
        let mut buf = [0u8; MAX_LEN];
        let start = write(value, &mut buf);
        Self { text: Ascii::new(buf), start }
    }

    /// The text.
    #[inline]
    pub fn as_str(&self) -> &str {
        self.text.as_str(self.start..MAX_LEN)
    }

    /// The text's bytes.
    #[inline]
    pub fn as_bytes(&self) -> &[u8] {
        self.text.as_bytes(self.start..MAX_LEN)
    }
}

impl fmt::Display for Written {
    /// As the `u64` formats itself: width, fill, alignment and zero padding apply.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad_integral(true, "", self.as_str())
    }
}

impl fmt::Debug for Written {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.as_str(), f)
    }
}

#[cfg(test)]
mod tests {
    use super::Written;

    fn decimal(value: u64) -> String {
        Written::new(value).as_str().to_owned()
    }

    #[test]
    fn decimal_matches_display_at_every_length_and_edge() {
        let mut samples = vec![0, 1, 9, 10, 11, 99, 100, 101, 999, 1000, u64::MAX, u64::MAX - 1, 1 << 63];
        samples.extend([i64::MAX.cast_unsigned(), i64::MAX.cast_unsigned() - 1]);
        let mut power = 1u64;
        while let Some(next) = power.checked_mul(10) {
            samples.extend([power - 1, power, power + 1, next / 3]);
            power = next;
        }
        samples.extend([power - 1, power, power + 1]);
        samples.push(1_724_551_110_457_221_119);
        for value in samples {
            assert_eq!(decimal(value), value.to_string(), "{value}");
            assert_eq!(Written::new(value).as_bytes(), value.to_string().as_bytes());
            assert_eq!(
                format!("{:025}|{:<22}|{:+}", Written::new(value), Written::new(value), Written::new(value)),
                format!("{value:025}|{value:<22}|{value:+}")
            );
        }
    }

    #[test]
    fn decimal_matches_display_across_the_range() {
        // A multiplicative walk over the whole u64 range.
        let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
        for _ in 0..100_000 {
            x = x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
            let value = x;
            assert_eq!(decimal(value), value.to_string());
            let shifted = value >> (x % 63);
            assert_eq!(decimal(shifted), shifted.to_string());
        }
    }
}
