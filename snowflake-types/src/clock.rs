//! Clocks: where a generator reads the time, and what it does when the time steps back.
//!
//! | clock | reads | steps back? | cost per ID |
//! |---|---|---|---|
//! | [`MonotonicClock`] (default) | a cached millisecond published by one ticker thread | never: it follows the wall clock forward at once, and back by running at half speed | one relaxed atomic load |
//! | [`PreciseMonotonicClock`] | the same time, read precisely on every call | never | two vDSO clock reads (~80 ns on the benchmark machine) |
//! | [`SystemClock`] | `SystemTime::now()` on every call | yes: its [`StepBack`] policy decides | one vDSO clock read (47.8 ns on the benchmark machine, BENCHMARKS.md) |
//! | [`ManualClock`] | a value you set | when you set it back | one atomic load |

use std::fmt;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{LazyLock, Once};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// What a generator does when its clock reads earlier than the last ID it issued.
///
/// ```
/// use std::time::Duration;
/// use typed_snowflake::{StepBack, SystemClock};
///
/// // Leaf's behaviour: wait out a small step back, refuse a large one.
/// let clock = SystemClock::new(StepBack::Wait { max: Duration::from_millis(5) });
/// assert_eq!(StepBack::default(), StepBack::Borrow { max_ahead: Duration::from_secs(1) });
/// # let _ = clock;
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum StepBack {
    /// Keep issuing from the last tick, and when its sequence runs out, move on to the next
    /// tick although the clock has not reached it yet, as long as that tick lies at most
    /// `max_ahead` ahead of the clock; beyond that, [`GenerateError::ClockBackwards`](crate::GenerateError::ClockBackwards).
    /// Never stalls, never repeats.
    Borrow {
        /// How far ahead of the clock IDs may run.
        max_ahead: Duration,
    },
    /// Wait for the clock to catch up, for at most `max`; a step back larger than `max`
    /// is refused at once (Meituan Leaf's policy).
    Wait {
        /// The longest wait.
        max: Duration,
    },
    /// Refuse at once, until the clock catches up.
    Error,
}

impl Default for StepBack {
    fn default() -> Self {
        StepBack::Borrow { max_ahead: Duration::from_secs(1) }
    }
}

/// A source of Unix milliseconds.
///
/// ```
/// use typed_snowflake::{Clock, StepBack};
///
/// #[derive(Debug)]
/// struct Frozen;
/// impl Clock for Frozen {
///     fn now_ms(&self) -> i64 { 1_700_000_000_000 }
///     fn on_step_back(&self) -> StepBack { StepBack::Error }
/// }
/// assert_eq!(Frozen.now_ms(), 1_700_000_000_000);
/// ```
pub trait Clock: Send + Sync + fmt::Debug + 'static {
    /// The current time in Unix milliseconds.
    fn now_ms(&self) -> i64;

    /// The policy a generator applies when this clock reads earlier than its last ID.
    fn on_step_back(&self) -> StepBack {
        StepBack::default()
    }

    /// A cached reading that a background task keeps current, for the generator's hot path;
    /// `now_ms` remains the precise reading used on slow paths.
    #[doc(hidden)]
    fn cached(&self) -> Option<&'static AtomicI64> {
        None
    }
}

fn wall_ns() -> i64 {
    match SystemTime::now().duration_since(UNIX_EPOCH) {
        Ok(d) => i64::try_from(d.as_nanos()).unwrap_or(i64::MAX),
        // A wall clock before 1970: treat as 1970; the monotonic part still advances.
        Err(_) => 0,
    }
}

/// Wall-clock Unix milliseconds, straight from `SystemTime::now()`.
pub(crate) fn wall_ms() -> i64 {
    wall_ns().div_euclid(1_000_000)
}

/// Cache line-aligned so the ticker's writes do not evict anything else.
#[repr(align(128))]
struct Published(AtomicI64);

struct Ticker {
    base: Instant,
    /// About `wall_ns - elapsed_ns`: the monotonic time is `elapsed + offset`. It rises at
    /// once when the wall clock steps forward, and falls when it stepped back, by at most
    /// half the time that passes ([`slewed`]), so the time never goes back.
    offset_ns: AtomicI64,
    /// The elapsed time up to which the offset's fall was accounted for.
    slewed_ns: AtomicI64,
    now_ms: Published,
    started: Once,
}

static TICKER: LazyLock<Ticker> = LazyLock::new(|| {
    // The wall clock first: a pause between the two reads then makes the offset smaller
    // (harmless), never larger (a permanent lead).
    let offset = wall_ns();
    let base = Instant::now();
    Ticker {
        base,
        offset_ns: AtomicI64::new(offset),
        slewed_ns: AtomicI64::new(0),
        now_ms: Published(AtomicI64::new(offset.div_euclid(1_000_000))),
        started: Once::new(),
    }
});

impl Ticker {
    fn precise_ns(&self) -> i64 {
        // The wall clock first, then the elapsed time: a pause between the two reads then
        // yields a candidate offset that is too small, which the maximum ignores; read the
        // other way round it would be too large, and the clock would lead for good.
        let wall = wall_ns();
        let elapsed = i64::try_from(self.base.elapsed().as_nanos()).unwrap_or(i64::MAX);
        let candidate = wall.saturating_sub(elapsed);
        let since = elapsed.saturating_sub(self.slewed_ns.fetch_max(elapsed, Ordering::Relaxed)).max(0);
        let current = self.offset_ns.load(Ordering::Relaxed);
        let offset = match slewed(current, candidate, since) {
            Some(lower) => {
                self.offset_ns.fetch_min(lower, Ordering::Relaxed);
                lower
            }
            None => raise(&self.offset_ns, candidate),
        };
        let ns = offset.saturating_add(elapsed);
        raise(&self.now_ms.0, ns.div_euclid(1_000_000));
        ns
    }

    fn precise_ms(&self) -> i64 {
        let ms = self.precise_ns().div_euclid(1_000_000);
        // Another reader may have published a later millisecond already.
        ms.max(self.now_ms.0.load(Ordering::Relaxed))
    }

    fn start(&'static self) {
        self.started.call_once(|| {
            let spawned = std::thread::Builder::new().name("snowflake-ticker".into()).spawn(move || {
                loop {
                    let ns = self.precise_ns();
                    // Wake just after the next millisecond boundary.
                    let to_boundary = 1_000_000 - ns.rem_euclid(1_000_000);
                    std::thread::sleep(Duration::from_nanos(u64::try_from(to_boundary).unwrap_or(1_000_000)));
                }
            });
            // Without the thread, `cached` readers would see a frozen value; fall back
            // to precise reads by leaving the published value to slow-path readers.
            if spawned.is_err() {
                TICKER_FAILED.store(1, Ordering::Relaxed);
            }
        });
    }
}

/// A wall clock further behind the monotonic time than this is followed back (steps below it
/// are ignored: a reader paused between its two clock reads would otherwise take its pause
/// for one).
const FOLLOW_BACK_NS: i64 = 10_000_000;

/// The lower offset after `since_ns` of elapsed time, where the wall clock (`candidate`)
/// stepped back by more than [`FOLLOW_BACK_NS`] from `offset`: at most half of `since_ns`
/// lower (the time runs at half speed, and never backwards), never below the wall clock.
/// `None` where the offset is not to fall.
fn slewed(offset: i64, candidate: i64, since_ns: i64) -> Option<i64> {
    (offset.saturating_sub(candidate) > FOLLOW_BACK_NS)
        .then(|| offset.saturating_sub(since_ns / 2).max(candidate))
        .filter(|&lower| lower < offset)
}

/// `fetch_max`, but without a write (and the cache-line transfer it costs) when the value
/// is not larger: most readers find the published value current. Returns the new maximum.
fn raise(atomic: &AtomicI64, value: i64) -> i64 {
    let current = atomic.load(Ordering::Relaxed);
    if value <= current { current } else { atomic.fetch_max(value, Ordering::Relaxed).max(value) }
}

static TICKER_FAILED: AtomicI64 = AtomicI64::new(0);

/// The default clock: monotonic, anchored to the wall clock, never stepping back.
///
/// It reads `Instant` (which never goes back) plus an offset to Unix time. The offset
/// follows the wall clock at once when it jumps forward; when it steps back (by more than
/// 10 ms), the offset falls by at most half the time that passes, so this clock runs at half
/// speed until it meets the wall clock again: a step back of the system clock while the
/// process runs causes neither a duplicate nor a stall, and no lasting lead (a step of 40 s,
/// corrected, is caught up in 80 s). A worker-ID lease compares this clock with its store's
/// at every renewal, so a lead that lasted would stop it for good.
///
/// For speed, one background thread (`snowflake-ticker`, started on first use, about
/// 1 000 wake-ups per second, each a few hundred nanoseconds of work) publishes the
/// current millisecond to an atomic that generators load on their hot path; slow paths
/// (a full sequence, a new reservation) read the clock precisely and publish what they
/// read. A reading lags the wall clock by less than one millisecond unless the ticker
/// thread is starved of CPU for longer.
///
/// ```
/// use typed_snowflake::{Clock, clock::MonotonicClock};
///
/// let a = MonotonicClock.now_ms();
/// let b = MonotonicClock.now_ms();
/// assert!(b >= a);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MonotonicClock;

impl Clock for MonotonicClock {
    fn now_ms(&self) -> i64 {
        TICKER.precise_ms()
    }

    fn cached(&self) -> Option<&'static AtomicI64> {
        let ticker: &'static Ticker = &TICKER;
        ticker.start();
        if TICKER_FAILED.load(Ordering::Relaxed) != 0 { None } else { Some(&ticker.now_ms.0) }
    }
}

/// The time of [`MonotonicClock`], read precisely on every call instead of from the
/// ticker's published millisecond: no ticker thread, and an ID's timestamp is never behind
/// the wall clock, for two vDSO clock reads per ID (about 80 ns on the benchmark machine).
///
/// The ticker behind `MonotonicClock` publishes each millisecond shortly after it begins,
/// but a thread can wake late: on a loaded or virtualised machine a reading can lag by a
/// few milliseconds now and then (see `BENCHMARKS.md`). Choose this clock where an ID's
/// timestamp must never lag the wall clock by more than its tick.
///
/// ```
/// use std::time::{SystemTime, UNIX_EPOCH};
/// use typed_snowflake::{Clock, clock::PreciseMonotonicClock};
///
/// let wall = i64::try_from(SystemTime::now().duration_since(UNIX_EPOCH)?.as_millis())?;
/// assert!(PreciseMonotonicClock.now_ms() >= wall);
/// Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PreciseMonotonicClock;

impl Clock for PreciseMonotonicClock {
    fn now_ms(&self) -> i64 {
        TICKER.precise_ms()
    }
}

/// The system wall clock (`SystemTime::now()`), read on every call, with an explicit
/// policy for when it steps back.
///
/// ```
/// use std::time::Duration;
/// use typed_snowflake::{Clock, StepBack, SystemClock};
///
/// let clock = SystemClock::new(StepBack::Error);
/// assert!(clock.now_ms() > 1_600_000_000_000);
/// assert_eq!(clock.on_step_back(), StepBack::Error);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SystemClock {
    policy: StepBack,
}

impl SystemClock {
    /// A system clock with `policy` for steps back.
    pub const fn new(policy: StepBack) -> SystemClock {
        SystemClock { policy }
    }
}

impl Default for SystemClock {
    fn default() -> Self {
        SystemClock::new(StepBack::default())
    }
}

impl Clock for SystemClock {
    fn now_ms(&self) -> i64 {
        wall_ms()
    }
    fn on_step_back(&self) -> StepBack {
        self.policy
    }
}

/// A clock that moves only when told to: every clock test is deterministic with it.
///
/// Share it with `Arc` to keep a handle after giving it to a generator.
///
/// ```
/// use std::sync::Arc;
/// use typed_snowflake::{Clock, ManualClock, StepBack};
///
/// let clock = Arc::new(ManualClock::new(1_700_000_000_000).with_policy(StepBack::Error));
/// clock.advance(5);
/// clock.step_back(1_000);
/// assert_eq!(clock.now_ms(), 1_699_999_999_005);
/// ```
#[derive(Debug)]
pub struct ManualClock {
    now: AtomicI64,
    policy: StepBack,
}

impl ManualClock {
    /// A clock reading `unix_ms`, with the default step-back policy.
    pub const fn new(unix_ms: i64) -> ManualClock {
        ManualClock { now: AtomicI64::new(unix_ms), policy: StepBack::Borrow { max_ahead: Duration::from_secs(1) } }
    }
    /// The same clock with another step-back policy.
    pub const fn with_policy(mut self, policy: StepBack) -> ManualClock {
        self.policy = policy;
        self
    }
    /// Sets the reading.
    pub fn set(&self, unix_ms: i64) {
        self.now.store(unix_ms, Ordering::SeqCst);
    }
    /// Moves forward by `ms`, stopping at `i64::MAX` (and at `i64::MIN` for a negative
    /// `ms`) rather than wrapping to the other end.
    pub fn advance(&self, ms: i64) {
        self.update(|now| now.saturating_add(ms));
    }
    /// Moves back by `ms`, stopping at `i64::MIN` (and at `i64::MAX` for a negative `ms`)
    /// rather than wrapping to the other end.
    pub fn step_back(&self, ms: i64) {
        self.update(|now| now.saturating_sub(ms));
    }
    fn update(&self, f: impl Fn(i64) -> i64) {
        // Never fails: the closure always returns a value.
        let _ = self.now.fetch_update(Ordering::SeqCst, Ordering::SeqCst, |now| Some(f(now)));
    }
}

impl Clock for ManualClock {
    fn now_ms(&self) -> i64 {
        self.now.load(Ordering::SeqCst)
    }
    fn on_step_back(&self) -> StepBack {
        self.policy
    }
}

impl<C: Clock> Clock for std::sync::Arc<C> {
    fn now_ms(&self) -> i64 {
        (**self).now_ms()
    }
    fn on_step_back(&self) -> StepBack {
        (**self).on_step_back()
    }
    fn cached(&self) -> Option<&'static AtomicI64> {
        (**self).cached()
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_step_back_is_followed_at_half_speed_and_a_small_one_ignored() {
        let s = 1_000_000_000;
        // The wall clock 40 s behind: the offset falls by half of each interval, never below it.
        assert_eq!(slewed(100 * s, 60 * s, 2_000_000), Some(100 * s - 1_000_000));
        assert_eq!(slewed(100 * s, 60 * s, 200 * s), Some(60 * s));
        // A step below 10 ms, or none: the offset stays.
        assert_eq!(slewed(100 * s, 100 * s - 5_000_000, 2_000_000), None);
        assert_eq!(slewed(100 * s, 100 * s, 2_000_000), None);
        // No time passed: nothing falls.
        assert_eq!(slewed(100 * s, 60 * s, 0), None);
        // The time so read never goes back: at half speed it still advances.
        let (mut offset, mut elapsed, mut last) = (100 * s, 0_i64, 0_i64);
        for _ in 0..1_000 {
            let since = 3_000_000;
            elapsed += since;
            offset = slewed(offset, 60 * s, since).unwrap_or(offset);
            let now = offset + elapsed;
            assert!(now > last);
            last = now;
        }
    }

    use super::*;

    #[test]
    fn manual_clock_saturates_at_the_ends_of_i64() {
        let clock = ManualClock::new(i64::MAX - 2);
        clock.advance(5);
        assert_eq!(clock.now_ms(), i64::MAX);
        clock.advance(i64::MAX);
        assert_eq!(clock.now_ms(), i64::MAX);
        clock.step_back(3);
        assert_eq!(clock.now_ms(), i64::MAX - 3);

        let clock = ManualClock::new(i64::MIN + 2);
        clock.step_back(5);
        assert_eq!(clock.now_ms(), i64::MIN);
        clock.step_back(i64::MAX);
        assert_eq!(clock.now_ms(), i64::MIN);
        // Negative amounts move the other way, saturating too.
        clock.advance(-1);
        assert_eq!(clock.now_ms(), i64::MIN);
        clock.set(i64::MAX - 1);
        clock.step_back(-5);
        assert_eq!(clock.now_ms(), i64::MAX);
        clock.step_back(i64::MIN);
        assert_eq!(clock.now_ms(), i64::MAX);
    }

    #[test]
    fn monotonic_clock_tracks_the_wall_clock() {
        let wall = wall_ms();
        let mono = MonotonicClock.now_ms();
        assert!((mono - wall).abs() < 1_000, "monotonic {mono} vs wall {wall}");
    }

    #[test]
    fn ticker_publishes_current_milliseconds() {
        let cached = MonotonicClock.cached().expect("ticker thread");
        let first = cached.load(Ordering::Relaxed);
        std::thread::sleep(Duration::from_millis(20));
        let later = cached.load(Ordering::Relaxed);
        assert!(later > first, "the ticker did not advance: {first} -> {later}");
    }
}
