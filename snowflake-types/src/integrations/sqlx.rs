//! Storage through sqlx 0.9: features `sqlx-postgres`, `sqlx-mysql`, `sqlx-sqlite`.
//!
//! With a feature on, every derived ID implements sqlx's `Type`, `Encode` and `Decode` for that
//! database (the traits of sqlx 0.9; use that version of `sqlx` in your own crate). An ID is stored as the column type of `i64`: `BIGINT` in PostgreSQL and
//! MySQL/MariaDB, `INTEGER` in SQLite. Binding and reading need nothing beyond the ID type:
//!
//! ```sql
//! CREATE TABLE orders (id BIGINT PRIMARY KEY, customer BIGINT NOT NULL, total_cents BIGINT NOT NULL);
//! ```
//!
//! ```ignore
//! let id = OrderId::generate();
//! sqlx::query("INSERT INTO orders (id, customer, total_cents) VALUES ($1, $2, $3)")
//!     .bind(id)
//!     .bind(customer)
//!     .bind(1250_i64)
//!     .execute(&pool)
//!     .await?;
//! let (back,): (OrderId,) = sqlx::query_as("SELECT id FROM orders WHERE id = $1").bind(id).fetch_one(&pool).await?;
//!
//! // Orders created between two instants: the ID order is the time order.
//! let recent: Vec<OrderId> = sqlx::query_scalar("SELECT id FROM orders WHERE id BETWEEN $1 AND $2 ORDER BY id")
//!     .bind(OrderId::first_at(since_ms))
//!     .bind(OrderId::last_at(until_ms))
//!     .fetch_all(&pool)
//!     .await?;
//! ```
//!
//! # Decoding checks the value
//!
//! The impls are written by hand rather than with `#[sqlx(transparent)]`, which would accept any
//! `i64`. A stored value goes through the checked constructor, so a negative number, or one with a
//! bit set above the layout's widths, is a decode error naming the type and the problem (a
//! [`DecodeIdError`] inside sqlx's `Error::ColumnDecode`), never a wrong ID. `NULL` decodes into
//! `Option<OrderId>` as `None`, and into `OrderId` as sqlx's unexpected-null error.
//!
//! # 64-bit layouts
//!
//! A type over a `u64` whose layout uses all 64 bits (Discord, Instagram, Mastodon) has IDs
//! at or above 2^63 once its time field's top bit is set. No `BIGINT` holds them in order
//! (as a signed bit pattern they would sort below every other ID), so encoding one is an
//! [`EncodeIdError`] naming the type; every ID below 2^63 is stored as usual. Decoding reads
//! what encoding wrote, and a MySQL `BIGINT UNSIGNED` column decodes the whole `u64` range.
//!
//! # PostgreSQL
//!
//! IDs have an array type (`PgHasArrayType`), so `Vec<OrderId>` and `&[OrderId]` bind as
//! `BIGINT[]`:
//!
//! ```ignore
//! let rows: Vec<(OrderId, i64)> = sqlx::query_as("SELECT id, total_cents FROM orders WHERE id = ANY($1)")
//!     .bind(&ids[..])
//!     .fetch_all(&pool)
//!     .await?;
//! ```
//!
//! # MySQL and MariaDB
//!
//! IDs bind as signed `BIGINT` and decode from any integer column. A `BIGINT UNSIGNED` column
//! works too: it is read as a `u64` and checked with [`Layout::validate_u64`](crate::Layout::validate_u64),
//! so a value at or above `2^63` (which no ID can be) is an error rather than a negative `i64`.
//! Prefer signed `BIGINT`: every ID fits it, and it is what other languages' drivers read back.
//!
//! # SQLite
//!
//! IDs bind as 64-bit integers and decode from values of the `INTEGER` storage class only. SQLite
//! itself reads `NULL`, text and reals as integers (`'abc'` and `NULL` as 0, a valid ID); here they
//! are errors.
//!
//! # The `query!` macros
//!
//! The checked macros (which need `DATABASE_URL` at compile time, as always) see a `BIGINT`
//! column as `i64`. Name the ID type in the column alias, and bind the raw value:
//!
//! ```ignore
//! let order = sqlx::query_as!(
//!     Order,
//!     r#"SELECT id as "id: OrderId", customer as "customer: CustomerId", total_cents FROM orders WHERE id = $1"#,
//!     id.get(),
//! )
//! .fetch_one(&pool)
//! .await?;
//! ```
//!
//! The plain functions (`query_as`, `query_scalar`, `#[derive(sqlx::FromRow)]`) need no alias.

#[cfg(any(feature = "sqlx-postgres", feature = "sqlx-mysql", feature = "sqlx-sqlite"))]
pub use super::DecodeIdError;

#[cfg(any(feature = "sqlx-postgres", feature = "sqlx-mysql", feature = "sqlx-sqlite"))]
pub use super::EncodeIdError;

/// The body of a version's `helpers` module that does not depend on the database: `encode`,
/// `decode` and the MySQL module. `$core` and `$mysql` are the version's crates, `$mysql_feature`
/// the feature of its MySQL impls; the module defines its own `ArgumentBuffer` alias beside.
#[cfg(any(
    feature = "sqlx-postgres",
    feature = "sqlx-mysql",
    feature = "sqlx-sqlite",
    feature = "sqlx08-postgres",
    feature = "sqlx08-mysql"
))]
macro_rules! sqlx_helpers {
    ($core:ident, $mysql:ident, $mysql_feature:literal) => {
        use crate::SnowflakeId;
        use $core::database::Database;
        use $core::decode::Decode;
        use $core::encode::{Encode, IsNull};
        use $core::error::{BoxDynError, UnexpectedNullError};
        use $core::value::ValueRef;

        /// Encodes an ID as its `i64`; an ID at or above 2^63 (of a 64-bit layout) is an error.
        #[inline]
        pub fn encode<'q, T: SnowflakeId, DB: Database>(
            id: &T,
            buf: &mut ArgumentBuffer<'q, DB>,
        ) -> Result<IsNull, BoxDynError>
        where
            i64: Encode<'q, DB>,
        {
            <i64 as Encode<'q, DB>>::encode(crate::integrations::stored_i64(id)?, buf)
        }

        /// Decodes an `i64` and checks it against `T`'s layout.
        #[inline]
        pub fn decode<'r, T: SnowflakeId, DB: Database>(value: DB::ValueRef<'r>) -> Result<T, BoxDynError>
        where
            i64: Decode<'r, DB>,
        {
            // sqlx's `i64` reads SQLite's NULL as 0, a valid ID: refuse NULL here for every database.
            if value.is_null() {
                return Err(Box::new(UnexpectedNullError));
            }
            Ok(crate::integrations::checked_i64::<T>(<i64 as Decode<'r, DB>>::decode(value)?)?)
        }

        /// MySQL: signed integer columns as `i64`, unsigned ones (`BIGINT UNSIGNED`) as `u64`.
        #[cfg(feature = $mysql_feature)]
        pub mod mysql {
            use crate::SnowflakeId;
            use $core::decode::Decode;
            use $core::error::BoxDynError;
            use $core::types::Type;
            use $core::value::ValueRef;
            use $mysql::{MySql, MySqlTypeInfo, MySqlValueRef};

            /// Any integer column, signed or unsigned: every value is checked on decode.
            #[inline]
            pub fn compatible(ty: &MySqlTypeInfo) -> bool {
                <i64 as Type<MySql>>::compatible(ty) || <u64 as Type<MySql>>::compatible(ty)
            }

            /// Decodes through `u64` when the column is unsigned, so `2^63` and above are an
            /// out-of-layout error, not a negative number.
            pub fn decode<T: SnowflakeId>(value: MySqlValueRef<'_>) -> Result<T, BoxDynError> {
                if !value.is_null() && <u64 as Type<MySql>>::compatible(&value.type_info()) {
                    Ok(crate::integrations::checked_u64::<T>(<u64 as Decode<MySql>>::decode(value)?)?)
                } else {
                    super::decode::<T, MySql>(value)
                }
            }
        }
    };
}
#[cfg(any(
    feature = "sqlx-postgres",
    feature = "sqlx-mysql",
    feature = "sqlx-sqlite",
    feature = "sqlx08-postgres",
    feature = "sqlx08-mysql"
))]
pub(crate) use sqlx_helpers;

/// Helpers the generated impls call; generic over the database, so each impl is one line.
#[cfg(any(feature = "sqlx-postgres", feature = "sqlx-mysql", feature = "sqlx-sqlite"))]
#[doc(hidden)]
pub mod helpers {
    /// The buffer `Encode` writes to (with the encoding lifetime in sqlx 0.8 only); `Database`
    /// is imported by `sqlx_helpers!`.
    pub type ArgumentBuffer<'q, DB> = <DB as Database>::ArgumentBuffer;

    super::sqlx_helpers!(sqlx_core, sqlx_mysql, "sqlx-mysql");

    /// SQLite: only the `INTEGER` storage class (SQLite reads text and reals as integers).
    #[cfg(feature = "sqlx-sqlite")]
    pub mod sqlite {
        use crate::SnowflakeId;
        use sqlx_core::error::BoxDynError;
        use sqlx_core::type_info::TypeInfo;
        use sqlx_core::types::Type;
        use sqlx_core::value::ValueRef;
        use sqlx_sqlite::{Sqlite, SqliteValueRef};

        /// Decodes an `INTEGER` value; `NULL`, text, reals and blobs are errors.
        pub fn decode<T: SnowflakeId>(value: SqliteValueRef<'_>) -> Result<T, BoxDynError> {
            let ty = value.type_info();
            if !ty.is_null() && !<i64 as Type<Sqlite>>::compatible(&ty) {
                return Err(
                    format!("the stored value is not a valid {}: it is {}, not INTEGER", T::NAME, ty.name()).into()
                );
            }
            super::decode::<T, Sqlite>(value)
        }
    }
}

/// `Type`, `Encode` and `Decode` for one database, forwarding the type to `i64`. `$core` and
/// `$helpers` name the sqlx version's crate and this crate's helpers in `__private` (`sqlx_core`
/// and `sqlx` for 0.9, `sqlx_core_08` and `sqlx08` for 0.8).
#[cfg(any(
    feature = "sqlx-postgres",
    feature = "sqlx-mysql",
    feature = "sqlx-sqlite",
    feature = "sqlx08-postgres",
    feature = "sqlx08-mysql"
))]
#[doc(hidden)]
#[macro_export]
macro_rules! __impl_sqlx_common {
    (
        $core:ident, $helpers:ident, $ty:ty, $db:ty,
        compatible = $compatible:expr, decode = $decode:expr
    ) => {
        #[automatically_derived]
        impl $crate::__private::$core::types::Type<$db> for $ty {
            #[inline]
            fn type_info() -> <$db as $crate::__private::$core::database::Database>::TypeInfo {
                <::core::primitive::i64 as $crate::__private::$core::types::Type<$db>>::type_info()
            }
            #[inline]
            fn compatible(
                ty: &<$db as $crate::__private::$core::database::Database>::TypeInfo,
            ) -> ::core::primitive::bool {
                ($compatible)(ty)
            }
        }
        #[automatically_derived]
        impl<'q> $crate::__private::$core::encode::Encode<'q, $db> for $ty {
            #[inline]
            fn encode_by_ref(
                &self,
                buf: &mut $crate::__private::$helpers::ArgumentBuffer<'q, $db>,
            ) -> $crate::__private::Result<
                $crate::__private::$core::encode::IsNull,
                $crate::__private::$core::error::BoxDynError,
            > {
                $crate::__private::$helpers::encode::<Self, $db>(self, buf)
            }
        }
        #[automatically_derived]
        impl<'r> $crate::__private::$core::decode::Decode<'r, $db> for $ty {
            #[inline]
            fn decode(
                value: <$db as $crate::__private::$core::database::Database>::ValueRef<'r>,
            ) -> $crate::__private::Result<Self, $crate::__private::$core::error::BoxDynError> {
                ($decode)(value)
            }
        }
    };
}

#[cfg(feature = "sqlx-postgres")]
#[doc(hidden)]
#[macro_export]
macro_rules! __impl_sqlx_postgres {
    ($ty:ty) => {
        $crate::__impl_sqlx_common!(
            sqlx_core,
            sqlx,
            $ty,
            $crate::__private::sqlx_postgres::Postgres,
            compatible = <::core::primitive::i64 as $crate::__private::sqlx_core::types::Type<
                $crate::__private::sqlx_postgres::Postgres,
            >>::compatible,
            decode = $crate::__private::sqlx::decode::<Self, $crate::__private::sqlx_postgres::Postgres>
        );
        #[automatically_derived]
        impl $crate::__private::sqlx_postgres::PgHasArrayType for $ty {
            #[inline]
            fn array_type_info() -> $crate::__private::sqlx_postgres::PgTypeInfo {
                <::core::primitive::i64 as $crate::__private::sqlx_postgres::PgHasArrayType>::array_type_info()
            }
            #[inline]
            fn array_compatible(ty: &$crate::__private::sqlx_postgres::PgTypeInfo) -> ::core::primitive::bool {
                <::core::primitive::i64 as $crate::__private::sqlx_postgres::PgHasArrayType>::array_compatible(ty)
            }
        }
    };
}
#[cfg(not(feature = "sqlx-postgres"))]
#[doc(hidden)]
#[macro_export]
macro_rules! __impl_sqlx_postgres {
    ($ty:ty) => {};
}

#[cfg(feature = "sqlx-mysql")]
#[doc(hidden)]
#[macro_export]
macro_rules! __impl_sqlx_mysql {
    ($ty:ty) => {
        $crate::__impl_sqlx_common!(
            sqlx_core,
            sqlx,
            $ty,
            $crate::__private::sqlx_mysql::MySql,
            compatible = $crate::__private::sqlx::mysql::compatible,
            decode = $crate::__private::sqlx::mysql::decode::<Self>
        );
    };
}
#[cfg(not(feature = "sqlx-mysql"))]
#[doc(hidden)]
#[macro_export]
macro_rules! __impl_sqlx_mysql {
    ($ty:ty) => {};
}

#[cfg(feature = "sqlx-sqlite")]
#[doc(hidden)]
#[macro_export]
macro_rules! __impl_sqlx_sqlite {
    ($ty:ty) => {
        $crate::__impl_sqlx_common!(
            sqlx_core,
            sqlx,
            $ty,
            $crate::__private::sqlx_sqlite::Sqlite,
            compatible = <::core::primitive::i64 as $crate::__private::sqlx_core::types::Type<
                $crate::__private::sqlx_sqlite::Sqlite,
            >>::compatible,
            decode = $crate::__private::sqlx::sqlite::decode::<Self>
        );
    };
}
#[cfg(not(feature = "sqlx-sqlite"))]
#[doc(hidden)]
#[macro_export]
macro_rules! __impl_sqlx_sqlite {
    ($ty:ty) => {};
}
