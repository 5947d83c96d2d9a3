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

/// A layout described for JSON (feature `serde`): its text form, the widths, the field order,
/// the tick, the epoch and the day its time field runs out as RFC 3339, the epoch in Unix ms.
/// `snowflake layouts --json` and the service's `GET /v1/types` both write it, with keys of
/// their own beside it.
///
/// ```
/// use typed_snowflake::layout::{Layout, LayoutSummary, format_rfc3339};
///
/// let order: Layout = "time=42,worker=5,seq=16,epoch=2021-05-05".parse()?;
/// let json = serde_json::to_value(LayoutSummary(&order))?;
/// assert_eq!(json["layout"], "time=42,worker=5,seq=16,epoch=2021-05-05");
/// assert_eq!((json["time_bits"].as_u64(), json["worker_bits"].as_u64(), json["seq_bits"].as_u64()), (Some(42), Some(5), Some(16)));
/// assert_eq!(json["epoch"], "2021-05-05T00:00:00.000Z");
/// assert_eq!(json["runs_out"], format_rfc3339(order.max_timestamp_ms()));
/// Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[cfg(feature = "serde")]
#[derive(Clone, Copy, Debug)]
pub struct LayoutSummary<'a>(pub &'a Layout);

#[cfg(feature = "serde")]
impl serde::Serialize for LayoutSummary<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let layout = self.0;
        let mut s = serializer.serialize_struct("LayoutSummary", 10)?;
        s.serialize_field("layout", &layout.to_string())?;
        s.serialize_field("time_bits", &layout.time_bits())?;
        s.serialize_field("worker_bits", &layout.worker_bits())?;
        s.serialize_field("datacenter_bits", &layout.datacenter_bits())?;
        s.serialize_field("seq_bits", &layout.seq_bits())?;
        s.serialize_field("order", layout.order().as_str())?;
        s.serialize_field("tick", layout.unit().as_str())?;
        s.serialize_field("epoch", &format_rfc3339(layout.epoch_ms()))?;
        s.serialize_field("epoch_ms", &layout.epoch_ms())?;
        s.serialize_field("runs_out", &format_rfc3339(layout.max_timestamp_ms()))?;
        s.end()
    }
}
