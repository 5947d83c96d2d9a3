//! postgres-types (`tokio-postgres`, `postgres`): feature `tokio-postgres`.
//!
//! With the feature on, every derived ID implements postgres-types' `ToSql` and `FromSql` for
//! `INT8` (`BIGINT`), so `tokio_postgres::Client` (and the blocking `postgres` client) binds and
//! reads IDs directly; `Vec<OrderId>` and `&[OrderId]` bind as `BIGINT[]`.
//!
//! ```ignore
//! let id = OrderId::generate();
//! client.execute("INSERT INTO orders (id) VALUES ($1)", &[&id]).await?;
//! let rows = client
//!     .query("SELECT id FROM orders WHERE id BETWEEN $1 AND $2", &[&OrderId::first_at(since_ms), &OrderId::last_at(until_ms)])
//!     .await?;
//! let ids: Vec<OrderId> = rows.iter().map(|row| row.try_get(0)).collect::<Result<_, _>>()?;
//! ```
//!
//! Decoding checks the value: a negative `INT8`, or one with a bit set above the layout, is an
//! error whose source is a [`DecodeIdError`] naming the type and the reason (`row.try_get`
//! returns it; `row.get` panics with it, as for every type). `NULL` is `None` in an
//! `Option<OrderId>` and an error in an `OrderId`. Columns of other types (`INT4`, `TEXT`) are
//! refused by `accepts`, as for `i64`.
//!
//! postgres-types' `ToSql` requires `Debug`: an ID type that does not derive `Debug` gets
//! `FromSql` only (binding it is a compile error at the call, naming the missing `Debug`).

#[cfg(feature = "tokio-postgres")]
pub use super::DecodeIdError;

/// Helpers the generated impls call.
#[cfg(feature = "tokio-postgres")]
#[doc(hidden)]
pub mod helpers {
    use bytes::BytesMut;
    use postgres_types::{FromSql, IsNull, ToSql, Type};

    use crate::SnowflakeId;
    use crate::integrations::{BoxError, checked_i64, stored_i64};

    /// Writes the ID as an `INT8`.
    #[inline]
    pub fn to_sql<T: SnowflakeId>(id: &T, ty: &Type, out: &mut BytesMut) -> Result<IsNull, BoxError> {
        stored_i64(id)?.to_sql(ty, out)
    }

    /// Reads an `INT8` and checks it.
    #[inline]
    pub fn from_sql<T: SnowflakeId>(ty: &Type, raw: &[u8]) -> Result<T, BoxError> {
        Ok(checked_i64::<T>(i64::from_sql(ty, raw)?)?)
    }

    /// [`to_sql`] after [`accepts`]: what postgres-types' `to_sql_checked!` writes, without
    /// its unqualified `Box`.
    #[inline]
    pub fn to_sql_checked<T: SnowflakeId>(id: &T, ty: &Type, out: &mut BytesMut) -> Result<IsNull, BoxError> {
        if !accepts(ty) {
            return Err(Box::new(postgres_types::WrongType::new::<T>(ty.clone())));
        }
        to_sql(id, ty, out)
    }

    /// The column types an ID reads from and binds to: those of `i64` (`INT8`).
    #[inline]
    pub fn accepts(ty: &Type) -> bool {
        <i64 as FromSql<'_>>::accepts(ty) && <i64 as ToSql>::accepts(ty)
    }
}

/// `ToSql` and `FromSql` for `INT8`, through [`helpers`].
#[cfg(feature = "tokio-postgres")]
#[doc(hidden)]
#[macro_export]
macro_rules! __impl_postgres_types {
    ($ty:ident) => {
        // postgres-types' `ToSql` requires `Debug`; the higher-ranked bound makes this impl
        // exist only for IDs that derive it, instead of failing to compile for those that do not.
        #[automatically_derived]
        impl $crate::__private::postgres_types::ToSql for $ty
        where
            for<'__d> $ty: ::core::fmt::Debug,
        {
            #[inline]
            fn to_sql(
                &self,
                ty: &$crate::__private::postgres_types::Type,
                out: &mut $crate::__private::bytes::BytesMut,
            ) -> $crate::__private::Result<
                $crate::__private::postgres_types::IsNull,
                $crate::__private::Box<dyn ::std::error::Error + ::core::marker::Sync + ::core::marker::Send>,
            > {
                $crate::__private::postgres_helpers::to_sql::<Self>(self, ty, out)
            }
            #[inline]
            fn accepts(ty: &$crate::__private::postgres_types::Type) -> ::core::primitive::bool {
                $crate::__private::postgres_helpers::accepts(ty)
            }
            #[inline]
            fn to_sql_checked(
                &self,
                ty: &$crate::__private::postgres_types::Type,
                out: &mut $crate::__private::bytes::BytesMut,
            ) -> $crate::__private::Result<
                $crate::__private::postgres_types::IsNull,
                $crate::__private::Box<dyn ::std::error::Error + ::core::marker::Sync + ::core::marker::Send>,
            > {
                $crate::__private::postgres_helpers::to_sql_checked::<Self>(self, ty, out)
            }
        }
        #[automatically_derived]
        impl<'__a> $crate::__private::postgres_types::FromSql<'__a> for $ty {
            #[inline]
            fn from_sql(
                ty: &$crate::__private::postgres_types::Type,
                raw: &'__a [::core::primitive::u8],
            ) -> $crate::__private::Result<
                Self,
                $crate::__private::Box<dyn ::std::error::Error + ::core::marker::Sync + ::core::marker::Send>,
            > {
                $crate::__private::postgres_helpers::from_sql::<Self>(ty, raw)
            }
            #[inline]
            fn accepts(ty: &$crate::__private::postgres_types::Type) -> ::core::primitive::bool {
                $crate::__private::postgres_helpers::accepts(ty)
            }
        }
    };
}
#[cfg(not(feature = "tokio-postgres"))]
#[doc(hidden)]
#[macro_export]
macro_rules! __impl_postgres_types {
    ($ty:ident) => {};
}
