//! Redis scores, by property: for random IDs of several layouts (63-bit, 54-bit, exactly
//! 53-bit, narrower, and one whose time field alone is wider than 53 bits), the score is an
//! integer below 2^53, never contradicts ID order, separates ticks where it promises to, and
//! the member keeps exact order among equal scores.

use proptest::prelude::*;
use typed_snowflake::{Layout, SnowflakeId, score};

#[derive(SnowflakeId, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Debug)]
#[layout(time = 41, worker = 10, seq = 12, epoch = 1288834974657)]
struct TweetId(i64);

#[derive(SnowflakeId, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Debug)]
#[layout(time = 41, datacenter = 5, machine = 5, seq = 12, epoch = 1288834974657)]
struct SplitTweetId(i64);

#[derive(SnowflakeId, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Debug)]
#[layout(time = 42, worker = 5, seq = 16, epoch = "2021-05-05")]
struct OrderId(u64);

#[derive(SnowflakeId, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Debug)]
#[layout(time = 39, worker = 8, seq = 7, epoch = "2014-09-01", unit = "10ms")]
struct Bits54Id(i64);

#[derive(SnowflakeId, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Debug)]
#[layout(time = 41, worker = 4, seq = 8, epoch = "2020-01-01")]
struct Bits53Id(i64);

#[derive(SnowflakeId, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Debug)]
#[layout(time = 30, worker = 4, seq = 8, epoch = "2023-01-01", unit = "1s")]
struct SmallId(i64);

#[derive(SnowflakeId, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Debug)]
#[layout(time = 55, worker = 3, seq = 5, epoch = "2020-01-01")]
struct WideId(i64);

const TWO_53: f64 = 9_007_199_254_740_992.0;

/// A valid raw ID and a neighbour within `2^12` of it (clamped into the layout), so that
/// pairs often share a score, a tick boundary, or nothing.
fn pair(layout: Layout) -> impl Strategy<Value = (i64, i64)> {
    let max = layout.max_id();
    (0..=max, -4096_i64..=4096, any::<bool>()).prop_map(move |(a, delta, far)| {
        let b = if far { max - a } else { (a + delta).clamp(0, max) };
        (a, b)
    })
}

/// Every property that holds for all layouts, through the trait and `score`.
fn check_any<T: SnowflakeId + Ord + Copy + std::fmt::Debug>(a: i64, b: i64, score_of: impl Fn(&T) -> f64) {
    let layout = T::LAYOUT;
    let (x, y) = (T::from_raw(a).expect("valid a"), T::from_raw(b).expect("valid b"));
    let (sx, sy) = (score_of(&x), score_of(&y));
    let shift = score::score_shift(&layout);
    assert_eq!(shift, layout.used_bits().saturating_sub(53));
    for (raw, s) in [(a, sx), (b, sy)] {
        assert!((0.0..TWO_53).contains(&s) && s.fract() == 0.0, "{raw} -> {s}");
        assert_eq!(s, score::score_of(&layout, raw));
        // The score is the top bits, exactly: shifting back lands in [score << shift, raw].
        let back = (s as i64) << shift;
        assert!(back <= raw && raw - back < (1 << shift), "{raw} -> {s}");
    }
    // Never out of order; equal scores only for IDs that differ below the shift.
    if x <= y {
        assert!(sx <= sy, "{a} <= {b} but {sx} > {sy}");
    }
    if sx == sy {
        assert_eq!(a >> shift, b >> shift);
    }
    // The member: 19 digits, its byte order is ID order, and it reads back.
    let (mx, my) = (score::member_of(a), score::member_of(b));
    assert_eq!(mx.len(), score::MEMBER_DIGITS);
    assert_eq!(mx.cmp(&my), a.cmp(&b));
    assert_eq!(T::parse_str(&mx).expect("member parses"), x);
    // (score, member), Redis's order for a sorted set, is exactly ID order.
    assert_eq!((sx, &mx).partial_cmp(&(sy, &my)), Some(a.cmp(&b)));
}

/// Layouts whose time field fits 53 bits: one score range per tick.
fn check_ticks<T: SnowflakeId + Copy>(a: i64, b: i64, score_of: impl Fn(&T) -> f64, score_at: impl Fn(i64) -> f64) {
    let layout = T::LAYOUT;
    let unit = layout.unit().as_millis();
    for raw in [a, b] {
        let id = T::from_raw(raw).expect("valid");
        let t = layout.timestamp_ms_of(raw);
        let s = score_of(&id);
        assert_eq!(Some(score_at(t)), score::score_at(&layout, t));
        assert_eq!(score_at(t), score::score_of(&layout, layout.first_at(t)));
        // Anywhere inside the tick gives the same bound.
        assert_eq!(score_at(t + unit - 1), score_at(t));
        assert!(score_at(t) <= s, "{raw}: {} > {s}", score_at(t));
        if layout.ticks_of(raw) < layout.max_ticks() {
            assert!(s < score_at(t + unit), "{raw}: {s} >= next tick's {}", score_at(t + unit));
        }
    }
    if layout.ticks_of(a) != layout.ticks_of(b) {
        assert_ne!(score::score_of(&layout, a), score::score_of(&layout, b));
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2048))]

    #[test]
    fn tweet_scores((a, b) in pair(TweetId::LAYOUT)) {
        check_any::<TweetId>(a, b, TweetId::redis_score);
        check_ticks::<TweetId>(a, b, TweetId::redis_score, TweetId::score_at);
    }

    #[test]
    fn split_tweet_scores((a, b) in pair(SplitTweetId::LAYOUT)) {
        check_any::<SplitTweetId>(a, b, SplitTweetId::redis_score);
        check_ticks::<SplitTweetId>(a, b, SplitTweetId::redis_score, SplitTweetId::score_at);
    }

    #[test]
    fn order_scores((a, b) in pair(OrderId::LAYOUT)) {
        check_any::<OrderId>(a, b, OrderId::redis_score);
        check_ticks::<OrderId>(a, b, OrderId::redis_score, OrderId::score_at);
    }

    #[test]
    fn bits54_scores((a, b) in pair(Bits54Id::LAYOUT)) {
        check_any::<Bits54Id>(a, b, Bits54Id::redis_score);
        check_ticks::<Bits54Id>(a, b, Bits54Id::redis_score, Bits54Id::score_at);
    }

    #[test]
    fn bits53_scores_are_the_ids((a, b) in pair(Bits53Id::LAYOUT)) {
        check_any::<Bits53Id>(a, b, Bits53Id::redis_score);
        check_ticks::<Bits53Id>(a, b, Bits53Id::redis_score, Bits53Id::score_at);
        prop_assert_eq!(Bits53Id::from_raw(a)?.redis_score(), a as f64);
    }

    #[test]
    fn small_scores_are_the_ids((a, b) in pair(SmallId::LAYOUT)) {
        check_any::<SmallId>(a, b, SmallId::redis_score);
        check_ticks::<SmallId>(a, b, SmallId::redis_score, SmallId::score_at);
        prop_assert_eq!(SmallId::from_raw(a)?.redis_score(), a as f64);
    }

    #[test]
    fn wide_time_scores_keep_order_but_promise_no_tick_ranges((a, b) in pair(WideId::LAYOUT)) {
        check_any::<WideId>(a, b, WideId::redis_score);
        prop_assert_eq!(score::score_at(&WideId::LAYOUT, WideId::LAYOUT.timestamp_ms_of(a)), None);
    }

    /// Within one tick, a lower worker's highest sequence never scores above a higher
    /// worker's first.
    #[test]
    fn workers_within_a_tick_keep_order(tick in 0..TweetId::LAYOUT.max_ticks(), w in 0..1023_u64) {
        let t = TweetId::LAYOUT.tick_start_ms(tick);
        let last = TweetId::from_parts(t, w, TweetId::LAYOUT.max_seq())?;
        let next = TweetId::from_parts(t, w + 1, 0)?;
        prop_assert!(last.redis_score() <= next.redis_score());
        prop_assert!(last.redis_member() < next.redis_member());
    }
}

#[test]
fn the_colliding_ids_share_an_exact_score_and_keep_order() -> Result<(), Box<dyn std::error::Error>> {
    let raw = [215_857_550_229_364_736_i64, 215_857_550_229_364_737, 215_857_550_229_364_739];
    // As their own scores they are one double.
    assert!(raw.iter().all(|&r| r as f64 == raw[0] as f64));
    let ids: Vec<TweetId> = raw.iter().map(|&r| TweetId::try_from(r)).collect::<Result<_, _>>()?;
    for id in &ids {
        assert_eq!(id.redis_score(), 210_798_388_895_864.0);
        assert_eq!(id.redis_member(), format!("0{}", id.get()));
    }
    assert!(ids[0].redis_member() < ids[1].redis_member() && ids[1].redis_member() < ids[2].redis_member());
    Ok(())
}

#[test]
fn extremes() -> Result<(), Box<dyn std::error::Error>> {
    let max = TweetId::try_from(i64::MAX)?;
    assert_eq!(max.redis_score(), TWO_53 - 1.0);
    assert_eq!(max.redis_member(), "9223372036854775807");
    let zero = TweetId::try_from(0_i64)?;
    assert_eq!((zero.redis_score(), zero.redis_member().as_str()), (0.0, "0000000000000000000"));
    // score_at saturates like first_at: 0 before the epoch, the last tick past the end.
    assert_eq!(TweetId::score_at(i64::MIN), 0.0);
    assert_eq!(TweetId::score_at(i64::MAX), TweetId::first_at(i64::MAX).redis_score());
    assert_eq!(TweetId::score_at(i64::MAX), ((TweetId::LAYOUT.max_ticks() << 12) as f64));
    let small_max = SmallId::try_from(SmallId::LAYOUT.max_id())?;
    assert_eq!(small_max.redis_score(), ((1_i64 << 42) - 1) as f64);
    Ok(())
}
