//! Configures a [`Generator`]: the worker ID or the lease, the high-water file, and the
//! settings a [`GeneratorBuilder`] shares with the registry's builder; `build` checks them
//! and reads the high-water file.

use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use super::high_water::{HighWater, check_reserve, read_mark};
use super::{Counters, DEFAULT_BATCH_LIMIT, Generator, Hot};
use crate::clock::Clock;
use crate::error::GenerateError;
use crate::fence::{Fence, Limit};
use crate::layout::Layout;

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
    /// [`MAX_HIGH_WATER_RESERVE`](crate::MAX_HIGH_WATER_RESERVE); `build` refuses a longer one.
    ///
    /// After a restart quicker than `reserve`, the clock lies at most `reserve` behind the
    /// mark: the generator waits for it to pass the mark (as for a full tick), then issues
    /// at the clock's pace. A clock further behind was set back across the restart: its
    /// [`StepBack`](crate::StepBack) policy applies.
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
}
