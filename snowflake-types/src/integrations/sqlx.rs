//! The sqlx integrations: `sqlx-postgres`, `sqlx-mysql`, `sqlx-sqlite`.

// TODO(sqlx-postgres): with the feature on, this expands to the impls (being written).
#[doc(hidden)]
#[macro_export]
macro_rules! __impl_sqlx_postgres {
    ($ty:ty) => {};
}

// TODO(sqlx-mysql): with the feature on, this expands to the impls (being written).
#[doc(hidden)]
#[macro_export]
macro_rules! __impl_sqlx_mysql {
    ($ty:ty) => {};
}

// TODO(sqlx-sqlite): with the feature on, this expands to the impls (being written).
#[doc(hidden)]
#[macro_export]
macro_rules! __impl_sqlx_sqlite {
    ($ty:ty) => {};
}
