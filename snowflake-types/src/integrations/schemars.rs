//! The `schemars` integration.

// TODO(schemars): with the feature on, this expands to the impls (being written).
#[doc(hidden)]
#[macro_export]
macro_rules! __impl_schemars {
    ($ty:ty) => {};
}
