//! A stack buffer of ASCII bytes that reads back as a `&str` without a UTF-8 check: what the
//! text encoders (decimal, prefixed base32) write into. The only `unsafe` of the crate.
//!
//! The buffer is ASCII by construction, not by trust in the encoders: [`Ascii::new`] clears
//! the top bit of every byte it is given (one `and` per 16 bytes, and nothing at all where
//! the compiler sees that the bytes are ASCII already), [`Ascii::concat`] through it, and
//! the bytes are never written again. Every byte below `0x80` is a character of its own,
//! so every slice of the buffer is valid UTF-8. An encoder with a bug writes wrong text,
//! never an invalid `str`.
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

    /// `parts`, one after another from the start, and zeros after them, each byte with its
    /// top bit cleared ([`Ascii::new`]); with their total length. Panics if they do not fit.
    ///
    /// In a buffer of exactly the parts' length, built from parts the compiler sees (a
    /// type's prefix, `_`, the suffix `encode_suffix` returns), the array stays in registers:
    /// the constant bytes are cleared at compile time, each word with one `and`, and the
    /// text is stored once, a word at a time. Nothing reads the buffer back before the
    /// text is used (a store then a wider load of the same bytes stalls the CPU's store
    /// forwarding), and there are no zeros to write.
    #[inline(always)]
    pub(crate) fn concat(parts: &[&[u8]]) -> (Self, usize) {
        let mut bytes = [0u8; N];
        let mut len = 0;
        for part in parts {
            bytes[len..len + part.len()].copy_from_slice(part);
            len += part.len();
        }
        (Self::new(bytes), len)
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
    fn parts_are_joined_as_ascii_text() {
        let (text, len) = Ascii::<8>::concat(&[b"ord", b"_", &[0xC3, 0xA9]]);
        assert_eq!(len, 6);
        assert_eq!(text.as_str(0..len), "ord_C)");
        assert_eq!(text.as_bytes(0..8), b"ord_C)\0\0");
        let (exact, len) = Ascii::<17>::concat(&[b"ord", b"_", b"1fvpp347wxqzz"]);
        assert_eq!(exact.as_str(0..len), "ord_1fvpp347wxqzz");
        let (empty, len) = Ascii::<0>::concat(&[]);
        assert_eq!(empty.as_str(0..len), "");
    }

    #[test]
    #[should_panic(expected = "out of range")]
    fn parts_longer_than_the_buffer_panic() {
        let _ = Ascii::<3>::concat(&[b"ord", b"_"]);
    }

    #[test]
    #[should_panic(expected = "out of range")]
    fn a_range_outside_the_buffer_panics_as_slicing_does() {
        let _ = Ascii::new([b'0'; 4]).as_str(2..5);
    }
}
