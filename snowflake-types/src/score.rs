//! Exact, order-preserving Redis sorted-set scores.
//!
//! A score is an IEEE-754 double, exact for integers only up to 2^53: used as its own score,
//! a 63-bit ID collapses into its neighbours (`215857550229364736`, `…737` and `…739` are one
//! double). The score of an ID is instead its top 53 used bits: the ID shifted right by
//! `used_bits - 53` (the ID itself when the layout uses at most 53 bits). That is
//!
//! - exact: an integer below 2^53, so Redis stores and returns it unchanged;
//! - order-preserving: `a <= b` implies `score(a) <= score(b)`, across workers too (the
//!   shift drops only the lowest bits, so IDs that share a score are neighbours in ID
//!   order; the zero-padded member orders them exactly);
//! - one range per tick while the time field is at most 53 bits wide: every ID of tick `t`
//!   has a score in `[score_at(t), score_at(t + 1))`, so
//!   `ZRANGEBYSCORE key score_at(t0) (score_at(t1)` selects exactly the IDs from `t0` up to
//!   `t1`.
//!
//! IDs that share a score (at most `2^(used_bits - 53)` neighbours, 1024 for a 63-bit
//! layout) differ only in their lowest bits. Redis orders equal scores by member bytes, so
//! members written by [`member_of`] (19 zero-padded digits) keep exact ID order.
//!
//! Derived types carry the same as `id.redis_score()`, `id.redis_member()` and
//! `T::score_at(unix_ms)`. A layout whose time field alone is wider than 53 bits cannot give
//! every tick its own score, so its type has no `score_at` at all — the mistake is refused at
//! compile time rather than answered with a lossy bound — and [`score_at`] returns `None`:
//!
//! ```compile_fail
//! use typed_snowflake::SnowflakeId;
//!
//! #[derive(SnowflakeId, Clone, Copy)]
//! #[layout(time = 55, worker = 3, seq = 5, epoch = "2020-01-01")]
//! pub struct WideId(i64);
//!
//! let bound = WideId::score_at(1_700_000_000_000); // no such function: time = 55 > 53
//! ```
//!
//! `redis_score()` exists for every layout (it is still exact and order-preserving), and
//! [`Timeline`](crate::timeline::Timeline) (feature `redis`) pages every layout by exact ID
//! bounds, so wide-time layouts lose nothing but the per-tick score ranges.

use crate::layout::Layout;

/// Integers up to this many bits are exact in an `f64`.
pub const EXACT_BITS: u32 = 53;

/// The length of a member written by [`member_of`]: `i64::MAX` has 19 digits.
pub const MEMBER_DIGITS: usize = 19;

/// How far a layout's IDs are shifted right to make a score: `used_bits - 53`, or 0.
///
/// ```
/// use typed_snowflake::{Layout, score};
///
/// assert_eq!(score::score_shift(&Layout::new(41, 10, 12, 0)?), 10);
/// assert_eq!(score::score_shift(&Layout::new(30, 4, 8, 0)?), 0);
/// Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub const fn score_shift(layout: &Layout) -> u32 {
    layout.used_bits().saturating_sub(EXACT_BITS)
}

/// The score of a valid ID of `layout`: its top 53 used bits, an integer below 2^53.
///
/// `raw` must be a valid ID (non-negative, within the layout), as every derived value is.
///
/// ```
/// use typed_snowflake::{Layout, score};
///
/// let twitter = Layout::new(41, 10, 12, 1_288_834_974_657)?;
/// // Three neighbours that are one double when used as their own score ...
/// assert_eq!(215_857_550_229_364_736_i64 as f64, 215_857_550_229_364_739_i64 as f64);
/// // ... share an exact score here; their members keep them apart and in order.
/// let a = score::score_of(&twitter, 215_857_550_229_364_736);
/// let b = score::score_of(&twitter, 215_857_550_229_364_739);
/// assert_eq!(a, 210_798_388_895_864.0);
/// assert_eq!(a, b);
/// assert!(score::member_of(215_857_550_229_364_736) < score::member_of(215_857_550_229_364_739));
/// // Worker 1's first ID of a tick scores above worker 0's last.
/// let w0_last = twitter.encode(1_700_000_000_000, 0, 4095)?;
/// let w1_first = twitter.encode(1_700_000_000_000, 1, 0)?;
/// assert!(score::score_of(&twitter, w0_last) < score::score_of(&twitter, w1_first));
/// Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[allow(clippy::cast_precision_loss, reason = "below 2^53 after the shift: exact")]
pub const fn score_of(layout: &Layout, raw: i64) -> f64 {
    // As `u64`: a 64-bit layout's IDs at or above 2^63 are carried as their bit pattern.
    (raw.cast_unsigned() >> score_shift(layout)) as f64
}

/// The score of the first ID at `unix_ms` ([`Layout::first_at`]), or `None` when the time
/// field is wider than 53 bits and ticks cannot all be told apart by score.
///
/// Like `first_at`, it saturates: before the epoch it is 0, and past the layout's last tick
/// it is that tick's score, so as an exclusive upper bound it would leave the last tick out;
/// use `+inf` there.
///
/// ```
/// use typed_snowflake::{Layout, score};
///
/// let twitter = Layout::new(41, 10, 12, 1_288_834_974_657)?;
/// let t = 1_700_000_000_000;
/// let (from, until) = (score::score_at(&twitter, t), score::score_at(&twitter, t + 1));
/// let last_of_tick = twitter.last_at(t);
/// assert!(Some(score::score_of(&twitter, last_of_tick)) >= from);
/// assert!(Some(score::score_of(&twitter, last_of_tick)) < until);
///
/// let wide = Layout::new(55, 3, 5, 1_577_836_800_000)?;
/// assert_eq!(score::score_at(&wide, t), None);
/// Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub const fn score_at(layout: &Layout, unix_ms: i64) -> Option<f64> {
    if layout.time_bits() > EXACT_BITS {
        return None;
    }
    Some(score_of(layout, layout.first_at(unix_ms)))
}

/// The member to store beside the score: the ID as a zero-padded 19-digit decimal, so
/// that Redis, which orders equal scores by member bytes, keeps exact ID order.
///
/// A 64-bit layout's IDs from 10^19 up have 20 digits. That never puts a 19-digit and a
/// 20-digit member under one score: a score covers `2^(used_bits - 53)` = 2048 neighbours
/// from a multiple of 2048, and 10^19 = 2^19 · 5^19 is such a multiple, so every score holds
/// members of one length.
///
/// ```
/// use typed_snowflake::score;
///
/// assert_eq!(score::member_of(42), "0000000000000000042");
/// assert!(score::member_of(9) < score::member_of(10)); // "9" > "10" unpadded
/// ```
pub fn member_of(raw: i64) -> String {
    format!("{:019}", raw.cast_unsigned())
}
