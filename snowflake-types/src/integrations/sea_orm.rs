//! sea-orm 2: feature `sea-orm`.
//!
//! With the feature on, every derived ID is a sea-orm value: `Into<Value>` (a `BIGINT`),
//! `TryGetable`, `ValueType`, `Nullable`, `IntoActiveValue` and `TryFromU64`, which is what
//! `#[derive(DeriveValueType)]` would give, except that every way in is checked. An ID type can
//! be the type of a column and of a primary key (`#[sea_orm(primary_key, auto_increment =
//! false)]`), and stands in `Condition`s and filters like an `i64`:
//!
//! ```ignore
//! #[derive(Clone, Debug, PartialEq, DeriveEntityModel)]
//! #[sea_orm(table_name = "orders")]
//! pub struct Model {
//!     #[sea_orm(primary_key, auto_increment = false)]
//!     pub id: OrderId,
//!     pub parent: Option<OrderId>,
//! }
//!
//! let recent = Entity::find()
//!     .filter(Condition::all().add(Column::Id.between(OrderId::first_at(since_ms), OrderId::last_at(until_ms))))
//!     .all(&db)
//!     .await?;
//! ```
//!
//! A stored value that is not an ID of the type (negative, bits above the layout) is a
//! `TryGetError` holding `DbErr::TryIntoErr { into: "OrderId", source }` whose source is a
//! [`DecodeIdError`], never a wrong ID; `NULL` in a non-`Option` field is sea-orm's
//! `TryGetError::Null`. `ValueType::try_from` (values built in memory) and `TryFromU64` (a
//! key returned by the driver) check the same way.
//!
//! The feature uses sea-orm's value traits only (no driver, no runtime: `default-features =
//! false`). sea-orm 2 runs on sqlx 0.9, the version of this crate's `sqlx-*` features, so both
//! can be on in one build; sea-orm 1.x is on sqlx 0.8 and is not supported here (its `sqlx`
//! combines with the `sqlx08-*` features). Postgres arrays of IDs (`Vec<OrderId>` with
//! sea-orm's `postgres-array`) are not provided.

#[cfg(feature = "sea-orm")]
pub use super::DecodeIdError;

/// Helpers the generated impls call.
#[cfg(feature = "sea-orm")]
#[doc(hidden)]
pub mod helpers {
    use std::sync::Arc;

    use sea_orm::sea_query::{ArrayType, ColumnType, ValueType, ValueTypeErr};
    use sea_orm::{ColIdx, DbErr, QueryResult, TryGetError, TryGetable, Value};

    use crate::SnowflakeId;
    use crate::integrations::{DecodeIdError, checked_i64, checked_u64, stored_i64};

    /// The ID as a `BIGINT` value. The conversion cannot fail in sea-orm; an ID that
    /// `stored_i64` refused would go as the `BIGINT UNSIGNED` of its bits, which a signed
    /// column refuses.
    #[inline]
    pub fn value<T: SnowflakeId>(id: &T) -> Value {
        match stored_i64(id) {
            Ok(raw) => Value::BigInt(Some(raw)),
            Err(_) => Value::BigUnsigned(Some(id.to_raw().cast_unsigned())),
        }
    }

    fn conversion_error<T: SnowflakeId>(from: &'static str, error: DecodeIdError) -> DbErr {
        DbErr::TryIntoErr { from, into: T::NAME, source: Arc::new(error) }
    }

    /// Reads an `i64` column and checks it.
    #[inline]
    pub fn try_get_by<T: SnowflakeId, I: ColIdx>(res: &QueryResult, index: I) -> Result<T, TryGetError> {
        let raw = <i64 as TryGetable>::try_get_by(res, index)?;
        checked_i64::<T>(raw).map_err(|e| TryGetError::DbErr(conversion_error::<T>("i64", e)))
    }

    /// A value built in memory, checked.
    #[inline]
    pub fn try_from<T: SnowflakeId>(value: Value) -> Result<T, ValueTypeErr> {
        checked_i64::<T>(<i64 as ValueType>::try_from(value)?).map_err(|_| ValueTypeErr)
    }

    /// A key the driver returned as a `u64`, checked.
    #[inline]
    pub fn try_from_u64<T: SnowflakeId>(n: u64) -> Result<T, DbErr> {
        checked_u64::<T>(n).map_err(|e| conversion_error::<T>("u64", e))
    }

    /// `i64`'s array type.
    #[inline]
    pub fn array_type() -> ArrayType {
        <i64 as ValueType>::array_type()
    }

    /// `i64`'s column type: `BIGINT`.
    #[inline]
    pub fn column_type() -> ColumnType {
        <i64 as ValueType>::column_type()
    }

    /// `i64`'s `NULL`.
    #[inline]
    pub fn null() -> Value {
        <i64 as sea_orm::sea_query::Nullable>::null()
    }
}

/// The value traits `DeriveValueType` would write, each through [`helpers`].
#[cfg(feature = "sea-orm")]
#[doc(hidden)]
#[macro_export]
macro_rules! __impl_sea_orm {
    ($ty:ident) => {
        #[automatically_derived]
        impl ::core::convert::From<$ty> for $crate::__private::sea_orm::Value {
            #[inline]
            fn from(id: $ty) -> Self {
                $crate::__private::sea_orm_helpers::value(&id)
            }
        }
        #[automatically_derived]
        impl $crate::__private::sea_orm::TryGetable for $ty {
            #[inline]
            fn try_get_by<__I: $crate::__private::sea_orm::ColIdx>(
                res: &$crate::__private::sea_orm::QueryResult,
                index: __I,
            ) -> $crate::__private::Result<Self, $crate::__private::sea_orm::TryGetError> {
                $crate::__private::sea_orm_helpers::try_get_by::<Self, __I>(res, index)
            }
        }
        #[automatically_derived]
        impl $crate::__private::sea_orm::sea_query::ValueType for $ty {
            #[inline]
            fn try_from(
                value: $crate::__private::sea_orm::Value,
            ) -> $crate::__private::Result<Self, $crate::__private::sea_orm::sea_query::ValueTypeErr> {
                $crate::__private::sea_orm_helpers::try_from::<Self>(value)
            }
            fn type_name() -> $crate::__private::String {
                $crate::__private::String::from(::core::stringify!($ty))
            }
            #[inline]
            fn array_type() -> $crate::__private::sea_orm::sea_query::ArrayType {
                $crate::__private::sea_orm_helpers::array_type()
            }
            #[inline]
            fn column_type() -> $crate::__private::sea_orm::sea_query::ColumnType {
                $crate::__private::sea_orm_helpers::column_type()
            }
        }
        #[automatically_derived]
        impl $crate::__private::sea_orm::sea_query::Nullable for $ty {
            #[inline]
            fn null() -> $crate::__private::sea_orm::Value {
                $crate::__private::sea_orm_helpers::null()
            }
        }
        #[automatically_derived]
        impl $crate::__private::sea_orm::IntoActiveValue<$ty> for $ty {
            #[inline]
            fn into_active_value(self) -> $crate::__private::sea_orm::ActiveValue<$ty> {
                $crate::__private::sea_orm::ActiveValue::Set(self)
            }
        }
        #[automatically_derived]
        impl $crate::__private::sea_orm::TryFromU64 for $ty {
            #[inline]
            fn try_from_u64(
                n: ::core::primitive::u64,
            ) -> $crate::__private::Result<Self, $crate::__private::sea_orm::DbErr> {
                $crate::__private::sea_orm_helpers::try_from_u64::<Self>(n)
            }
        }
    };
}
#[cfg(not(feature = "sea-orm"))]
#[doc(hidden)]
#[macro_export]
macro_rules! __impl_sea_orm {
    ($ty:ident) => {};
}
