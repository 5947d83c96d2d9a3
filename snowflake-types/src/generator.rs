//! The lock-free generator: `(tick, worker, sequence)` packed in one `AtomicU64`.
//!
//! The hot path is one clock read (a relaxed load of the ticker's millisecond with the
//! default clock) and one compare-and-swap; no lock, no allocation. Everything unusual
//! (a full sequence, a clock behind the last ID, a new high-water reservation, the end of
//! the time field) falls to a cold path that reads the clock precisely.
//!
//! The worker ID lives in the packed state too, so that a generator on a lease can move to
//! another worker ID (after the lease was lost and granted again) with one compare-and-swap:
//! every ID is made from one state alone, and no thread can pair a tick taken under one
//! grant with the worker ID of another.
//!
//! One concern per file under `generator/`: `builder.rs` configures a generator and checks
//! its settings; `fast.rs` is the hot path; `slow.rs` the cold one (a spent sequence, a clock
//! behind, the waits and the step-back policies); `limit.rs` raises the issuing limit (a
//! high-water reservation, a lease's fence) and moves a generator to a new grant;
//! `asynchronous.rs` awaits where the slow path would block; `high_water.rs` reads and writes
//! the high-water file; `state.rs` holds the compare-and-swap steps that the hot path and a
//! move to a new grant race on, and their model check under `loom`.

#[cfg(feature = "tokio")]
mod asynchronous;
mod builder;
mod fast;
mod high_water;
mod limit;
mod slow;
mod state;

use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

pub use self::builder::GeneratorBuilder;
pub(crate) use self::builder::{Settings, settings_setters};
use self::high_water::HighWater;
pub use self::high_water::MAX_HIGH_WATER_RESERVE;
pub(crate) use self::high_water::check_reserve;
use crate::clock::{Clock, StepBack};
use crate::error::GenerateError;
use crate::fence::{Fence, Limit};
use crate::layout::{FieldOrder, Layout};

/// The default largest batch for `generate_batch`.
pub const DEFAULT_BATCH_LIMIT: usize = 100_000;

/// The most IDs a batch allocates room for before it issues any: larger batches grow as
/// their IDs are issued, so no batch limit, however large, allocates (or aborts) up front.
pub(crate) const BATCH_PREALLOC: usize = 4096;

/// The part every ID touches, alone on its cache lines so that generators of two types
/// on two threads do not slow each other down.
#[repr(align(128))]
struct Hot {
    /// `tick << (worker_bits + seq_bits) | worker << seq_bits | seq` of the last issued ID
    /// (for the default field order, the ID itself).
    state: AtomicU64,
}

/// Counters of the slow paths, for operators: overflow pressure and clock trouble.
///
/// ```
/// use typed_snowflake::{Generator, Layout};
///
/// let layout = Layout::new(41, 10, 12, 1_288_834_974_657)?;
/// let generator = Generator::builder(layout).worker(1).build()?;
/// generator.next_raw()?;
/// assert_eq!(generator.stats().errors, 0);
/// Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct GeneratorStats {
    /// The ID type (or the name given to a standalone generator).
    pub name: &'static str,
    /// The worker ID it issues under.
    pub worker: u64,
    /// Times a caller waited for the next tick because the sequence ran out (or, after a
    /// restart, for the clock to pass the high-water mark).
    pub exhausted_waits: u64,
    /// Clock step-back episodes: times the clock was seen behind the last issued ID after
    /// IDs had been issued on time. An episode lasts until an ID is issued at or after the
    /// clock's tick again, so the IDs `Borrow` issues ahead of a stepped-back clock, and the
    /// calls that `Wait` or `Error` hold back or refuse meanwhile, all count once.
    pub clock_step_backs: u64,
    /// Errors returned.
    pub errors: u64,
    /// High-water reservations written (a reservation that the file already covered,
    /// because another generator on it reserved further, is not a write).
    pub high_water_writes: u64,
}

#[derive(Default)]
struct Counters {
    exhausted_waits: AtomicU64,
    clock_step_backs: AtomicU64,
    /// The highest state a call that found the clock behind left (or proposed to leave):
    /// a step back seen at a state above it follows IDs issued on time, a new episode.
    step_back_mark: AtomicU64,
    errors: AtomicU64,
    high_water_writes: AtomicU64,
}

/// A lock-free Snowflake generator for one layout and one worker ID.
///
/// Derived types each own one, created on first use from the [`Registry`](crate::Registry);
/// build one by hand for a layout that has no type, or for tests with a [`ManualClock`](crate::ManualClock).
///
/// ```
/// use std::sync::Arc;
/// use typed_snowflake::{Generator, Layout, ManualClock};
///
/// let layout = Layout::new(41, 10, 12, 1_288_834_974_657)?;
/// let clock = Arc::new(ManualClock::new(1_700_000_000_000));
/// let generator = Generator::builder(layout).worker(7).clock(clock.clone()).build()?;
/// let a = generator.next_raw()?;
/// let b = generator.next_raw()?;
/// assert!(b > a);
/// assert_eq!(layout.worker_of(a), 7);
/// Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct Generator {
    hot: Hot,
    /// Shared with the lease, which drops it to 0 when it is lost or released.
    limit: Arc<Limit>,
    cached: Option<&'static AtomicI64>,
    clock: Arc<dyn Clock>,
    policy: StepBack,
    layout: Layout,
    name: &'static str,
    /// The worker ID in the state (kept here for messages and counters; the IDs take it from
    /// the state). It changes only when a lease grants another.
    worker: AtomicU64,
    epoch_ms: i64,
    unit_ms: i64,
    seq_bits: u32,
    worker_bits: u32,
    max_seq: u64,
    random_start: u64,
    batch_limit: usize,
    high_water: Option<HighWater>,
    /// The worker-ID lease that fences this generator, if any.
    lease: Option<Arc<dyn Fence>>,
    /// The lease's grant this generator issues under (written under `extend_lock`).
    lease_epoch: AtomicU64,
    /// Orders the raises of the limit (high-water writes, lease checks).
    extend_lock: Mutex<()>,
    counters: Counters,
}

impl std::fmt::Debug for Generator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Generator")
            .field("name", &self.name)
            .field("worker", &self.worker())
            .field("layout", &self.layout)
            .field("clock", &self.clock)
            .finish_non_exhaustive()
    }
}

impl Generator {
    /// The layout.
    pub fn layout(&self) -> &Layout {
        &self.layout
    }

    /// The worker ID: on a lease, the one of the grant the generator last issued under.
    pub fn worker(&self) -> u64 {
        self.worker.load(Ordering::Relaxed)
    }

    /// The largest batch accepted.
    pub fn batch_limit(&self) -> usize {
        self.batch_limit
    }

    /// The packed state of an ID: the tick above the worker above the sequence.
    #[inline(always)]
    fn state_of(&self, tick: u64, worker: u64, seq: u64) -> u64 {
        (tick << (self.worker_bits + self.seq_bits)) | (worker << self.seq_bits) | seq
    }

    /// The tick of a packed state.
    #[inline(always)]
    fn tick_in(&self, state: u64) -> u64 {
        state >> (self.worker_bits + self.seq_bits)
    }

    /// The worker bits of a packed state, in place: what a new tick keeps.
    #[inline(always)]
    fn worker_in(&self, state: u64) -> u64 {
        state & (self.layout.max_worker() << self.seq_bits)
    }

    fn time_exhausted(&self) -> GenerateError {
        GenerateError::TimeExhausted { type_name: self.name, max_ms: self.layout.max_timestamp_ms() }
    }

    #[inline(always)]
    fn raw_of(&self, state: u64) -> i64 {
        id_in(state, &self.layout)
    }

    #[cold]
    fn fail<T>(&self, error: GenerateError) -> Result<T, GenerateError> {
        self.counters.errors.fetch_add(1, Ordering::Relaxed);
        crate::events::generate_error(self.name, self.worker(), &error);
        Err(error)
    }

    /// Fails with [`GenerateError::BatchTooLarge`] when `n` exceeds the batch limit.
    #[doc(hidden)]
    pub fn check_batch(&self, n: usize) -> Result<(), GenerateError> {
        if n > self.batch_limit {
            return self.fail(GenerateError::BatchTooLarge { requested: n, limit: self.batch_limit });
        }
        Ok(())
    }

    /// Issues `n` IDs in increasing order, taking whole runs of a tick's sequence with one
    /// atomic update each, and hands each to `sink`.
    pub fn fill_batch(&self, n: usize, mut sink: impl FnMut(i64)) -> Result<(), GenerateError> {
        self.check_batch(n)?;
        let mut left = n as u64;
        while left > 0 {
            let (first, count) = self.take(left)?;
            for state in first..first + count {
                sink(self.raw_of(state));
            }
            left -= count;
        }
        Ok(())
    }

    /// `n` raw IDs, in increasing order.
    pub fn next_batch_raw(&self, n: usize) -> Result<Vec<i64>, GenerateError> {
        self.check_batch(n)?;
        let mut out = Vec::with_capacity(n.min(BATCH_PREALLOC));
        self.fill_batch(n, |raw| out.push(raw))?;
        Ok(out)
    }

    /// The slow-path counters.
    pub fn stats(&self) -> GeneratorStats {
        GeneratorStats {
            name: self.name,
            worker: self.worker(),
            exhausted_waits: self.counters.exhausted_waits.load(Ordering::Relaxed),
            clock_step_backs: self.counters.clock_step_backs.load(Ordering::Relaxed),
            errors: self.counters.errors.load(Ordering::Relaxed),
            high_water_writes: self.counters.high_water_writes.load(Ordering::Relaxed),
        }
    }
}

/// The ID of a packed state (`tick | worker | seq`, from the top): the fields where the layout
/// puts them. In the default order the state is the ID itself; Sonyflake's order swaps the
/// worker and the sequence below the tick. At or above 2^63 only for a 64-bit layout, whose
/// IDs are carried as their bit pattern.
#[inline(always)]
fn id_in(state: u64, layout: &Layout) -> i64 {
    match layout.order() {
        FieldOrder::WorkerAboveSeq => state.cast_signed(),
        FieldOrder::SeqAboveWorker => {
            let (seq_bits, max_seq, max_worker) = (layout.seq_bits(), layout.max_seq(), layout.max_worker());
            let tick_bits = state & !((max_worker << seq_bits) | max_seq);
            let worker = (state >> seq_bits) & max_worker;
            let seq = state & max_seq;
            (tick_bits | (worker << layout.worker_shift()) | (seq << layout.seq_shift())).cast_signed()
        }
    }
}
