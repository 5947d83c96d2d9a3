//! The generator against its clock: steps back under each policy, a sequence that runs out
//! within a tick, the ends of the time field, the default monotonic clock, and a random
//! sequence start. Every test but the monotonic clock's runs on a `ManualClock`, so what
//! the generator sees is exactly what the test set.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use typed_snowflake::clock::MonotonicClock;
use typed_snowflake::{Clock, GenerateError, Generator, Layout, ManualClock, SnowflakeId, StepBack, TickUnit};

type TestResult = Result<(), Box<dyn std::error::Error>>;

#[derive(SnowflakeId, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
#[layout(time = 41, worker = 10, seq = 12, epoch = "2020-01-01")]
struct EventId(i64);

/// 2023-11-14T22:13:20Z.
const T0: i64 = 1_700_000_000_000;
const EPOCH: i64 = 1_577_836_800_000;
const SEQ_CAP: u64 = 4096;
const STEPS: [i64; 3] = [1, 1_000, 3_600_000];

fn layout() -> Layout {
    EventId::LAYOUT
}

fn manual(policy: StepBack) -> Result<(Arc<ManualClock>, Arc<Generator>), GenerateError> {
    let clock = Arc::new(ManualClock::new(T0).with_policy(policy));
    let generator = Generator::builder(layout()).worker(5).clock(Arc::clone(&clock)).build()?;
    Ok((clock, Arc::new(generator)))
}

fn take(generator: &Generator, n: usize) -> Result<Vec<i64>, GenerateError> {
    (0..n).map(|_| generator.next_raw()).collect()
}

fn assert_increasing(ids: &[i64]) {
    for pair in ids.windows(2) {
        assert!(pair[0] < pair[1], "{} then {}: not strictly increasing", pair[0], pair[1]);
    }
}

fn is_backwards(result: &Result<i64, GenerateError>, behind: i64) -> bool {
    matches!(result, Err(GenerateError::ClockBackwards { behind_ms }) if *behind_ms == behind)
}

/// Blocks until `ready` holds for the generator's statistics; fails the test, naming what it
/// waited for, if that has not happened within a minute (a hang guard, not a timing check).
#[track_caller]
fn wait_for(generator: &Generator, ready: impl Fn(&typed_snowflake::GeneratorStats) -> bool) {
    let deadline = Instant::now() + Duration::from_secs(60);
    while !ready(&generator.stats()) {
        assert!(
            Instant::now() < deadline,
            "gave up after 60 s waiting for the generator's statistics to change: {:?}",
            generator.stats()
        );
        std::thread::yield_now();
    }
}

// ---------------------------------------------------------------------------------------
// Steps back: Borrow (the default)
// ---------------------------------------------------------------------------------------

#[test]
fn borrow_continues_through_a_one_millisecond_step_back_then_errs_beyond_max_ahead() -> TestResult {
    let (clock, generator) = manual(StepBack::default())?;
    let mut ids = take(&generator, 100)?;
    clock.step_back(1);
    // 20 000 IDs run through the rest of tick T0 and borrow the next ticks.
    ids.extend(take(&generator, 20_000)?);
    assert_increasing(&ids);
    let last = layout().timestamp_ms_of(ids[ids.len() - 1]);
    assert!(last > T0, "the generator never borrowed a tick ahead of the clock");
    // Keep going: every ID stays within max_ahead (1 s) of the clock, until it errs.
    let err = loop {
        let mut batch = Vec::new();
        let result = generator.fill_batch(100_000, |id| batch.push(id));
        ids.extend(batch);
        if let Err(e) = result {
            break e;
        }
    };
    assert!(matches!(err, GenerateError::ClockBackwards { .. }), "{err}");
    assert_increasing(&ids);
    let ahead = layout().timestamp_ms_of(ids[ids.len() - 1]) - clock.now_ms();
    assert!((1..=1_000).contains(&ahead), "the last ID runs {ahead} ms ahead of the clock");
    // Refused until the clock catches up (as far behind as the last ID ran ahead); then on,
    // above everything issued.
    assert!(is_backwards(&generator.next_raw(), ahead), "{:?}", generator.next_raw());
    clock.set(layout().timestamp_ms_of(ids[ids.len() - 1]) + 1);
    let next = generator.next_raw()?;
    assert!(next > ids[ids.len() - 1]);
    Ok(())
}

#[test]
fn borrow_finishes_the_tick_then_errs_for_steps_beyond_max_ahead() -> TestResult {
    for step in &STEPS[1..] {
        let (clock, generator) = manual(StepBack::default())?;
        let mut ids = take(&generator, 100)?;
        clock.step_back(*step);
        // The rest of the last issued tick is still free to use...
        let mut rest = Vec::new();
        let err = loop {
            match generator.next_raw() {
                Ok(id) => rest.push(id),
                Err(e) => break e,
            }
        };
        assert_eq!(rest.len() as u64, SEQ_CAP - 100, "step {step}");
        assert!(rest.iter().all(|&id| layout().timestamp_ms_of(id) == T0));
        // ...but the next tick lies further ahead of the clock than max_ahead allows.
        assert_eq!(err, GenerateError::ClockBackwards { behind_ms: *step });
        ids.extend(rest);
        clock.set(T0);
        // The clock is back at the last tick, whose sequence is spent: the next ID waits
        // for tick T0 + 1, which a second thread provides once the wait has begun.
        let waiter = {
            let generator = Arc::clone(&generator);
            std::thread::spawn(move || generator.next_raw())
        };
        wait_for(&generator, |s| s.exhausted_waits >= 1);
        clock.advance(1);
        let next = waiter.join().map_err(|_| "waiter panicked")??;
        assert_eq!(layout().timestamp_ms_of(next), T0 + 1);
        ids.push(next);
        assert_increasing(&ids);
        // One step back, however many IDs were issued and refused while the clock was
        // behind; and the one refusal.
        let stats = generator.stats();
        assert_eq!((stats.clock_step_backs, stats.errors), (1, 1), "step {step}: {stats:?}");
    }
    Ok(())
}

/// The clock stepped back under running threads, with the default policy: no ID twice, each
/// thread's IDs strictly increasing, and no stall. After the step the manual clock never
/// moves again, so a generator that waited for it to catch up would never return: every
/// thread getting all its IDs is the proof (the minute is a hang guard, not a timing check).
#[test]
fn a_step_back_under_running_threads_repeats_nothing_and_stalls_nothing() -> TestResult {
    const THREADS: usize = 4;
    const BEFORE: usize = 500;
    const AFTER: usize = 50_000;
    let (clock, generator) = manual(StepBack::default())?;
    let start = Arc::new(Barrier::new(THREADS + 1));
    let (done, results) = std::sync::mpsc::channel();
    for _ in 0..THREADS {
        let (generator, start, done) = (Arc::clone(&generator), Arc::clone(&start), done.clone());
        std::thread::spawn(move || {
            let run = || -> Result<Vec<i64>, GenerateError> {
                let mut ids = take(&generator, BEFORE)?;
                start.wait();
                // The step back lands while these run: 200 000 IDs, 49 ticks' worth, all
                // within the policy's second ahead of the stepped-back clock.
                ids.extend(take(&generator, AFTER)?);
                Ok(ids)
            };
            let _ = done.send(run());
        });
    }
    drop(done);
    start.wait();
    clock.step_back(500);
    let mut seen = std::collections::HashSet::new();
    for _ in 0..THREADS {
        let ids = results.recv_timeout(Duration::from_secs(60)).map_err(|e| format!("a thread stalled: {e}"))??;
        assert_eq!(ids.len(), BEFORE + AFTER);
        assert_increasing(&ids);
        for id in ids {
            assert!(seen.insert(id), "{id} issued twice");
        }
    }
    let stats = generator.stats();
    assert!(stats.clock_step_backs >= 1, "the generator never saw the step back: {stats:?}");
    assert_eq!(stats.errors, 0, "{stats:?}");
    assert_eq!(clock.now_ms(), T0 - 500, "the clock stayed behind");
    Ok(())
}

// ---------------------------------------------------------------------------------------
// Steps back: Wait { max }
// ---------------------------------------------------------------------------------------

#[test]
fn wait_resumes_once_the_clock_catches_up() -> TestResult {
    let (clock, generator) = manual(StepBack::Wait { max: Duration::from_secs(3_600) })?;
    let before = take(&generator, 10)?;
    clock.step_back(1);
    let caught_up = Arc::new(AtomicBool::new(false));
    let helper = {
        let (clock, generator, caught_up) = (Arc::clone(&clock), Arc::clone(&generator), Arc::clone(&caught_up));
        std::thread::spawn(move || {
            // Only once the generator has seen the step back (and so is waiting).
            wait_for(&generator, |s| s.clock_step_backs >= 1);
            caught_up.store(true, Ordering::SeqCst);
            clock.set(T0);
        })
    };
    let next = generator.next_raw()?;
    assert!(caught_up.load(Ordering::SeqCst), "Wait returned before the clock caught up");
    helper.join().map_err(|_| "helper panicked")?;
    assert!(next > before[before.len() - 1]);
    assert_eq!(layout().timestamp_ms_of(next), T0);
    assert_eq!(generator.stats().errors, 0);
    Ok(())
}

#[test]
fn wait_gives_up_at_its_bound() -> TestResult {
    let max = Duration::from_millis(30);
    let (clock, generator) = manual(StepBack::Wait { max })?;
    let before = take(&generator, 10)?;
    clock.step_back(1);
    let started = Instant::now();
    let result = generator.next_raw();
    let waited = started.elapsed();
    assert!(is_backwards(&result, 1), "{result:?}");
    // It did wait (the bound is a floor on the wait, not a speed requirement).
    assert!(waited >= max, "gave up after {waited:?}, before its bound {max:?}");
    clock.set(T0);
    let next = generator.next_raw()?;
    assert!(next > before[before.len() - 1]);
    Ok(())
}

#[test]
fn wait_refuses_steps_larger_than_its_bound() -> TestResult {
    for step in &STEPS[1..] {
        let (clock, generator) = manual(StepBack::Wait { max: Duration::from_millis(100) })?;
        let before = take(&generator, 10)?;
        clock.step_back(*step);
        // Refused without a wait that could not end in time; and again on retry.
        assert!(is_backwards(&generator.next_raw(), *step));
        assert!(is_backwards(&generator.next_raw(), *step));
        clock.set(T0);
        let after = take(&generator, 10)?;
        assert!(after[0] > before[before.len() - 1]);
        assert_increasing(&after);
        assert_eq!(generator.stats().errors, 2);
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------
// Steps back: Error
// ---------------------------------------------------------------------------------------

#[test]
fn error_refuses_every_step_back_and_recovers() -> TestResult {
    for step in STEPS {
        let (clock, generator) = manual(StepBack::Error)?;
        let mut ids = take(&generator, 10)?;
        clock.step_back(step);
        for _ in 0..3 {
            assert!(is_backwards(&generator.next_raw(), step), "step {step}");
        }
        // Half-way back is still behind, by the other half.
        clock.advance(step / 2);
        assert!(is_backwards(&generator.next_raw(), step - step / 2), "step {step}: {:?}", generator.next_raw());
        clock.set(T0);
        ids.extend(take(&generator, 10)?);
        clock.advance(1);
        ids.extend(take(&generator, 10)?);
        assert_increasing(&ids);
        assert_eq!(layout().sequence_of(ids[10]), 10, "the sequence went on where it stopped");
        let stats = generator.stats();
        assert_eq!(stats.errors, 4);
        // Four refusals, one episode.
        assert_eq!(stats.clock_step_backs, 1);
    }
    Ok(())
}

/// `clock_step_backs` counts episodes: a step back seen after IDs were issued on time. The
/// IDs borrowed ahead of the clock (here 10 000, through several ticks) and the refusals
/// within one episode count once; a second step back after the clock caught up and IDs were
/// issued on time again counts again.
#[test]
fn step_backs_are_counted_per_episode_not_per_id() -> TestResult {
    for policy in [StepBack::default(), StepBack::Error, StepBack::Wait { max: Duration::ZERO }] {
        let (clock, generator) = manual(policy)?;
        let mut ids = take(&generator, 10)?;
        for episode in 1..=3 {
            clock.step_back(1);
            for _ in 0..10_000 {
                if let Ok(id) = generator.next_raw() {
                    ids.push(id);
                }
            }
            assert_eq!(generator.stats().clock_step_backs, episode, "{policy:?}: {:?}", generator.stats());
            // The clock passes everything issued: IDs on time again, no new episode.
            let last_ms = layout().timestamp_ms_of(ids[ids.len() - 1]);
            clock.set(last_ms.max(clock.now_ms()) + 1);
            ids.extend(take(&generator, 10)?);
            assert_eq!(generator.stats().clock_step_backs, episode, "{policy:?}: {:?}", generator.stats());
        }
        assert_increasing(&ids);
    }
    Ok(())
}

/// Many threads borrowing through one step back count it once.
#[test]
fn one_step_back_seen_by_many_threads_is_one_episode() -> TestResult {
    let (clock, generator) = manual(StepBack::Borrow { max_ahead: Duration::from_secs(3_600) })?;
    take(&generator, 10)?;
    clock.step_back(1_000);
    let threads: Vec<_> = (0..4)
        .map(|_| {
            let generator = Arc::clone(&generator);
            std::thread::spawn(move || take(&generator, 20_000))
        })
        .collect();
    let mut ids = Vec::new();
    for thread in threads {
        ids.extend(thread.join().map_err(|_| "a thread panicked")??);
    }
    ids.sort_unstable();
    ids.dedup();
    assert_eq!(ids.len(), 80_000);
    assert_eq!(generator.stats().clock_step_backs, 1, "{:?}", generator.stats());
    Ok(())
}

/// A clock that, once, holds the thread it was armed for just after that thread read it,
/// so a test can run another thread in between.
#[derive(Debug)]
struct GateClock {
    now: std::sync::atomic::AtomicI64,
    armed: std::sync::Mutex<Option<std::thread::ThreadId>>,
    read_done: Barrier,
    resume: Barrier,
}

impl Clock for GateClock {
    fn now_ms(&self) -> i64 {
        let now = self.now.load(Ordering::SeqCst);
        let mut armed = self.armed.lock().unwrap_or_else(|p| p.into_inner());
        if *armed == Some(std::thread::current().id()) {
            *armed = None;
            drop(armed);
            self.read_done.wait();
            self.resume.wait();
        }
        now
    }
    fn on_step_back(&self) -> StepBack {
        StepBack::Error
    }
}

/// Two threads, one tick apart: the one that read the clock first but updates the state
/// second must not take the other's newer tick for a clock step back (a false
/// `ClockBackwards` under `StepBack::Error`, or a needless wait under `Wait`).
#[test]
fn a_slower_thread_is_not_a_clock_step_back() -> TestResult {
    let clock = Arc::new(GateClock {
        now: std::sync::atomic::AtomicI64::new(T0),
        armed: std::sync::Mutex::new(None),
        read_done: Barrier::new(2),
        resume: Barrier::new(2),
    });
    let generator = Arc::new(Generator::builder(layout()).clock(Arc::clone(&clock)).build()?);
    let first = generator.next_raw()?;
    let slow = {
        let (clock, generator) = (Arc::clone(&clock), Arc::clone(&generator));
        std::thread::spawn(move || {
            *clock.armed.lock().unwrap_or_else(|p| p.into_inner()) = Some(std::thread::current().id());
            generator.next_raw()
        })
    };
    // The slow thread has read T0 and is held; time moves on and another ID is issued.
    clock.read_done.wait();
    clock.now.store(T0 + 1, Ordering::SeqCst);
    let fast = generator.next_raw()?;
    clock.resume.wait();
    let slow = slow.join().map_err(|_| "slow thread panicked")??;
    assert!(first < fast && fast < slow, "{first} {fast} {slow}");
    assert_eq!(generator.stats().clock_step_backs, 0);
    Ok(())
}

// ---------------------------------------------------------------------------------------
// Sequence exhausted within one tick
// ---------------------------------------------------------------------------------------

/// The regression for twitter-archive/snowflake#6: the wait for the next tick must re-read
/// the clock, and the ID after it must carry the new reading, not the tick it waited on.
#[test]
fn exhausted_sequence_waits_for_the_clock_and_never_repeats() -> TestResult {
    let (clock, generator) = manual(StepBack::default())?;
    let ids = take(&generator, SEQ_CAP as usize)?;
    assert!(ids.iter().all(|&id| layout().timestamp_ms_of(id) == T0));
    assert_eq!(layout().sequence_of(ids[ids.len() - 1]), SEQ_CAP - 1);

    // Four threads ask for more while the clock is frozen: all must wait.
    let advanced = Arc::new(AtomicBool::new(false));
    let start = Arc::new(Barrier::new(4));
    let waiters: Vec<_> = (0..4)
        .map(|_| {
            let (generator, advanced, start) = (Arc::clone(&generator), Arc::clone(&advanced), Arc::clone(&start));
            std::thread::spawn(move || {
                start.wait();
                let result = generator.next_raw();
                (result, advanced.load(Ordering::SeqCst))
            })
        })
        .collect();
    // All four wait (or, if the generator wrongly issued, are done already).
    while generator.stats().exhausted_waits < 4 && !waiters.iter().all(|w| w.is_finished()) {
        std::thread::yield_now();
    }
    advanced.store(true, Ordering::SeqCst);
    clock.advance(1);
    let mut after = Vec::new();
    for waiter in waiters {
        let (result, saw_advance) = waiter.join().map_err(|_| "waiter panicked")?;
        assert!(saw_advance, "an ID was issued while the sequence was spent and the clock frozen");
        after.push(result?);
    }
    after.sort_unstable();
    assert_eq!(after.iter().map(|&id| layout().sequence_of(id)).collect::<Vec<_>>(), [0, 1, 2, 3]);
    assert!(after.iter().all(|&id| layout().timestamp_ms_of(id) == T0 + 1));
    assert!(after[0] > ids[ids.len() - 1]);
    Ok(())
}

// ---------------------------------------------------------------------------------------
// The ends of the time field
// ---------------------------------------------------------------------------------------

#[test]
fn time_field_exhausted_is_an_error_never_a_wrapped_id() -> TestResult {
    let small = Layout::new(10, 3, 4, T0)?;
    let max_ms = small.max_timestamp_ms();
    assert_eq!(max_ms, T0 + 1023);
    let clock = Arc::new(ManualClock::new(max_ms));
    let generator = Arc::new(Generator::builder(small).worker(7).clock(Arc::clone(&clock)).build()?);
    // The last tick still issues, its whole sequence.
    let ids = take(&generator, 16)?;
    assert_increasing(&ids);
    for &id in &ids {
        assert_eq!(small.validate(id), Ok(id));
        assert_eq!(small.ticks_of(id), small.max_ticks());
    }
    // Borrowing past the last tick: no tick left to borrow.
    clock.step_back(1);
    let exhausted = GenerateError::TimeExhausted { type_name: "generator", max_ms };
    assert_eq!(generator.next_raw(), Err(exhausted.clone()));
    // Waiting for a tick after the last one: the wait ends in the error, not an ID.
    clock.set(max_ms);
    let waiter = {
        let generator = Arc::clone(&generator);
        std::thread::spawn(move || generator.next_raw())
    };
    wait_for(&generator, |s| s.exhausted_waits >= 1);
    clock.advance(1);
    assert_eq!(waiter.join().map_err(|_| "waiter panicked")?, Err(exhausted.clone()));
    for late in [max_ms + 1, max_ms + 1_000_000, i64::MAX] {
        clock.set(late);
        assert_eq!(generator.next_raw(), Err(exhausted.clone()));
        let mut sink = Vec::new();
        assert_eq!(generator.fill_batch(10, |id| sink.push(id)), Err(exhausted.clone()));
        assert!(sink.is_empty());
    }
    Ok(())
}

#[test]
fn derived_layout_past_max_timestamp() -> TestResult {
    let clock = Arc::new(ManualClock::new(EventId::MAX_TIMESTAMP_MS));
    let generator = Generator::builder(EventId::LAYOUT).name("EventId").clock(Arc::clone(&clock)).build()?;
    let last = generator.next_raw()?;
    assert_eq!(EventId::try_from(last)?.timestamp_ms(), EventId::MAX_TIMESTAMP_MS);
    clock.advance(1);
    assert_eq!(
        generator.next_raw(),
        Err(GenerateError::TimeExhausted { type_name: "EventId", max_ms: EventId::MAX_TIMESTAMP_MS })
    );
    Ok(())
}

#[test]
fn clock_before_the_epoch() -> TestResult {
    for now_ms in [EPOCH - 1, 0, -1, i64::MIN] {
        let clock = ManualClock::new(now_ms);
        let generator = Generator::builder(layout()).clock(clock).build()?;
        assert_eq!(generator.next_raw(), Err(GenerateError::ClockBeforeEpoch { now_ms, epoch_ms: EPOCH }));
        assert!(generator.next_batch_raw(3).is_err());
    }
    Ok(())
}

type Expectation = dyn Fn(&Result<i64, GenerateError>) -> bool;

#[test]
fn extreme_layouts_do_not_overflow() -> TestResult {
    // 62 time bits counting seconds outlast i64 milliseconds; 62 counting milliseconds do not.
    let seconds = Layout::new(62, 0, 1, 0)?.with_unit(TickUnit::Seconds);
    let millis = Layout::new(62, 0, 1, 0)?;
    let backwards = |r: &Result<i64, GenerateError>| matches!(r, Err(GenerateError::ClockBackwards { .. }));
    let exhausted = |r: &Result<i64, GenerateError>| matches!(r, Err(GenerateError::TimeExhausted { .. }));
    let borrowed = |r: &Result<i64, GenerateError>| r.is_ok();
    let cases: [(Layout, i64, &Expectation); 4] = [
        // A tick of 1 s lies more than max_ahead (1 s) ahead of a clock one tick behind.
        (seconds, T0, &backwards),
        (seconds, i64::MAX, &backwards),
        (millis, T0, &borrowed),
        // No tick after the last one to borrow.
        (millis, millis.max_timestamp_ms(), &exhausted),
    ];
    for (layout, now, after_step_back) in cases {
        let clock = Arc::new(ManualClock::new(now));
        let generator = Generator::builder(layout).clock(Arc::clone(&clock)).build()?;
        let ids = take(&generator, 2)?;
        assert_increasing(&ids);
        for &id in &ids {
            assert_eq!(layout.validate(id), Ok(id));
            assert_eq!(Ok(layout.ticks_of(id)), layout.tick_of(now));
        }
        // The tick's two sequence numbers are spent when the clock steps back a tick.
        clock.step_back(layout.unit().as_millis());
        let result = generator.next_raw();
        assert!(after_step_back(&result), "{layout:?} at {now}: {result:?}");
        if let Ok(id) = result {
            assert_eq!(layout.ticks_of(id), layout.ticks_of(ids[1]) + 1);
        }
    }
    assert_eq!(
        Generator::builder(millis).clock(ManualClock::new(i64::MAX)).build()?.next_raw(),
        Err(GenerateError::TimeExhausted { type_name: "generator", max_ms: millis.max_timestamp_ms() })
    );
    let wide_worker = Layout::new(1, 61, 1, T0)?;
    let generator =
        Generator::builder(wide_worker).worker(wide_worker.max_worker()).clock(ManualClock::new(T0)).build()?;
    let id = generator.next_raw()?;
    assert_eq!(wide_worker.worker_of(id), (1 << 61) - 1);
    assert!(id > 0);
    Ok(())
}

// ---------------------------------------------------------------------------------------
// The default clock
// ---------------------------------------------------------------------------------------

fn wall_ms() -> i64 {
    let since = SystemTime::now().duration_since(UNIX_EPOCH).expect("the wall clock reads before 1970");
    i64::try_from(since.as_millis()).expect("wall clock in range")
}

#[test]
fn monotonic_clock_never_goes_back_and_tracks_the_wall_clock() {
    let cached = MonotonicClock.cached().expect("the ticker thread runs");
    let wall_start = wall_ms();
    let mut previous = cached.load(Ordering::Relaxed);
    let mut reads = 0u64;
    // Read until the cached value has passed the wall clock as read before the loop by
    // 20 ms: the ticker keeps it moving, and it never moves back.
    while previous < wall_start + 20 {
        let now = cached.load(Ordering::Relaxed);
        assert!(now >= previous, "cached reading went back: {previous} -> {now}");
        if reads.is_multiple_of(64) {
            // A precise reading is never behind a cached one read before it.
            let precise = MonotonicClock.now_ms();
            assert!(precise >= now, "precise {precise} behind cached {now}");
        }
        previous = now;
        reads += 1;
    }
    // Never behind the wall clock; ahead of it only by what NTP slews in a test's time
    // (a bound on accuracy, not on speed).
    let before = wall_ms();
    let mono = MonotonicClock.now_ms();
    let after = wall_ms();
    assert!(mono >= before, "monotonic {mono} behind the wall clock {before}");
    assert!(mono <= after + 1_000, "monotonic {mono} far ahead of the wall clock {after}");
}

#[test]
fn default_generator_issues_the_clock_s_ticks() -> TestResult {
    let generator = Generator::builder(layout()).worker(9).build()?;
    let cached = MonotonicClock.cached().expect("the ticker thread runs");
    let before = cached.load(Ordering::Relaxed);
    let ids = take(&generator, 10_000)?;
    let after = MonotonicClock.now_ms();
    assert_increasing(&ids);
    // Without a step back nothing is borrowed: every ID lies between the readings around it.
    assert!(layout().timestamp_ms_of(ids[0]) >= before);
    assert!(layout().timestamp_ms_of(ids[ids.len() - 1]) <= after);
    Ok(())
}

// ---------------------------------------------------------------------------------------
// Random sequence start
// ---------------------------------------------------------------------------------------

#[test]
fn random_start_varies_the_first_sequence_of_a_tick() -> TestResult {
    let clock = Arc::new(ManualClock::new(T0));
    let generator = Generator::builder(layout()).random_sequence_start(1_000).clock(Arc::clone(&clock)).build()?;
    let mut ids = Vec::new();
    for _ in 0..300 {
        clock.advance(1);
        ids.push(generator.next_raw()?);
    }
    assert_increasing(&ids);
    let firsts: std::collections::BTreeSet<u64> = ids.iter().map(|&id| layout().sequence_of(id)).collect();
    assert!(firsts.iter().all(|&seq| seq <= 1_000), "{firsts:?}");
    // 300 draws from 0..=1000 all equal: probability 1001^-299.
    assert!(firsts.len() > 1, "every tick started at {firsts:?}");
    Ok(())
}

#[test]
fn random_start_keeps_ids_unique_and_costs_capacity() -> TestResult {
    let clock = Arc::new(ManualClock::new(T0));
    let generator = Generator::builder(layout()).random_sequence_start(1_000).clock(Arc::clone(&clock)).build()?;
    let mut ids: Vec<i64> = Vec::new();
    while ids.len() < 40_000 {
        // Move the clock on exactly when the tick is spent.
        if ids.last().is_some_and(|&id| layout().sequence_of(id) == SEQ_CAP - 1) {
            clock.advance(1);
        }
        ids.push(generator.next_raw()?);
    }
    assert_increasing(&ids);
    assert_eq!(generator.stats().exhausted_waits, 0);
    // Each tick is one run from its random start to the end of the sequence: capacity
    // per tick is 4 096 minus the start, at least 3 096.
    let mut ticks = 0;
    for run in ids.chunk_by(|a, b| layout().ticks_of(*a) == layout().ticks_of(*b)) {
        let first = layout().sequence_of(run[0]);
        assert!(first <= 1_000);
        for pair in run.windows(2) {
            assert_eq!(pair[1], pair[0] + 1);
        }
        if layout().sequence_of(run[run.len() - 1]) == SEQ_CAP - 1 {
            assert_eq!(run.len() as u64, SEQ_CAP - first);
        }
        ticks += 1;
    }
    assert!(ticks > 40_000 / 4_096);
    // The start is clamped to half the sequence space.
    let narrow = Layout::new(41, 10, 4, EPOCH)?;
    let clock = Arc::new(ManualClock::new(T0));
    let generator = Generator::builder(narrow).random_sequence_start(u64::MAX).clock(Arc::clone(&clock)).build()?;
    for _ in 0..200 {
        clock.advance(1);
        assert!(narrow.sequence_of(generator.next_raw()?) <= 7);
    }
    Ok(())
}

/// With the precise monotonic clock, an ID's timestamp is never behind the wall clock read
/// just before it was generated: its tick is the current one, not a published value that
/// a late ticker thread may not have moved yet. (The default clock trades this for speed;
/// its lag is measured in BENCHMARKS.md, not asserted.)
#[test]
fn precise_monotonic_clock_never_lags_the_wall_clock() -> Result<(), GenerateError> {
    use typed_snowflake::clock::PreciseMonotonicClock;

    let layout = Layout::new(41, 10, 12, 1_577_836_800_000).expect("valid layout");
    let generator = Generator::builder(layout).worker(3).clock(PreciseMonotonicClock).build()?;
    let mut last = 0;
    for i in 0..20_000 {
        let before =
            i64::try_from(SystemTime::now().duration_since(UNIX_EPOCH).expect("after 1970").as_millis()).expect("fits");
        let raw = generator.next_raw()?;
        assert!(raw > last, "IDs must increase");
        last = raw;
        let stamp = layout.timestamp_ms_of(raw);
        assert!(stamp >= before, "ID {i} has timestamp {stamp}, behind the wall clock {before}");
        if i % 64 == 0 {
            std::thread::sleep(Duration::from_micros(300));
        }
    }
    Ok(())
}
