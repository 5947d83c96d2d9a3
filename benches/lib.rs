//! Criterion benchmarks of typed-snowflake, in a package of their own so that users and the
//! examples never compile the peer crates. Run them from the repository root:
//!
//! ```text
//! cargo bench -p typed-snowflake-benches --bench peers
//! cargo bench -p typed-snowflake-benches --bench generate
//! cargo bench -p typed-snowflake-benches --bench serde
//! ```
