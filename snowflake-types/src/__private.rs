//! What `#[derive(SnowflakeId)]` expands to calls into. Not a public API: names and
//! signatures here change without notice.

pub use crate::prefixed::with_text as prefixed_text;
pub use crate::registry::GeneratorSlot;
pub use crate::{
    FieldOrder, GenerateError, Layout, LayoutError, ParseIdError, Parts, PrefixedIdError, SnowflakeId, TickUnit,
};
pub use core::fmt::{Display, Formatter, Result as FmtResult};
pub use core::result::Result;
pub use core::str::FromStr;
pub use std::time::SystemTime;

pub use crate::dates::{IntoUnixMs, system_time_of};
pub use std::borrow::Cow;
pub use std::string::String;
pub use std::vec::Vec;

pub use crate::{__impl_integrations as impl_integrations, __impl_tokio as impl_tokio};

/// Every feature-gated impl for a derived type. The derive calls this one macro; each
/// integration's own macro expands to nothing when its feature is off, so the derive never
/// needs to know which features are on, and a new integration is one line here.
#[doc(hidden)]
#[macro_export]
macro_rules! __impl_integrations {
    ($ty:ident) => {
        $crate::__impl_serde!($ty);
        $crate::__impl_schemars!($ty);
        $crate::__impl_sqlx_postgres!($ty);
        $crate::__impl_sqlx_mysql!($ty);
        $crate::__impl_sqlx_sqlite!($ty);
        $crate::__impl_redis!($ty);
        $crate::__impl_sqlx08_postgres!($ty);
        $crate::__impl_sqlx08_mysql!($ty);
        $crate::__impl_diesel!($ty);
        $crate::__impl_diesel_postgres!($ty);
        $crate::__impl_diesel_mysql!($ty);
        $crate::__impl_diesel_sqlite!($ty);
        $crate::__impl_postgres_types!($ty);
        $crate::__impl_sea_orm!($ty);
        $crate::__impl_utoipa!($ty);
        $crate::__impl_async_graphql!($ty);
    };
}

/// `T::generate_async()` and `T::try_generate_async()` on a derived type (feature `tokio`).
#[cfg(feature = "tokio")]
#[doc(hidden)]
#[macro_export]
macro_rules! __impl_tokio {
    ($ty:ident) => {
        #[automatically_derived]
        impl $ty {
            /// The next ID from this type's generator, for async code (feature `tokio`):
            /// the same hot path as [`Self::generate`], but where that would block the
            /// thread (a tick's sequence spent, a `StepBack::Wait` clock policy waiting)
            /// this awaits, so other tasks keep running. Panics only where
            /// [`Self::try_generate_async`] returns an error, with that error's message.
            #[inline]
            pub async fn generate_async() -> Self {
                $crate::__private::generate_async::<Self>().await
            }

            /// [`Self::generate_async`], or why there is no ID (clock, worker ID, exhausted
            /// time field, high-water file, lease).
            #[inline]
            pub async fn try_generate_async() -> $crate::__private::Result<Self, $crate::__private::GenerateError> {
                $crate::__private::try_generate_async::<Self>().await
            }
        }
    };
}

/// Without the `tokio` feature: nothing.
#[cfg(not(feature = "tokio"))]
#[doc(hidden)]
#[macro_export]
macro_rules! __impl_tokio {
    ($ty:ident) => {};
}

#[cfg(any(feature = "diesel-postgres", feature = "diesel-mysql", feature = "diesel-sqlite"))]
pub use crate::integrations::diesel::helpers as diesel_helpers;
#[cfg(feature = "async-graphql")]
pub use crate::integrations::graphql::helpers as graphql;
#[cfg(feature = "tokio-postgres")]
pub use crate::integrations::postgres::helpers as postgres_helpers;
#[cfg(feature = "redis")]
pub use crate::integrations::redis::support::{from_value as redis_from_value, write_arg as redis_write_arg};
#[cfg(feature = "schemars")]
pub use crate::integrations::schemars::json_schema as schemars_json_schema;
#[cfg(feature = "sea-orm")]
pub use crate::integrations::sea_orm::helpers as sea_orm_helpers;
#[cfg(feature = "serde")]
pub use crate::integrations::serde::{deserialize as serde_deserialize, serialize as serde_serialize};
#[cfg(any(feature = "sqlx-postgres", feature = "sqlx-mysql", feature = "sqlx-sqlite"))]
pub use crate::integrations::sqlx::helpers as sqlx;
#[cfg(any(feature = "sqlx08-postgres", feature = "sqlx08-mysql"))]
pub use crate::integrations::sqlx08::helpers as sqlx08;
#[cfg(feature = "utoipa")]
pub use crate::integrations::utoipa::schema as utoipa_schema;
#[cfg(feature = "async-graphql")]
pub use async_graphql;
#[cfg(any(feature = "diesel-postgres", feature = "diesel-mysql", feature = "diesel-sqlite"))]
pub use diesel;
#[cfg(feature = "redis")]
pub use redis;
#[cfg(feature = "schemars")]
pub use schemars;
#[cfg(feature = "sea-orm")]
pub use sea_orm;
#[cfg(feature = "serde")]
pub use serde;
#[cfg(any(feature = "sqlx-postgres", feature = "sqlx-mysql", feature = "sqlx-sqlite"))]
pub use sqlx_core;
#[cfg(any(feature = "sqlx08-postgres", feature = "sqlx08-mysql"))]
pub use sqlx_core_08;
#[cfg(feature = "sqlx-mysql")]
pub use sqlx_mysql;
#[cfg(feature = "sqlx08-mysql")]
pub use sqlx_mysql_08;
#[cfg(feature = "sqlx-postgres")]
pub use sqlx_postgres;
#[cfg(feature = "sqlx08-postgres")]
pub use sqlx_postgres_08;
#[cfg(feature = "sqlx-sqlite")]
pub use sqlx_sqlite;
pub use std::boxed::Box;
#[cfg(feature = "utoipa")]
pub use utoipa;
#[cfg(feature = "tokio-postgres")]
pub use {bytes, postgres_types};

/// The raw value of an `i64` field.
#[inline(always)]
pub const fn raw_from_i64(value: i64) -> i64 {
    value
}

/// The raw value of a `u64` field: the same bit pattern (at or above `2^63` only for a
/// 64-bit layout).
#[inline(always)]
#[allow(clippy::cast_possible_wrap)]
pub const fn raw_from_u64(value: u64) -> i64 {
    value as i64
}

/// An `i64` field from a raw value.
#[inline(always)]
pub const fn raw_to_i64(raw: i64) -> i64 {
    raw
}

/// A `u64` field from a raw value (the same bit pattern).
#[inline(always)]
#[allow(clippy::cast_sign_loss)]
pub const fn raw_to_u64(raw: i64) -> u64 {
    raw as u64
}

/// `T::from_parts`.
#[inline]
pub fn from_parts<T: SnowflakeId>(unix_ms: i64, worker: u64, seq: u64) -> Result<T, LayoutError> {
    <T as SnowflakeId>::from_parts(unix_ms, worker, seq)
}

/// `T::from_node_parts`, for split layouts.
#[inline]
pub fn from_node_parts<T: SnowflakeId>(
    unix_ms: i64,
    datacenter: u64,
    machine: u64,
    seq: u64,
) -> Result<T, LayoutError> {
    let worker = T::LAYOUT.join_node(datacenter, machine)?;
    from_parts(unix_ms, worker, seq)
}

/// `Display`: `ord_…` for a prefixed type, else the decimal
/// value (of the `u64` bit pattern, so a 64-bit layout's IDs at or above 2^63 print as what
/// they are).
#[inline]
pub fn fmt<T: SnowflakeId>(id: &T, f: &mut Formatter<'_>) -> FmtResult {
    crate::id::fmt_text(id, f)
}

/// A prefixed type's `FromStr`.
#[inline]
pub fn parse_prefixed<T: SnowflakeId>(text: &str) -> Result<T, PrefixedIdError> {
    <T as SnowflakeId>::parse_text(text)
}

/// `T::generate()`: panics where `try_generate` errs, with that error.
#[inline(always)]
#[track_caller]
pub fn generate<T: SnowflakeId>() -> T {
    <T as SnowflakeId>::generate()
}

/// `T::try_generate()`: the generator's hot path, inlined here with `T::LAYOUT` as a
/// constant.
#[inline(always)]
pub fn try_generate<T: SnowflakeId>() -> Result<T, GenerateError> {
    <T as SnowflakeId>::try_generate()
}

/// `T::try_generate_async()`: the same hot path as [`try_generate`], awaiting where that
/// would block.
#[cfg(feature = "tokio")]
#[inline]
pub async fn try_generate_async<T: SnowflakeId>() -> Result<T, GenerateError> {
    <T as SnowflakeId>::try_generate_async().await
}

/// `T::generate_async()`: panics where `try_generate_async` errs, with that error.
#[cfg(feature = "tokio")]
#[inline]
pub async fn generate_async<T: SnowflakeId>() -> T {
    <T as SnowflakeId>::generate_async().await
}

/// `T::generate_batch(n)`.
pub fn generate_batch<T: SnowflakeId>(n: usize) -> Result<Vec<T>, GenerateError> {
    <T as SnowflakeId>::generate_batch(n)
}

pub use crate::score::{member_of, score_of};
pub use core::convert::{From, TryFrom};
