//! The layout rules of typed-snowflake, held once: the widths and their checks, epochs
//! (dates, RFC 3339 instants, Unix milliseconds), civil dates, the tick unit and field order,
//! the public schemes' presets, the text form (`time=42,worker=5,seq=16,epoch=2021-05-05`),
//! the expiry of a layout against a build date, the rule for a type prefix (`ord` in
//! `ord_0sb3bcfh5q7zz`), and structured errors.
//!
//! `#[derive(SnowflakeId)]` calls it at compile time and reports each [`rules::Issue`] at
//! the tokens of its [`rules::Key`]; the runtime (`typed_snowflake::layout`) re-exports it.
//! It has no dependencies and needs no `std`, only `alloc` (for messages and the text form).
//!
//! ```
//! use snowflake_layout::{Layout, TickUnit};
//!
//! let order: Layout = "time = 42, worker = 5, seq = 16, epoch = \"2021-05-05\"".parse()?;
//! assert_eq!(order.to_string(), "time=42,worker=5,seq=16,epoch=2021-05-05");
//! assert_eq!(order.unit(), TickUnit::Millis);
//! assert_eq!(order.parse_id("42")?, 42);
//! Ok::<(), Box<dyn std::error::Error>>(())
//! ```
#![no_std]
#![forbid(unsafe_code)]

extern crate alloc;

mod civil;
mod digits;
mod error;
mod layout;
mod prefix;
mod preset;
pub mod rules;
mod spelling;
mod text;

pub use civil::{format_epoch, format_rfc3339, parse_date_or_instant};
pub use error::{EpochError, InvalidLayout, LayoutError, ParseIdError, ParseLayoutError};
pub use layout::{FieldOrder, Layout, Parts, TickUnit};
pub use prefix::{MAX_PREFIX_LEN, PrefixError, check_prefix};
pub use preset::{Labels, Preset};
pub use rules::KEYS;
pub use text::{parse_epoch, parse_keys};
