//! Exact, order-preserving Redis sorted-set scores.
//!
//! A score is an IEEE-754 double, exact for integers only up to 2^53. The score of an ID
//! is its top 53 used bits: the ID shifted right by `used_bits - 53` (the ID itself when
//! the layout uses at most 53 bits). It is exact in a double and order-preserving, and
//! while the time field is at most 53 bits wide every tick has its own score range.

use crate::layout::Layout;

/// Integers up to this many bits are exact in an `f64`.
pub const EXACT_BITS: u32 = 53;

/// How far a layout's IDs are shifted right to make a score.
pub const fn score_shift(layout: &Layout) -> u32 {
    layout.used_bits().saturating_sub(EXACT_BITS)
}

/// The score of a valid ID of `layout`.
///
/// ```
/// use typed_snowflake::{Layout, score};
///
/// let layout = Layout::new(41, 10, 12, 1_288_834_974_657)?;
/// let a = score::score_of(&layout, 215_857_550_229_364_736);
/// let b = score::score_of(&layout, 215_857_550_229_364_737);
/// assert!(a <= b);
/// assert_eq!(a, a.trunc());
/// Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[allow(clippy::cast_precision_loss)]
pub const fn score_of(layout: &Layout, raw: i64) -> f64 {
    // Below 2^53 after the shift: exact.
    (raw >> score_shift(layout)) as f64
}

/// The score of the first ID at `unix_ms` (saturating like `first_at`), or `None` when the
/// time field is wider than 53 bits and ticks cannot all be told apart by score.
pub const fn score_at(layout: &Layout, unix_ms: i64) -> Option<f64> {
    if layout.time_bits() > EXACT_BITS {
        return None;
    }
    Some(score_of(layout, layout.first_at(unix_ms)))
}

/// The member to store beside the score: the ID as a zero-padded 19-digit decimal, so
/// that Redis, which orders equal scores by member bytes, keeps exact ID order.
pub fn member_of(raw: i64) -> String {
    format!("{raw:019}")
}
