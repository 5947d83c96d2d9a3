//! The bit layout of a Snowflake ID: widths, epoch and tick unit, checked in `const fn`; the
//! public schemes' presets; the text form. The rules live in the `snowflake-layout` crate,
//! which the derive checks `#[layout(...)]` with at compile time: one set of rules for both.
//!
//! ```
//! use typed_snowflake::layout::{Layout, format_rfc3339};
//!
//! let order: Layout = "time=42,worker=5,seq=16,epoch=2021-05-05".parse()?;
//! assert_eq!(format_rfc3339(order.epoch_ms()), "2021-05-05T00:00:00.000Z");
//! Ok::<(), Box<dyn std::error::Error>>(())
//! ```

/// The keys of the text form, for messages.
pub use snowflake_layout::KEYS as TEXT_KEYS;
pub use snowflake_layout::rules;
pub use snowflake_layout::{
    EpochError, FieldOrder, Labels, Layout, Parts, Preset, TickUnit, format_epoch, format_rfc3339,
    parse_date_or_instant, parse_epoch,
};
