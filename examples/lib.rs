//! The examples of typed-snowflake live in `examples/examples/`; this package exists so that
//! each example compiles only what it uses. From the repository root:
//!
//! ```text
//! cargo run --example orders                                    # embedded SQLite
//! cargo run --example orders_api --features typed-snowflake-examples/api
//! cargo run --example redis_timeline --features typed-snowflake-examples/redis
//! ```

/// docs/web.md's Rust blocks, compiled and run as doctests of this package (it has axum):
/// `cargo test -p typed-snowflake-examples --features api --doc`.
#[cfg(all(doctest, feature = "api"))]
#[doc = include_str!("../docs/web.md")]
pub struct WebGuideDoctests;
