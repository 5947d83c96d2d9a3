//! A stack buffer of ASCII bytes that reads back as a `&str` without a UTF-8 check: what the
//! text encoders (decimal, prefixed base32) write into. The only `unsafe` of the crate.
//!
//! The buffer is ASCII by construction, not by trust in the encoders: [`Ascii::new`] clears
//! the top bit of every byte it is given (one `and` per 16 bytes, and nothing at all where
//! the compiler sees that the bytes are ASCII already), and the bytes are never written
//! again. Every byte below `0x80` is a character of its own, so every slice of the buffer is
//! valid UTF-8. An encoder with a bug writes wrong text, never an invalid `str`.
//!
//! `str::from_utf8` on the 17 bytes of `ord_1fvpp347wxqzz` costs about 50 instructions
//! (measured with callgrind), several times the encoding itself.
#![allow(unsafe_code)]

use core::ops::Range;

/// `N` bytes, each below `0x80`.
#[derive(Clone, Copy)]
pub(crate) struct Ascii<const N: usize> {
    /// Invariant: every byte is below `0x80`.
    bytes: [u8; N],
}

impl<const N: usize> Ascii<N> {
    /// `bytes`, each with its top bit cleared (unchanged where it was ASCII).
    #[inline(always)]
    pub(crate) fn new(mut bytes: [u8; N]) -> Self {
        for byte in &mut bytes {
            *byte &= 0x7F;
        }
        Self { bytes }
    }

    /// The bytes in `range` as text. Panics if `range` is out of the buffer, as slicing does.
    #[inline(always)]
    pub(crate) fn as_str(&self, range: Range<usize>) -> &str {
        let bytes = &self.bytes[range];
        // SAFETY: every byte of `self.bytes` is below 0x80 (the invariant, which `new`
        // establishes and nothing breaks: the field is private and never written after
        // `new`), and a sequence of bytes below 0x80 is valid UTF-8, each byte a character.
        unsafe { core::str::from_utf8_unchecked(bytes) }
    }

    /// The bytes in `range`.
    #[inline(always)]
    pub(crate) fn as_bytes(&self, range: Range<usize>) -> &[u8] {
        &self.bytes[range]
    }
}

#[cfg(test)]
mod tests {
    use super::Ascii;

    #[test]
    fn any_bytes_become_ascii_text() {
        // Every byte value, in every position of the slice read back.
        let mut all = [0u8; 256];
        for (i, byte) in all.iter_mut().enumerate() {
            *byte = u8::try_from(i).expect("0..256");
        }
        let ascii = Ascii::new(all);
        for start in 0..256 {
            let text = ascii.as_str(start..256);
            assert!(text.is_ascii());
            assert_eq!(core::str::from_utf8(ascii.as_bytes(start..256)), Ok(text));
            for (i, byte) in text.bytes().enumerate() {
                assert_eq!(byte, all[start + i] & 0x7F);
            }
        }
        // ASCII comes back unchanged; a multi-byte character does not survive, but the text
        // stays valid.
        assert_eq!(Ascii::new(*b"ord_1fvpp347wxqzz").as_str(0..17), "ord_1fvpp347wxqzz");
        let e_acute = Ascii::new([0xC3, 0xA9]);
        assert_eq!(e_acute.as_str(0..2), "C)");
        assert_eq!(e_acute.as_str(1..1), "");
    }

    #[test]
    #[should_panic(expected = "out of range")]
    fn a_range_outside_the_buffer_panics_as_slicing_does() {
        let _ = Ascii::new([b'0'; 4]).as_str(2..5);
    }
}
