//! Feature-gated integrations. Each file defines its `__impl_*` macro twice: with the
//! feature on, it expands to the impls; with it off, to nothing. The derive calls every
//! macro and never needs to know which features are on.
//!
//! Two things every storage integration shares live here: [`stored_i64`], the one place an
//! ID becomes the `i64` a database stores, and [`DecodeIdError`], the error of a stored value
//! that is not an ID of the type it was read into.

use crate::SnowflakeId;
use crate::error::LayoutError;

#[cfg(feature = "serde")]
pub mod serde;
#[cfg(not(feature = "serde"))]
mod serde;

pub mod redis;

// Schemas: `pub(crate)`, since each holds only the helper the derived impls call, which
// `__private` re-exports.
pub(crate) mod schemars;
pub(crate) mod utoipa;

#[cfg(feature = "async-graphql")]
pub mod graphql;
#[cfg(not(feature = "async-graphql"))]
mod graphql;

// Storage.
#[cfg(any(feature = "sqlx-postgres", feature = "sqlx-mysql", feature = "sqlx-sqlite"))]
pub mod sqlx;
#[cfg(not(any(feature = "sqlx-postgres", feature = "sqlx-mysql", feature = "sqlx-sqlite")))]
mod sqlx;

#[cfg(any(feature = "sqlx08-postgres", feature = "sqlx08-mysql"))]
pub mod sqlx08;
#[cfg(not(any(feature = "sqlx08-postgres", feature = "sqlx08-mysql")))]
mod sqlx08;

#[cfg(any(feature = "diesel-postgres", feature = "diesel-mysql", feature = "diesel-sqlite"))]
pub mod diesel;
#[cfg(not(any(feature = "diesel-postgres", feature = "diesel-mysql", feature = "diesel-sqlite")))]
mod diesel;

#[cfg(feature = "sea-orm")]
pub mod sea_orm;
#[cfg(not(feature = "sea-orm"))]
mod sea_orm;

#[cfg(feature = "tokio-postgres")]
pub mod postgres;
#[cfg(not(feature = "tokio-postgres"))]
mod postgres;

/// The pattern of an ID in JSON and GraphQL: 1 to 19 decimal digits (`i64::MAX` has 19), no sign.
#[allow(dead_code, reason = "used by the schema features only")]
pub(crate) const ID_PATTERN: &str = "^[0-9]{1,19}$";

/// The description of `T` in a schema (JSON Schema, OpenAPI, GraphQL).
#[allow(dead_code, reason = "used by the schema features only")]
pub(crate) fn schema_description<T: SnowflakeId>() -> String {
    match T::PREFIX {
        Some(prefix) => format!(
            "{} Snowflake ID: `{prefix}_` and 13 lowercase Crockford base32 characters (0-9, a-z without i, l, o, \
             u) holding the 64-bit ID, most significant first; sorts as text in time order.",
            T::NAME
        ),
        None => format!(
            "{} Snowflake ID: a positive 64-bit integer written as a string of decimal digits \
             (a JSON number would lose digits above 2^53 in JavaScript).",
            T::NAME
        ),
    }
}

/// [`schema_example`] in `T`'s text form (`ord_…` or digits).
#[allow(dead_code, reason = "used by the schema features only")]
pub(crate) fn schema_example_text<T: SnowflakeId>() -> String {
    let raw = schema_example::<T>();
    match T::PREFIX {
        Some(prefix) => crate::prefixed::format(prefix, raw),
        None => raw.cast_unsigned().to_string(),
    }
}

/// An ID of `T` to show in a schema: 2026-01-01 on worker 1, or the largest ID where the
/// layout cannot hold that instant.
#[allow(dead_code, reason = "used by the schema features only")]
pub(crate) fn schema_example<T: SnowflakeId>() -> i64 {
    match T::LAYOUT.encode(1_767_225_600_000, 1, 0) {
        Ok(raw) => raw,
        Err(_) => T::LAYOUT.max_id(),
    }
}

/// An error of any source, as the database crates box them.
#[allow(dead_code, reason = "used by the storage features only")]
pub(crate) type BoxError = Box<dyn std::error::Error + Send + Sync + 'static>;

/// The `i64` a database column stores for `id`. Every integration's encode goes through
/// here, so a rule about which IDs fit a signed `BIGINT` is written once.
#[allow(dead_code, reason = "used by the storage features only")]
#[inline]
pub(crate) fn stored_i64<T: SnowflakeId>(id: &T) -> Result<i64, EncodeIdError> {
    // A 64-bit layout's IDs at or above 2^63 are carried with their bits, as a negative
    // `i64`: stored as such they would sort before every smaller ID.
    let raw = id.to_raw();
    if raw < 0 {
        return Err(EncodeIdError::new(T::NAME, raw.cast_unsigned()));
    }
    Ok(raw)
}

/// An ID that no `BIGINT` holds in order: one at or above 2^63, of a 64-bit layout.
///
/// ```
/// use typed_snowflake::EncodeIdError;
///
/// let error = EncodeIdError::new("DiscordId", 1 << 63);
/// assert_eq!(
///     error.to_string(),
///     "DiscordId 9223372036854775808 does not fit in a BIGINT: IDs at or above 2^63 have no \
///      order-preserving signed 64-bit form"
/// );
/// ```
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "{type_name} {value} does not fit in a BIGINT: IDs at or above 2^63 have no order-preserving signed 64-bit form"
)]
pub struct EncodeIdError {
    type_name: &'static str,
    value: u64,
}

impl EncodeIdError {
    /// An error for the ID `value` of `type_name`.
    pub const fn new(type_name: &'static str, value: u64) -> Self {
        Self { type_name, value }
    }

    /// The ID type, as written in the source.
    pub const fn type_name(&self) -> &'static str {
        self.type_name
    }

    /// The ID.
    pub const fn value(&self) -> u64 {
        self.value
    }
}

/// A stored `i64` checked against `T`'s layout: the ID, or a [`DecodeIdError`] naming the
/// type and the reason. Every integration's decode goes through here.
#[allow(dead_code, reason = "used by the storage features only")]
#[inline]
pub(crate) fn checked_i64<T: SnowflakeId>(raw: i64) -> Result<T, DecodeIdError> {
    checked(T::LAYOUT.validate(raw))
}

/// [`checked_i64`] for an unsigned stored value (MySQL's `BIGINT UNSIGNED`).
#[allow(dead_code, reason = "used by the storage features only")]
#[inline]
pub(crate) fn checked_u64<T: SnowflakeId>(raw: u64) -> Result<T, DecodeIdError> {
    checked(T::LAYOUT.validate_u64(raw))
}

#[allow(dead_code, reason = "used by the storage features only")]
#[inline]
fn checked<T: SnowflakeId>(raw: Result<i64, LayoutError>) -> Result<T, DecodeIdError> {
    match raw {
        Ok(raw) => Ok(T::from_raw_unchecked(raw)),
        Err(reason) => Err(DecodeIdError::new(T::NAME, reason)),
    }
}

/// A stored value that is not an ID of the type it was decoded into.
///
/// The database crates wrap it in their own error (sqlx's `Error::ColumnDecode`, diesel's
/// deserialization error, sea-orm's `TryGetError`, tokio-postgres' `Error`), whose message
/// names the column; this error names the type and says what is wrong with the value. Reach
/// it by downcasting the wrapped source: `source.downcast_ref::<DecodeIdError>()`.
///
/// ```
/// use typed_snowflake::{DecodeIdError, LayoutError};
///
/// let error = DecodeIdError::new("OrderId", LayoutError::Negative { value: -5 });
/// assert_eq!(
///     error.to_string(),
///     "the stored value is not a valid OrderId: -5 is negative; a Snowflake ID is a positive i64"
/// );
/// assert_eq!(error.type_name(), "OrderId");
/// assert_eq!(error.reason(), &LayoutError::Negative { value: -5 });
/// Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the stored value is not a valid {type_name}: {reason}")]
pub struct DecodeIdError {
    type_name: &'static str,
    // Not a `#[source]`: the message already says it, and error reports would repeat it.
    reason: LayoutError,
}

impl DecodeIdError {
    /// An error for a value of `type_name` that the layout rejected with `reason`.
    ///
    /// ```
    /// use typed_snowflake::{DecodeIdError, LayoutError};
    ///
    /// let error = DecodeIdError::new("OrderId", LayoutError::OutOfLayout { value: 1 << 62, used_bits: 39 });
    /// assert!(error.to_string().contains("above the layout's 39 bits"));
    /// Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub const fn new(type_name: &'static str, reason: LayoutError) -> Self {
        Self { type_name, reason }
    }

    /// The ID type the value was decoded into, as written in the source (`"OrderId"`).
    ///
    /// ```
    /// use typed_snowflake::{DecodeIdError, LayoutError};
    ///
    /// assert_eq!(DecodeIdError::new("OrderId", LayoutError::Negative { value: -1 }).type_name(), "OrderId");
    /// Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub const fn type_name(&self) -> &'static str {
        self.type_name
    }

    /// Why the layout rejected the value.
    ///
    /// ```
    /// use typed_snowflake::{DecodeIdError, LayoutError};
    ///
    /// let reason = LayoutError::Negative { value: -1 };
    /// assert_eq!(DecodeIdError::new("OrderId", reason).reason(), &reason);
    /// Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub const fn reason(&self) -> &LayoutError {
        &self.reason
    }
}
