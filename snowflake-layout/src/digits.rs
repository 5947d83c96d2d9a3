//! Decimal digits to a `u64`, eight at a time: the fast path of [`Layout::parse_id`] and
//! [`Layout::parse_id_bytes`](crate::Layout::parse_id_bytes).
//!
//! Eight ASCII bytes are read as one little-endian `u64`; one mask and one add check that
//! every byte is a digit, and three multiplications turn them into their value. The check
//! and the value are computed side by side, so validation costs no second pass.
//!
//! [`Layout::parse_id`]: crate::Layout::parse_id

/// `b'0'` in every byte.
const ZEROS: u64 = 0x3030_3030_3030_3030;
/// The high nibble of every byte.
const HIGH_NIBBLES: u64 = 0xF0F0_F0F0_F0F0_F0F0;
/// `6` in every byte: a digit byte (`0x30` to `0x39`) plus 6 keeps its high nibble `3`.
const SIXES: u64 = 0x0606_0606_0606_0606;

/// Whether each of the 8 bytes of `chunk` is an ASCII digit.
#[inline(always)]
const fn all_digits(chunk: u64) -> bool {
    // First: every high nibble is 3 (0x30..=0x3F). Then, adding 6 to such a byte carries into
    // its high nibble exactly when its low nibble is above 9; no byte can carry into the next
    // (0x3F + 6 < 0x100).
    (chunk & HIGH_NIBBLES) == ZEROS && (chunk.wrapping_add(SIXES) & HIGH_NIBBLES) == ZEROS
}

/// The value of 8 ASCII digits read as a little-endian `u64` (the first digit in the lowest
/// byte); meaningless unless [`all_digits`] holds.
#[inline(always)]
const fn value_of_eight(chunk: u64) -> u64 {
    let v = chunk.wrapping_sub(ZEROS);
    // Pairs: each 16-bit lane holds 10 × its first digit + its second.
    let v = v.wrapping_mul(10).wrapping_add(v >> 8);
    // Quads, then the eight, with one multiplication for each half of the lanes.
    let low = (v & 0x0000_00FF_0000_00FF).wrapping_mul(100 + (1_000_000 << 32));
    let high = ((v >> 16) & 0x0000_00FF_0000_00FF).wrapping_mul(1 + (10_000 << 32));
    low.wrapping_add(high) >> 32
}

/// 8 bytes as a little-endian `u64`.
#[inline(always)]
fn load(bytes: &[u8]) -> u64 {
    let mut word = [0u8; 8];
    word.copy_from_slice(&bytes[..8]);
    u64::from_le_bytes(word)
}

/// The value of 1 to 20 ASCII digits, or `None`: empty text, a byte that is not a digit,
/// more than 20 digits (the slow path reads leading zeros), or more than `u64::MAX`.
#[inline]
pub(crate) fn parse_u64(bytes: &[u8]) -> Option<u64> {
    let len = bytes.len();
    if len == 0 || len > 20 {
        return None;
    }
    // The first `len % 8` digits, as a chunk padded on the left with '0's; then whole chunks.
    let head = len % 8;
    let (first, rest) = bytes.split_at(head);
    let mut digits = true;
    let mut value = 0u64;
    if head != 0 {
        let chunk = if len >= 8 {
            // The text's first 8 bytes, shifted so that the head's digits end the chunk and
            // '0's fill the bytes shifted in (`head` is 1 to 7: no shift is 64 or more).
            (load(bytes) << (8 * (8 - head))) | (ZEROS >> (8 * head))
        } else {
            let mut padded = [b'0'; 8];
            padded[8 - head..].copy_from_slice(first);
            u64::from_le_bytes(padded)
        };
        digits &= all_digits(chunk);
        value = value_of_eight(chunk);
    }
    for chunk in rest.chunks_exact(8) {
        let chunk = load(chunk);
        digits &= all_digits(chunk);
        // Only 20 digits can overflow; the result is read only when every chunk was digits.
        value = value.checked_mul(100_000_000)?.checked_add(value_of_eight(chunk))?;
    }
    if digits { Some(value) } else { None }
}

#[cfg(test)]
mod tests {
    use super::parse_u64;
    use alloc::format;

    /// The plain reference: digit by digit, checked.
    fn reference(text: &str) -> Option<u64> {
        if text.is_empty() || text.len() > 20 || !text.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        text.bytes().try_fold(0u64, |v, b| v.checked_mul(10)?.checked_add(u64::from(b - b'0')))
    }

    #[test]
    fn every_length_and_every_boundary() {
        let mut power = 1u64;
        for _digits in 1..=20 {
            for value in [power, power.wrapping_mul(10).wrapping_sub(1), power + 1, power / 3 * 2] {
                let text = format!("{value}");
                assert_eq!(parse_u64(text.as_bytes()), Some(value), "{text}");
                let padded = format!("{value:0>20}");
                assert_eq!(parse_u64(padded.as_bytes()), Some(value), "{padded}");
            }
            power = power.saturating_mul(10);
        }
        for text in ["0", "00", "18446744073709551615", "00000000000000000000", "9223372036854775808"] {
            assert_eq!(parse_u64(text.as_bytes()), reference(text), "{text}");
        }
        for text in ["", "18446744073709551616", "99999999999999999999", "000000000000000000000"] {
            assert_eq!(parse_u64(text.as_bytes()), None, "{text}");
        }
    }

    #[test]
    fn every_byte_in_every_position_is_checked() {
        for len in 1..=20 {
            for at in 0..len {
                for byte in 0..=255u8 {
                    let mut text = [b'7'; 20];
                    text[at] = byte;
                    let text = &text[..len];
                    let expected =
                        if byte.is_ascii_digit() { core::str::from_utf8(text).ok().and_then(reference) } else { None };
                    assert_eq!(parse_u64(text), expected, "{text:?}");
                }
            }
        }
    }
}
