//! The key of keyed public IDs and its errors: FF1 over the 64 bits of a raw value, and
//! the 11 base64url characters it is written in. It knows layouts, not ID types: the
//! typed methods ([`SnowflakeId::to_public`](crate::SnowflakeId::to_public),
//! [`SnowflakeId::from_public`](crate::SnowflakeId::from_public),
//! [`from_public_any`](crate::public::from_public_any)) call it with their type's layout.
//! The construction and the threat model are in the docs of [`crate::public`].

use std::fmt;

use aes::{Aes128Enc, Aes256Enc};
use fpe::ff1::{FF1, NumeralString, Operations};
use thiserror::Error;

use crate::layout::Layout;

/// The length of a public ID without a version character: 64 bits in base64url.
///
/// ```
/// use typed_snowflake::{PublicIdKey, public::PUBLIC_ID_LEN};
///
/// assert_eq!(PublicIdKey::from_bytes([1; 32]).encode(0).len(), PUBLIC_ID_LEN);
/// Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub const PUBLIC_ID_LEN: usize = 11;

/// The base64url alphabet (RFC 4648 §5).
const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

/// The 6-bit value of a base64url character.
const fn sextet(byte: u8) -> Option<u8> {
    match byte {
        b'A'..=b'Z' => Some(byte - b'A'),
        b'a'..=b'z' => Some(byte - b'a' + 26),
        b'0'..=b'9' => Some(byte - b'0' + 52),
        b'-' => Some(62),
        b'_' => Some(63),
        _ => None,
    }
}

/// The 8 big-endian bytes of `value` in base64url without padding: 10 characters of 6 bits
/// and one of the last 4 bits followed by two zero bits.
fn write_base64(value: u64, out: &mut String) {
    let bits = u128::from(value) << 2;
    for i in (0..PUBLIC_ID_LEN).rev() {
        out.push(char::from(ALPHABET[((bits >> (6 * i)) & 0x3F) as usize]));
    }
}

/// A key for public IDs: an FF1-AES key, with an optional version character and tweak.
///
/// Its `Debug` output names the cipher and the version, never the key.
///
/// ```
/// use typed_snowflake::PublicIdKey;
///
/// let key = PublicIdKey::from_bytes([7; 32]).with_version(1)?;
/// assert_eq!(format!("{key:?}"), r#"PublicIdKey { cipher: "FF1-AES-256", version: Some('B'), tweak_len: 0 }"#);
/// Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct PublicIdKey {
    cipher: Cipher,
    version: Option<u8>,
    tweak: Box<[u8]>,
}

enum Cipher {
    Aes128(Box<FF1<Aes128Enc>>),
    Aes256(Box<FF1<Aes256Enc>>),
}

impl fmt::Debug for PublicIdKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let cipher = match self.cipher {
            Cipher::Aes128(_) => "FF1-AES-128",
            Cipher::Aes256(_) => "FF1-AES-256",
        };
        f.debug_struct("PublicIdKey")
            .field("cipher", &cipher)
            .field("version", &self.version_char())
            .field("tweak_len", &self.tweak.len())
            .finish()
    }
}

impl PublicIdKey {
    /// A key of 32 bytes: FF1 over AES-256 (the recommended size).
    ///
    /// ```
    /// use typed_snowflake::PublicIdKey;
    ///
    /// let key = PublicIdKey::from_bytes([0x42; 32]);
    /// assert_eq!(key.decode(&key.encode(12345))?, 12345);
    /// Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn from_bytes(key: [u8; 32]) -> PublicIdKey {
        PublicIdKey::with_cipher(Cipher::Aes256(Box::new(ff1(&key))))
    }

    /// A key of 16 bytes (FF1 over AES-128) or 32 bytes (AES-256).
    ///
    /// ```
    /// use typed_snowflake::{PublicIdKey, PublicIdKeyError};
    ///
    /// assert!(PublicIdKey::from_slice(&[1; 16]).is_ok());
    /// assert_eq!(PublicIdKey::from_slice(&[1; 20]).unwrap_err(), PublicIdKeyError::Length { found: 20 });
    /// Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn from_slice(key: &[u8]) -> Result<PublicIdKey, PublicIdKeyError> {
        match key.len() {
            16 => Ok(PublicIdKey::with_cipher(Cipher::Aes128(Box::new(ff1(key))))),
            32 => Ok(PublicIdKey::with_cipher(Cipher::Aes256(Box::new(ff1(key))))),
            found => Err(PublicIdKeyError::Length { found }),
        }
    }

    /// A key written in hexadecimal: 64 digits (AES-256) or 32 (AES-128), either case, as
    /// `openssl rand -hex 32` prints it. Surrounding whitespace (a trailing newline from a
    /// secret file) is ignored.
    ///
    /// ```
    /// use typed_snowflake::{PublicIdKey, PublicIdKeyError};
    ///
    /// let key = PublicIdKey::from_hex("000102030405060708090A0B0C0D0E0F101112131415161718191a1b1c1d1e1f\n")?;
    /// assert_eq!(format!("{key:?}"), r#"PublicIdKey { cipher: "FF1-AES-256", version: None, tweak_len: 0 }"#);
    /// assert_eq!(PublicIdKey::from_hex("0g").unwrap_err(), PublicIdKeyError::Hex { position: 1, found: 'g' });
    /// Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn from_hex(text: &str) -> Result<PublicIdKey, PublicIdKeyError> {
        let text = text.trim();
        let mut bytes = [0u8; 32];
        for (position, c) in text.char_indices() {
            let Some(digit) = c.to_digit(16) else {
                return Err(PublicIdKeyError::Hex { position, found: c });
            };
            // Past 64 digits the length check below refuses the key.
            if let Some(byte) = bytes.get_mut(position / 2) {
                let digit = u8::try_from(digit).unwrap_or(0);
                *byte = if position % 2 == 0 { digit << 4 } else { *byte | digit };
            }
        }
        match text.len() {
            32 => PublicIdKey::from_slice(&bytes[..16]),
            64 => Ok(PublicIdKey::from_bytes(bytes)),
            digits if digits % 2 == 0 => Err(PublicIdKeyError::Length { found: digits / 2 }),
            digits => Err(PublicIdKeyError::OddHexLength { digits }),
        }
    }

    fn with_cipher(cipher: Cipher) -> PublicIdKey {
        PublicIdKey { cipher, version: None, tweak: Box::default() }
    }

    /// The same key with a version, 0 to 63, written as a leading base64url character
    /// (`A` for 0, `B` for 1, ... `_` for 63): public IDs become 12 characters, and
    /// [`from_public_any`](crate::public::from_public_any) chooses the key by that character. See the module docs on
    /// rotation.
    ///
    /// ```
    /// use typed_snowflake::{PublicIdKey, PublicIdKeyError};
    ///
    /// let key = PublicIdKey::from_bytes([1; 32]).with_version(2)?;
    /// assert!(key.encode(42).starts_with('C'));
    /// assert_eq!(key.encode(42).len(), 12);
    /// assert_eq!(PublicIdKey::from_bytes([1; 32]).with_version(64).unwrap_err(), PublicIdKeyError::Version { found: 64 });
    /// Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn with_version(mut self, version: u8) -> Result<PublicIdKey, PublicIdKeyError> {
        if usize::from(version) >= ALPHABET.len() {
            return Err(PublicIdKeyError::Version { found: version });
        }
        self.version = Some(version);
        Ok(self)
    }

    /// The same key with an FF1 tweak: a public, non-secret context (a type's name, a
    /// tenant) that gives the same key a different, independent permutation. Public IDs
    /// of two types under one key and different tweaks are not interchangeable.
    ///
    /// ```
    /// use typed_snowflake::PublicIdKey;
    ///
    /// let orders = PublicIdKey::from_bytes([9; 32]).with_tweak(b"orders");
    /// let users = PublicIdKey::from_bytes([9; 32]).with_tweak(b"users");
    /// assert_ne!(orders.encode(7), users.encode(7));
    /// Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn with_tweak(mut self, tweak: &[u8]) -> PublicIdKey {
        self.tweak = tweak.into();
        self
    }

    /// The version given with [`PublicIdKey::with_version`], as the character that leads
    /// its public IDs.
    ///
    /// ```
    /// use typed_snowflake::PublicIdKey;
    ///
    /// assert_eq!(PublicIdKey::from_bytes([1; 32]).version_char(), None);
    /// assert_eq!(PublicIdKey::from_bytes([1; 32]).with_version(63)?.version_char(), Some('_'));
    /// Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn version_char(&self) -> Option<char> {
        self.version.map(|v| char::from(ALPHABET[usize::from(v)]))
    }

    /// The length of this key's public IDs: 11, or 12 with a version.
    ///
    /// ```
    /// use typed_snowflake::PublicIdKey;
    ///
    /// assert_eq!(PublicIdKey::from_bytes([1; 32]).public_len(), 11);
    /// assert_eq!(PublicIdKey::from_bytes([1; 32]).with_version(0)?.public_len(), 12);
    /// Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn public_len(&self) -> usize {
        PUBLIC_ID_LEN + usize::from(self.version.is_some())
    }

    /// Encrypts any 64-bit value to its public string, without regard to a layout: the
    /// building block of [`SnowflakeId::to_public`](crate::SnowflakeId::to_public), for layouts known only at run time.
    ///
    /// ```
    /// use typed_snowflake::PublicIdKey;
    ///
    /// let key = PublicIdKey::from_bytes([3; 32]);
    /// let text = key.encode(u64::MAX);
    /// assert!(text.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_'));
    /// assert_eq!(key.decode(&text)?, u64::MAX);
    /// Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn encode(&self, value: u64) -> String {
        let mut out = String::with_capacity(self.public_len());
        if let Some(version) = self.version_char() {
            out.push(version);
        }
        write_base64(self.permute(value, true), &mut out);
        out
    }

    /// Decrypts a public string to the 64-bit value it stands for, checking its form
    /// (length, characters, version) but no layout: the building block of
    /// [`SnowflakeId::from_public`](crate::SnowflakeId::from_public), which also checks the layout.
    ///
    /// ```
    /// use typed_snowflake::{PublicIdError, PublicIdKey};
    ///
    /// let key = PublicIdKey::from_bytes([3; 32]);
    /// assert_eq!(key.decode(""), Err(PublicIdError::Empty));
    /// assert_eq!(key.decode("abc"), Err(PublicIdError::Length { expected: 11, found: 3 }));
    /// assert_eq!(key.decode("abc.defghij"), Err(PublicIdError::InvalidChar { position: 3, found: '.' }));
    /// Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn decode(&self, text: &str) -> Result<u64, PublicIdError> {
        if text.is_empty() {
            return Err(PublicIdError::Empty);
        }
        // The first character outside the alphabet, if any, before the length: it says
        // more about what was pasted.
        let mut sextets = [0u8; PUBLIC_ID_LEN + 1];
        for (position, byte) in text.bytes().enumerate() {
            match sextet(byte) {
                Some(value) => {
                    if let Some(slot) = sextets.get_mut(position) {
                        *slot = value;
                    }
                }
                None => {
                    let found = text[position..].chars().next().unwrap_or(char::REPLACEMENT_CHARACTER);
                    return Err(PublicIdError::InvalidChar { position, found });
                }
            }
        }
        let expected = self.public_len();
        if text.len() != expected {
            return Err(PublicIdError::Length { expected, found: text.len() });
        }
        let body = match self.version {
            Some(version) => {
                if sextets[0] != version {
                    let found = char::from(text.as_bytes()[0]);
                    let expected = char::from(ALPHABET[usize::from(version)]);
                    return Err(PublicIdError::Version { expected, found });
                }
                &sextets[1..]
            }
            None => &sextets[..PUBLIC_ID_LEN],
        };
        let bits = body.iter().fold(0u128, |acc, &s| (acc << 6) | u128::from(s));
        if bits & 0b11 != 0 {
            // The last character carries 4 bits and two zero bits: no key writes this.
            return Err(PublicIdError::NonCanonical);
        }
        let block = u64::try_from(bits >> 2).map_err(|_| PublicIdError::NonCanonical)?;
        Ok(self.permute(block, false))
    }

    /// FF1 over the 64 bits of `value`, forwards or backwards.
    fn permute(&self, value: u64, forward: bool) -> u64 {
        let input = Block(value);
        let output = match (&self.cipher, forward) {
            (Cipher::Aes128(ff1), true) => ff1.encrypt(&self.tweak, &input),
            (Cipher::Aes128(ff1), false) => ff1.decrypt(&self.tweak, &input),
            (Cipher::Aes256(ff1), true) => ff1.encrypt(&self.tweak, &input),
            (Cipher::Aes256(ff1), false) => ff1.decrypt(&self.tweak, &input),
        };
        // 64 binary numerals lie within FF1's bounds (radix 2: 20 to 2^32 numerals), and
        // `Block` is valid for radix 2: neither call can fail.
        output.expect("64 binary numerals are a valid FF1 input").0
    }

    /// Decodes `text` to the raw value of an ID of `layout` (a type named `type_name` in the
    /// error): what [`SnowflakeId::from_public`](crate::SnowflakeId::from_public) and
    /// [`from_public_any`](crate::public::from_public_any) call. The decrypted value stays
    /// out of the error: an error sent back to a client must not be a decryption oracle.
    pub(crate) fn decode_raw(
        &self,
        text: &str,
        layout: &Layout,
        type_name: &'static str,
    ) -> Result<i64, PublicIdError> {
        let value = self.decode(text)?;
        layout.validate_u64(value).map_err(|_| PublicIdError::NotAnId { type_name })
    }

    /// The key among `keys` whose version a versioned public ID carries (its first
    /// character): what [`from_public_any`](crate::public::from_public_any) decodes with.
    /// Every key must have a version.
    pub(crate) fn by_version<'k>(text: &str, keys: &[&'k PublicIdKey]) -> Result<&'k PublicIdKey, PublicIdError> {
        let Some(first) = text.chars().next() else {
            return Err(PublicIdError::Empty);
        };
        if keys.iter().any(|key| key.version.is_none()) {
            return Err(PublicIdError::UnversionedKey);
        }
        match keys.iter().find(|key| key.version_char() == Some(first)) {
            Some(key) => Ok(key),
            None if sextet(u8::try_from(first).unwrap_or(0)).is_none() => {
                Err(PublicIdError::InvalidChar { position: 0, found: first })
            }
            None => Err(PublicIdError::UnknownVersion { found: first }),
        }
    }
}

/// The 64 bits of an ID as an FF1 numeral string of radix 2, without allocation.
///
/// FF1 itself (the rounds, the AES-CBC-MAC round function, the tweak) is `fpe`'s; this is
/// only the representation it runs on, the same bit string as `fpe`'s own
/// `BinaryNumeralString::from_bytes_le(&value.to_le_bytes())`: numeral `i` is bit `i` of
/// the value, and each half is read as a big-endian number of 32 numerals, so numeral 0
/// is its most significant bit (hence the bit reversals). The unit tests check it against
/// `BinaryNumeralString`, which `fpe` tests against the NIST vectors.
struct Block(u64);

/// One 32-numeral half of a [`Block`], as the number `NUM_2` of its numerals.
struct Half(u32);

impl NumeralString for Block {
    type Ops = Half;

    fn is_valid(&self, radix: u32) -> bool {
        radix == 2
    }

    fn numeral_count(&self) -> usize {
        64
    }

    fn split(&self) -> (Half, Half) {
        // Truncations on purpose: the low and the high 32 bits.
        #[allow(clippy::cast_possible_truncation)]
        let (low, high) = (self.0 as u32, (self.0 >> 32) as u32);
        (Half(low.reverse_bits()), Half(high.reverse_bits()))
    }

    fn concat(a: Half, b: Half) -> Block {
        Block(u64::from(a.0.reverse_bits()) | (u64::from(b.0.reverse_bits()) << 32))
    }
}

impl Operations for Half {
    type Bytes = [u8; 4];

    fn numeral_count(&self) -> usize {
        32
    }

    /// `STR_256^b(NUM_2(X))`: FF1 asks for `b = ceil(32 / 8) = 4` bytes.
    fn to_be_bytes(&self, _radix: u32, _b: usize) -> [u8; 4] {
        self.0.to_be_bytes()
    }

    /// `(NUM_2(X) + NUM(S)) mod 2^32`: only the low 32 bits of `S` (big-endian) count.
    fn add_mod_exp(self, other: impl Iterator<Item = u8>, _radix: u32, _m: usize) -> Half {
        Half(self.0.wrapping_add(low_32(other)))
    }

    /// `(NUM_2(X) - NUM(S)) mod 2^32`.
    fn sub_mod_exp(self, other: impl Iterator<Item = u8>, _radix: u32, _m: usize) -> Half {
        Half(self.0.wrapping_sub(low_32(other)))
    }
}

/// The big-endian number of `bytes`, modulo 2^32.
fn low_32(bytes: impl Iterator<Item = u8>) -> u32 {
    bytes.fold(0u32, |acc, byte| (acc << 8) | u32::from(byte))
}

fn ff1<C: aes::cipher::KeyInit + aes::cipher::BlockCipherEncrypt + Clone>(key: &[u8]) -> FF1<C> {
    // Radix 2 lies in FF1's range [2, 2^16], and the callers pass a key of the cipher's size.
    FF1::new(key, 2).expect("radix 2 is a valid FF1 radix")
}

/// A public ID that could not be decoded.
///
/// ```
/// use typed_snowflake::{PublicIdError, PublicIdKey, SnowflakeId};
///
/// #[derive(SnowflakeId, Clone, Copy, Debug, PartialEq)]
/// #[layout(time = 30, worker = 4, seq = 8, epoch = "2024-01-01", unit = "1s")]
/// struct TicketId(i64);
///
/// let key = PublicIdKey::from_bytes([5; 32]);
/// let err = TicketId::from_public("AAAAAAAAAAA", &key).unwrap_err();
/// assert_eq!(err.to_string(), "the public ID does not decode to a TicketId: a wrong key, another type's ID, or a tampered string");
/// Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum PublicIdError {
    /// Empty text.
    #[error("an empty string is not a public ID")]
    Empty,
    /// A character outside base64url.
    #[error("a public ID is written in A-Z, a-z, 0-9, '-' and '_'; found {found:?} at byte {position}")]
    InvalidChar {
        /// Byte offset of the character.
        position: usize,
        /// The character.
        found: char,
    },
    /// Text of the wrong length.
    #[error("a public ID has {expected} characters; found {found}")]
    Length {
        /// The length this key writes.
        expected: usize,
        /// The length found, in bytes.
        found: usize,
    },
    /// A version character other than the key's.
    #[error("the public ID has version {found:?}; the key has version {expected:?}")]
    Version {
        /// The key's version character.
        expected: char,
        /// The first character of the text.
        found: char,
    },
    /// A version character that none of the keys has ([`from_public_any`](crate::public::from_public_any)).
    #[error("no key has the public ID's version {found:?}")]
    UnknownVersion {
        /// The first character of the text.
        found: char,
    },
    /// [`from_public_any`](crate::public::from_public_any) was given a key without a version.
    #[error("decoding with several keys needs a version on each key (PublicIdKey::with_version)")]
    UnversionedKey,
    /// The last character sets one of the two bits no public ID uses.
    #[error("the public ID was not written by this library (its last character is not canonical)")]
    NonCanonical,
    /// The decrypted value is not an ID of the type's layout.
    #[error("the public ID does not decode to a {type_name}: a wrong key, another type's ID, or a tampered string")]
    NotAnId {
        /// The ID type.
        type_name: &'static str,
    },
}

/// A key that could not be built.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum PublicIdKeyError {
    /// Neither 16 nor 32 bytes.
    #[error("a public ID key has 32 bytes (AES-256) or 16 (AES-128); found {found}")]
    Length {
        /// The length found, in bytes.
        found: usize,
    },
    /// Hexadecimal text with an odd number of digits.
    #[error("a hexadecimal key has an even number of digits (64 for 32 bytes); found {digits}")]
    OddHexLength {
        /// The number of digits.
        digits: usize,
    },
    /// A character that is not a hexadecimal digit.
    #[error("a hexadecimal key has only 0-9, a-f and A-F; found {found:?} at byte {position}")]
    Hex {
        /// Byte offset of the character (after trimming whitespace).
        position: usize,
        /// The character.
        found: char,
    },
    /// A version above 63.
    #[error("a key version is 0 to 63 (one base64url character); found {found}")]
    Version {
        /// The version given.
        found: u8,
    },
}

#[cfg(test)]
mod tests {
    use super::*;

    fn base64(value: u64) -> String {
        let mut out = String::new();
        write_base64(value, &mut out);
        out
    }

    #[test]
    fn base64_is_rfc4648_url_safe_without_padding() {
        // RFC 4648: "12345678" is "MTIzNDU2Nzg=" in base64.
        assert_eq!(base64(u64::from_be_bytes(*b"12345678")), "MTIzNDU2Nzg");
        assert_eq!(base64(0), "AAAAAAAAAAA");
        // "//////////8=" in the standard alphabet.
        assert_eq!(base64(u64::MAX), "__________8");
        assert_eq!(base64(0xFBFF_0000_0000_0000), "-_8AAAAAAAA");
    }

    #[test]
    fn sextets_invert_the_alphabet() {
        for (i, &c) in ALPHABET.iter().enumerate() {
            assert_eq!(sextet(c).map(usize::from), Some(i));
        }
        let others = (0..=255u8).filter(|b| sextet(*b).is_none()).count();
        assert_eq!(others, 256 - 64);
    }

    /// The allocation-free numeral string gives what `fpe`'s own binary numeral string
    /// gives, for every key size, with and without a tweak.
    #[test]
    fn block_matches_fpe_binary_numeral_string() {
        use fpe::ff1::BinaryNumeralString;

        fn reference<C: aes::cipher::KeyInit + aes::cipher::BlockCipherEncrypt + Clone>(
            ff1: &FF1<C>,
            tweak: &[u8],
            value: u64,
        ) -> (u64, u64) {
            let via_bytes = |ns: BinaryNumeralString| {
                let bytes = ns.to_bytes_le();
                u64::from_le_bytes(bytes[..8].try_into().expect("8 bytes"))
            };
            let input = BinaryNumeralString::from_bytes_le(&value.to_le_bytes());
            let encrypted = via_bytes(ff1.encrypt(tweak, &input).expect("valid"));
            let back = BinaryNumeralString::from_bytes_le(&encrypted.to_le_bytes());
            (encrypted, via_bytes(ff1.decrypt(tweak, &back).expect("valid")))
        }

        let mut x: u64 = 0x0123_4567_89AB_CDEF;
        let keys: [&[u8]; 2] = [&[0x11; 16], &[0x22; 32]];
        for (k, key_bytes) in keys.into_iter().enumerate() {
            for tweak in [&b""[..], b"orders", &[7; 23]] {
                let key = PublicIdKey::from_slice(key_bytes).expect("16 or 32 bytes").with_tweak(tweak);
                for i in 0..2_000u64 {
                    x = x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
                    let value = match i {
                        0 => 0,
                        1 => u64::MAX,
                        2 => 1 << 63,
                        _ => x,
                    };
                    let (encrypted, decrypted) = if k == 0 {
                        reference(&ff1::<Aes128Enc>(key_bytes), tweak, value)
                    } else {
                        reference(&ff1::<Aes256Enc>(key_bytes), tweak, value)
                    };
                    assert_eq!(decrypted, value);
                    assert_eq!(key.permute(value, true), encrypted, "key {k}, tweak {tweak:?}, value {value}");
                    assert_eq!(key.permute(encrypted, false), value);
                }
            }
        }
    }

    #[test]
    fn hex_keys_match_byte_keys() {
        let hex = "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f";
        let bytes: [u8; 32] = core::array::from_fn(|i| u8::try_from(i).unwrap_or(0));
        let (a, b) = (PublicIdKey::from_hex(hex).unwrap(), PublicIdKey::from_bytes(bytes));
        assert_eq!(a.encode(99), b.encode(99));
        let short = PublicIdKey::from_hex(&hex[..32]).unwrap();
        assert_eq!(short.encode(99), PublicIdKey::from_slice(&bytes[..16]).unwrap().encode(99));
        assert_eq!(PublicIdKey::from_hex(&hex[..33]).unwrap_err(), PublicIdKeyError::OddHexLength { digits: 33 });
        assert_eq!(PublicIdKey::from_hex(&format!("{hex}00")).unwrap_err(), PublicIdKeyError::Length { found: 33 });
        assert_eq!(PublicIdKey::from_hex("").unwrap_err(), PublicIdKeyError::Length { found: 0 });
        assert_eq!(PublicIdKey::from_hex("é").unwrap_err(), PublicIdKeyError::Hex { position: 0, found: 'é' });
    }
}
