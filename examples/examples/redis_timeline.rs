//! A message timeline in a Redis sorted set, against a real server.
//!
//! First the bug: three 63-bit message IDs used as their own scores collapse into one
//! double, so a query by score cannot tell them apart. Then the fix: `redis_score()` (exact,
//! order-preserving) with `redis_member()` (19 zero-padded digits), and `Timeline` paging a
//! burst of 10 000 messages from four workers, each exactly once and in order.
//!
//! ```text
//! REDIS_URL=redis://127.0.0.1:6379 cargo run --example redis_timeline --features typed-snowflake-examples/redis
//! ```

use std::collections::BTreeSet;
use std::time::Instant;

use redis::Commands;
use typed_snowflake::SnowflakeId;
use typed_snowflake::timeline::Timeline;

/// Twitter's layout: 41 bits of milliseconds, 10 of worker, 12 of sequence.
#[derive(SnowflakeId, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
#[layout(time = 41, worker = 10, seq = 12, epoch = 1288834974657)]
struct MessageId(i64);

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let url = std::env::var("REDIS_URL").unwrap_or_else(|_| "redis://127.0.0.1:6379".to_owned());
    let mut conn = redis::Client::open(url.as_str())?.get_connection()?;
    let prefix = format!("typed-snowflake-example:{}", std::process::id());
    let (naive_key, timeline_key) = (format!("{prefix}:naive"), format!("{prefix}:timeline"));

    let result = run(&mut conn, &naive_key, &timeline_key);
    let _: i64 = conn.del(&[&naive_key, &timeline_key])?;
    result
}

fn run(conn: &mut redis::Connection, naive_key: &str, timeline_key: &str) -> Result<(), Box<dyn std::error::Error>> {
    let ids = [215_857_550_229_364_736_i64, 215_857_550_229_364_737, 215_857_550_229_364_739]
        .map(MessageId::try_from)
        .into_iter()
        .collect::<Result<Vec<_>, _>>()?;

    println!("1. The ID as its own score (ZADD key <id> <id>)");
    for id in &ids {
        let _: i64 = redis::cmd("ZADD").arg(naive_key).arg(id).arg(id).query(conn)?;
    }
    for id in &ids {
        let stored: String = conn.zscore(naive_key, id)?;
        println!("   {id}  stored score {stored}");
    }
    let hit: Vec<MessageId> = conn.zrangebyscore(naive_key, ids[1], ids[1])?;
    println!("   ZRANGEBYSCORE for exactly {} returns {} messages: {hit:?}", ids[1], hit.len());

    println!("\n2. redis_score() and redis_member()");
    let timeline = Timeline::<MessageId>::new(timeline_key);
    timeline.add_all(conn, &[ids[2], ids[0], ids[1]])?;
    for id in &ids {
        let stored: f64 = conn.zscore(timeline_key, id.redis_member())?;
        println!(
            "   {id}  score {stored} (exact: {})  member {}  tick {}  worker {}  seq {}",
            stored == id.redis_score(),
            id.redis_member(),
            id.timestamp_ms(),
            id.worker(),
            id.sequence()
        );
    }
    let ordered: Vec<MessageId> = conn.zrange(timeline_key, 0, -1)?;
    println!("   equal scores, ordered by member: {ordered:?}");
    let t = ids[0].timestamp_ms();
    let tick: Vec<MessageId> = redis::cmd("ZRANGEBYSCORE")
        .arg(timeline_key)
        .arg(MessageId::score_at(t))
        .arg(format!("({}", MessageId::score_at(t + 1)))
        .query(conn)?;
    println!("   ZRANGEBYSCORE score_at({t}) (score_at({}) -> {tick:?}", t + 1);
    let _: i64 = conn.del(timeline_key)?;

    println!("\n3. A burst: 10 000 messages in 5 ms from 4 workers, paged 37 at a time");
    let t0 = 1_700_000_000_000;
    let mut burst = Vec::with_capacity(10_000);
    for ms in t0..t0 + 5 {
        for worker in [3, 4, 200, 1023] {
            for seq in 0..500 {
                burst.push(MessageId::from_parts(ms, worker, seq)?);
            }
        }
    }
    burst.reverse();
    timeline.add_all(conn, &burst)?;
    let scores: BTreeSet<u64> = burst.iter().map(|id| id.redis_score().to_bits()).collect();
    println!("   {} messages share {} distinct scores", burst.len(), scores.len());

    let started = Instant::now();
    let (mut seen, mut pages) = (Vec::new(), 0);
    loop {
        let page = timeline.page(conn, t0, t0 + 5, seen.last(), 37)?;
        if page.is_empty() {
            break;
        }
        pages += 1;
        seen.extend(page);
    }
    let elapsed = started.elapsed();
    burst.sort();
    let unique: BTreeSet<MessageId> = seen.iter().copied().collect();
    println!(
        "   {pages} pages, {} messages, {} distinct, in exact ID order: {} ({:.1?}, {:.0?} per page)",
        seen.len(),
        unique.len(),
        seen == burst,
        elapsed,
        elapsed / pages.max(1)
    );
    if seen != burst {
        return Err("the timeline lost, repeated or reordered messages".into());
    }

    let middle = timeline.page(conn, t0 + 2, t0 + 3, None, 3)?;
    println!("   the first 3 of [t0 + 2, t0 + 3): {middle:?}");
    Ok(())
}
