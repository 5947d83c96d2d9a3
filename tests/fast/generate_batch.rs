//! `generate_batch`: exactly `n` IDs, increasing and unique, across tick boundaries, and an
//! immediate error over the limit.

use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::sync::{Arc, Barrier};

use typed_snowflake::{Clock, DEFAULT_BATCH_LIMIT, GenerateError, Generator, Layout, ManualClock, SnowflakeId};

type TestResult = Result<(), Box<dyn std::error::Error>>;

#[derive(SnowflakeId, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
#[layout(time = 41, worker = 10, seq = 12, epoch = "2020-01-01")]
struct EventId(i64);

const T0: i64 = 1_700_000_000_000;

fn assert_increasing(ids: &[i64]) {
    for pair in ids.windows(2) {
        assert!(pair[0] < pair[1], "{} then {}: not strictly increasing", pair[0], pair[1]);
    }
}

/// Moves `clock` one tick on each time a caller of `generator` starts waiting for the next
/// tick, until `stop` is set: the clock advances exactly when the sequence is spent.
fn advance_on_wait(generator: Arc<Generator>, clock: Arc<ManualClock>, stop: Arc<AtomicBool>) -> impl FnOnce() {
    let handle = std::thread::spawn(move || {
        let mut seen = 0;
        while !stop.load(Ordering::SeqCst) {
            let waits = generator.stats().exhausted_waits;
            if waits > seen {
                seen = waits;
                clock.advance(1);
            } else {
                std::thread::yield_now();
            }
        }
    });
    move || handle.join().expect("the clock thread panicked")
}

#[test]
fn derived_batch_is_exact_increasing_and_unique() -> TestResult {
    for n in [0, 1, 4_095, 4_096, 4_097, 50_000] {
        let ids = EventId::generate_batch(n)?;
        assert_eq!(ids.len(), n);
        let raw: Vec<i64> = ids.iter().map(|id| id.get()).collect();
        assert_increasing(&raw);
    }
    // The next single ID follows the batch.
    let batch = EventId::generate_batch(100)?;
    assert!(EventId::generate() > batch[99]);
    Ok(())
}

#[test]
fn derived_batch_over_the_limit_is_refused_at_once() -> TestResult {
    assert_eq!(EventId::generate_batch(DEFAULT_BATCH_LIMIT)?.len(), DEFAULT_BATCH_LIMIT);
    for n in [DEFAULT_BATCH_LIMIT + 1, usize::MAX] {
        assert_eq!(
            EventId::generate_batch(n),
            Err(GenerateError::BatchTooLarge { requested: n, limit: DEFAULT_BATCH_LIMIT })
        );
    }
    Ok(())
}

#[test]
fn refused_batch_takes_nothing() -> TestResult {
    let layout = EventId::LAYOUT;
    let clock = Arc::new(ManualClock::new(T0));
    let generator = Generator::builder(layout).batch_limit(50).clock(Arc::clone(&clock)).build()?;
    assert_eq!(generator.batch_limit(), 50);
    let first = generator.next_raw()?;
    assert_eq!(generator.next_batch_raw(51), Err(GenerateError::BatchTooLarge { requested: 51, limit: 50 }));
    let mut sink = Vec::new();
    assert!(generator.fill_batch(51, |id| sink.push(id)).is_err());
    assert!(sink.is_empty());
    // Nothing was consumed: the sequence goes on from the single ID.
    let batch = generator.next_batch_raw(50)?;
    assert_eq!(batch.len(), 50);
    assert_eq!(batch[0], first + 1);
    assert_eq!(generator.stats().errors, 2);
    Ok(())
}

#[test]
fn batch_across_tick_boundaries() -> TestResult {
    let layout = EventId::LAYOUT;
    let clock = Arc::new(ManualClock::new(T0));
    let generator = Arc::new(Generator::builder(layout).worker(3).clock(Arc::clone(&clock)).build()?);
    let stop = Arc::new(AtomicBool::new(false));
    let join = advance_on_wait(Arc::clone(&generator), Arc::clone(&clock), Arc::clone(&stop));
    let n = 3 * 4_096 + 123;
    let ids = generator.next_batch_raw(n);
    stop.store(true, Ordering::SeqCst);
    join();
    let ids = ids?;
    assert_eq!(ids.len(), n);
    assert_increasing(&ids);
    // Four ticks, one after the other, each used from sequence 0, the first three to the end.
    let runs: Vec<&[i64]> = ids.chunk_by(|a, b| layout.ticks_of(*a) == layout.ticks_of(*b)).collect();
    assert_eq!(runs.iter().map(|r| r.len()).collect::<Vec<_>>(), [4_096, 4_096, 4_096, 123]);
    for (k, run) in runs.iter().enumerate() {
        assert_eq!(layout.timestamp_ms_of(run[0]), T0 + i64::try_from(k)?);
        assert_eq!(layout.sequence_of(run[0]), 0);
        assert!(run.iter().all(|&id| layout.worker_of(id) == 3));
    }
    assert_eq!(generator.stats().exhausted_waits, 3);
    Ok(())
}

#[test]
fn batch_borrows_ticks_after_a_step_back() -> TestResult {
    let layout = EventId::LAYOUT;
    let clock = Arc::new(ManualClock::new(T0));
    let generator = Generator::builder(layout).clock(Arc::clone(&clock)).build()?;
    let first = generator.next_raw()?;
    clock.step_back(5);
    let ids = generator.next_batch_raw(10_000)?;
    assert_eq!(ids.len(), 10_000);
    assert!(ids[0] > first);
    assert_increasing(&ids);
    assert_eq!(layout.timestamp_ms_of(ids[9_999]), T0 + 2);
    Ok(())
}

#[test]
fn batches_and_single_ids_from_many_threads() -> TestResult {
    let layout = EventId::LAYOUT;
    let clock = Arc::new(ManualClock::new(T0));
    let generator = Arc::new(Generator::builder(layout).clock(Arc::clone(&clock)).build()?);
    let stop = Arc::new(AtomicBool::new(false));
    let join = advance_on_wait(Arc::clone(&generator), Arc::clone(&clock), Arc::clone(&stop));
    let start = Arc::new(Barrier::new(4));
    let workers: Vec<_> = (0..4)
        .map(|t| {
            let (generator, start) = (Arc::clone(&generator), Arc::clone(&start));
            std::thread::spawn(move || -> Result<Vec<Vec<i64>>, GenerateError> {
                start.wait();
                if t % 2 == 0 {
                    (0..40).map(|_| generator.next_batch_raw(1_000)).collect()
                } else {
                    Ok(vec![(0..40_000).map(|_| generator.next_raw()).collect::<Result<_, _>>()?])
                }
            })
        })
        .collect();
    let mut all = Vec::new();
    for worker in workers {
        let runs = worker.join().map_err(|_| "a worker panicked")??;
        for run in runs {
            assert_increasing(&run);
            all.extend(run);
        }
    }
    stop.store(true, Ordering::SeqCst);
    join();
    let total = all.len();
    assert_eq!(total, 160_000);
    all.sort_unstable();
    all.dedup();
    assert_eq!(all.len(), total, "duplicates among batches and single IDs");
    Ok(())
}

#[test]
fn layout_with_one_sequence_bit() -> TestResult {
    let layout = Layout::new(41, 10, 1, T0)?;
    let clock = Arc::new(ManualClock::new(T0 + 1));
    let generator = Arc::new(Generator::builder(layout).clock(Arc::clone(&clock)).build()?);
    let stop = Arc::new(AtomicBool::new(false));
    let join = advance_on_wait(Arc::clone(&generator), Arc::clone(&clock), Arc::clone(&stop));
    let ids = generator.next_batch_raw(101);
    stop.store(true, Ordering::SeqCst);
    join();
    let ids = ids?;
    assert_increasing(&ids);
    assert_eq!(layout.ticks_of(ids[100]) - layout.ticks_of(ids[0]), 50);
    Ok(())
}

/// A clock one millisecond further on at every reading.
#[derive(Debug)]
struct Ticking(AtomicI64);

impl Clock for Ticking {
    fn now_ms(&self) -> i64 {
        self.0.fetch_add(1, Ordering::SeqCst)
    }
}

/// A batch limit as large as `usize::MAX` does not allocate the batch up front: on a layout
/// whose time field runs out after a few ticks, the largest batches end in `TimeExhausted`
/// (rather than a "capacity overflow" panic, or an abort allocating terabytes).
#[test]
fn huge_batch_limit_never_allocates_up_front() -> TestResult {
    // Four ticks of two IDs each.
    let layout = Layout::new(2, 0, 1, T0)?;
    let generator = Generator::builder(layout).batch_limit(usize::MAX).clock(Ticking(AtomicI64::new(T0))).build()?;
    assert_eq!(generator.batch_limit(), usize::MAX);
    let exhausted = GenerateError::TimeExhausted { type_name: "generator", max_ms: layout.max_timestamp_ms() };
    for n in [usize::MAX, 1 << 40] {
        assert_eq!(generator.next_batch_raw(n), Err(exhausted.clone()), "a batch of {n}");
    }
    // The IDs issued before the end were handed out in order.
    let generator = Generator::builder(layout).batch_limit(usize::MAX).clock(Ticking(AtomicI64::new(T0))).build()?;
    let mut issued = Vec::new();
    assert_eq!(generator.fill_batch(usize::MAX, |id| issued.push(id)), Err(exhausted));
    assert!(!issued.is_empty());
    assert_increasing(&issued);
    assert!(issued.iter().all(|&id| layout.validate(id) == Ok(id)));
    Ok(())
}
