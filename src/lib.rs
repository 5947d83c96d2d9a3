//! Typed 64-bit Snowflake IDs.
#![forbid(unsafe_code)]
#![deny(missing_docs)]

pub use snowflake_derive::SnowflakeId;
pub use snowflake_types::*;
