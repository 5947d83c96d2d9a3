//! The examples of typed-snowflake live in `examples/examples/`; this package exists so that
//! each example compiles only what it uses. From the repository root:
//!
//! ```text
//! cargo run --example orders                                    # embedded SQLite
//! cargo run --example orders_api --features typed-snowflake-examples/api
//! cargo run --example redis_timeline --features typed-snowflake-examples/redis
//! ```
