//! Redis against a real server (`REDIS_URL`): exact arguments and strict replies, the score
//! collision of raw IDs and how `redis_score` avoids it, and `Timeline` paging through
//! bursts with thousands of equal scores without losing or repeating an entry.

use crate::servers;

use std::collections::BTreeSet;

use redis::{Commands, Connection, Value};
use typed_snowflake::timeline::Timeline;
use typed_snowflake::{Generator, SnowflakeId};

/// Twitter's layout: 63 bits, so 1024 neighbouring IDs share a score.
#[derive(SnowflakeId, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
#[layout(time = 41, worker = 10, seq = 12, epoch = 1288834974657)]
struct TweetId(i64);

/// The design card's layout, over `u64`.
#[derive(SnowflakeId, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
#[layout(time = 42, worker = 5, seq = 16, epoch = "2021-05-05")]
struct OrderId(u64);

/// 42 bits: every ID is its own score.
#[derive(SnowflakeId, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
#[layout(time = 30, worker = 4, seq = 8, epoch = "2023-01-01", unit = "1s")]
struct SmallId(i64);

/// A time field wider than 53 bits: no `score_at`, ticks share scores.
#[derive(SnowflakeId, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
#[layout(time = 55, worker = 3, seq = 5, epoch = "2020-01-01")]
struct WideId(i64);

const COLLIDING: [i64; 3] = [215_857_550_229_364_736, 215_857_550_229_364_737, 215_857_550_229_364_739];
const T0: i64 = 1_700_000_000_000;

type TestResult = Result<(), Box<dyn std::error::Error>>;

/// A connection and the keys a test made, deleted on drop (also when the test fails).
struct Session {
    conn: Connection,
    prefix: String,
    keys: Vec<String>,
}

impl Session {
    fn key(&mut self, name: &str) -> String {
        let key = format!("{}:{name}", self.prefix);
        self.keys.push(key.clone());
        key
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        if !self.keys.is_empty() {
            let _: Result<i64, _> = self.conn.del(&self.keys);
        }
    }
}

fn url() -> Option<String> {
    servers::redis_url()
}

fn session_with(url: &str, test: &str) -> Result<Session, redis::RedisError> {
    let conn = redis::Client::open(url)?.get_connection()?;
    let prefix = format!("typed-snowflake-test:{}:{test}", std::process::id());
    Ok(Session { conn, prefix, keys: Vec::new() })
}

fn session(test: &str) -> Result<Option<Session>, redis::RedisError> {
    url().map(|url| session_with(&url, test)).transpose()
}

fn resp3(url: &str) -> String {
    let sep = if url.contains('?') { '&' } else { '?' };
    format!("{url}{sep}protocol=resp3")
}

#[test]
fn ids_round_trip_as_exact_decimals() -> TestResult {
    let Some(mut s) = session("round-trip")? else { return Ok(()) };
    let key = s.key("value");
    let list = s.key("list");
    for raw in COLLIDING {
        let id = TweetId::try_from(raw)?;
        let () = s.conn.set(&key, id)?;
        // Stored as the exact decimal, not through a double.
        let text: String = s.conn.get(&key)?;
        assert_eq!(text, raw.to_string());
        let back: TweetId = s.conn.get(&key)?;
        assert_eq!(back, id);
    }
    let max = OrderId::try_from(OrderId::LAYOUT.max_id())?;
    let () = s.conn.set(&key, max)?;
    assert_eq!(s.conn.get::<_, OrderId>(&key)?, max);

    let ids: Vec<TweetId> = COLLIDING.iter().map(|&raw| TweetId::try_from(raw)).collect::<Result<_, _>>()?;
    let _: i64 = s.conn.rpush(&list, &ids)?;
    let back: Vec<TweetId> = s.conn.lrange(&list, 0, -1)?;
    assert_eq!(back, ids);

    // A missing key is nil: an error for an ID, None for an Option.
    let missing = s.key("missing");
    let err = s.conn.get::<_, TweetId>(&missing).unwrap_err();
    assert!(err.to_string().contains("nil"), "{err}");
    assert_eq!(s.conn.get::<_, Option<TweetId>>(&missing)?, None);
    Ok(())
}

#[test]
fn bad_replies_from_redis_are_errors() -> TestResult {
    let Some(mut s) = session("bad-replies")? else { return Ok(()) };
    let key = s.key("value");
    let refused = [
        ("-1", "sign"),
        ("abc", "decimal digits"),
        ("", "empty"),
        (" 42", "decimal digits"),
        ("+42", "sign"),
        ("4.0", "decimal digits"),
        ("1e5", "decimal digits"),
        ("9223372036854775808", "larger than i64::MAX"),
        ("99999999999999999999999", "larger than i64::MAX"),
    ];
    for (text, why) in refused {
        let () = s.conn.set(&key, text)?;
        let err = s.conn.get::<_, TweetId>(&key).unwrap_err();
        assert!(err.to_string().contains(why), "{text:?}: {err}");
        assert!(err.to_string().contains("TweetId"), "{text:?}: {err}");
    }
    // Out of layout: fits an i64 but sets bits above SmallId's 42.
    let () = s.conn.set(&key, 1_i64 << 42)?;
    let err = s.conn.get::<_, SmallId>(&key).unwrap_err();
    assert!(err.to_string().contains("above the layout"), "{err}");
    let () = s.conn.set(&key, (1_i64 << 42) - 1)?;
    assert_eq!(s.conn.get::<_, SmallId>(&key)?.get(), (1 << 42) - 1);

    // Integer replies go through the same check.
    let counter = s.key("counter");
    let err = s.conn.decr::<_, _, SmallId>(&counter, 1).unwrap_err();
    assert!(err.to_string().contains("negative"), "{err}");
    let err = s.conn.incr::<_, _, SmallId>(&counter, (1_i64 << 42) + 1).unwrap_err();
    assert!(err.to_string().contains("above the layout"), "{err}");

    // A double (a score) and an array are not one ID.
    let zset = s.key("zset");
    let _: i64 = s.conn.zadd(&zset, "m", 1.5)?;
    let err = s.conn.zscore::<_, _, TweetId>(&zset, "m").unwrap_err();
    assert!(err.to_string().contains("1.5"), "{err}");
    let err = redis::cmd("ZRANGE").arg(&zset).arg(0).arg(-1).query::<TweetId>(&mut s.conn).unwrap_err();
    assert!(err.to_string().contains("array"), "{err}");
    let err = redis::cmd("PING").query::<TweetId>(&mut s.conn).unwrap_err();
    assert!(err.to_string().contains("PONG"), "{err}");
    Ok(())
}

#[test]
fn bad_values_decode_to_errors() {
    use redis::FromRedisValue;
    let refused = [
        Value::Nil,
        Value::Int(-1),
        Value::Int(i64::MIN),
        Value::Int(1 << 42),
        Value::Double(5.0),
        Value::Double(215_857_550_229_364_736.0),
        Value::BulkString(b"-5".to_vec()),
        Value::BulkString(b"12a".to_vec()),
        Value::BulkString(vec![0xff, 0xfe]),
        Value::BulkString(Vec::new()),
        Value::SimpleString("OK".into()),
        Value::Okay,
        Value::Boolean(true),
        Value::Array(vec![Value::Int(1)]),
        Value::Set(vec![Value::Int(1)]),
        Value::Map(vec![(Value::Int(1), Value::Int(2))]),
    ];
    for value in refused {
        assert!(SmallId::from_redis_value_ref(&value).is_err(), "{value:?} decoded");
        assert!(SmallId::from_redis_value(value.clone()).is_err(), "{value:?} decoded");
    }
    let accepted = [
        (Value::Int(42), 42),
        (Value::BulkString(b"42".to_vec()), 42),
        (Value::BulkString(b"0000000000000000042".to_vec()), 42),
        (Value::SimpleString("7".into()), 7),
        (Value::Attribute { data: Box::new(Value::Int(9)), attributes: Vec::new() }, 9),
    ];
    for (value, raw) in accepted {
        assert_eq!(SmallId::from_redis_value_ref(&value).map(|id| id.get()), Ok(raw), "{value:?}");
    }
    // Nil is None for an Option, and a nil inside an array is still an error for an ID.
    assert_eq!(Option::<SmallId>::from_redis_value(Value::Nil), Ok(None));
    assert!(Vec::<SmallId>::from_redis_value(Value::Array(vec![Value::Int(1), Value::Nil])).is_err());
}

#[test]
fn raw_ids_as_scores_collide_in_redis_and_ours_do_not_lose_order() -> TestResult {
    let Some(mut s) = session("collision")? else { return Ok(()) };
    let raw_key = s.key("raw");
    let ours_key = s.key("ours");
    let ids: Vec<TweetId> = COLLIDING.iter().map(|&raw| TweetId::try_from(raw)).collect::<Result<_, _>>()?;

    // The naive way: the ID's decimal as the score. Redis parses it into a double.
    for id in &ids {
        let _: i64 = redis::cmd("ZADD").arg(&raw_key).arg(id).arg(id).query(&mut s.conn)?;
    }
    let raw_scores: Vec<String> =
        ids.iter().map(|id| s.conn.zscore(&raw_key, id)).collect::<Result<_, redis::RedisError>>()?;
    assert_eq!(raw_scores[0], raw_scores[1]);
    assert_eq!(raw_scores[1], raw_scores[2]);
    // A query for exactly the middle ID's score returns all three.
    let hit: Vec<TweetId> = s.conn.zrangebyscore(&raw_key, ids[1], ids[1])?;
    assert_eq!(hit.len(), 3);

    // Ours: exact scores, members that order equal scores exactly.
    let timeline = Timeline::<TweetId>::new(ours_key.clone());
    assert_eq!(timeline.add_all(&mut s.conn, &[ids[2], ids[0], ids[1]])?, 3);
    for id in &ids {
        let score: f64 = s.conn.zscore(&ours_key, id.redis_member())?;
        assert_eq!(score, id.redis_score());
        assert_eq!(score, (id.get() >> 10) as f64);
    }
    let ordered: Vec<TweetId> = s.conn.zrange(&ours_key, 0, -1)?;
    assert_eq!(ordered, ids);
    let exact: Vec<TweetId> = s.conn.zrangebyscore(&ours_key, ids[1].redis_score(), ids[1].redis_score())?;
    assert_eq!(exact, ids);
    // Paging one at a time steps through the three equal scores.
    let mut after = None;
    let mut seen = Vec::new();
    while let Some(&id) = timeline.page(&mut s.conn, 0, i64::MAX, after.as_ref(), 1)?.first() {
        seen.push(id);
        after = Some(id);
    }
    assert_eq!(seen, ids);
    Ok(())
}

#[test]
fn ticks_and_workers_order_by_score_in_redis() -> TestResult {
    let Some(mut s) = session("ticks")? else { return Ok(()) };
    let key = s.key("z");
    let timeline = Timeline::<TweetId>::new(key.clone());
    let max_seq = TweetId::LAYOUT.max_seq();
    let max_worker = TweetId::LAYOUT.max_worker();
    let mut by_tick: Vec<Vec<TweetId>> = Vec::new();
    for t in [T0 - 1, T0, T0 + 1] {
        let tick = vec![
            TweetId::first_at(t),
            TweetId::from_parts(t, 0, max_seq)?,
            TweetId::from_parts(t, 1, 0)?,
            TweetId::from_parts(t, 517, 2048)?,
            TweetId::last_at(t),
        ];
        assert_eq!(tick[4], TweetId::from_parts(t, max_worker, max_seq)?);
        by_tick.push(tick);
    }
    // Within one tick, worker 0's last sequence scores no higher than worker 1's first.
    assert!(by_tick[1][1].redis_score() <= by_tick[1][2].redis_score());
    // IDs from different ticks never share a score.
    assert!(by_tick[0][4].redis_score() < by_tick[1][0].redis_score());
    assert!(by_tick[1][4].redis_score() < by_tick[2][0].redis_score());
    for (t, tick) in [T0 - 1, T0, T0 + 1].into_iter().zip(&by_tick) {
        for id in tick {
            assert!(TweetId::score_at(t) <= id.redis_score() && id.redis_score() < TweetId::score_at(t + 1));
        }
    }
    let all: Vec<TweetId> = by_tick.concat();
    let mut shuffled = all.clone();
    shuffled.reverse();
    timeline.add_all(&mut s.conn, &shuffled)?;

    // Redis itself: the whole set in exact ID order, and each tick's score range exactly.
    let ordered: Vec<TweetId> = s.conn.zrange(&key, 0, -1)?;
    assert_eq!(ordered, all);
    for (t, tick) in [T0 - 1, T0, T0 + 1].into_iter().zip(&by_tick) {
        let hit: Vec<TweetId> = redis::cmd("ZRANGEBYSCORE")
            .arg(&key)
            .arg(TweetId::score_at(t))
            .arg(format!("({}", TweetId::score_at(t + 1)))
            .query(&mut s.conn)?;
        assert_eq!(&hit, tick);
        assert_eq!(&timeline.page(&mut s.conn, t, t + 1, None, 100)?, tick);
    }
    Ok(())
}

/// Pages through `[from_ms, until_ms)` with `limit` per page; every page is checked.
fn page_all<T: SnowflakeId + Copy + Ord + std::fmt::Debug>(
    conn: &mut Connection,
    timeline: &Timeline<T>,
    from_ms: i64,
    until_ms: i64,
    limit: usize,
) -> Result<Vec<T>, redis::RedisError> {
    let mut out: Vec<T> = Vec::new();
    loop {
        let page = timeline.page(conn, from_ms, until_ms, out.last(), limit)?;
        assert!(page.len() <= limit);
        if page.is_empty() {
            return Ok(out);
        }
        out.extend(page);
    }
}

/// `page_all` through `PageQuery`, the script-free path async callers take.
fn page_all_plain<T: SnowflakeId + Copy + Ord + std::fmt::Debug>(
    conn: &mut Connection,
    timeline: &Timeline<T>,
    from_ms: i64,
    until_ms: i64,
    limit: usize,
) -> Result<Vec<T>, redis::RedisError> {
    let mut out: Vec<T> = Vec::new();
    loop {
        let query = timeline.page_query(from_ms, until_ms, out.last(), limit);
        if query.is_empty() {
            return Ok(out);
        }
        let page = query.decode(query.pipeline().query(conn)?)?;
        assert!(page.len() <= limit);
        if page.is_empty() {
            return Ok(out);
        }
        out.extend(page);
    }
}

/// The IDs of `ids` in `[first_at(from), first_at(until))`, sorted.
fn expected<T: SnowflakeId + Copy + Ord>(ids: &[T], from_ms: i64, until_ms: i64) -> Vec<T> {
    let (lo, hi) = (T::LAYOUT.first_at(from_ms), T::LAYOUT.first_at(until_ms));
    let set: BTreeSet<T> = ids.iter().copied().filter(|id| (lo..hi).contains(&id.to_raw())).collect();
    set.into_iter().collect()
}

/// 10 000 IDs in a burst of 5 ticks from 4 workers, 500 per worker and tick: runs of
/// hundreds of equal scores, split across page boundaries at every page size.
#[test]
fn paging_a_burst_returns_each_id_once_in_order() -> TestResult {
    let Some(mut s) = session("burst")? else { return Ok(()) };
    let key = s.key("z");
    let timeline = Timeline::<TweetId>::new(key.clone());
    let mut ids = Vec::new();
    for t in T0..T0 + 5 {
        for worker in [0, 1, 2, 1023] {
            for seq in 0..500 {
                ids.push(TweetId::from_parts(t, worker, seq * 8 + (seq % 3))?);
            }
        }
    }
    assert_eq!(ids.len(), 10_000);
    let distinct_scores: BTreeSet<u64> = ids.iter().map(|id| id.redis_score().to_bits()).collect();
    assert!(distinct_scores.len() < ids.len() / 100, "the burst should share scores");
    // Inserted out of order, in several commands.
    let mut shuffled = ids.clone();
    shuffled.sort_by_key(|id| (id.get().cast_unsigned().wrapping_mul(0x9E37_79B9_7F4A_7C15), id.get()));
    assert_eq!(timeline.add_all(&mut s.conn, &shuffled)?, 10_000);
    assert_eq!(timeline.add_all(&mut s.conn, &shuffled[..10])?, 0);

    ids.sort();
    for limit in [11, 100, 499, 500, 1024, 4096, 20_000] {
        let all = page_all(&mut s.conn, &timeline, T0, T0 + 5, limit)?;
        assert_eq!(all, ids, "limit {limit}");
    }
    for limit in [11, 500] {
        assert_eq!(page_all_plain(&mut s.conn, &timeline, T0, T0 + 5, limit)?, ids, "plain, limit {limit}");
    }
    // Time bounds cut at tick boundaries, exactly.
    for (from, until, limit) in
        [(T0 + 1, T0 + 3, 333), (T0 + 4, T0 + 5, 3), (T0 + 2, T0 + 2, 10), (T0 - 5, T0 + 1, 1000)]
    {
        let got = page_all(&mut s.conn, &timeline, from, until, limit)?;
        assert_eq!(got, expected(&ids, from, until), "[{from}, {until}) by {limit}");
    }
    // An unbounded end includes the last tick; a start past the layout's end is empty.
    assert_eq!(page_all(&mut s.conn, &timeline, 0, i64::MAX, 2000)?, ids);
    assert!(timeline.page(&mut s.conn, i64::MAX, i64::MAX, None, 10)?.is_empty());
    assert!(timeline.page(&mut s.conn, T0, T0 + 5, None, 0)?.is_empty());

    // A cursor that is no longer in the set still resumes right after it.
    let cursor = ids[4321];
    assert!(timeline.remove(&mut s.conn, &cursor)?);
    assert!(!timeline.remove(&mut s.conn, &cursor)?);
    let next = timeline.page(&mut s.conn, T0, T0 + 5, Some(&cursor), 3)?;
    assert_eq!(next, ids[4322..4325]);
    // And a cursor between stored IDs, inside a run of equal scores.
    let between = TweetId::from_parts(T0 + 2, 1, 8 * 250 + 2)?;
    assert!(ids[4750] < between && between < ids[4751]);
    assert_eq!(between.redis_score(), ids[4750].redis_score());
    assert_eq!(between.redis_score(), ids[4751].redis_score());
    let next = timeline.page(&mut s.conn, T0, T0 + 5, Some(&between), 2)?;
    assert_eq!(next, ids[4751..4753]);
    Ok(())
}

/// `usize::MAX` as the limit pages everything on every path: a page after a cursor inside a
/// run of equal scores must not ask Redis for a `LIMIT` above `i64::MAX`.
#[test]
fn the_largest_limit_pages_everything() -> TestResult {
    let Some(mut s) = session("largest-limit")? else { return Ok(()) };
    let timeline = Timeline::<TweetId>::new(s.key("z"));
    let mut ids: Vec<TweetId> = (0..20).map(|seq| TweetId::from_parts(T0, 5, seq)).collect::<Result<_, _>>()?;
    timeline.add_all(&mut s.conn, &ids)?;
    assert!(ids.iter().all(|id| id.redis_score() == ids[0].redis_score()), "the run should share one score");
    let all = usize::MAX;
    // From the start of the run: one range.
    assert_eq!(timeline.page(&mut s.conn, T0, T0 + 1, None, all)?, ids);
    // After a stored cursor inside the run: the script.
    assert_eq!(timeline.page(&mut s.conn, T0, T0 + 1, Some(&ids[4]), all)?, ids[5..]);
    // After a cursor that is no longer stored: two ranges in a MULTI.
    let gone = ids.remove(9);
    assert!(timeline.remove(&mut s.conn, &gone)?);
    assert_eq!(timeline.page(&mut s.conn, T0, T0 + 1, Some(&gone), all)?, ids[9..]);
    // Through PageQuery, which always sends the ranges.
    let query = timeline.page_query(T0, T0 + 1, Some(&ids[4]), all);
    assert_eq!(query.decode(query.pipeline().query(&mut s.conn)?)?, ids[5..]);
    assert_eq!(page_all(&mut s.conn, &timeline, T0, T0 + 1, all)?, ids);
    assert_eq!(page_all_plain(&mut s.conn, &timeline, T0, T0 + 1, all)?, ids);
    Ok(())
}

/// The same through real generators: 4 workers, interleaved, as fast as they go.
#[test]
fn paging_generated_ids_from_several_workers() -> TestResult {
    let Some(mut s) = session("generated")? else { return Ok(()) };
    let key = s.key("z");
    let timeline = Timeline::<OrderId>::new(key);
    let generators: Vec<Generator> =
        (0..4).map(|worker| Generator::builder(OrderId::LAYOUT).worker(worker).build()).collect::<Result<_, _>>()?;
    let mut ids = Vec::with_capacity(10_000);
    for _ in 0..2_500 {
        for generator in &generators {
            ids.push(OrderId::from_raw(generator.next_raw()?)?);
        }
    }
    timeline.add_all(&mut s.conn, &ids)?;
    let (from, until) = (ids.iter().min().map_or(0, OrderId::timestamp_ms), i64::MAX);
    ids.sort();
    for limit in [13, 1000] {
        assert_eq!(page_all(&mut s.conn, &timeline, from, until, limit)?, ids, "limit {limit}");
    }
    Ok(())
}

#[test]
fn small_and_wide_layouts_page_exactly() -> TestResult {
    let Some(mut s) = session("layouts")? else { return Ok(()) };
    let small = Timeline::<SmallId>::new(s.key("small"));
    let wide = Timeline::<WideId>::new(s.key("wide"));
    let (mut small_ids, mut wide_ids) = (Vec::new(), Vec::new());
    for t in 0..4 {
        for worker in 0..3 {
            for seq in 0..30 {
                small_ids.push(SmallId::from_parts(T0 + t * 1000, worker, seq)?);
                wide_ids.push(WideId::from_parts(T0 + t, worker, seq)?);
            }
        }
    }
    small.add_all(&mut s.conn, &small_ids)?;
    wide.add_all(&mut s.conn, &wide_ids)?;
    small_ids.sort();
    wide_ids.sort();
    // Wide: ticks share scores (the shift of 10 exceeds the 8 bits below the time field),
    // yet time bounds are exact.
    assert_eq!(wide_ids[0].redis_score(), wide_ids[wide_ids.len() - 1].redis_score());
    for limit in [1, 5, 1000] {
        assert_eq!(page_all(&mut s.conn, &small, T0, T0 + 4000, limit)?, small_ids);
        assert_eq!(page_all(&mut s.conn, &wide, T0, T0 + 4, limit)?, wide_ids);
        assert_eq!(page_all(&mut s.conn, &small, T0 + 1000, T0 + 3000, limit)?, small_ids[90..270]);
        assert_eq!(page_all(&mut s.conn, &wide, T0 + 1, T0 + 3, limit)?, wide_ids[90..270]);
    }
    Ok(())
}

#[test]
fn resp3_replies_page_the_same() -> TestResult {
    let Some(url) = url() else { return Ok(()) };
    let mut s = session_with(&resp3(&url), "resp3")?;
    let timeline = Timeline::<TweetId>::new(s.key("z"));
    let ids: Vec<TweetId> = (0..50).map(|seq| TweetId::from_parts(T0, 9, seq)).collect::<Result<_, _>>()?;
    timeline.add_all(&mut s.conn, &ids)?;
    assert_eq!(page_all(&mut s.conn, &timeline, T0, T0 + 1, 7)?, ids);
    let key = s.key("value");
    let () = s.conn.set(&key, ids[3])?;
    assert_eq!(s.conn.get::<_, TweetId>(&key)?, ids[3]);
    Ok(())
}

#[test]
fn a_timeline_with_foreign_entries_is_an_error() -> TestResult {
    let Some(mut s) = session("foreign")? else { return Ok(()) };
    let id = TweetId::try_from(COLLIDING[0])?;
    let cases: [(&str, String, f64, &str); 4] = [
        ("raw-score", id.redis_member(), id.get() as f64, "not its redis_score"),
        ("unpadded", id.get().to_string(), id.redis_score(), "19-digit"),
        ("text", "not-an-id-at-all-xyz".to_owned(), id.redis_score(), "19-digit"),
        ("digits", "abcdefghijklmnopqrs".to_owned(), id.redis_score(), "not an ID"),
    ];
    for (name, member, score, why) in cases {
        let key = s.key(name);
        let timeline = Timeline::<TweetId>::new(key.clone());
        let _: i64 = s.conn.zadd(&key, &member, score)?;
        let err = timeline.page(&mut s.conn, 0, i64::MAX, None, 10).unwrap_err();
        assert!(err.to_string().contains(why), "{name}: {err}");
    }
    // A 19-digit member outside the layout, with the score it would have.
    let key = s.key("layout");
    let _: i64 = s.conn.zadd(&key, format!("{:019}", 1_i64 << 42), (1_i64 << 42) as f64)?;
    let err = Timeline::<SmallId>::new(key).page(&mut s.conn, 0, i64::MAX, None, 10).unwrap_err();
    assert!(err.to_string().contains("above the layout"), "{err}");
    // A cursor stored with a foreign score: the page refuses it rather than skip by rank.
    let key = s.key("cursor");
    let timeline = Timeline::<TweetId>::new(key.clone());
    let run: Vec<TweetId> = (0..5).map(|seq| TweetId::from_parts(T0, 0, seq)).collect::<Result<_, _>>()?;
    timeline.add_all(&mut s.conn, &run)?;
    assert_eq!(timeline.page(&mut s.conn, T0, T0 + 1, Some(&run[1]), 10)?, run[2..]);
    let _: i64 = s.conn.zadd(&key, run[1].redis_member(), run[4].redis_score() + 1.0)?;
    let err = timeline.page(&mut s.conn, T0, T0 + 1, Some(&run[1]), 10).unwrap_err();
    assert!(err.to_string().contains("not its redis_score"), "{err}");
    // A key of another type is Redis's own error.
    let key = s.key("string");
    let () = s.conn.set(&key, "x")?;
    assert!(Timeline::<TweetId>::new(key).page(&mut s.conn, 0, i64::MAX, None, 10).is_err());
    Ok(())
}

/// A user whose ACL refuses scripts pages the same, through the plain commands.
#[test]
fn paging_without_scripting_falls_back_to_plain_commands() -> TestResult {
    let Some(url) = url() else { return Ok(()) };
    let mut admin = session_with(&url, "no-scripts")?;
    let key = admin.key("z");
    let user = format!("typed-snowflake-test-{}", std::process::id());
    let () = redis::cmd("ACL")
        .arg("SETUSER")
        .arg(&user)
        .arg("reset")
        .arg("on")
        .arg(">secret")
        .arg(format!("~{}:*", admin.prefix))
        .arg("+@all")
        .arg("-@scripting")
        .query(&mut admin.conn)?;
    let result = (|| -> TestResult {
        let mut conn = redis::Client::open(url.as_str())?.get_connection()?;
        let () = redis::cmd("AUTH").arg(&user).arg("secret").query(&mut conn)?;
        let refused = redis::cmd("EVAL").arg("return 1").arg(0).query::<i64>(&mut conn);
        assert!(refused.is_err(), "the user may still run scripts");
        let timeline = Timeline::<TweetId>::new(key.clone());
        let mut ids = Vec::new();
        for worker in [0, 1] {
            for seq in 0..300 {
                ids.push(TweetId::from_parts(T0, worker, seq)?);
            }
        }
        timeline.add_all(&mut conn, &ids)?;
        for limit in [1, 7, 299] {
            assert_eq!(page_all(&mut conn, &timeline, T0, T0 + 1, limit)?, ids, "limit {limit}");
        }
        Ok(())
    })();
    let _: redis::RedisResult<i64> = redis::cmd("ACL").arg("DELUSER").arg(&user).query(&mut admin.conn);
    result
}

/// Discord's 64-bit layout over `u64`: IDs on both sides of 2^63 (the time field's top bit,
/// set from 2084) travel exactly and page in order.
#[derive(SnowflakeId, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
#[layout(preset = "discord")]
struct MessageId(u64);

#[test]
fn a_64_bit_layout_pages_across_2_63() -> TestResult {
    let Some(mut s) = session("discord")? else { return Ok(()) };
    let boundary = MessageId::EPOCH_MS + (1 << 41);
    let mut ids = Vec::new();
    for t in [boundary - 2, boundary - 1, boundary, boundary + 1] {
        for node in 0..3 {
            for seq in 0..40 {
                ids.push(MessageId::from_parts(t, node * 33, seq)?);
            }
        }
    }
    assert!(ids.iter().any(|id| id.get() < 0) && ids.iter().any(|id| id.get() >= 0), "both sides of 2^63");
    // Arguments are the exact u64 decimals, and read back as such.
    let key = s.key("value");
    let top = MessageId::try_from(u64::MAX)?;
    let () = s.conn.set(&key, top)?;
    assert_eq!(s.conn.get::<_, String>(&key)?, "18446744073709551615");
    assert_eq!(s.conn.get::<_, MessageId>(&key)?, top);

    let timeline = Timeline::<MessageId>::new(s.key("z"));
    timeline.add_all(&mut s.conn, &ids)?;
    ids.sort();
    for limit in [1, 7, 1000] {
        assert_eq!(page_all(&mut s.conn, &timeline, boundary - 2, boundary + 2, limit)?, ids);
        assert_eq!(page_all_plain(&mut s.conn, &timeline, boundary - 2, boundary + 2, limit)?, ids);
        assert_eq!(page_all(&mut s.conn, &timeline, boundary - 1, boundary + 1, limit)?, ids[120..360]);
        assert_eq!(page_all(&mut s.conn, &timeline, boundary, boundary + 2, limit)?, ids[240..]);
    }
    // Redis's own order of the stored members (score, then member bytes) is ID order.
    let stored: Vec<String> = s.conn.zrange(timeline.key(), 0, -1)?;
    let stored: Vec<u64> = stored.iter().map(|m| m.parse()).collect::<Result<_, _>>()?;
    let want: Vec<u64> = ids.iter().map(|id| id.get().cast_unsigned()).collect();
    assert_eq!(stored, want);
    Ok(())
}
