//! The process-wide registry: one configuration (worker source, clock, policies), and
//! one generator per ID type, created on first use.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};
use std::time::Duration;

use crate::error::{GenerateError, RegistryError, WorkerError};
use crate::generator::{Generator, GeneratorStats, Settings, settings_setters};
use crate::layout::Layout;
use crate::worker::WorkerSource;
use crate::worker::lease::{LeaseError, LeaseStats, LeaseStatus, WorkerLease};

#[derive(Debug)]
struct Config {
    worker: u64,
    source: WorkerSource,
    settings: Settings,
    high_water: Option<(PathBuf, Duration)>,
    lease: Option<WorkerLease>,
}

impl Config {
    /// The configuration of the environment: `SNOWFLAKE_WORKER_LEASE` (a lease, acquired
    /// now, from a space as wide as the worker field of `field`, the type named with its
    /// layout, unless `SNOWFLAKE_WORKER_SPACE` says otherwise, which must not be wider), else
    /// `SNOWFLAKE_WORKER_ID`, else worker 0.
    fn from_environment(field: Option<(&'static str, &Layout)>) -> Result<Config, WorkerError> {
        let settings = Settings::default();
        let clock = settings.clock.clone().unwrap_or_else(|| Arc::new(crate::clock::MonotonicClock));
        let (source, lease) = crate::worker::from_environment(field, clock)?;
        Ok(Config { worker: source.resolve()?, source, settings, high_water: None, lease })
    }

    /// Without `install()`, a lease is acquired only when a generator needs it; reading the
    /// configuration before that tells what the environment says without acquiring (a lease
    /// variable that is set but blank is the error generating would give).
    fn peek_environment() -> Result<Config, WorkerError> {
        if crate::worker::lease_url_from_environment()?.is_some() {
            return Err(WorkerError::Conflict {
                reason: format!(
                    "the worker ID will be leased from {} at the first generation; install() a lease to know it before",
                    crate::worker::WORKER_LEASE_ENV
                ),
            });
        }
        Config::from_environment(None)
    }
}

/// Where the process stands. A configuration becomes final when the first generator is
/// built from it, not when it is read.
#[derive(Default)]
struct State {
    /// What `install()` left: a configuration, or the reason it was refused (so that
    /// generation fails loudly instead of falling back to the defaults).
    installed: Option<Result<Arc<Config>, RegistryError>>,
    /// The configuration generators were built from; `install()` is refused from then on.
    in_use: Option<(Arc<Config>, Origin)>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Origin {
    Installed,
    Defaults,
}

static STATE: Mutex<State> = Mutex::new(State { installed: None, in_use: None });
static GENERATORS: Mutex<Vec<&'static Generator>> = Mutex::new(Vec::new());

fn state() -> MutexGuard<'static, State> {
    STATE.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

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
/// assert_eq!(Registry::worker_id()?, 3);
/// Ok::<(), Box<dyn std::error::Error>>(())
/// ```
///
/// Then call the start-up check, [`Registry::check`], with the ID types the process
/// generates: it builds their generators and reports every problem at once, before the
/// first request.
///
/// Without `install()`, the first generation takes the default: the worker ID from
/// `SNOWFLAKE_WORKER_ID` (an unparsable value makes every generation fail with an error
/// that names it), or 0 when it is unset; the [`MonotonicClock`](crate::clock::MonotonicClock);
/// batches up to [`DEFAULT_BATCH_LIMIT`](crate::DEFAULT_BATCH_LIMIT); no random sequence
/// start; no high-water file.
///
/// Reading the configuration ([`Registry::worker_id`], [`Registry::worker_source`],
/// [`Registry::stats`]) never fixes it: only the first generator built from it does. An
/// `install()` that fails leaves the registry failing: every generation returns the
/// install's error (wrapped in [`GenerateError::Registry`]) until an `install()` succeeds,
/// so a replica whose configuration was refused never issues IDs under the defaults.
#[derive(Debug, Clone, Copy)]
pub struct Registry;

impl Registry {
    /// A builder with the default configuration.
    pub fn builder() -> RegistryBuilder {
        RegistryBuilder {
            source: WorkerSource::default(),
            settings: Settings::default(),
            high_water: None,
            lease: None,
        }
    }

    /// The worker ID in force: the one generators use or will use (with a lease, the one
    /// it holds now: a lease acquired again after a loss may hold another). Reading it fixes
    /// nothing.
    pub fn worker_id() -> Result<u64, RegistryError> {
        Self::read(|config| config.lease.as_ref().map_or(config.worker, WorkerLease::worker))
    }

    /// The source the worker ID comes from.
    pub fn worker_source() -> Result<WorkerSource, RegistryError> {
        Self::read(|config| config.source.clone())
    }

    fn read<R>(f: impl FnOnce(&Config) -> R) -> Result<R, RegistryError> {
        let state = state();
        if let Some((config, _)) = &state.in_use {
            return Ok(f(config));
        }
        match &state.installed {
            Some(Ok(config)) => Ok(f(config)),
            Some(Err(error)) => Err(error.clone()),
            None => Ok(f(&Config::peek_environment()?)),
        }
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

    /// The counters of the worker-ID lease in use, if the worker ID is leased.
    pub fn lease_stats() -> Option<LeaseStats> {
        Self::lease_in_use().as_ref().map(WorkerLease::stats)
    }

    /// Where the worker-ID lease in use stands, if the worker ID is leased: issuing, fenced
    /// (why, since when), being acquired again after a loss, or released. For a readiness
    /// probe: ready while [`LeaseStatus::Issuing`] (or when there is no lease).
    ///
    /// ```
    /// use typed_snowflake::Registry;
    /// use typed_snowflake::worker::lease::LeaseStatus;
    ///
    /// fn ready() -> bool {
    ///     matches!(Registry::lease_status(), None | Some(LeaseStatus::Issuing { .. }))
    /// }
    /// assert!(ready());
    /// ```
    pub fn lease_status() -> Option<LeaseStatus> {
        Self::lease_in_use().as_ref().map(WorkerLease::status)
    }

    /// A guard that calls [`Registry::shutdown`] when dropped: hold it in `main`, and the
    /// lease is released however `main` ends, by its last line, by a `?` that returns an
    /// error early, or by a panic that unwinds. The registry keeps its lease in a `static`,
    /// which Rust never drops; without a guard (or a `shutdown()` call on every way out), a
    /// process that ends holds its worker ID until the lease's TTL runs out. A release that
    /// fails is logged as a lease event; the TTL then frees the worker ID.
    ///
    /// `std::process::exit` and a signal that kills the process skip every destructor,
    /// this one too: handle SIGTERM by returning from `main` (or by calling
    /// [`Registry::shutdown`] yourself).
    ///
    /// ```
    /// use typed_snowflake::Registry;
    ///
    /// fn main() -> Result<(), Box<dyn std::error::Error>> {
    ///     let _shutdown = Registry::shutdown_guard();
    ///     Registry::builder().worker_id(3).install()?;
    ///     // ... serve; any `?` from here on still releases a lease ...
    ///     Ok(())
    /// }
    /// # main().unwrap();
    /// ```
    pub fn shutdown_guard() -> ShutdownGuard {
        ShutdownGuard { _private: () }
    }

    /// Releases the worker-ID lease in use, if any, blocking until the store answers: every
    /// generator stops issuing ([`GenerateError::Fenced`]), the last timestamp they may have
    /// issued is recorded, and the worker ID is free for the next process at once. Call it
    /// on shutdown, after the last ID. Without a lease, it does nothing.
    ///
    /// Whatever it returns, no generator on the lease issues an ID afterwards. It returns
    /// `Ok(())` when the worker ID was released, when there is no lease, and when the lease
    /// was released already (an earlier `shutdown`, or [`WorkerLease::release`] on a clone).
    /// The errors:
    ///
    /// - [`LeaseError::Lost`]: the store says the grant is not this process's any more (it
    ///   expired during an outage the lease had not noticed yet, or the store lost it).
    ///   Nothing is changed in the store: the worker ID is not this process's to free. A lease
    ///   that had already found itself lost, and was being acquired again, holds nothing, and
    ///   its shutdown is `Ok(())`.
    /// - [`LeaseError::Store`]: the store answered with an error, or could not be reached;
    ///   the message ends with the driver's error.
    /// - [`LeaseError::Timeout`]: the store did not answer within its timeout; the release
    ///   may still have taken effect on the server.
    ///
    /// After `Store` or `Timeout`, the worker ID frees itself when the lease's TTL runs out
    /// without a renewal, as after a crash. A [`LeaseStore`](crate::worker::lease::LeaseStore)
    /// of your own may return any other [`LeaseError`] from its `release`; this method passes
    /// it on.
    pub fn shutdown() -> Result<(), LeaseError> {
        match Self::lease_in_use() {
            Some(lease) => lease.release(),
            None => Ok(()),
        }
    }

    /// [`Registry::shutdown`] for async code, with the same outcomes and errors.
    pub async fn shutdown_async() -> Result<(), LeaseError> {
        match Self::lease_in_use() {
            Some(lease) => lease.release_async().await,
            None => Ok(()),
        }
    }

    fn lease_in_use() -> Option<WorkerLease> {
        let state = state();
        match (&state.in_use, &state.installed) {
            (Some((config, _)), _) | (None, Some(Ok(config))) => config.lease.clone(),
            _ => None,
        }
    }
}

/// Releases the registry's worker-ID lease when dropped: see [`Registry::shutdown_guard`].
#[derive(Debug)]
#[must_use = "the lease is released when the guard is dropped: bind it (`let _shutdown = ...`) for the life of main"]
pub struct ShutdownGuard {
    _private: (),
}

impl Drop for ShutdownGuard {
    fn drop(&mut self) {
        // A failed release is a lease event already; the TTL frees the worker ID.
        let _ = Registry::shutdown();
    }
}

/// Releases the lease the start-up check acquired from the environment, after the check
/// failed: the process is about to stop, and its worker ID should not stay held for a TTL.
/// A lease the application installed is its own to release.
pub(crate) fn release_lease_from_environment() {
    let lease = {
        let state = state();
        match &state.in_use {
            Some((config, Origin::Defaults)) => config.lease.clone(),
            _ => None,
        }
    };
    if let Some(lease) = lease {
        let _ = lease.release();
    }
}

/// Configures the [`Registry`]. See [`Registry::builder`].
#[derive(Debug, Clone)]
#[must_use]
pub struct RegistryBuilder {
    source: WorkerSource,
    settings: Settings,
    high_water: Option<(PathBuf, Duration)>,
    lease: Option<WorkerLease>,
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
    /// The worker ID of a lease, which every generator then checks (see
    /// [`WorkerLease`]): acquire it first, blocking or in async code, then install.
    ///
    /// ```no_run
    /// use typed_snowflake::Registry;
    /// use typed_snowflake::worker::lease::{RedisLeaseStore, WorkerLease};
    ///
    /// # async fn start() -> Result<(), Box<dyn std::error::Error>> {
    /// let store = RedisLeaseStore::open("redis://127.0.0.1:6379")?;
    /// let lease = WorkerLease::builder(store).namespace("shop").worker_bits(5).acquire_async().await?;
    /// Registry::builder().worker_lease(lease).install()?;
    /// // ... serve ...
    /// Registry::shutdown_async().await?;
    /// # Ok(()) }
    /// ```
    pub fn worker_lease(mut self, lease: WorkerLease) -> Self {
        self.source = WorkerSource::Leased {
            namespace: lease.namespace().to_owned(),
            store: lease.store().to_owned(),
            worker: lease.worker(),
        };
        self.lease = Some(lease);
        self
    }
    settings_setters!();
    /// Keep a high-water file per ID type in `dir` (`<dir>/<module path>.<Type>-<worker>.hwm`,
    /// e.g. `shop.orders.OrderId-3.hwm`; a file of an earlier version, `<Type>-<worker>.hwm`,
    /// is read while the type's own does not exist yet), reserving
    /// `reserve` of time ahead with each `fsync`'d write, so a restart never repeats an ID
    /// even after the clock stepped back. The directory is created if missing; an empty
    /// path, or a `reserve` above [`MAX_HIGH_WATER_RESERVE`](crate::MAX_HIGH_WATER_RESERVE),
    /// is refused by `install()`.
    ///
    /// A longer `reserve` means fewer writes (one per `reserve` per type) and, after a
    /// quick restart, a longer wait: the new generator waits for the clock to pass the
    /// mark (at most `reserve` ahead of it), as for a full tick, then issues at the clock's
    /// pace, so quick restarts neither run ahead of the clock nor add up. A clock further
    /// behind the mark than that (it was set back across the restart) gets its
    /// [`StepBack`](crate::StepBack) policy: by default, errors until it catches up. No
    /// clock is moved.
    pub fn high_water(mut self, dir: impl Into<PathBuf>, reserve: Duration) -> Self {
        self.high_water = Some((dir.into(), reserve));
        self
    }

    /// Installs the configuration for the whole process.
    ///
    /// Fails with [`RegistryError::AlreadyInstalled`] once a generator has been built
    /// (from an installed configuration or from the defaults); before that, a later
    /// `install()` replaces an earlier one. A worker source or high-water directory that
    /// cannot be used is an error, and it stays in force: until an `install()` succeeds,
    /// every generation fails with it rather than fall back to the defaults.
    pub fn install(self) -> Result<(), RegistryError> {
        let mut state = state();
        if let Some((config, origin)) = &state.in_use {
            return Err(RegistryError::AlreadyInstalled {
                worker: config.worker,
                from_defaults: *origin == Origin::Defaults,
            });
        }
        let outcome = self.into_config().map(Arc::new);
        state.installed = Some(outcome.clone());
        outcome.map(drop)
    }

    fn into_config(self) -> Result<Config, RegistryError> {
        let worker = self.source.resolve()?;
        if let Some((dir, reserve)) = &self.high_water {
            if dir.as_os_str().is_empty() {
                return Err(RegistryError::HighWater {
                    path: dir.clone(),
                    reason: "the directory is an empty path".into(),
                    source: None,
                });
            }
            crate::generator::check_reserve(*reserve).map_err(|reason| RegistryError::HighWater {
                path: dir.clone(),
                reason,
                source: None,
            })?;
            std::fs::create_dir_all(dir).map_err(|e| RegistryError::HighWater {
                path: dir.clone(),
                reason: "cannot be created".into(),
                source: Some(e.into()),
            })?;
        }
        Ok(Config {
            worker,
            source: self.source,
            settings: self.settings,
            high_water: self.high_water,
            lease: self.lease,
        })
    }
}

/// Fixes the configuration in force, as the first generation would; the type `name` with
/// `layout` sizes the worker-ID space an environment-configured lease is taken from, and
/// bounds `SNOWFLAKE_WORKER_SPACE`. For the start-up check.
pub(crate) fn fix_config(layout: &Layout, name: &'static str) -> Result<(), GenerateError> {
    config_in_use(layout, name).map(drop)
}

/// The configuration generators are built from, fixed by the first call (for the type `name`
/// with `layout`, which an environment-configured lease must fit).
fn config_in_use(layout: &Layout, name: &'static str) -> Result<Arc<Config>, GenerateError> {
    let mut state = state();
    if let Some((config, _)) = &state.in_use {
        return Ok(Arc::clone(config));
    }
    let (config, origin) = match &state.installed {
        Some(Ok(config)) => (Arc::clone(config), Origin::Installed),
        Some(Err(error)) => return Err(GenerateError::Registry(error.clone())),
        None => {
            let config = Config::from_environment(Some((name, layout)))?;
            if config.source == WorkerSource::EnvOrZero && std::env::var_os(crate::worker::WORKER_ID_ENV).is_none() {
                crate::events::default_worker_zero();
            }
            (Arc::new(config), Origin::Defaults)
        }
    };
    state.in_use = Some((Arc::clone(&config), origin));
    Ok(config)
}

/// The high-water file of an ID type in `dir`: `<path>-<worker>.hwm`, where `path` is the
/// type's full path with `::` written `.` (`shop.orders.Id-3.hwm`), so two types of the
/// same name in different modules keep separate marks. Rust names hold no `.`, so the file
/// names of two types never collide.
pub(crate) fn high_water_file(dir: &Path, path: &str, worker: u64) -> PathBuf {
    dir.join(format!("{}-{worker}.hwm", path.replace("::", ".")))
}

/// The file earlier versions wrote, `<Type>-<worker>.hwm`, keyed by the name alone: read
/// when the type's own file does not exist yet, so an upgrade resumes above its mark.
pub(crate) fn legacy_high_water_file(dir: &Path, name: &str, worker: u64) -> PathBuf {
    dir.join(format!("{name}-{worker}.hwm"))
}

/// A generator for one ID type, from the configuration in force.
fn generator_for(layout: Layout, name: &'static str, path: &'static str) -> Result<Generator, GenerateError> {
    let config = config_in_use(&layout, name)?;
    let mut builder = Generator::builder(layout).name(name).worker(config.worker).settings(config.settings.clone());
    if let Some(lease) = &config.lease {
        builder = builder.lease(lease.clone());
    }
    if let Some((dir, reserve)) = &config.high_water {
        builder = builder
            .high_water(high_water_file(dir, path, config.worker), *reserve)
            .high_water_fallback(legacy_high_water_file(dir, name, config.worker));
    }
    builder.build()
}

/// The per-type generator: a `static` in the derived code, filled on first use from the
/// [`Registry`].
#[doc(hidden)]
#[derive(Debug)]
pub struct GeneratorSlot {
    cell: OnceLock<Generator>,
}

impl GeneratorSlot {
    /// An empty slot.
    pub const fn new() -> GeneratorSlot {
        GeneratorSlot { cell: OnceLock::new() }
    }

    /// The generator of the type with this layout, name and full path (`module_path!()`
    /// and name), created on first use.
    #[inline]
    pub fn get_or_init(
        &'static self,
        layout: Layout,
        name: &'static str,
        path: &'static str,
    ) -> Result<&'static Generator, GenerateError> {
        match self.cell.get() {
            Some(generator) => Ok(generator),
            None => self.init(layout, name, path),
        }
    }

    #[cold]
    #[inline(never)]
    fn init(
        &'static self,
        layout: Layout,
        name: &'static str,
        path: &'static str,
    ) -> Result<&'static Generator, GenerateError> {
        static INIT: Mutex<()> = Mutex::new(());
        let _guard = INIT.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        if let Some(generator) = self.cell.get() {
            return Ok(generator);
        }
        let generator =
            generator_for(layout, name, path).inspect_err(|e| crate::events::generator_unavailable(name, e))?;
        let generator: &'static Generator = self.cell.get_or_init(|| generator);
        GENERATORS.lock().unwrap_or_else(|p| p.into_inner()).push(generator);
        Ok(generator)
    }
}

impl Default for GeneratorSlot {
    fn default() -> Self {
        GeneratorSlot::new()
    }
}
