//! Many threads, one generator: no ID twice, and each thread's IDs strictly increase.
//!
//! 12 sequence bits cap a generator at 4 096 IDs per millisecond, so a million IDs cross
//! hundreds of ticks and exhaust the sequence over and over: every path of the generator
//! (the hot CAS, a new tick, the wait for the next tick) runs under contention.

use std::sync::{Arc, Barrier};

use typed_snowflake::{Generator, Layout, SnowflakeId};

#[derive(SnowflakeId, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
#[layout(time = 41, worker = 10, seq = 12, epoch = "2020-01-01")]
struct EventId(i64);

const THREADS: usize = 4;
const PER_THREAD: usize = 250_000;

/// Runs `THREADS` threads, each taking `per_thread` IDs from `next`, all released at once.
fn run_threads(per_thread: usize, next: impl Fn() -> i64 + Send + Sync + 'static) -> Vec<Vec<i64>> {
    let next = Arc::new(next);
    let start = Arc::new(Barrier::new(THREADS));
    let handles: Vec<_> = (0..THREADS)
        .map(|_| {
            let next = Arc::clone(&next);
            let start = Arc::clone(&start);
            std::thread::spawn(move || {
                let mut ids = Vec::with_capacity(per_thread);
                start.wait();
                for _ in 0..per_thread {
                    ids.push(next());
                }
                ids
            })
        })
        .collect();
    handles.into_iter().map(|h| h.join().expect("a generating thread panicked")).collect()
}

/// Each thread's IDs strictly increase; together they hold no duplicate.
fn check(per_thread: &[Vec<i64>], layout: &Layout, worker: u64) {
    for (thread, ids) in per_thread.iter().enumerate() {
        assert_eq!(ids.len(), PER_THREAD);
        for pair in ids.windows(2) {
            assert!(pair[0] < pair[1], "thread {thread}: {} then {}", pair[0], pair[1]);
        }
        for &id in ids {
            assert_eq!(layout.validate(id), Ok(id), "not an ID of the layout: {id}");
            assert_eq!(layout.worker_of(id), worker);
        }
    }
    let mut all: Vec<i64> = per_thread.iter().flatten().copied().collect();
    all.sort_unstable();
    let total = all.len();
    all.dedup();
    assert_eq!(all.len(), total, "{} duplicate IDs among {total}", total - all.len());
    assert_eq!(total, THREADS * PER_THREAD);
    // A million IDs at 4 096 per tick cannot fit in fewer than 245 ticks.
    let ticks = layout.ticks_of(all[total - 1]) - layout.ticks_of(all[0]) + 1;
    assert!(ticks >= (total as u64).div_ceil(4096), "{total} IDs in only {ticks} ticks");
}

#[test]
fn derived_type_from_many_threads() {
    let per_thread = run_threads(PER_THREAD, || EventId::generate().get());
    let worker = EventId::generate().worker();
    check(&per_thread, &EventId::LAYOUT, worker);
}

#[test]
fn standalone_generator_from_many_threads() -> Result<(), Box<dyn std::error::Error>> {
    let layout = Layout::new(41, 10, 12, 1_577_836_800_000)?;
    let generator = Arc::new(Generator::builder(layout).worker(1023).build()?);
    let shared = Arc::clone(&generator);
    let per_thread = run_threads(PER_THREAD, move || shared.next_raw().expect("generation failed"));
    check(&per_thread, &layout, 1023);
    let stats = generator.stats();
    assert_eq!(stats.errors, 0);
    assert_eq!(stats.worker, 1023);
    Ok(())
}

/// The clock of [`threads_never_take_a_newer_tick_for_a_step_back`]: one atomic that only
/// grows, published to the hot path as `MonotonicClock` publishes its millisecond, and read
/// with relaxed loads as that clock is.
static RACING_NOW: std::sync::atomic::AtomicI64 = std::sync::atomic::AtomicI64::new(1_700_000_000_000);

#[derive(Debug)]
struct RacingClock;

impl typed_snowflake::Clock for RacingClock {
    fn now_ms(&self) -> i64 {
        RACING_NOW.load(std::sync::atomic::Ordering::Relaxed)
    }
    fn on_step_back(&self) -> typed_snowflake::StepBack {
        typed_snowflake::StepBack::Error
    }
    fn cached(&self) -> Option<&'static std::sync::atomic::AtomicI64> {
        Some(&RACING_NOW)
    }
}

/// The case the slow path's ordering argument is about: a thread entering the slow path
/// (here on every fourth ID: 2 sequence bits) loads a state that another thread issued in a
/// newer tick a moment ago, on the fast path or the slow one. With a clock that never steps
/// back and `StepBack::Error`, taking that tick for a step back would be an error. A driver
/// thread moves the clock on all the time, so ticks change under the generating threads.
#[test]
fn threads_never_take_a_newer_tick_for_a_step_back() -> Result<(), Box<dyn std::error::Error>> {
    use std::sync::atomic::{AtomicBool, Ordering};

    let layout = Layout::new(41, 10, 2, 1_577_836_800_000)?;
    let generator = Arc::new(Generator::builder(layout).worker(9).clock(RacingClock).build()?);
    let done = Arc::new(AtomicBool::new(false));
    let driver = {
        let done = Arc::clone(&done);
        std::thread::spawn(move || {
            while !done.load(Ordering::Relaxed) {
                RACING_NOW.fetch_add(1, Ordering::Relaxed);
                for _ in 0..64 {
                    std::hint::spin_loop();
                }
            }
        })
    };
    let per_thread = {
        let generator = Arc::clone(&generator);
        run_threads(50_000, move || generator.next_raw().unwrap_or_else(|e| panic!("generation failed: {e}")))
    };
    done.store(true, Ordering::Relaxed);
    driver.join().map_err(|_| "the clock driver panicked")?;
    let stats = generator.stats();
    assert_eq!((stats.clock_step_backs, stats.errors), (0, 0), "{stats:?}");
    for (thread, ids) in per_thread.iter().enumerate() {
        assert!(ids.windows(2).all(|w| w[0] < w[1]), "thread {thread}: IDs not increasing");
    }
    let mut all: Vec<i64> = per_thread.into_iter().flatten().collect();
    let total = all.len();
    all.sort_unstable();
    all.dedup();
    assert_eq!(all.len(), total, "duplicate IDs");
    Ok(())
}
