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

/// Runs `THREADS` threads, each taking `PER_THREAD` IDs from `next`, all released at once.
fn run_threads(next: impl Fn() -> i64 + Send + Sync + 'static) -> Vec<Vec<i64>> {
    let next = Arc::new(next);
    let start = Arc::new(Barrier::new(THREADS));
    let handles: Vec<_> = (0..THREADS)
        .map(|_| {
            let next = Arc::clone(&next);
            let start = Arc::clone(&start);
            std::thread::spawn(move || {
                let mut ids = Vec::with_capacity(PER_THREAD);
                start.wait();
                for _ in 0..PER_THREAD {
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
    let per_thread = run_threads(|| EventId::generate().get());
    let worker = EventId::generate().worker();
    check(&per_thread, &EventId::LAYOUT, worker);
}

#[test]
fn standalone_generator_from_many_threads() -> Result<(), Box<dyn std::error::Error>> {
    let layout = Layout::new(41, 10, 12, 1_577_836_800_000)?;
    let generator = Arc::new(Generator::builder(layout).worker(1023).build()?);
    let shared = Arc::clone(&generator);
    let per_thread = run_threads(move || shared.next_raw().expect("generation failed"));
    check(&per_thread, &layout, 1023);
    let stats = generator.stats();
    assert_eq!(stats.errors, 0);
    assert_eq!(stats.worker, 1023);
    Ok(())
}
