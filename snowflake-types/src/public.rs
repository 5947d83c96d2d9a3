//! Keyed public IDs: an ID shown to the outside world as a short string that reveals
//! nothing about it to anyone without the key.
//!
//! Snowflake IDs are sequential by design. Put in a URL (`/orders/1724551110457221119`),
//! they tell anyone who collects a few of them when each was made, on which worker, how
//! many were made in between (business volume), and which neighbouring IDs exist
//! (enumeration). [`SnowflakeId::to_public`] maps an ID
//! through a keyed pseudorandom permutation of its 64-bit value and writes the result as
//! 11 characters of URL-safe base64; [`SnowflakeId::from_public`]
//! maps it back and checks it against the type's layout.
//!
//! ```
//! use typed_snowflake::{PublicIdKey, SnowflakeId};
//!
//! #[derive(SnowflakeId, Clone, Copy, Debug, PartialEq)]
//! #[layout(time = 42, worker = 5, seq = 16, epoch = "2021-05-05")]
//! struct OrderId(i64);
//!
//! // 32 secret bytes, e.g. `openssl rand -hex 32`, from the service's secret store.
//! let key = PublicIdKey::from_hex("000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f")?;
//!
//! let id = OrderId::from_parts(1_700_000_000_000, 3, 0)?;
//! let next = OrderId::from_parts(1_700_000_000_000, 3, 1)?;
//! let text = id.to_public(&key);
//! assert_eq!(text.len(), 11);
//! assert_ne!(text[..8], next.to_public(&key)[..8]); // neighbours look unrelated
//! assert_eq!(OrderId::from_public(&text, &key)?, id);
//! Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! `to_public` and `from_public` are methods of the [`SnowflakeId`]
//! trait: bring it into scope with `use typed_snowflake::SnowflakeId;`.
//!
//! # Construction
//!
//! FF1 (NIST SP 800-38G, format-preserving encryption) over AES, radix 2, 64 numerals:
//! a 10-round Feistel network whose round function is AES-CBC-MAC, from the RustCrypto
//! [`fpe`](https://docs.rs/fpe) and [`aes`](https://docs.rs/aes) crates (nothing
//! cryptographic is implemented here). The block is the ID's whole 64-bit value (the 8
//! little-endian bytes of the `u64`, as `fpe`'s `BinaryNumeralString`), so the output is
//! any of 2^64 values, written as the 8 big-endian bytes in base64url without padding:
//! 11 characters of `A-Z a-z 0-9 - _`. The FF1 tweak is empty unless the key was given one
//! with [`PublicIdKey::with_tweak`].
//!
//! # Threat model
//!
//! Hidden from anyone without the key: the ID's order, its timestamp, its worker, its
//! sequence number, and so how many IDs were issued between two of them. Two public IDs
//! of consecutive IDs look unrelated; a string cannot be guessed from another.
//!
//! Not protected:
//! - **A leaked key.** Whoever holds it decodes every public ID ever issued under it.
//!   Keep it in a secret store, never in the repository; rotate it when it may have leaked
//!   (below).
//! - **The ID inside the service.** Logs, database rows, error messages and internal APIs
//!   still hold the raw ID; only what goes out through `to_public` is hidden.
//! - **Forgery.** A 64-bit permutation has no room for a MAC: every 11-character string
//!   (with the last character's two spare bits zero) decodes to *some* 64-bit value. A
//!   random or tampered string is refused only when that value is not an ID of the layout,
//!   which happens with probability about `1 - 2^(used_bits - 64)`: almost always for a
//!   42-bit layout, only half the time for a 63-bit one, and never for a 64-bit one (every
//!   64-bit value is an ID of such a layout). So `from_public` succeeding
//!   means "well-formed", not "issued by us": treat the ID like any other client input
//!   (look the record up, check that the caller may see it). What the key does guarantee
//!   is that nobody can *choose* a string that decodes to a given ID.
//! - **Linking.** The same ID always gives the same string under the same key; a public
//!   ID is a stable identifier, not a one-time token.
//!
//! # Keys and rotation
//!
//! A key is 32 bytes (AES-256, recommended) or 16 (AES-128). Build it once at start-up and
//! share it (`&'static` through a `LazyLock`, or in an `Arc`); each call then costs one
//! FF1 operation (11 AES block encryptions: one for the fixed first block, one per round),
//! with no allocation besides the returned string: about 1.6 µs per call with a 32-byte
//! key and 1.1 µs with a 16-byte one, either way, on the development machine
//! (`benches/public_id.rs` measures it on yours; `Display` of the decimal takes 50 ns).
//!
//! To rotate, give each key a version ([`PublicIdKey::with_version`], 0 to 63): public IDs
//! then carry it as a 12th, leading character, and [`from_public_any`] picks the key by
//! that character, so links issued under the old key keep working while new ones use the
//! new key. Unversioned strings cannot be told apart by key: decoding with the new key and
//! falling back to the old one would accept a foreign string as a wrong-but-valid ID half
//! the time on a 63-bit layout, so never do that; start versioning before the first
//! rotation, or re-issue the links.
//!
//! Keys of different types: the same key maps the same raw value to the same string for
//! every type, and a 63-bit `UserId` decodes another type's public string half the time.
//! Give each type its own tweak ([`PublicIdKey::with_tweak`]) or its own key when public
//! IDs of two types must not be interchangeable.

pub use crate::public_key::{PUBLIC_ID_LEN, PublicIdError, PublicIdKey, PublicIdKeyError};

use crate::id::SnowflakeId;

/// Decodes a versioned public ID with whichever of `keys` has its version: the way to
/// keep old links working through a key rotation. Every key must have a version
/// ([`PublicIdKey::with_version`]).
///
/// ```
/// use typed_snowflake::{PublicIdError, PublicIdKey, SnowflakeId, public::from_public_any};
///
/// #[derive(SnowflakeId, Clone, Copy, Debug, PartialEq)]
/// #[layout(time = 41, worker = 10, seq = 12, epoch = "2020-01-01")]
/// struct EventId(i64);
///
/// let old = PublicIdKey::from_bytes([1; 32]).with_version(0)?;
/// let new = PublicIdKey::from_bytes([2; 32]).with_version(1)?;
/// let id = EventId::from_parts(1_700_000_000_000, 1, 0)?;
/// let issued_last_year = id.to_public(&old);
/// let issued_today = id.to_public(&new);
/// assert_eq!(from_public_any::<EventId>(&issued_last_year, &[&new, &old])?, id);
/// assert_eq!(from_public_any::<EventId>(&issued_today, &[&new, &old])?, id);
/// assert!(matches!(from_public_any::<EventId>(&issued_today, &[&old]), Err(PublicIdError::UnknownVersion { .. })));
/// Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn from_public_any<T: SnowflakeId>(text: &str, keys: &[&PublicIdKey]) -> Result<T, PublicIdError> {
    PublicIdKey::by_version(text, keys)?.decode_raw(text, &T::LAYOUT, T::NAME).map(T::from_raw_unchecked)
}
