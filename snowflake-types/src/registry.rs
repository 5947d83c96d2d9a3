//! The process-wide registry: one configuration (worker source, clock, policies), and
//! one generator per ID type, created on first use.

use std::path::PathBuf;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use crate::clock::Clock;
use crate::error::{GenerateError, RegistryError, WorkerError};
use crate::generator::{DEFAULT_BATCH_LIMIT, Generator, GeneratorStats};
use crate::layout::Layout;
use crate::worker::WorkerSource;

#[derive(Debug)]
struct Config {
    worker: u64,
    source: WorkerSource,
    clock: Option<Arc<dyn Clock>>,
    batch_limit: usize,
    random_start: u64,
    high_water: Option<(PathBuf, Duration)>,
}

static CONFIG: OnceLock<Result<Config, WorkerError>> = OnceLock::new();
static GENERATORS: Mutex<Vec<&'static Generator>> = Mutex::new(Vec::new());

/// The process-wide configuration of every derived type's generator.
///
/// Install it once at start, before the first ID is generated:
///
/// ```
/// use typed_snowflake::{Registry, WorkerSource};
///
/// Registry::builder()
///     .worker(WorkerSource::Fixed(3))
///     .batch_limit(10_000)
///     .install()?;
/// Ok::<(), Box<dyn std::error::Error>>(())
/// ```
///
/// Without `install()`, the first generation takes the default: the worker ID from
/// `SNOWFLAKE_WORKER_ID` (an unparsable value makes every generation fail with an error
/// that names it), or 0 when it is unset; the [`MonotonicClock`](crate::clock::MonotonicClock);
/// batches up to [`DEFAULT_BATCH_LIMIT`]; no random sequence start; no high-water file.
#[derive(Debug, Clone, Copy)]
pub struct Registry;

impl Registry {
    /// A builder with the default configuration.
    pub fn builder() -> RegistryBuilder {
        RegistryBuilder {
            source: WorkerSource::default(),
            clock: None,
            batch_limit: DEFAULT_BATCH_LIMIT,
            random_start: 0,
            high_water: None,
        }
    }

    /// The worker ID in force (resolving the default configuration if nothing was installed).
    pub fn worker_id() -> Result<u64, WorkerError> {
        config().map(|c| c.worker)
    }

    /// The source the worker ID came from.
    pub fn worker_source() -> Result<WorkerSource, WorkerError> {
        config().map(|c| c.source.clone())
    }

    /// The counters of every generator created so far, one entry per ID type.
    ///
    /// ```
    /// use typed_snowflake::{Registry, SnowflakeId};
    ///
    /// #[derive(SnowflakeId)]
    /// #[layout(time = 41, worker = 10, seq = 12, epoch = "2020-01-01")]
    /// struct EventId(i64);
    ///
    /// EventId::generate();
    /// let stats = Registry::stats();
    /// assert!(stats.iter().any(|s| s.name == "EventId" && s.errors == 0));
    /// ```
    pub fn stats() -> Vec<GeneratorStats> {
        GENERATORS.lock().unwrap_or_else(|p| p.into_inner()).iter().map(|g| g.stats()).collect()
    }
}

/// Configures the [`Registry`]. See [`Registry::builder`].
#[derive(Debug, Clone)]
#[must_use]
pub struct RegistryBuilder {
    source: WorkerSource,
    clock: Option<Arc<dyn Clock>>,
    batch_limit: usize,
    random_start: u64,
    high_water: Option<(PathBuf, Duration)>,
}

impl RegistryBuilder {
    /// Where the worker ID comes from (default [`WorkerSource::EnvOrZero`]).
    pub fn worker(mut self, source: WorkerSource) -> Self {
        self.source = source;
        self
    }
    /// A fixed worker ID.
    pub fn worker_id(self, worker: u64) -> Self {
        self.worker(WorkerSource::Fixed(worker))
    }
    /// The clock every generator reads (default [`MonotonicClock`](crate::clock::MonotonicClock)).
    pub fn clock(mut self, clock: impl Clock) -> Self {
        self.clock = Some(Arc::new(clock));
        self
    }
    /// The largest batch `generate_batch` accepts (default [`DEFAULT_BATCH_LIMIT`]).
    pub fn batch_limit(mut self, limit: usize) -> Self {
        self.batch_limit = limit;
        self
    }
    /// Start each tick's sequence at a random value in `0..=max` (clamped to half of each
    /// type's sequence space), Leaf's defence against reading business volume off
    /// consecutive IDs. It costs up to `max` IDs of each tick's capacity. 0 turns it off.
    pub fn random_sequence_start(mut self, max: u64) -> Self {
        self.random_start = max;
        self
    }
    /// Keep a high-water file per ID type in `dir` (`<dir>/<Type>-<worker>.hwm`), reserving
    /// `reserve` of time ahead with each `fsync`'d write, so a restart never repeats an ID
    /// even after the clock stepped back. The directory is created if missing; a `reserve`
    /// above [`MAX_HIGH_WATER_RESERVE`](crate::MAX_HIGH_WATER_RESERVE) is refused by `install()`.
    ///
    /// A longer `reserve` means fewer writes (one per `reserve` per type) and, after a
    /// quick restart, a longer wait: the new generator waits for the clock to pass the
    /// mark (at most `reserve` ahead of it), as for a full tick, then issues at the clock's
    /// pace, so quick restarts neither run ahead of the clock nor add up. A clock further
    /// behind the mark than that (it was set back across the restart) gets its
    /// [`StepBack`](crate::StepBack) policy: by default, errors until it catches up. No
    /// clock is moved. Two types of the same name share a file, which then holds the
    /// larger reservation.
    pub fn high_water(mut self, dir: impl Into<PathBuf>, reserve: Duration) -> Self {
        self.high_water = Some((dir.into(), reserve));
        self
    }

    /// Installs the configuration for the whole process. Fails with
    /// [`RegistryError::AlreadyInstalled`] if a configuration is in force already
    /// (installed, or taken by default at the first generation or by
    /// [`Registry::worker_id`]), or if the worker source or high-water directory is
    /// unusable; a refused configuration leaves nothing installed.
    pub fn install(self) -> Result<(), RegistryError> {
        let worker = self.source.resolve()?;
        if let Some((dir, reserve)) = &self.high_water {
            crate::generator::check_reserve(*reserve)
                .map_err(|reason| RegistryError::HighWater { path: dir.display().to_string(), reason })?;
            std::fs::create_dir_all(dir)
                .map_err(|e| RegistryError::HighWater { path: dir.display().to_string(), reason: e.to_string() })?;
        }
        let config = Config {
            worker,
            source: self.source,
            clock: self.clock,
            batch_limit: self.batch_limit,
            random_start: self.random_start,
            high_water: self.high_water,
        };
        CONFIG.set(Ok(config)).map_err(|_| RegistryError::AlreadyInstalled)
    }
}

fn config() -> Result<&'static Config, WorkerError> {
    CONFIG
        .get_or_init(|| {
            let source = WorkerSource::default();
            Ok(Config {
                worker: source.resolve()?,
                source,
                clock: None,
                batch_limit: DEFAULT_BATCH_LIMIT,
                random_start: 0,
                high_water: None,
            })
        })
        .as_ref()
        .map_err(Clone::clone)
}

/// A generator for one ID type, from the configuration in force.
pub(crate) fn generator_for(layout: Layout, name: &'static str) -> Result<Generator, GenerateError> {
    let config = config()?;
    let mut builder = Generator::builder(layout)
        .name(name)
        .worker(config.worker)
        .batch_limit(config.batch_limit)
        .random_sequence_start(config.random_start);
    if let Some(clock) = &config.clock {
        builder = builder.shared_clock(Arc::clone(clock));
    }
    if let Some((dir, reserve)) = &config.high_water {
        builder = builder.high_water(dir.join(format!("{name}-{}.hwm", config.worker)), *reserve);
    }
    builder.build()
}

pub(crate) fn track(generator: &'static Generator) {
    GENERATORS.lock().unwrap_or_else(|p| p.into_inner()).push(generator);
}
