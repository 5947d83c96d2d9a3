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

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::clock::{Clock, StepBack};
use crate::error::GenerateError;
use crate::fence::{Fence, FenceReason, GrantView, Limit, Refusal};
use crate::layout::{FieldOrder, Layout};

/// The default largest batch for `generate_batch`.
pub const DEFAULT_BATCH_LIMIT: usize = 100_000;

/// The most IDs a batch allocates room for before it issues any: larger batches grow as
/// their IDs are issued, so no batch limit, however large, allocates (or aborts) up front.
pub(crate) const BATCH_PREALLOC: usize = 4096;

/// The longest high-water reservation: one hour. The reservation is how far the mark on
/// disk may run ahead of the clock; a longer one is refused when the generator is built
/// (and by the registry's `install()`), with [`GenerateError::HighWater`].
pub const MAX_HIGH_WATER_RESERVE: Duration = Duration::from_secs(3600);

/// Refuses a reservation above [`MAX_HIGH_WATER_RESERVE`], saying why.
pub(crate) fn check_reserve(reserve: Duration) -> Result<(), String> {
    if reserve > MAX_HIGH_WATER_RESERVE {
        return Err(format!(
            "a reserve of {reserve:?} exceeds the maximum of {MAX_HIGH_WATER_RESERVE:?} (MAX_HIGH_WATER_RESERVE)"
        ));
    }
    Ok(())
}

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

/// A persisted reservation of time: the generator never issues past the mark it wrote,
/// and a new process never issues at or below it.
struct HighWater {
    path: PathBuf,
    reserve_ticks: u64,
    /// The last tick the file reserves (written under `extend_lock`).
    reserved: AtomicU64,
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

/// The settings a [`GeneratorBuilder`] and a [`RegistryBuilder`](crate::RegistryBuilder)
/// share: one struct, one set of setters (see [`settings_setters`]).
#[derive(Debug, Clone)]
pub(crate) struct Settings {
    pub(crate) clock: Option<Arc<dyn Clock>>,
    pub(crate) random_start: u64,
    pub(crate) batch_limit: usize,
}

impl Default for Settings {
    fn default() -> Settings {
        Settings { clock: None, random_start: 0, batch_limit: DEFAULT_BATCH_LIMIT }
    }
}

/// The setters of [`Settings`], for a builder with a `settings` field.
macro_rules! settings_setters {
    () => {
        /// The clock (default: [`MonotonicClock`](crate::clock::MonotonicClock)).
        pub fn clock(self, clock: impl $crate::clock::Clock) -> Self {
            self.shared_clock(::std::sync::Arc::new(clock))
        }
        /// The clock, already shared.
        pub fn shared_clock(mut self, clock: ::std::sync::Arc<dyn $crate::clock::Clock>) -> Self {
            self.settings.clock = Some(clock);
            self
        }
        /// Start each tick's sequence at a random value in `0..=max` (clamped to half the
        /// sequence space), Leaf's defence against reading business volume off consecutive
        /// IDs. It costs up to `max` IDs of capacity per tick. 0 (the default) turns it off.
        pub fn random_sequence_start(mut self, max: u64) -> Self {
            self.settings.random_start = max;
            self
        }
        /// The largest batch `generate_batch` accepts (default
        /// [`DEFAULT_BATCH_LIMIT`](crate::DEFAULT_BATCH_LIMIT)).
        pub fn batch_limit(mut self, limit: usize) -> Self {
            self.settings.batch_limit = limit;
            self
        }
    };
}
pub(crate) use settings_setters;

/// Configures a [`Generator`].
#[derive(Debug, Clone)]
#[must_use]
pub struct GeneratorBuilder {
    layout: Layout,
    name: &'static str,
    worker: u64,
    settings: Settings,
    high_water: Option<(PathBuf, Duration)>,
    /// Read at build when the high-water file does not exist (a file of an earlier name).
    high_water_fallback: Option<PathBuf>,
    lease: Option<Arc<dyn Fence>>,
}

impl GeneratorBuilder {
    /// Issue under a fence (a worker-ID lease: `GeneratorBuilder::lease`, defined beside it).
    pub(crate) fn fenced_by(mut self, fence: Arc<dyn Fence>) -> Self {
        self.lease = Some(fence);
        self
    }
    /// The name used in errors and statistics.
    pub fn name(mut self, name: &'static str) -> Self {
        self.name = name;
        self
    }
    /// The worker ID (default 0).
    pub fn worker(mut self, worker: u64) -> Self {
        self.worker = worker;
        self
    }
    settings_setters!();
    /// All the shared settings at once (the registry's).
    pub(crate) fn settings(mut self, settings: Settings) -> Self {
        self.settings = settings;
        self
    }
    /// Persist a high-water mark in `file`, reserving `reserve` of time ahead with each
    /// write (one `fsync` per reservation): a restarted process never issues at or below
    /// the mark, even when the clock stepped back in between. `reserve` is at most
    /// [`MAX_HIGH_WATER_RESERVE`]; `build` refuses a longer one.
    ///
    /// After a restart quicker than `reserve`, the clock lies at most `reserve` behind the
    /// mark: the generator waits for it to pass the mark (as for a full tick), then issues
    /// at the clock's pace. A clock further behind was set back across the restart: its
    /// [`StepBack`] policy applies.
    pub fn high_water(mut self, file: impl Into<PathBuf>, reserve: Duration) -> Self {
        self.high_water = Some((file.into(), reserve));
        self
    }
    /// A file whose mark is read at build while the high-water file does not exist (the
    /// registry's file name of earlier versions); never written.
    pub(crate) fn high_water_fallback(mut self, file: PathBuf) -> Self {
        self.high_water_fallback = Some(file);
        self
    }

    /// Builds the generator: checks the worker ID against the layout, the high-water path
    /// (an empty path, or one that names no file, is refused) and the reservation against its
    /// maximum, and reads the high-water file, if any.
    pub fn build(mut self) -> Result<Generator, GenerateError> {
        let layout = self.layout;
        // With a lease, the grant it holds now: its worker ID, and what to issue above.
        let view = self.lease.as_ref().map(|lease| lease.view());
        if let (Some(lease), Some(view)) = (&self.lease, view) {
            if view.worker > layout.max_worker() {
                return Err(GenerateError::LeasedWorkerOutOfRange {
                    type_name: self.name,
                    namespace: lease.namespace().into(),
                    worker: view.worker,
                    max: layout.max_worker(),
                });
            }
            self.worker = view.worker;
        }
        if self.worker > layout.max_worker() {
            return Err(GenerateError::WorkerOutOfRange {
                type_name: self.name,
                worker: self.worker,
                max: layout.max_worker(),
            });
        }
        if let Some((path, reserve)) = &self.high_water {
            // As the registry refuses an empty directory: an empty path would be read as a
            // file that does not exist, and the first write would fail, after the build.
            let refuse =
                |reason: &str| GenerateError::HighWater { path: path.clone(), reason: reason.into(), source: None };
            if path.as_os_str().is_empty() {
                return Err(refuse("the file is an empty path; name a file, e.g. /var/lib/myapp/OrderId-3.hwm"));
            }
            if path.file_name().is_none() {
                return Err(refuse("the path names no file (it is a root, or ends in `..`)"));
            }
            check_reserve(*reserve).map_err(|reason| GenerateError::HighWater {
                path: path.clone(),
                reason,
                source: None,
            })?;
        }
        let Settings { clock, random_start, batch_limit } = self.settings;
        let clock: Arc<dyn Clock> = match clock {
            Some(clock) => clock,
            None => Arc::new(crate::clock::MonotonicClock),
        };
        let unit_ms = layout.unit().as_millis();
        let reserve_ms = self.high_water.as_ref().map_or(0, |(_, d)| i64::try_from(d.as_millis()).unwrap_or(i64::MAX));
        let generator = Generator {
            hot: Hot { state: AtomicU64::new(self.worker << layout.seq_bits()) },
            limit: Arc::new(Limit(AtomicU64::new(layout.max_ticks()))),
            cached: clock.cached(),
            policy: clock.on_step_back(),
            clock,
            layout,
            name: self.name,
            worker: AtomicU64::new(self.worker),
            epoch_ms: layout.epoch_ms(),
            unit_ms,
            seq_bits: layout.seq_bits(),
            worker_bits: layout.worker_bits(),
            max_seq: layout.max_seq(),
            random_start: random_start.min(layout.max_seq() / 2),
            batch_limit,
            high_water: self.high_water.map(|(path, _)| HighWater {
                path,
                reserve_ticks: u64::try_from((reserve_ms / unit_ms).max(1)).unwrap_or(1),
                reserved: AtomicU64::new(0),
            }),
            lease: self.lease,
            lease_epoch: AtomicU64::new(view.map_or(0, |v| v.epoch)),
            extend_lock: Mutex::new(()),
            counters: Counters::default(),
        };
        if generator.high_water.is_some() || generator.lease.is_some() {
            // Nothing may be issued until a reservation is on disk and the lease allows it.
            // The initial state claims tick 0 with a full sequence so that even the epoch's
            // own tick goes through them (the state `0` would let tick 0 be issued unchecked).
            generator.hot.state.store(generator.state_of(0, self.worker, generator.max_seq), Ordering::Relaxed);
            generator.limit.0.store(0, Ordering::Relaxed);
            let mark_ms = match (&generator.high_water, &self.high_water_fallback) {
                (Some(hw), fallback) => match (read_mark(&hw.path)?, fallback) {
                    (None, Some(old)) => read_mark(old)?,
                    (mark, _) => mark,
                },
                (None, _) => None,
            };
            if let Some(lease) = &generator.lease {
                lease.watch(&generator.limit, generator.unit_ms);
            }
            // Above the previous holders of a leased worker ID as well as above the mark.
            let floor_ms = view.and_then(|v| v.floor_ms);
            if let Some(start_ms) = mark_ms.max(floor_ms) {
                generator.resume_after(start_ms)?;
            }
        }
        Ok(generator)
    }
}

impl Generator {
    /// A builder for a generator of `layout`.
    pub fn builder(layout: Layout) -> GeneratorBuilder {
        GeneratorBuilder {
            layout,
            name: "generator",
            worker: 0,
            settings: Settings::default(),
            high_water: None,
            high_water_fallback: None,
            lease: None,
        }
    }

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

    /// Start after a persisted mark: the last issued state becomes the mark's tick with a
    /// full sequence, so the next ID lies in a later tick.
    ///
    /// That state lies beyond the issuing limit (nothing is reserved yet in this process),
    /// which is how `take` tells the resumed mark from a tick this generator issued: a
    /// clock behind it by at most the reservation is waited for, not a step back.
    fn resume_after(&self, mark_ms: i64) -> Result<(), GenerateError> {
        if let Some(tick) = self.tick_of_mark(mark_ms)? {
            // The clock is not moved: it may be shared by every type of the process.
            self.hot.state.store(self.state_of(tick, self.worker(), self.max_seq), Ordering::Relaxed);
        }
        Ok(())
    }

    /// The tick of a mark to issue above (a high-water mark, a lease's floor): `None` before
    /// the epoch, where every tick lies above it; past the time field, the time is exhausted.
    fn tick_of_mark(&self, mark_ms: i64) -> Result<Option<u64>, GenerateError> {
        if mark_ms < self.epoch_ms {
            return Ok(None);
        }
        self.layout.tick_of(mark_ms).map(Some).map_err(|_| self.time_exhausted())
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

    /// Moves the generator to a lease's new grant: its worker ID, above what earlier holders
    /// of it may have issued and above this generator's own last ID (so its IDs keep
    /// increasing). One compare-and-swap installs it, so every ID is made under one grant or
    /// the other; the limit falls to 0, so the next ID asks the lease again.
    fn switch_to(&self, view: GrantView) -> Result<(), GenerateError> {
        if view.worker > self.layout.max_worker() {
            let namespace = self.lease.as_ref().map_or_else(|| "".into(), |lease| lease.namespace().into());
            return self.fail(GenerateError::LeasedWorkerOutOfRange {
                type_name: self.name,
                namespace,
                worker: view.worker,
                max: self.layout.max_worker(),
            });
        }
        let floor_tick = match view.floor_ms.map(|ms| self.tick_of_mark(ms)).transpose() {
            Ok(tick) => tick.flatten().unwrap_or(0),
            Err(e) => return self.fail(e),
        };
        self.limit.0.store(0, Ordering::Release);
        let mut cur = self.hot.state.load(Ordering::Acquire);
        loop {
            let next = self.state_of(self.tick_in(cur).max(floor_tick), view.worker, self.max_seq);
            match self.hot.state.compare_exchange(cur, next, Ordering::AcqRel, Ordering::Acquire) {
                Ok(_) => break,
                Err(actual) => cur = actual,
            }
        }
        self.worker.store(view.worker, Ordering::Relaxed);
        self.lease_epoch.store(view.epoch, Ordering::Relaxed);
        Ok(())
    }

    fn time_exhausted(&self) -> GenerateError {
        GenerateError::TimeExhausted { type_name: self.name, max_ms: self.layout.max_timestamp_ms() }
    }

    #[inline(always)]
    fn raw_of(&self, state: u64) -> i64 {
        id_in(state, &self.layout)
    }

    #[inline(always)]
    fn start_seq(&self) -> u64 {
        if self.random_start == 0 { 0 } else { random_below(self.random_start + 1) }
    }

    /// The next ID as a raw `i64`.
    #[inline]
    pub fn next_raw(&self) -> Result<i64, GenerateError> {
        match self.fast(&self.layout) {
            Some(raw) => Ok(raw),
            None => self.next_slow(),
        }
    }

    /// [`Generator::next_raw`] for a generator built with `layout`, passed as a constant
    /// (a derived type's `LAYOUT`) so that every shift, mask and the epoch fold into the
    /// caller's code.
    #[inline(always)]
    pub(crate) fn next_with(&self, layout: &Layout) -> Result<i64, GenerateError> {
        debug_assert_eq!(*layout, self.layout, "a generator serves only the layout it was built with");
        match self.fast(layout) {
            Some(raw) => Ok(raw),
            None => self.next_slow(),
        }
    }

    /// The hot path: one relaxed load of the published millisecond and one CAS. `None`
    /// sends every unusual case (no cached clock, a clock before the epoch or behind the
    /// last ID, a full sequence, a tick past the reservation, a random sequence start) to
    /// the slow path, which reads the clock precisely.
    #[inline(always)]
    fn fast(&self, layout: &Layout) -> Option<i64> {
        let cached = self.cached?;
        let since = cached.load(Ordering::Relaxed) - layout.epoch_ms();
        if since < 0 {
            return None;
        }
        let unit = layout.unit().as_millis();
        let now = if unit == 1 { since } else { since / unit }.cast_unsigned();
        let seq_bits = layout.seq_bits();
        let tick_shift = layout.worker_bits() + seq_bits;
        let max_seq = layout.max_seq();
        let mut cur = self.hot.state.load(Ordering::Relaxed);
        loop {
            let last = cur >> tick_shift;
            let next = if now == last && cur & max_seq != max_seq {
                cur + 1
            } else if now > last && self.random_start == 0 && now <= self.limit.0.load(Ordering::Acquire) {
                // The worker comes from the state it follows: a switch to another grant is a
                // CAS on the state, so this CAS fails across one.
                (now << tick_shift) | (cur & (layout.max_worker() << seq_bits))
            } else {
                return None;
            };
            // Uniqueness and order need no more than Relaxed: they come from the single
            // modification order of this one atomic, in which every CAS reads the value
            // just before its own. Release is for the slow path (see `take`): a caller that
            // loads this state with Acquire also sees the clock reading this ID was stamped
            // with, so it does not take this ID's tick for a clock step back. On x86-64 it
            // is the same `lock cmpxchg` as Relaxed; on AArch64, `casl` instead of `cas`.
            match self.hot.state.compare_exchange_weak(cur, next, Ordering::Release, Ordering::Relaxed) {
                Ok(_) => return Some(id_in(next, layout)),
                Err(actual) => cur = actual,
            }
        }
    }

    /// The current tick, from a precise clock reading.
    fn precise_tick(&self) -> Result<u64, GenerateError> {
        let now_ms = self.clock.now_ms();
        if now_ms < self.epoch_ms {
            return Err(GenerateError::ClockBeforeEpoch { now_ms, epoch_ms: self.epoch_ms });
        }
        match self.layout.tick_of(now_ms) {
            Ok(tick) => Ok(tick),
            Err(_) => Err(self.time_exhausted()),
        }
    }

    /// Whether the clock reads a time this generator can issue at: not before the epoch,
    /// not past the end of the time field. Issues nothing and counts nothing.
    pub(crate) fn check_clock(&self) -> Result<(), GenerateError> {
        self.precise_tick().map(drop)
    }

    #[cold]
    fn fail<T>(&self, error: GenerateError) -> Result<T, GenerateError> {
        self.counters.errors.fetch_add(1, Ordering::Relaxed);
        crate::events::generate_error(self.name, self.worker(), &error);
        Err(error)
    }

    /// Takes up to `want` consecutive sequence numbers in one CAS; returns the first state
    /// taken and how many. Handles every case the hot path does not, blocking the thread
    /// while it waits.
    #[cold]
    #[inline(never)]
    fn take(&self, want: u64) -> Result<(u64, u64), GenerateError> {
        let mut waiting = Waiting::default();
        loop {
            match self.take_step(want, &mut waiting)? {
                Step::Taken(first, count) => return Ok((first, count)),
                Step::NextTick => backoff(&mut waiting.spins),
                Step::Sleep(pause) => std::thread::sleep(pause),
            }
        }
    }

    /// [`Generator::take`] for async code: the same steps, awaiting where it would block.
    #[cfg(feature = "tokio")]
    #[cold]
    #[inline(never)]
    async fn take_async(&self, want: u64) -> Result<(u64, u64), GenerateError> {
        let mut waiting = Waiting::default();
        loop {
            match self.take_step(want, &mut waiting)? {
                Step::Taken(first, count) => return Ok((first, count)),
                Step::NextTick => {
                    // Let the runtime's other tasks run first (one of them may be what moves
                    // the clock, or holds the next tick); then sleep, at the timer's
                    // resolution of a millisecond: about a tick.
                    waiting.spins = waiting.spins.saturating_add(1);
                    if waiting.spins < 64 {
                        tokio::task::yield_now().await;
                    } else {
                        tokio::time::sleep(Duration::from_micros(500)).await;
                    }
                }
                Step::Sleep(pause) => tokio::time::sleep(pause).await,
            }
        }
    }

    /// The next ID as a raw `i64`, for async code (feature `tokio`): the same hot path as
    /// [`Generator::next_raw`]; where that would block the thread (a spent sequence waiting
    /// for the next tick, a [`StepBack::Wait`] policy waiting for the clock), this awaits
    /// instead (`tokio::task::yield_now`, then `tokio::time::sleep`), so other tasks on the
    /// same runtime thread keep running. A high-water write (one `fsync` per reservation)
    /// still blocks, briefly.
    ///
    /// ```
    /// use typed_snowflake::{Generator, Layout};
    ///
    /// let generator = Generator::builder(Layout::new(41, 10, 12, 1_288_834_974_657)?).worker(3).build()?;
    /// let runtime = tokio::runtime::Builder::new_current_thread().enable_time().build()?;
    /// let (a, b) = runtime.block_on(async {
    ///     Ok::<_, typed_snowflake::GenerateError>((generator.next_raw_async().await?, generator.next_raw_async().await?))
    /// })?;
    /// assert!(b > a);
    /// Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[cfg(feature = "tokio")]
    pub async fn next_raw_async(&self) -> Result<i64, GenerateError> {
        self.next_with_async(&self.layout).await
    }

    /// [`Generator::next_raw_async`] with the layout as a constant, as [`Generator::next_with`].
    #[cfg(feature = "tokio")]
    #[inline]
    pub(crate) async fn next_with_async(&self, layout: &Layout) -> Result<i64, GenerateError> {
        debug_assert_eq!(*layout, self.layout, "a generator serves only the layout it was built with");
        match self.fast(layout) {
            Some(raw) => Ok(raw),
            None => self.take_async(1).await.map(|(first, _)| self.raw_of(first)),
        }
    }

    /// One attempt of the slow path: issues, fails, or says how to wait before the next
    /// attempt (the caller blocks or awaits). `waiting` carries what a call has counted and
    /// since when it waits across attempts.
    fn take_step(&self, want: u64, waiting: &mut Waiting) -> Result<Step, GenerateError> {
        loop {
            let mut behind = false;
            // The state first, then the clock. Read the other way round, a thread that read
            // the clock just before another thread issued in a newer tick would take that
            // tick for a clock step back: a false `ClockBackwards` under `StepBack::Error`, a
            // needless wait under `Wait`.
            //
            // Why a clock read after this load is not behind `cur`: whoever issued `cur` read
            // its clock (the published millisecond on the fast path, `Clock::now_ms` here)
            // before its CAS, and that CAS is Release on both paths. This Acquire load reads
            // it, or a later CAS of the state (a read-modify-write, so still in its release
            // sequence), so the issuer's clock read happens-before the one below. A clock
            // whose reading is one atomic that only grows then cannot read earlier here, by
            // read-read coherence: `MonotonicClock` (its precise reading is at least the
            // published millisecond it also loads), `ManualClock` moved only forward. A
            // clock that reads elsewhere (the OS wall clock) has only its own monotonicity;
            // when it breaks, the clock really stepped back. Uniqueness never depends on any
            // of this: a clock misread as behind costs a wait, an error under
            // `StepBack::Error`, or a borrowed tick, never a repeated ID.
            // `tests/generate_concurrency.rs` stresses this with many threads on a clock
            // that never steps back and `StepBack::Error`: a misread is an error there.
            let cur = self.hot.state.load(Ordering::Acquire);
            // The limit before the clock too: a limit raised past a resumed mark was raised
            // by a thread whose clock had passed the mark, so a clock read after it has too.
            let limit = self.limit.0.load(Ordering::Acquire);
            let now = match self.precise_tick() {
                Ok(now) => now,
                Err(e) => return self.fail(e),
            };
            let last = self.tick_in(cur);
            let seq = cur & self.max_seq;
            let (first, count) = if now > last {
                if now > limit {
                    self.extend_limit(now)?;
                    continue;
                }
                let start = self.start_seq();
                (self.state_of(now, 0, start) | self.worker_in(cur), want.min(self.max_seq - start + 1))
            } else if now == last {
                if seq < self.max_seq {
                    (cur + 1, want.min(self.max_seq - seq))
                } else {
                    // The sequence ran out within this tick: wait for the clock, re-reading
                    // it each time (never reuse, never wrap).
                    if !waiting.counted {
                        waiting.counted = true;
                        self.counters.exhausted_waits.fetch_add(1, Ordering::Relaxed);
                        crate::events::sequence_exhausted(self.name, self.worker());
                    }
                    return Ok(Step::NextTick);
                }
            } else if last > limit && last - now <= self.reserve_ticks() {
                // Resumed from a high-water mark (every tick this generator issued lies within
                // its limit), with the clock behind the mark by no more than a reservation: a
                // quick restart, not a step back. Wait for the clock as for a full tick; never
                // borrow ahead of it, which would run away under load.
                if last >= self.last_markable_tick() {
                    // No tick after the mark can be reserved: the wait would never end.
                    return self.fail(self.time_exhausted());
                }
                if !waiting.counted {
                    waiting.counted = true;
                    self.counters.exhausted_waits.fetch_add(1, Ordering::Relaxed);
                    crate::events::sequence_exhausted(self.name, self.worker());
                }
                return Ok(Step::NextTick);
            } else {
                // The clock reads earlier than the last issued tick (or, after a restart,
                // further behind the mark than a reservation: it was set back in between).
                behind = true;
                let behind_ms = i64::try_from(last - now).unwrap_or(i64::MAX).saturating_mul(self.unit_ms);
                match self.policy {
                    StepBack::Borrow { max_ahead } => {
                        if seq < self.max_seq {
                            (cur + 1, want.min(self.max_seq - seq))
                        } else {
                            let ahead_ms = behind_ms.saturating_add(self.unit_ms);
                            if u128::try_from(ahead_ms).unwrap_or(u128::MAX) > max_ahead.as_millis() {
                                self.step_back_seen(cur, cur, behind_ms);
                                return self.fail(GenerateError::ClockBackwards { behind_ms });
                            }
                            let next = last + 1;
                            if next > limit {
                                self.extend_limit(next)?;
                                continue;
                            }
                            let start = self.start_seq();
                            (self.state_of(next, 0, start) | self.worker_in(cur), want.min(self.max_seq - start + 1))
                        }
                    }
                    StepBack::Wait { max } => {
                        self.step_back_seen(cur, cur, behind_ms);
                        let started = *waiting.since.get_or_insert_with(Instant::now);
                        if u128::try_from(behind_ms).unwrap_or(u128::MAX) > max.as_millis() || started.elapsed() >= max
                        {
                            return self.fail(GenerateError::ClockBackwards { behind_ms });
                        }
                        let left = max.saturating_sub(started.elapsed());
                        return Ok(Step::Sleep(left.min(Duration::from_micros(200))));
                    }
                    StepBack::Error => {
                        self.step_back_seen(cur, cur, behind_ms);
                        return self.fail(GenerateError::ClockBackwards { behind_ms });
                    }
                }
            };
            let last_taken = first + (count - 1);
            if behind {
                // Before the CAS: a thread that sees the state it installs then sees the
                // mark too (the CAS is Release, the state load Acquire).
                let behind_ms = i64::try_from(last - now).unwrap_or(i64::MAX).saturating_mul(self.unit_ms);
                self.step_back_seen(cur, last_taken, behind_ms);
            }
            if self.hot.state.compare_exchange(cur, last_taken, Ordering::Release, Ordering::Relaxed).is_ok() {
                return Ok(Step::Taken(first, count));
            }
        }
    }

    /// Counts a clock step-back episode: the clock was seen behind the last issued tick at
    /// state `cur`, and this call leaves (or is about to try to leave) the state at `after`.
    /// A state above every such `after` was reached by IDs issued on time since, so the
    /// step back is a new episode; otherwise it is the episode already counted.
    fn step_back_seen(&self, cur: u64, after: u64, behind_ms: i64) {
        let mark = self.counters.step_back_mark.fetch_max(after, Ordering::Relaxed);
        if cur > mark {
            self.counters.clock_step_backs.fetch_add(1, Ordering::Relaxed);
            crate::events::clock_step_back(self.name, self.worker(), behind_ms);
        }
    }

    #[cold]
    #[inline(never)]
    fn next_slow(&self) -> Result<i64, GenerateError> {
        self.take(1).map(|(first, _)| self.raw_of(first))
    }

    /// The reservation in ticks (0 without a high-water file): how far a predecessor's mark
    /// can lie ahead of the clock after a restart in which the clock did not step back.
    fn reserve_ticks(&self) -> u64 {
        let reserve = self.high_water.as_ref().map_or(0, |hw| hw.reserve_ticks);
        // A leased worker ID's previous holder recorded at most a lease step past its clock,
        // which agreed with ours within the lease's clock tolerance.
        let lease = self
            .lease
            .as_ref()
            .map_or(0, |lease| lease.resume_window_ms().unsigned_abs().div_ceil(self.unit_ms.unsigned_abs().max(1)));
        reserve.max(lease)
    }

    /// The last tick a high-water mark can name. The mark is Unix milliseconds in an `i64`;
    /// a time field that outlasts them (61 or more time bits counting seconds) has ticks
    /// beyond `i64::MAX`, and a mark saturated there would read back as an earlier tick
    /// than the one reserved: a restart would then repeat the IDs in between.
    fn last_markable_tick(&self) -> u64 {
        self.layout.tick_of(i64::MAX).unwrap_or(self.layout.max_ticks())
    }

    /// Raises the issuing limit to cover `tick`, the tick about to be issued: writes a new
    /// high-water reservation, or fails at the end of the time field.
    ///
    /// The reservation runs `reserve` past `tick`, which is the clock's tick except while
    /// `Borrow` runs ahead after a step back; then too there is one write per reservation.
    /// A restarted generator waits for its clock to pass the mark instead of borrowing past
    /// it, so restarts quicker than `reserve` do not push the mark further ahead each time.
    fn extend_limit(&self, tick: u64) -> Result<(), GenerateError> {
        if tick > self.layout.max_ticks() {
            return self.fail(self.time_exhausted());
        }
        if self.high_water.is_none() && self.lease.is_none() {
            // Nothing to reserve or check: the limit is the end of the time field.
            self.limit.0.store(self.layout.max_ticks(), Ordering::Release);
            return Ok(());
        }
        let _guard = self.extend_lock.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        if self.limit.0.load(Ordering::Relaxed) >= tick {
            return Ok(());
        }
        let mut new_limit = self.layout.max_ticks();
        if let Some(lease) = &self.lease {
            match self.lease_limit(lease.as_ref(), tick)? {
                Some(limit) => new_limit = limit,
                // Moved to a new grant: the caller takes its state and tries again.
                None => return Ok(()),
            }
        }
        if let Some(hw) = &self.high_water {
            let end = self.last_markable_tick();
            if tick > end {
                return self.fail(self.time_exhausted());
            }
            // Tick 0 is never issued under a reservation (see `build`), so 0 reserves nothing.
            if hw.reserved.load(Ordering::Relaxed) < tick {
                let reserved = tick.saturating_add(hw.reserve_ticks).min(end);
                // The last millisecond of the reserved tick; for the tick that holds
                // `i64::MAX`, `i64::MAX` itself. Either reads back as exactly `reserved`.
                let mark_ms = self.layout.tick_start_ms(reserved).saturating_add(self.unit_ms - 1);
                match raise_mark(&hw.path, mark_ms) {
                    Ok(true) => {
                        self.counters.high_water_writes.fetch_add(1, Ordering::Relaxed);
                        crate::events::high_water_written(self.name, self.worker(), &hw.path, mark_ms);
                    }
                    // The file already holds a mark at least this high: it covers the reservation.
                    Ok(false) => {}
                    Err(e) => return self.fail(e),
                }
                hw.reserved.store(reserved, Ordering::Relaxed);
            }
            new_limit = new_limit.min(hw.reserved.load(Ordering::Relaxed));
        }
        // Release: a thread that sees the new limit also sees that the mark is on disk and
        // that the lease recorded it.
        self.limit.0.store(new_limit, Ordering::Release);
        // A lease lost or released meanwhile dropped the limit to 0 before this store, or is
        // seen here: either way the limit ends at 0.
        if let Some(lease) = &self.lease
            && !lease.holds(self.lease_epoch.load(Ordering::Relaxed))
        {
            self.limit.0.store(0, Ordering::Release);
        }
        Ok(())
    }

    /// The last tick the lease lets this generator issue in, at least `tick`, or the fence;
    /// `None` when the generator moved to the lease's new grant instead.
    fn lease_limit(&self, lease: &dyn Fence, tick: u64) -> Result<Option<u64>, GenerateError> {
        let fenced =
            |reason| GenerateError::Fenced { namespace: lease.namespace().into(), worker: self.worker(), reason };
        // From the later of the clock and the tick asked for: `Borrow` and a resumed floor
        // may ask for ticks ahead of the clock, within the fence deadline.
        let from_ms = self.clock.now_ms().max(self.layout.tick_start_ms(tick));
        let until = match lease.grant_until(from_ms, self.unit_ms, self.lease_epoch.load(Ordering::Relaxed)) {
            Ok(until) => until,
            Err(Refusal::Fenced(reason)) => return self.fail(fenced(reason)),
            Err(Refusal::Switch(view)) => return self.switch_to(view).map(|()| None),
        };
        // The last tick that ends at or before `until`.
        let last = match self.layout.tick_of(until) {
            Ok(t) if self.layout.tick_start_ms(t).saturating_add(self.unit_ms - 1) <= until => Some(t),
            Ok(t) => t.checked_sub(1),
            Err(_) => Some(self.layout.max_ticks()),
        };
        match last {
            Some(last) if last >= tick => Ok(Some(last)),
            _ => {
                self.fail(fenced(FenceReason::ClockAhead { now_ms: self.layout.tick_start_ms(tick), bound_ms: until }))
            }
        }
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

/// What a slow-path attempt leads to.
enum Step {
    /// Issued: the first state taken, and how many.
    Taken(u64, u64),
    /// The tick's sequence is spent (or, after a restart, the clock has not passed the
    /// mark): wait a moment for the next tick, then try again.
    NextTick,
    /// The clock is behind and the `Wait` policy waits for it: pause at most this long.
    Sleep(Duration),
}

/// What one call of the slow path carries across its attempts.
#[derive(Default)]
struct Waiting {
    /// When a `Wait` policy started waiting.
    since: Option<Instant>,
    /// Whether this call's wait for the next tick was counted.
    counted: bool,
    /// Attempts that found the tick spent, for the back-off.
    spins: u32,
}

/// The wait for the next tick: spin (re-reading the clock each time) through about one
/// millisecond, so a full tick hands over to the next one without losing it, then yield,
/// then sleep in 50 µs steps (coarse units, or a clock that does not move).
fn backoff(spins: &mut u32) {
    *spins = spins.saturating_add(1);
    if *spins < 4096 {
        std::hint::spin_loop();
    } else if *spins < 4096 + 64 {
        std::thread::yield_now();
    } else {
        std::thread::sleep(Duration::from_micros(50));
    }
}

/// A small, fast, thread-local xorshift: enough to hide per-tick volume, not a secret.
fn random_below(bound: u64) -> u64 {
    use std::cell::Cell;
    thread_local! {
        static STATE: Cell<u64> = Cell::new({
            let seed = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0x9E37_79B9_7F4A_7C15, |d| u64::try_from(d.as_nanos() & u128::from(u64::MAX)).unwrap_or(1));
            let addr = &seed as *const u64 as usize as u64;
            (seed ^ addr.rotate_left(32)) | 1
        });
    }
    STATE.with(|s| {
        let mut x = s.get();
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        s.set(x);
        x % bound
    })
}

const MARK_HEADER: &str = "typed-snowflake high-water v1";

/// Reads a high-water file: `None` when it does not exist; an error when it cannot be
/// read or is not exactly what [`write_mark`] writes.
fn read_mark(path: &Path) -> Result<Option<i64>, GenerateError> {
    let error = |reason: String| GenerateError::HighWater { path: path.to_owned(), reason, source: None };
    let text = match fs::read_to_string(path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => {
            return Err(GenerateError::HighWater {
                path: path.to_owned(),
                reason: "cannot be read".into(),
                source: Some(e.into()),
            });
        }
    };
    let mut lines = text.split('\n');
    let (Some(MARK_HEADER), Some(value), Some(""), None) = (lines.next(), lines.next(), lines.next(), lines.next())
    else {
        return Err(error(format!("is corrupt: expected \"{MARK_HEADER}\" and a Unix millisecond, found {text:?}")));
    };
    match value.parse::<i64>() {
        Ok(ms) if ms >= 0 && value.bytes().all(|b| b.is_ascii_digit()) => Ok(Some(ms)),
        _ => Err(error(format!("is corrupt: {value:?} is not a Unix millisecond"))),
    }
}

/// Raises the mark in a high-water file to at least `mark_ms`, never lowering it; returns
/// whether it wrote the file.
///
/// Two generators of one process can share a file (given the same path): the file then
/// holds the larger of their reservations, which covers both, and a restart resumes above
/// both. One process-wide lock orders the writes (they are rare: one per reservation).
fn raise_mark(path: &Path, mark_ms: i64) -> Result<bool, GenerateError> {
    static WRITES: Mutex<()> = Mutex::new(());
    let _guard = WRITES.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    // A file that cannot be read now was readable at build (or absent): write ours.
    let on_disk = read_mark(path).ok().flatten().unwrap_or(i64::MIN);
    if on_disk >= mark_ms {
        return Ok(false);
    }
    write_mark(path, mark_ms).map(|()| true)
}

/// Writes a high-water file atomically and durably: a temporary file, `fsync`, rename,
/// `fsync` of the directory.
fn write_mark(path: &Path, mark_ms: i64) -> Result<(), GenerateError> {
    let error = |what: &str, e: std::io::Error| GenerateError::HighWater {
        path: path.to_owned(),
        reason: what.to_owned(),
        source: Some(e.into()),
    };
    // `<name>.tmp` beside the file, never `with_extension`: a mark named `x.tmp` would
    // otherwise be its own temporary file, truncated in place.
    let mut tmp_name = path.file_name().map(std::ffi::OsStr::to_os_string).unwrap_or_default();
    tmp_name.push(".tmp");
    let tmp = path.with_file_name(tmp_name);
    let mut file = fs::File::create(&tmp).map_err(|e| error("cannot create the temporary file", e))?;
    file.write_all(format!("{MARK_HEADER}\n{mark_ms}\n").as_bytes()).map_err(|e| error("cannot write", e))?;
    file.sync_all().map_err(|e| error("cannot fsync", e))?;
    drop(file);
    fs::rename(&tmp, path).map_err(|e| error("cannot rename the temporary file", e))?;
    // The rename is durable only once the directory entry is: fsync the directory
    // (Unix; elsewhere a directory cannot be opened as a file, and the rename is all there is).
    #[cfg(unix)]
    {
        let dir = path.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
        let dir = fs::File::open(dir).map_err(|e| error("cannot open the directory to fsync it", e))?;
        dir.sync_all().map_err(|e| error("cannot fsync the directory", e))?;
    }
    Ok(())
}
