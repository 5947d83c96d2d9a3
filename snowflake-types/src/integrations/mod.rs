//! Feature-gated integrations. Each file defines its `__impl_*` macro twice: with the
//! feature on, it expands to the impls; with it off, to nothing. The derive calls every
//! macro and never needs to know which features are on.

#[cfg(feature = "serde")]
pub mod serde;
// PENDING(serde): the impls with the feature on are written next.
#[cfg(any())]
#[doc(hidden)]
#[macro_export]
macro_rules! __PLACEHOLDER {
    () => {};
}
#[cfg(not(feature = "serde"))]
mod serde;

pub mod redis;
mod schemars;
mod sqlx;
