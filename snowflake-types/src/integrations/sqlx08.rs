//! Storage through sqlx 0.8: features `sqlx08-postgres` and `sqlx08-mysql`, beside the sqlx 0.9
//! features (`sqlx-postgres`, `sqlx-mysql`, `sqlx-sqlite`) and with the same behaviour.
//!
//! With a feature on, every derived ID implements the `Type`, `Encode` and `Decode` traits of
//! sqlx 0.8 for that database, so a crate still on sqlx 0.8 (sea-orm 1.x, say) binds and reads
//! IDs as `BIGINT` with no annotation. Both versions may be on at once: the impls are for
//! different traits. Everything the `sql` module (sqlx 0.9) says of decoding holds here too:
//! a negative stored value, one with bits above the layout, or `NULL` for a non-`Option` is a
//! decode error naming the type and the reason ([`DecodeIdError`]), never a wrong ID; a MySQL
//! `BIGINT UNSIGNED` column is read as a `u64` and checked.
//!
//! ```ignore
//! let id = OrderId::generate();
//! sqlx::query("INSERT INTO orders (id) VALUES ($1)").bind(id).execute(&pool).await?;
//! let recent: Vec<OrderId> = sqlx::query_scalar("SELECT id FROM orders WHERE id BETWEEN $1 AND $2")
//!     .bind(OrderId::first_at(since_ms))
//!     .bind(OrderId::last_at(until_ms))
//!     .fetch_all(&pool)
//!     .await?;
//! ```
//!
//! # Why there is no `sqlx08-sqlite`
//!
//! `libsqlite3-sys` declares `links = "sqlite3"`, so one build holds one version of it.
//! sqlx-sqlite 0.8 requires `libsqlite3-sys` 0.30 exactly; sqlx-sqlite 0.9 accepts 0.30 to
//! 0.37, but uses SQLite functions that 0.30's default bindings lack unless its
//! `bundled_bindings` (or `bundled`) feature is on. A `sqlx08-sqlite` feature in this crate
//! would pin every build of the workspace to `libsqlite3-sys` 0.30 and break `sqlx-sqlite`
//! built alone. Users on sqlx 0.8 with SQLite can write the three impls for their type with
//! [`SnowflakeId::from_raw`](crate::SnowflakeId::from_raw) in `Decode`.
//!
//! # Generic over the database?
//!
//! `Type` and `Encode` could be one impl over every database whose `i64` encodes (and so
//! `sqlx::Any`), but `Type::compatible` differs for MySQL (unsigned columns are accepted and
//! checked) and a generic `Decode` would conflict with the per-database ones, so each database
//! gets its own three impls, as with sqlx 0.9.

#[cfg(any(feature = "sqlx08-postgres", feature = "sqlx08-mysql"))]
pub use super::DecodeIdError;

/// Helpers the generated impls call: those of the sqlx 0.9 module, over sqlx 0.8.
#[cfg(any(feature = "sqlx08-postgres", feature = "sqlx08-mysql"))]
#[doc(hidden)]
pub mod helpers {
    /// The buffer `Encode` writes to (with the encoding lifetime in sqlx 0.8 only); `Database`
    /// is imported by `sqlx_helpers!`.
    pub type ArgumentBuffer<'q, DB> = <DB as Database>::ArgumentBuffer<'q>;

    super::super::sqlx::sqlx_helpers!(sqlx_core_08, sqlx_mysql_08, "sqlx08-mysql");
}

#[cfg(feature = "sqlx08-postgres")]
#[doc(hidden)]
#[macro_export]
macro_rules! __impl_sqlx08_postgres {
    ($ty:ty) => {
        $crate::__impl_sqlx_common!(
            sqlx_core_08,
            sqlx08,
            $ty,
            $crate::__private::sqlx_postgres_08::Postgres,
            compatible = <::core::primitive::i64 as $crate::__private::sqlx_core_08::types::Type<
                $crate::__private::sqlx_postgres_08::Postgres,
            >>::compatible,
            decode = $crate::__private::sqlx08::decode::<Self, $crate::__private::sqlx_postgres_08::Postgres>
        );
        #[automatically_derived]
        impl $crate::__private::sqlx_postgres_08::PgHasArrayType for $ty {
            #[inline]
            fn array_type_info() -> $crate::__private::sqlx_postgres_08::PgTypeInfo {
                <::core::primitive::i64 as $crate::__private::sqlx_postgres_08::PgHasArrayType>::array_type_info()
            }
            #[inline]
            fn array_compatible(ty: &$crate::__private::sqlx_postgres_08::PgTypeInfo) -> ::core::primitive::bool {
                <::core::primitive::i64 as $crate::__private::sqlx_postgres_08::PgHasArrayType>::array_compatible(ty)
            }
        }
    };
}
#[cfg(not(feature = "sqlx08-postgres"))]
#[doc(hidden)]
#[macro_export]
macro_rules! __impl_sqlx08_postgres {
    ($ty:ty) => {};
}

#[cfg(feature = "sqlx08-mysql")]
#[doc(hidden)]
#[macro_export]
macro_rules! __impl_sqlx08_mysql {
    ($ty:ty) => {
        $crate::__impl_sqlx_common!(
            sqlx_core_08,
            sqlx08,
            $ty,
            $crate::__private::sqlx_mysql_08::MySql,
            compatible = $crate::__private::sqlx08::mysql::compatible,
            decode = $crate::__private::sqlx08::mysql::decode::<Self>
        );
    };
}
#[cfg(not(feature = "sqlx08-mysql"))]
#[doc(hidden)]
#[macro_export]
macro_rules! __impl_sqlx08_mysql {
    ($ty:ty) => {};
}
