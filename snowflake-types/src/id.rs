//! The [`SnowflakeId`] trait that `#[derive(SnowflakeId)]` implements.

use crate::error::{LayoutError, ParseIdError};
use crate::layout::{Layout, Parts};
use crate::registry::GeneratorSlot;

/// A typed Snowflake ID: a newtype over `i64` or `u64` with a compile-time [`Layout`].
///
/// Implemented by `#[derive(SnowflakeId)]`, which also adds inherent methods and consts
/// (`OrderId::generate()`, `OrderId::TIME_BITS`, ...). The trait is what generic code
/// (integrations, the registry, your own helpers) is written against.
///
/// ```
/// use typed_snowflake::SnowflakeId;
///
/// #[derive(SnowflakeId, Clone, Copy, Debug, PartialEq)]
/// #[layout(time = 42, worker = 5, seq = 16, epoch = "2021-05-05")]
/// pub struct OrderId(i64);
///
/// fn describe<T: SnowflakeId>(id: &T) -> String {
///     format!("{} at {} ms", T::NAME, T::LAYOUT.timestamp_ms_of(id.to_raw()))
/// }
/// let id = OrderId::from_parts(1_700_000_000_000, 3, 0)?;
/// assert_eq!(describe(&id), "OrderId at 1700000000000 ms");
/// Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub trait SnowflakeId: Sized + Send + Sync + 'static {
    /// The layout declared by `#[layout(...)]`.
    const LAYOUT: Layout;
    /// The type's name, as written in the source (for errors and statistics).
    const NAME: &'static str;

    /// The raw value: a non-negative `i64` within the layout.
    fn to_raw(&self) -> i64;

    /// Wraps a value already checked against [`SnowflakeId::LAYOUT`].
    ///
    /// Safe to call with any value (it is not `unsafe`), but an unchecked value breaks the
    /// type's promise; use [`SnowflakeId::from_raw`] unless the value came from the layout.
    #[doc(hidden)]
    fn from_raw_unchecked(raw: i64) -> Self;

    /// The per-type generator slot (a `static` in the derived code).
    #[doc(hidden)]
    fn generator_slot() -> &'static GeneratorSlot;

    /// Checks `raw` against the layout and wraps it.
    fn from_raw(raw: i64) -> Result<Self, LayoutError> {
        Self::LAYOUT.validate(raw).map(Self::from_raw_unchecked)
    }

    /// Checks an unsigned value (a `BIGINT UNSIGNED` column, a `u64` from elsewhere) against
    /// the layout and wraps it; `2^63` and above are out of layout.
    ///
    /// ```
    /// use typed_snowflake::SnowflakeId;
    ///
    /// #[derive(SnowflakeId, Debug)]
    /// #[layout(time = 41, worker = 10, seq = 12, epoch = "2020-01-01")]
    /// struct EventId(i64);
    ///
    /// assert_eq!(EventId::from_u64(42)?.get(), 42);
    /// assert!(EventId::from_u64(u64::MAX).is_err());
    /// Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    fn from_u64(raw: u64) -> Result<Self, LayoutError> {
        Self::LAYOUT.validate_u64(raw).map(Self::from_raw_unchecked)
    }

    /// Parses decimal text (see [`ParseIdError::parse`]).
    fn parse_str(text: &str) -> Result<Self, ParseIdError> {
        ParseIdError::parse(&Self::LAYOUT, text).map(Self::from_raw_unchecked)
    }

    /// The decoded fields.
    fn to_parts(&self) -> Parts {
        Self::LAYOUT.parts_of(self.to_raw())
    }

    /// The next ID from this type's generator, for async code (feature `tokio`): the same
    /// hot path as `T::generate()`, but where that would block the thread (a tick's
    /// sequence spent, a [`StepBack::Wait`](crate::StepBack::Wait) clock policy waiting)
    /// this awaits, so other tasks on the runtime keep running. Panics only where
    /// [`SnowflakeId::try_generate_async`] returns an error, with that error's message.
    ///
    /// ```
    /// use typed_snowflake::SnowflakeId;
    ///
    /// #[derive(SnowflakeId, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Debug)]
    /// #[layout(time = 42, worker = 5, seq = 16, epoch = "2021-05-05")]
    /// struct OrderId(i64);
    ///
    /// async fn make<T: SnowflakeId>() -> T {
    ///     T::generate_async().await
    /// }
    ///
    /// let runtime = tokio::runtime::Builder::new_current_thread().enable_time().build()?;
    /// let (a, b) = runtime.block_on(async { (make::<OrderId>().await, OrderId::generate_async().await) });
    /// assert!(a < b);
    /// Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[cfg(feature = "tokio")]
    fn generate_async() -> impl Future<Output = Self> + Send {
        crate::__private::generate_async::<Self>()
    }

    /// [`SnowflakeId::generate_async`], or why there is no ID (clock, worker ID, exhausted
    /// time field, high-water file, lease).
    #[cfg(feature = "tokio")]
    fn try_generate_async() -> impl Future<Output = Result<Self, crate::error::GenerateError>> + Send {
        crate::__private::try_generate_async::<Self>()
    }

    /// The ID as a keyed public string (feature `public-id`): 11 URL-safe characters, a
    /// keyed permutation of the ID's 64 bits that hides its order, time, worker and
    /// volume from anyone without the key. See [`crate::public`] for the construction,
    /// the threat model and key rotation.
    ///
    /// ```
    /// use typed_snowflake::{PublicIdKey, SnowflakeId};
    ///
    /// #[derive(SnowflakeId, Clone, Copy, Debug, PartialEq)]
    /// #[layout(time = 42, worker = 5, seq = 16, epoch = "2021-05-05")]
    /// struct OrderId(i64);
    ///
    /// let key = PublicIdKey::from_bytes([0x5A; 32]);
    /// let id = OrderId::from_parts(1_700_000_000_000, 3, 7)?;
    /// let text = id.to_public(&key);
    /// assert_eq!(text.len(), 11);
    /// assert_eq!(OrderId::from_public(&text, &key)?, id);
    /// Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[cfg(feature = "public-id")]
    fn to_public(&self, key: &crate::public::PublicIdKey) -> String {
        key.encode_id(self)
    }

    /// Decodes a string from [`SnowflakeId::to_public`] with the same key, and checks the
    /// result against the layout. Bad text (empty, wrong length, a character outside
    /// base64url, another version) and a value outside the layout (a wrong key, another
    /// type's ID, a tampered string) are errors, never a panic. A tampered string can
    /// still decode to some other valid ID: see [`crate::public`] on forgery.
    ///
    /// ```
    /// use typed_snowflake::{PublicIdError, PublicIdKey, SnowflakeId};
    ///
    /// #[derive(SnowflakeId, Clone, Copy, Debug, PartialEq)]
    /// #[layout(time = 42, worker = 5, seq = 16, epoch = "2021-05-05")]
    /// struct OrderId(i64);
    ///
    /// let key = PublicIdKey::from_bytes([0x5A; 32]);
    /// assert_eq!(OrderId::from_public("", &key), Err(PublicIdError::Empty));
    /// // Well-formed text decodes to some 64-bit value: an ID of the type half the time.
    /// assert!(matches!(OrderId::from_public("12345678900", &key), Ok(_) | Err(PublicIdError::NotAnId { .. })));
    /// // The last character holds 4 bits: '1' sets one that no key writes.
    /// assert_eq!(OrderId::from_public("12345678901", &key), Err(PublicIdError::NonCanonical));
    /// assert_eq!(OrderId::from_public("1234567890/", &key), Err(PublicIdError::InvalidChar { position: 10, found: '/' }));
    /// Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[cfg(feature = "public-id")]
    fn from_public(text: &str, key: &crate::public::PublicIdKey) -> Result<Self, crate::public::PublicIdError> {
        key.decode_id(text)
    }
}
