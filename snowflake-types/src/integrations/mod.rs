//! Feature-gated integrations. Each file defines its `__impl_*` macro twice: with the
//! feature on, it expands to the impls; with it off, to nothing. The derive calls every
//! macro and never needs to know which features are on.

#[cfg(feature = "serde")]
pub mod serde;
#[cfg(not(feature = "serde"))]
mod serde;

pub mod dates;
pub mod redis;
// `pub(crate)` so that `__private` can re-export the helper the derived impls call.
pub(crate) mod schemars;
#[cfg(any(feature = "sqlx-postgres", feature = "sqlx-mysql", feature = "sqlx-sqlite"))]
pub mod sqlx;
#[cfg(not(any(feature = "sqlx-postgres", feature = "sqlx-mysql", feature = "sqlx-sqlite")))]
mod sqlx;
