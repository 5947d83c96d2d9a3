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
}
