//! diesel 2: features `diesel-postgres`, `diesel-mysql`, `diesel-sqlite`.
//!
//! With a feature on, every derived ID is a `BigInt` value for that backend: `ToSql` and
//! `FromSql` for `BigInt`, `AsExpression<BigInt>` (and `Nullable<BigInt>`, for the ID and
//! references to it) and `Queryable`, which is what `#[derive(AsExpression, FromSqlRow)]` would
//! give. An ID field can stand wherever an `i64` column does: `table!` columns stay `BigInt`,
//! and the ID type goes in `Insertable`/`Queryable` structs, filters and bounds.
//!
//! ```ignore
//! diesel::table! { orders (id) { id -> BigInt, parent -> Nullable<BigInt> } }
//!
//! #[derive(Queryable, Insertable)]
//! #[diesel(table_name = orders)]
//! struct Order { id: OrderId, parent: Option<OrderId> }
//!
//! diesel::insert_into(orders::table).values(&Order { id: OrderId::generate(), parent: None }).execute(&mut conn)?;
//! let recent: Vec<OrderId> = orders::table
//!     .select(orders::id)
//!     .filter(orders::id.between(OrderId::first_at(since_ms), OrderId::last_at(until_ms)))
//!     .load(&mut conn)?;
//! ```
//!
//! # Decoding checks the value
//!
//! A stored value goes through the layout's check: a negative number, or one with a bit set
//! above the layout, is a deserialization error whose source is a [`DecodeIdError`] naming the
//! type and the reason, never a wrong ID. `NULL` is `None` in an `Option<OrderId>` field, and
//! diesel's unexpected-null error in an `OrderId` field. diesel's own message names only the
//! field ("Error deserializing field 'id'"); its source, which error reporters print after it,
//! names the type and the reason. On MySQL a `BIGINT UNSIGNED` value is
//! read as a `u64`, so `2^63` and above are out of layout rather than negative, and a column
//! that is not an integer (a `DOUBLE`, say) is an error. Text depends on the connection:
//! diesel's `MysqlConnection` asks libmysqlclient for a `BIGINT`, which converts it (`'123'` is
//! 123, then checked; `'abc'` is an error); diesel-async's `AsyncMysqlConnection` hands it over
//! as text, which is an error ("it is String, not an integer"), digits or not. On SQLite only
//! the `INTEGER` storage class decodes: SQLite would read text and reals as integers.
//!
//! diesel's `ToSql` requires `Debug`: an ID type that does not derive `Debug` can be read but
//! not written (binding it is a compile error at the call, naming the missing `Debug`).
//!
//! The features need diesel's backends only, not its connection crates: `diesel-postgres` and
//! `diesel-mysql` turn on diesel's `postgres_backend` and `mysql_backend`; `diesel-sqlite` turns
//! on `sqlite`, which brings `libsqlite3-sys` (diesel has no SQLite backend without it).

#[cfg(any(feature = "diesel-postgres", feature = "diesel-mysql", feature = "diesel-sqlite"))]
pub use super::DecodeIdError;

/// Helpers the generated impls call.
#[cfg(any(feature = "diesel-postgres", feature = "diesel-mysql", feature = "diesel-sqlite"))]
#[doc(hidden)]
pub mod helpers {
    use crate::SnowflakeId;
    use crate::integrations::{checked_i64, stored_i64};

    /// Checks a decoded `i64`, naming the type in the error.
    #[inline]
    pub fn checked<T: SnowflakeId>(raw: i64) -> ::diesel::deserialize::Result<T> {
        Ok(checked_i64::<T>(raw)?)
    }

    /// PostgreSQL: the `i64` encoding and decoding, with the layout's check.
    #[cfg(feature = "diesel-postgres")]
    pub mod pg {
        use crate::SnowflakeId;
        use diesel::deserialize::{self, FromSql};
        use diesel::pg::{Pg, PgValue};
        use diesel::serialize::{self, Output, ToSql};
        use diesel::sql_types::BigInt;

        /// Writes the ID as `INT8`.
        pub fn to_sql<T: SnowflakeId>(id: &T, out: &mut Output<'_, '_, Pg>) -> serialize::Result {
            let raw = super::stored_i64(id)?;
            <i64 as ToSql<BigInt, Pg>>::to_sql(&raw, &mut out.reborrow())
        }

        /// Reads an `INT8` and checks it.
        pub fn from_sql<T: SnowflakeId>(value: PgValue<'_>) -> deserialize::Result<T> {
            super::checked(<i64 as FromSql<BigInt, Pg>>::from_sql(value)?)
        }
    }

    /// MySQL: signed integers as `i64`, `BIGINT UNSIGNED` as `u64`, anything else refused.
    #[cfg(feature = "diesel-mysql")]
    pub mod mysql {
        use crate::SnowflakeId;
        use crate::integrations::checked_u64;
        use diesel::deserialize::{self, FromSql};
        use diesel::mysql::{Mysql, MysqlType, MysqlValue};
        use diesel::serialize::{self, Output, ToSql};
        use diesel::sql_types::{BigInt, Unsigned};

        /// Writes the ID as a signed `BIGINT`.
        pub fn to_sql<T: SnowflakeId>(id: &T, out: &mut Output<'_, '_, Mysql>) -> serialize::Result {
            let raw = super::stored_i64(id)?;
            <i64 as ToSql<BigInt, Mysql>>::to_sql(&raw, &mut out.reborrow())
        }

        /// Reads an integer column and checks it; other column types are errors.
        pub fn from_sql<T: SnowflakeId>(value: MysqlValue<'_>) -> deserialize::Result<T> {
            match value.value_type() {
                MysqlType::UnsignedLongLong => {
                    Ok(checked_u64::<T>(<u64 as FromSql<Unsigned<BigInt>, Mysql>>::from_sql(value)?)?)
                }
                MysqlType::Tiny
                | MysqlType::UnsignedTiny
                | MysqlType::Short
                | MysqlType::UnsignedShort
                | MysqlType::Long
                | MysqlType::UnsignedLong
                | MysqlType::LongLong => super::checked(<i64 as FromSql<BigInt, Mysql>>::from_sql(value)?),
                other => {
                    Err(format!("the stored value is not a valid {}: it is {other:?}, not an integer", T::NAME).into())
                }
            }
        }
    }

    /// SQLite: the `INTEGER` storage class only.
    #[cfg(feature = "diesel-sqlite")]
    pub mod sqlite {
        use crate::SnowflakeId;
        use diesel::deserialize::{self, FromSql};
        use diesel::serialize::{self, IsNull, Output};
        use diesel::sql_types::BigInt;
        use diesel::sqlite::{Sqlite, SqliteType, SqliteValue};

        /// Binds the ID as a 64-bit integer.
        pub fn to_sql<T: SnowflakeId>(id: &T, out: &mut Output<'_, '_, Sqlite>) -> serialize::Result {
            out.set_value(super::stored_i64(id)?);
            Ok(IsNull::No)
        }

        /// Reads an `INTEGER` value and checks it; text, reals and blobs are errors (SQLite
        /// itself would read `'abc'` as 0, a valid ID).
        pub fn from_sql<T: SnowflakeId>(value: SqliteValue<'_, '_, '_>) -> deserialize::Result<T> {
            match value.value_type() {
                Some(SqliteType::Long) => super::checked(<i64 as FromSql<BigInt, Sqlite>>::from_sql(value)?),
                other => {
                    let class = other.map_or_else(|| "NULL".to_owned(), |ty| format!("{ty:?}"));
                    Err(format!("the stored value is not a valid {}: it is {class}, not INTEGER", T::NAME).into())
                }
            }
        }
    }
}

/// `AsExpression<BigInt>` and `AsExpression<Nullable<BigInt>>` for the ID and references to
/// it, and `Queryable` over any backend whose `FromSql` the ID has: what diesel's own
/// `#[derive(AsExpression, FromSqlRow)]` generates.
#[cfg(any(feature = "diesel-postgres", feature = "diesel-mysql", feature = "diesel-sqlite"))]
#[doc(hidden)]
#[macro_export]
macro_rules! __impl_diesel {
    ($ty:ident) => {
        $crate::__impl_diesel!(@expr $ty, $crate::__private::diesel::sql_types::BigInt);
        $crate::__impl_diesel!(
            @expr $ty,
            $crate::__private::diesel::sql_types::Nullable<$crate::__private::diesel::sql_types::BigInt>
        );
        #[automatically_derived]
        impl<__DB, __ST> $crate::__private::diesel::deserialize::Queryable<__ST, __DB> for $ty
        where
            __DB: $crate::__private::diesel::backend::Backend,
            __ST: $crate::__private::diesel::sql_types::SingleValue,
            Self: $crate::__private::diesel::deserialize::FromSql<__ST, __DB>,
        {
            type Row = Self;
            #[inline]
            fn build(row: Self) -> $crate::__private::diesel::deserialize::Result<Self> {
                $crate::__private::Result::Ok(row)
            }
        }
    };
    (@expr $ty:ident, $st:ty) => {
        #[automatically_derived]
        impl $crate::__private::diesel::expression::AsExpression<$st> for $ty {
            type Expression = $crate::__private::diesel::internal::derives::as_expression::Bound<$st, Self>;
            #[inline]
            fn as_expression(self) -> Self::Expression {
                $crate::__private::diesel::internal::derives::as_expression::Bound::new(self)
            }
        }
        #[automatically_derived]
        impl<'__expr> $crate::__private::diesel::expression::AsExpression<$st> for &'__expr $ty {
            type Expression = $crate::__private::diesel::internal::derives::as_expression::Bound<$st, Self>;
            #[inline]
            fn as_expression(self) -> Self::Expression {
                $crate::__private::diesel::internal::derives::as_expression::Bound::new(self)
            }
        }
        #[automatically_derived]
        impl<'__expr, '__expr2> $crate::__private::diesel::expression::AsExpression<$st> for &'__expr2 &'__expr $ty {
            type Expression = $crate::__private::diesel::internal::derives::as_expression::Bound<$st, Self>;
            #[inline]
            fn as_expression(self) -> Self::Expression {
                $crate::__private::diesel::internal::derives::as_expression::Bound::new(self)
            }
        }
    };
}
#[cfg(not(any(feature = "diesel-postgres", feature = "diesel-mysql", feature = "diesel-sqlite")))]
#[doc(hidden)]
#[macro_export]
macro_rules! __impl_diesel {
    ($ty:ident) => {};
}

/// `ToSql<BigInt, DB>` and `FromSql<BigInt, DB>` through one backend's helpers, and
/// `ToSql<Nullable<BigInt>, DB>` as diesel's derive writes it.
#[cfg(any(feature = "diesel-postgres", feature = "diesel-mysql", feature = "diesel-sqlite"))]
#[doc(hidden)]
#[macro_export]
macro_rules! __impl_diesel_backend {
    ($ty:ident, $db:ty, $helpers:ident) => {
        // diesel's `ToSql` requires `Debug`; the higher-ranked bound makes these impls exist
        // only for IDs that derive it, instead of failing to compile for those that do not.
        #[automatically_derived]
        impl $crate::__private::diesel::serialize::ToSql<$crate::__private::diesel::sql_types::BigInt, $db> for $ty
        where
            for<'__d> $ty: ::core::fmt::Debug,
        {
            #[inline]
            fn to_sql<'__b>(
                &'__b self,
                out: &mut $crate::__private::diesel::serialize::Output<'__b, '_, $db>,
            ) -> $crate::__private::diesel::serialize::Result {
                $crate::__private::diesel_helpers::$helpers::to_sql::<Self>(self, out)
            }
        }
        #[automatically_derived]
        impl
            $crate::__private::diesel::serialize::ToSql<
                $crate::__private::diesel::sql_types::Nullable<$crate::__private::diesel::sql_types::BigInt>,
                $db,
            > for $ty
        where
            for<'__d> $ty: ::core::fmt::Debug,
        {
            #[inline]
            fn to_sql<'__b>(
                &'__b self,
                out: &mut $crate::__private::diesel::serialize::Output<'__b, '_, $db>,
            ) -> $crate::__private::diesel::serialize::Result {
                $crate::__private::diesel_helpers::$helpers::to_sql::<Self>(self, out)
            }
        }
        #[automatically_derived]
        impl $crate::__private::diesel::deserialize::FromSql<$crate::__private::diesel::sql_types::BigInt, $db>
            for $ty
        {
            #[inline]
            fn from_sql(
                value: <$db as $crate::__private::diesel::backend::Backend>::RawValue<'_>,
            ) -> $crate::__private::diesel::deserialize::Result<Self> {
                $crate::__private::diesel_helpers::$helpers::from_sql::<Self>(value)
            }
        }
    };
}

#[cfg(feature = "diesel-postgres")]
#[doc(hidden)]
#[macro_export]
macro_rules! __impl_diesel_postgres {
    ($ty:ident) => {
        $crate::__impl_diesel_backend!($ty, $crate::__private::diesel::pg::Pg, pg);
    };
}
#[cfg(not(feature = "diesel-postgres"))]
#[doc(hidden)]
#[macro_export]
macro_rules! __impl_diesel_postgres {
    ($ty:ident) => {};
}

#[cfg(feature = "diesel-mysql")]
#[doc(hidden)]
#[macro_export]
macro_rules! __impl_diesel_mysql {
    ($ty:ident) => {
        $crate::__impl_diesel_backend!($ty, $crate::__private::diesel::mysql::Mysql, mysql);
    };
}
#[cfg(not(feature = "diesel-mysql"))]
#[doc(hidden)]
#[macro_export]
macro_rules! __impl_diesel_mysql {
    ($ty:ident) => {};
}

#[cfg(feature = "diesel-sqlite")]
#[doc(hidden)]
#[macro_export]
macro_rules! __impl_diesel_sqlite {
    ($ty:ident) => {
        $crate::__impl_diesel_backend!($ty, $crate::__private::diesel::sqlite::Sqlite, sqlite);
    };
}
#[cfg(not(feature = "diesel-sqlite"))]
#[doc(hidden)]
#[macro_export]
macro_rules! __impl_diesel_sqlite {
    ($ty:ident) => {};
}
