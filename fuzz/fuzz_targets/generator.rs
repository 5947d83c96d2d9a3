//! The generator under an adversarial clock: a fuzzer-driven script of clock readings on
//! a `ManualClock` (set, advance, step back, the ends of `i64`), calls labelled by the
//! caller that makes them (standing in for threads), batches, and restarts from a
//! high-water file, all on one layout and one worker ID.
//!
//! Properties, over every ID issued in the run, across restarts:
//! - no duplicate, and strictly increasing in issue order (so per caller too);
//! - every ID is in the layout, carries the worker ID, and a time the clock has read;
//! - a batch larger than the limit is refused, and only such a batch;
//! - no panic, and no hang: the clock moves on by itself while a caller waits.
//!
//! With `FUZZ_GENERATOR_LIVENESS=1`, also: under `StepBack::Borrow`, no `ClockBackwards`
//! error while the clock has only moved forward (restarts included).
#![no_main]

use std::collections::HashSet;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicI64, AtomicU32, Ordering};
use std::time::Duration;

use arbitrary::Arbitrary;
use libfuzzer_sys::fuzz_target;
use typed_snowflake::{Clock, GenerateError, Generator, Layout, ManualClock, StepBack, TickUnit};

/// 2023-11-14T22:13:20Z.
const EPOCH_MS: i64 = 1_700_000_000_000;
const CALLERS: usize = 4;

#[derive(Arbitrary, Debug)]
struct Setup {
    time_bits: u8,
    worker_bits: u8,
    seq_bits: u8,
    unit: u8,
    worker: u16,
    policy: Policy,
    /// High-water reservation in milliseconds; 0 runs without a high-water file (and
    /// then restarts are skipped: without a mark a restart may legitimately repeat IDs).
    reserve_ms: u16,
    batch_limit: u16,
    random_start: u8,
    /// Where the clock starts, relative to the epoch.
    start_offset_ms: i32,
    ops: Vec<Op>,
}

#[derive(Arbitrary, Debug, Clone, Copy)]
enum Policy {
    Borrow {
        max_ahead_ms: u16,
    },
    /// Waits are real time: at most a millisecond, to keep runs fast.
    Wait {
        max_us: u16,
    },
    Error,
}

#[derive(Arbitrary, Debug, Clone, Copy)]
enum Op {
    /// The clock reads `EPOCH_MS + offset`.
    Set(i32),
    /// The clock reads a value anywhere in `i64`, as a broken clock might.
    SetRaw(i64),
    Advance(u16),
    StepBack(u32),
    Next {
        caller: u8,
    },
    Batch {
        caller: u8,
        n: u16,
    },
    /// The process stops and starts again on the same high-water file.
    Restart,
}

/// A `ManualClock` that time passes on while nobody sets it: after a few readings in a
/// row it moves forward, as real time does while a caller waits for the next tick, by
/// 1 ms, then 2, 4, ... (so a wait for a one-second tick takes a few hundred readings,
/// not a thousand sleeps). Without it, a full tick on a frozen clock would wait forever.
#[derive(Debug)]
struct FuzzClock {
    manual: Arc<ManualClock>,
    reads: AtomicU32,
    step_ms: AtomicI64,
    policy: StepBack,
}

impl FuzzClock {
    /// Someone set the clock: time stands still again until the next wait.
    fn touched(&self) {
        self.reads.store(0, Ordering::Relaxed);
        self.step_ms.store(1, Ordering::Relaxed);
    }
}

impl Clock for FuzzClock {
    fn now_ms(&self) -> i64 {
        if self.reads.fetch_add(1, Ordering::Relaxed) >= 16 {
            self.reads.store(0, Ordering::Relaxed);
            let step = self.step_ms.load(Ordering::Relaxed);
            self.step_ms.store(step.saturating_mul(2).min(1 << 20), Ordering::Relaxed);
            let now = self.manual.now_ms();
            self.manual.set(now.saturating_add(step));
        }
        self.manual.now_ms()
    }
    fn on_step_back(&self) -> StepBack {
        self.policy
    }
}

struct Run {
    layout: Layout,
    worker: u64,
    manual: Arc<ManualClock>,
    clock: Arc<FuzzClock>,
    policy: StepBack,
    high_water: Option<(std::path::PathBuf, Duration)>,
    batch_limit: usize,
    random_start: u64,
    /// Every ID issued, and the last one (issue order).
    seen: HashSet<i64>,
    last: Option<i64>,
    last_by_caller: [Option<i64>; CALLERS],
    /// The largest reading the clock has given; a later reading below it is a step back.
    clock_max: i64,
    stepped_back: bool,
    liveness: bool,
}

impl Run {
    fn build(&self) -> Result<Generator, GenerateError> {
        let mut builder = Generator::builder(self.layout)
            .name("FuzzId")
            .worker(self.worker)
            .shared_clock(self.clock.clone())
            .batch_limit(self.batch_limit)
            .random_sequence_start(self.random_start);
        if let Some((path, reserve)) = &self.high_water {
            builder = builder.high_water(path, *reserve);
        }
        builder.build()
    }

    fn set_clock(&mut self, ms: i64) {
        self.manual.set(ms);
        self.clock.touched();
        self.note_clock();
    }

    /// Records whether the clock has ever moved back (by hand or by wrapping).
    fn note_clock(&mut self) {
        let now = self.manual.now_ms();
        if now < self.clock_max {
            self.stepped_back = true;
        }
        self.clock_max = self.clock_max.max(now);
    }

    fn issued(&mut self, caller: usize, raw: i64) {
        let layout = self.layout;
        assert!(layout.validate(raw).is_ok(), "{raw} is out of layout {layout:?}");
        assert_eq!(layout.worker_of(raw), self.worker, "{raw} carries another worker ID");
        assert!(self.seen.insert(raw), "duplicate ID {raw} (caller {caller})");
        if let Some(last) = self.last {
            assert!(raw > last, "{raw} issued after {last}: not increasing");
        }
        if let Some(last) = self.last_by_caller[caller] {
            assert!(raw > last, "caller {caller}: {raw} issued after its own {last}");
        }
        self.last = Some(raw);
        self.last_by_caller[caller] = Some(raw);
    }

    fn refused(&mut self, error: &GenerateError, batch: Option<usize>) {
        self.note_clock();
        match error {
            GenerateError::BatchTooLarge { requested, limit } => {
                assert_eq!(Some(*requested), batch, "BatchTooLarge for a single ID");
                assert!(requested > limit, "a batch of {requested} refused under the limit {limit}");
            }
            GenerateError::ClockBackwards { .. } if self.liveness => {
                let borrow = matches!(self.policy, StepBack::Borrow { .. });
                assert!(!borrow || self.stepped_back, "{error} although the clock never moved back");
            }
            GenerateError::ClockBackwards { .. }
            | GenerateError::ClockBeforeEpoch { .. }
            | GenerateError::TimeExhausted { .. }
            | GenerateError::HighWater { .. } => {}
            other => panic!("unexpected error: {other}"),
        }
        if let Some(n) = batch {
            assert!(!matches!(error, GenerateError::BatchTooLarge { .. }) || n > self.batch_limit);
        }
    }
}

fn layout_of(setup: &Setup) -> Layout {
    // Narrow fields reach the interesting edges: full ticks, the end of the time field.
    let time = 1 + u32::from(setup.time_bits % 41);
    let worker = u32::from(setup.worker_bits % 11);
    let seq = 1 + u32::from(setup.seq_bits % 12);
    let unit = match setup.unit % 3 {
        0 => TickUnit::Millis,
        1 => TickUnit::TenMillis,
        _ => TickUnit::Seconds,
    };
    Layout::new(time, worker, seq, EPOCH_MS).expect("at most 62 bits").with_unit(unit)
}

fn run(setup: Setup, dir: &Path) {
    let layout = layout_of(&setup);
    let policy = match setup.policy {
        Policy::Borrow { max_ahead_ms } => StepBack::Borrow { max_ahead: Duration::from_millis(max_ahead_ms.into()) },
        Policy::Wait { max_us } => StepBack::Wait { max: Duration::from_micros((max_us % 1_001).into()) },
        Policy::Error => StepBack::Error,
    };
    let manual = Arc::new(ManualClock::new(EPOCH_MS + i64::from(setup.start_offset_ms)).with_policy(policy));
    let clock =
        Arc::new(FuzzClock { manual: manual.clone(), reads: AtomicU32::new(0), step_ms: AtomicI64::new(1), policy });
    let high_water =
        (setup.reserve_ms > 0).then(|| (dir.join("FuzzId.hwm"), Duration::from_millis(setup.reserve_ms.into())));
    let mut state = Run {
        layout,
        worker: u64::from(setup.worker) & layout.max_worker(),
        clock_max: manual.now_ms(),
        manual,
        clock,
        policy,
        high_water,
        batch_limit: usize::from(setup.batch_limit % 512),
        random_start: u64::from(setup.random_start % 8),
        seen: HashSet::new(),
        last: None,
        last_by_caller: [None; CALLERS],
        stepped_back: false,
        liveness: std::env::var_os("FUZZ_GENERATOR_LIVENESS").is_some_and(|v| v == "1"),
    };
    let mut generator = match state.build() {
        Ok(generator) => Some(generator),
        Err(e) => panic!("a fresh generator failed to build: {e}"),
    };

    for op in setup.ops.into_iter().take(64) {
        match op {
            Op::Set(offset) => state.set_clock(EPOCH_MS + i64::from(offset)),
            Op::SetRaw(ms) => state.set_clock(ms),
            Op::Advance(ms) => {
                let now = state.manual.now_ms();
                state.set_clock(now.saturating_add(i64::from(ms)));
            }
            Op::StepBack(ms) => {
                let now = state.manual.now_ms();
                state.set_clock(now.saturating_sub(i64::from(ms)));
            }
            Op::Next { caller } => {
                let Some(g) = &generator else { continue };
                let result = g.next_raw();
                let caller = usize::from(caller) % CALLERS;
                match result {
                    Ok(raw) => state.issued(caller, raw),
                    Err(e) => state.refused(&e, None),
                }
            }
            Op::Batch { caller, n } => {
                let Some(g) = &generator else { continue };
                let n = usize::from(n % 600);
                let result = g.next_batch_raw(n);
                let caller = usize::from(caller) % CALLERS;
                match result {
                    Ok(ids) => {
                        assert_eq!(ids.len(), n, "a batch of {n} returned {}", ids.len());
                        for raw in ids {
                            state.issued(caller, raw);
                        }
                    }
                    Err(e) => state.refused(&e, Some(n)),
                }
            }
            Op::Restart => {
                if state.high_water.is_none() {
                    continue;
                }
                // The old process is gone before the new one reads the file.
                drop(generator.take());
                match state.build() {
                    Ok(g) => generator = Some(g),
                    // A mark beyond the time field: the new process refuses to start.
                    Err(GenerateError::TimeExhausted { .. }) => generator = None,
                    Err(e) => panic!("restart failed: {e}"),
                }
            }
        }
        state.note_clock();
    }
}

fuzz_target!(|setup: Setup| {
    let dir = if Path::new("/dev/shm").is_dir() { tempfile::tempdir_in("/dev/shm") } else { tempfile::tempdir() };
    let dir = dir.expect("a temporary directory");
    run(setup, dir.path());
});
