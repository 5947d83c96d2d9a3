//! Our generator, through the path users call (`OrderId::generate()` on a derived type),
//! beside the Rust ID crates people reach for and beside two hardware floors.
//!
//! Scenarios, all in one run (`cargo bench --bench peers`):
//!
//! 1. `single_thread_burst`: the cost of one ID below the sequence cap. A 12-bit generator
//!    is capped at 4 096 IDs per millisecond, so a plain `b.iter()` would measure the cap.
//!    Each timed burst starts just after the millisecond changes and issues `k` IDs, far
//!    below the cap (k = 1 000; Sonyflake: 100 IDs after a 10 ms boundary, its cap being
//!    256 per 10 ms); criterion reports elapsed / k.
//! 2. `two_threads_shared`: two threads share one generator, a fixed number of IDs each,
//!    timed from a barrier; criterion reports IDs/s. Run at 12 bits (every peer) and at
//!    16 bits (the peers whose layout can be set), since at 12 bits the cap (4.096 M/s)
//!    binds before contention does. Every generator is also checked once, outside the
//!    timing, for duplicates across the two threads and for order within each thread.
//! 3. `sustained`: one thread generates for 200 ms (three runs) against the cap of its
//!    layout; IDs/s, % of the cap, duplicates (sorted and deduplicated after the timing),
//!    order, and how far the last ID's timestamp runs ahead of the wall clock.
//! 4. `cache_line`: two derived types generating on two threads at once, against each of
//!    them alone; a control pair of CAS floors whose states share one cache line shows
//!    what false sharing costs on this machine.
//!
//! uuid is built with its `fast-rng` feature (a thread-local generator); with default
//! features every `Uuid::now_v7()` asks the OS for random bytes (about 600 ns here).
//!
//! The floors: (a) a CAS on a packed `(tick, seq)` `u64` with the tick from a relaxed load
//! of an atomic that a ticker thread updates each millisecond (the least a lock-free
//! Snowflake can do); (b) an uncontended `AtomicU64::fetch_add`. And the clock reads alone.
//!
//! A summary table (medians, ratios against the CAS floor and against ferroid) is printed
//! at the end. Without `--bench` (as under `cargo test --benches`) every scenario runs
//! once, briefly, as a smoke test that still checks for duplicates.

use std::hint::{black_box, spin_loop};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Barrier, LazyLock, Mutex, Once};
use std::thread;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use criterion::measurement::WallTime;
use criterion::{BenchmarkGroup, Criterion, SamplingMode, Throughput};
use typed_snowflake::{Registry, SnowflakeId};

// ---------------------------------------------------------------------------------------
// Our types: the path users call.

#[derive(SnowflakeId, Clone, Copy, PartialEq, Eq, Debug)]
#[layout(time = 41, worker = 10, seq = 12, epoch = "2020-01-01")]
struct Id12(i64);

#[derive(SnowflakeId, Clone, Copy, PartialEq, Eq, Debug)]
#[layout(time = 42, worker = 5, seq = 16, epoch = "2021-05-05")]
struct Id16(i64);

/// Two types for the cache-line scenario; 20 sequence bits (1 048 576 IDs per ms) so that
/// no cap binds and only the generators' own cost and any interference are measured.
#[derive(SnowflakeId, Clone, Copy, PartialEq, Eq, Debug)]
#[layout(time = 40, worker = 3, seq = 20, epoch = "2025-01-01")]
struct ShardA(i64);

#[derive(SnowflakeId, Clone, Copy, PartialEq, Eq, Debug)]
#[layout(time = 40, worker = 3, seq = 20, epoch = "2025-01-01")]
struct ShardB(i64);

const EPOCH_2020: u64 = 1_577_836_800_000;
const EPOCH_2021: u64 = 1_620_172_800_000;
const EPOCH_2025: u64 = 1_735_689_600_000;
const TWITTER_EPOCH_MS: u64 = 1_288_834_974_657;
const SONYFLAKE_EPOCH_MS: u64 = 1_409_529_600_000;

fn ours12() -> u64 {
    Id12::generate().get().cast_unsigned()
}

fn ours16() -> u64 {
    Id16::generate().get().cast_unsigned()
}

// ---------------------------------------------------------------------------------------
// Peers.

mod ferroid_ids {
    //! ferroid's layouts: its Twitter type (41/10/12) and a 16-bit one like `Id16`.
    ferroid::define_snowflake_id!(
        /// 1 reserved bit, 42 time, 5 machine, 16 sequence.
        Ferroid16, u64,
        reserved: 1,
        timestamp: 42,
        machine_id: 5,
        sequence: 16
    );
    ferroid::define_snowflake_id!(
        /// 1 reserved bit, 40 time, 3 machine, 20 sequence (like `ShardA`).
        Ferroid20, u64,
        reserved: 1,
        timestamp: 40,
        machine_id: 3,
        sequence: 20
    );
}

use ferroid::generator::AtomicSnowflakeGenerator;
use ferroid::id::SnowflakeTwitterId;
use ferroid::time::{MonotonicClock, TWITTER_EPOCH};
use ferroid_ids::{Ferroid16, Ferroid20};

type Ferroid12Gen = AtomicSnowflakeGenerator<SnowflakeTwitterId, MonotonicClock>;
type Ferroid16Gen = AtomicSnowflakeGenerator<Ferroid16, MonotonicClock>;
type Ferroid20Gen = AtomicSnowflakeGenerator<Ferroid20, MonotonicClock>;

fn ferroid12_new() -> Ferroid12Gen {
    AtomicSnowflakeGenerator::new(1, MonotonicClock::with_epoch(TWITTER_EPOCH))
}

fn ferroid16_new() -> Ferroid16Gen {
    AtomicSnowflakeGenerator::new(1, MonotonicClock::with_epoch(Duration::from_millis(EPOCH_2021)))
}

fn ferroid20_new() -> Ferroid20Gen {
    AtomicSnowflakeGenerator::new(1, MonotonicClock::with_epoch(Duration::from_millis(EPOCH_2025)))
}

/// snowdon's parameters: epoch 2020, machine 1 (classic layout 41/10/12).
struct Snowdon12Params;
impl snowdon::Epoch for Snowdon12Params {
    fn millis_since_unix() -> u64 {
        EPOCH_2020
    }
}
impl snowdon::MachineId for Snowdon12Params {
    fn machine_id() -> u64 {
        1
    }
}
type Snowdon12 = snowdon::Generator<snowdon::ClassicLayout<Snowdon12Params>, Snowdon12Params>;

/// snowdon with `Id16`'s layout: 1 zero bit, 42 time, 5 machine (1), 16 sequence.
struct Snowdon16Params;
impl snowdon::Epoch for Snowdon16Params {
    fn millis_since_unix() -> u64 {
        EPOCH_2021
    }
}
impl snowdon::Layout for Snowdon16Params {
    fn construct_snowflake(timestamp: u64, sequence_number: u64) -> u64 {
        (timestamp << 21) | (1 << 16) | sequence_number
    }
    fn timestamp(input: u64) -> u64 {
        input >> 21
    }
    fn exceeds_timestamp(input: u64) -> bool {
        input >= 1 << 42
    }
    fn sequence_number(input: u64) -> u64 {
        input & 0xFFFF
    }
    fn exceeds_sequence_number(input: u64) -> bool {
        input > 0xFFFF
    }
    fn is_valid_snowflake(input: u64) -> bool {
        input >> 63 == 0 && (input >> 16) & 0x1F == 1
    }
}
type Snowdon16 = snowdon::Generator<Snowdon16Params, Snowdon16Params>;

/// snowdon returns `SnowflakeExhaustion` when a millisecond's sequence is used up and
/// leaves the retry to the caller.
fn snowdon_next<L: snowdon::Layout, E: snowdon::Epoch>(generator: &snowdon::Generator<L, E>) -> u64 {
    loop {
        match generator.generate() {
            Ok(id) => return id.into_inner(),
            Err(snowdon::Error::SnowflakeExhaustion) => spin_loop(),
            Err(e) => panic!("snowdon: {e:?}"),
        }
    }
}

fn snowflaked_new() -> snowflaked::sync::Generator {
    snowflaked::sync::Generator::builder().instance(1).epoch(UNIX_EPOCH + Duration::from_millis(EPOCH_2020)).build()
}

fn rs_snowflake_new() -> Mutex<snowflake::SnowflakeIdGenerator> {
    Mutex::new(snowflake::SnowflakeIdGenerator::new(1, 1))
}

fn rs_snowflake_next(generator: &Mutex<snowflake::SnowflakeIdGenerator>) -> u64 {
    generator.lock().expect("rs-snowflake lock").real_time_generate().cast_unsigned()
}

/// idgenerator keeps one process-wide instance behind a `parking_lot::Mutex`; `init`
/// sleeps 500 ms. Configured as 10 worker bits, 12 sequence bits, epoch 2020.
static IDGEN12: LazyLock<()> = LazyLock::new(|| {
    let options = idgenerator::IdGeneratorOptions::new()
        .worker_id(1)
        .worker_id_bit_len(10)
        .seq_bit_len(12)
        .base_time(EPOCH_2020.cast_signed());
    idgenerator::IdInstance::init(options).expect("idgenerator 12-bit options");
});

/// The 16-bit configuration lives in `IdVecInstance` (index 0), the crate's other
/// process-wide instance: an `RwLock<Vec<Arc<Mutex<_>>>>`.
static IDGEN16: LazyLock<()> = LazyLock::new(|| {
    let options = idgenerator::IdGeneratorOptions::new()
        .worker_id(1)
        .worker_id_bit_len(5)
        .seq_bit_len(16)
        .base_time(EPOCH_2021.cast_signed());
    idgenerator::IdVecInstance::init(vec![options]).expect("idgenerator 16-bit options");
});

fn idgen12() -> u64 {
    idgenerator::IdInstance::next_id().cast_unsigned()
}

fn idgen16() -> u64 {
    idgenerator::IdVecInstance::next_id(0).cast_unsigned()
}

fn ulid_generator_next(generator: &Mutex<ulid::Generator>) -> u128 {
    generator.lock().expect("ulid lock").generate().expect("ulid overflow").0
}

fn sonyflake_new() -> sonyflake::Sonyflake {
    sonyflake::Sonyflake::builder().machine_id(&|| Ok(1)).finalize().expect("sonyflake")
}

fn sonyflake_next(generator: &sonyflake::Sonyflake) -> u64 {
    generator.next_id().expect("sonyflake").to_u64()
}

// ---------------------------------------------------------------------------------------
// Floors.

/// Milliseconds since 2020 that one thread publishes each millisecond: the floor's clock.
static FLOOR_NOW: AtomicU64 = AtomicU64::new(0);
static FLOOR_TICKER: Once = Once::new();

fn start_floor_ticker() {
    FLOOR_TICKER.call_once(|| {
        FLOOR_NOW.store(unix_ms() - EPOCH_2020, Ordering::Relaxed);
        thread::Builder::new()
            .name("floor-ticker".into())
            .spawn(|| {
                loop {
                    let now = SystemTime::now().duration_since(UNIX_EPOCH).unwrap_or_default();
                    let ms = u64::try_from(now.as_millis()).unwrap_or(0) - EPOCH_2020;
                    FLOOR_NOW.fetch_max(ms, Ordering::Relaxed);
                    let to_edge = 1_000_000 - now.subsec_nanos() % 1_000_000;
                    thread::sleep(Duration::from_nanos(u64::from(to_edge)));
                }
            })
            .expect("floor ticker");
    });
}

/// Floor (a): a CAS on a packed `(tick, seq)` `u64`, the tick from a relaxed load. `W`
/// worker bits (worker 1), `S` sequence bits. On a full sequence it spins until the
/// ticker moves on.
#[repr(align(128))]
struct CasFloor<const W: u32, const S: u32> {
    state: AtomicU64,
}

impl<const W: u32, const S: u32> CasFloor<W, S> {
    fn new() -> Self {
        start_floor_ticker();
        CasFloor { state: AtomicU64::new(0) }
    }

    #[inline]
    fn next(&self) -> u64 {
        next_packed::<W, S>(&self.state)
    }
}

#[inline]
fn next_packed<const W: u32, const S: u32>(state: &AtomicU64) -> u64 {
    let max_seq: u64 = (1 << S) - 1;
    let mut now = FLOOR_NOW.load(Ordering::Relaxed);
    let mut cur = state.load(Ordering::Relaxed);
    loop {
        let last = cur >> S;
        let next = if now > last {
            now << S
        } else if cur & max_seq != max_seq {
            cur + 1
        } else {
            spin_loop();
            now = FLOOR_NOW.load(Ordering::Relaxed);
            cur = state.load(Ordering::Relaxed);
            continue;
        };
        match state.compare_exchange_weak(cur, next, Ordering::Relaxed, Ordering::Relaxed) {
            Ok(_) => return ((next & !max_seq) << W) | (1 << S) | (next & max_seq),
            Err(actual) => cur = actual,
        }
    }
}

/// Floor (a) with a pause after a failed CAS before re-reading the tick and the state (what
/// ferroid's `next_id(|_| spin_loop())` does), to see what backing off is worth under contention.
#[inline]
fn next_packed_pause<const W: u32, const S: u32>(state: &AtomicU64) -> u64 {
    let max_seq: u64 = (1 << S) - 1;
    loop {
        let now = FLOOR_NOW.load(Ordering::Relaxed);
        let cur = state.load(Ordering::Relaxed);
        let last = cur >> S;
        let next = if now > last {
            now << S
        } else if cur & max_seq != max_seq {
            cur + 1
        } else {
            spin_loop();
            continue;
        };
        if state.compare_exchange(cur, next, Ordering::Relaxed, Ordering::Relaxed).is_ok() {
            return ((next & !max_seq) << W) | (1 << S) | (next & max_seq);
        }
        spin_loop();
    }
}

/// An error as large as ours, so that a `Result` of it is returned through memory.
#[derive(Debug)]
#[allow(dead_code, reason = "only its size matters")]
struct WideError([u64; 8]);

/// Floor (a) shaped like our hot path's calling convention: not inlined, returning a
/// `Result` with a wide error. Shows what the call and the return through memory cost,
/// alone and under contention.
#[inline(never)]
fn next_packed_outlined<const W: u32, const S: u32>(state: &AtomicU64) -> Result<u64, WideError> {
    Ok(next_packed::<W, S>(state))
}

/// Floor (b): `fetch_add` on one atomic.
static COUNTER: AtomicU64 = AtomicU64::new(0);

fn fetch_add() -> u64 {
    COUNTER.fetch_add(1, Ordering::Relaxed)
}

fn unix_ms() -> u64 {
    let now = SystemTime::now().duration_since(UNIX_EPOCH).unwrap_or_default();
    u64::try_from(now.as_millis()).unwrap_or(0)
}

// ---------------------------------------------------------------------------------------
// What the run records, for the summary.

const S1: &str = "single_thread_burst";
const S2_12: &str = "two_threads_shared_12bit";
const S2_16: &str = "two_threads_shared_16bit";
const S2_20: &str = "two_threads_shared_20bit";

struct Record {
    group: &'static str,
    name: String,
    samples: Vec<f64>,
    note: String,
}

static RECORDS: Mutex<Vec<Record>> = Mutex::new(Vec::new());

fn with_record(group: &'static str, name: &str, f: impl FnOnce(&mut Record)) {
    let mut records = RECORDS.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    let index = match records.iter().position(|r| r.group == group && r.name == name) {
        Some(index) => index,
        None => {
            records.push(Record { group, name: name.to_owned(), samples: Vec::new(), note: String::new() });
            records.len() - 1
        }
    };
    f(&mut records[index]);
}

fn record_sample(group: &'static str, name: &str, value: f64) {
    with_record(group, name, |r| r.samples.push(value));
}

fn record_note(group: &'static str, name: &str, note: &str) {
    with_record(group, name, |r| {
        if !r.note.is_empty() {
            r.note.push_str("; ");
        }
        r.note.push_str(note);
    });
}

fn median(values: &[f64]) -> Option<f64> {
    if values.is_empty() {
        return None;
    }
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    let mid = sorted.len() / 2;
    Some(if sorted.len().is_multiple_of(2) { f64::midpoint(sorted[mid - 1], sorted[mid]) } else { sorted[mid] })
}

/// The median over the measured samples: criterion calls the routine for warm-up first,
/// then `sample_size` times, so the last `sample_size` values are the measurement.
fn measured_median(group: &'static str, name: &str, sample_size: usize) -> Option<f64> {
    let records = RECORDS.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    let r = records.iter().find(|r| r.group == group && r.name == name)?;
    let tail = &r.samples[r.samples.len().saturating_sub(sample_size)..];
    median(tail)
}

// ---------------------------------------------------------------------------------------
// Run settings.

struct Settings {
    /// `--bench` was given: measure. Otherwise a brief smoke run.
    full: bool,
    filter: Option<String>,
    s1_sample_size: usize,
    s2_sample_size: usize,
    sustained: Duration,
    sustained_runs: usize,
    per_thread: u64,
    cache_line: Duration,
    cache_line_runs: usize,
}

impl Settings {
    fn from_args() -> Settings {
        let args: Vec<String> = std::env::args().skip(1).collect();
        let full = args.iter().any(|a| a == "--bench");
        let filter = args.iter().find(|a| !a.starts_with('-')).cloned();
        if full {
            Settings {
                full,
                filter,
                s1_sample_size: 20,
                s2_sample_size: 20,
                sustained: Duration::from_millis(200),
                sustained_runs: 3,
                per_thread: 200_000,
                cache_line: Duration::from_millis(300),
                cache_line_runs: 5,
            }
        } else {
            Settings {
                full,
                filter,
                s1_sample_size: 10,
                s2_sample_size: 10,
                sustained: Duration::from_millis(5),
                sustained_runs: 1,
                per_thread: 2_000,
                cache_line: Duration::from_millis(5),
                cache_line_runs: 1,
            }
        }
    }

    fn runs(&self, scenario: &str) -> bool {
        self.filter.as_deref().is_none_or(|f| scenario.contains(f) || f.contains(scenario))
    }
}

// ---------------------------------------------------------------------------------------
// Scenario 1: single-thread burst below the cap.

/// Spins until the wall-clock tick (`tick_ms` milliseconds) changes.
fn wait_for_tick_edge(tick_ms: u64) {
    let start = unix_ms() / tick_ms;
    while unix_ms() / tick_ms == start {
        spin_loop();
    }
}

/// `iters` IDs in bursts of at most `k`, each burst starting just after a tick edge;
/// returns the time inside the bursts only.
fn timed_bursts<T>(iters: u64, k: u64, tick_ms: u64, f: &mut impl FnMut() -> T) -> Duration {
    let mut total = Duration::ZERO;
    let mut left = iters;
    while left > 0 {
        let n = left.min(k);
        wait_for_tick_edge(tick_ms);
        let start = Instant::now();
        for _ in 0..n {
            black_box(f());
        }
        total += start.elapsed();
        left -= n;
    }
    total
}

fn burst<T>(group: &mut BenchmarkGroup<'_, WallTime>, name: &str, k: u64, tick_ms: u64, mut f: impl FnMut() -> T) {
    group.bench_function(name, |b| {
        b.iter_custom(|iters| {
            let elapsed = timed_bursts(iters, k, tick_ms, &mut f);
            record_sample(S1, name, elapsed.as_nanos() as f64 / iters as f64);
            elapsed
        });
    });
}

fn scenario_burst(c: &mut Criterion, s: &Settings) {
    let mut g = c.benchmark_group(S1);
    g.sample_size(s.s1_sample_size)
        .warm_up_time(Duration::from_millis(300))
        .measurement_time(Duration::from_millis(2000))
        .nresamples(10_000)
        .throughput(Throughput::Elements(1));

    burst(&mut g, "ours Id12::generate (41/10/12)", 1000, 1, ours12);
    burst(&mut g, "ours Id16::generate (42/5/16)", 1000, 1, ours16);
    let ferroid = ferroid12_new();
    burst(&mut g, "ferroid Atomic (41/10/12)", 1000, 1, || ferroid.next_id(|_| spin_loop()).to_raw());
    let snowflaked = snowflaked_new();
    burst(&mut g, "snowflaked sync (42/10/12)", 1000, 1, || snowflaked.generate::<u64>());
    let rs = rs_snowflake_new();
    burst(&mut g, "rs-snowflake in Mutex (42/10/12)", 1000, 1, || rs_snowflake_next(&rs));
    let mut rs_alone = snowflake::SnowflakeIdGenerator::new(1, 1);
    burst(&mut g, "rs-snowflake &mut, no lock", 1000, 1, || rs_alone.real_time_generate());
    let snowdon = Snowdon12::default();
    burst(&mut g, "snowdon lock-free (41/10/12)", 1000, 1, || snowdon_next(&snowdon));
    LazyLock::force(&IDGEN12);
    burst(&mut g, "idgenerator IdInstance (10/12)", 1000, 1, idgen12);
    burst(&mut g, "ulid Ulid::generate (random, unordered)", 1000, 1, || ulid::Ulid::generate().0);
    let ulid_gen = Mutex::new(ulid::Generator::new());
    burst(&mut g, "ulid Generator in Mutex (monotonic)", 1000, 1, || ulid_generator_next(&ulid_gen));
    burst(&mut g, "uuid Uuid::now_v7", 1000, 1, || uuid::Uuid::now_v7().as_u128());
    let sony = sonyflake_new();
    burst(&mut g, "sonyflake (10ms/16/8), k=100", 100, 10, || sonyflake_next(&sony));
    let floor = CasFloor::<10, 12>::new();
    burst(&mut g, "floor: CAS (tick,seq), relaxed tick", 1000, 1, || floor.next());
    burst(&mut g, "floor: fetch_add", 1000, 1, fetch_add);
    burst(&mut g, "clock: SystemTime::now -> ms", 1000, 1, unix_ms);
    burst(&mut g, "clock: Instant::now", 1000, 1, Instant::now);
    g.finish();
}

// ---------------------------------------------------------------------------------------
// Scenario 2: two threads sharing one generator.

/// Both threads run `n` IDs from a barrier; the span from the first start to the last end.
fn two_threads<T>(n: u64, f: &(impl Fn() -> T + Sync)) -> Duration {
    let barrier = Barrier::new(2);
    let spans: Vec<(Instant, Instant)> = thread::scope(|scope| {
        let handles: Vec<_> = (0..2)
            .map(|_| {
                scope.spawn(|| {
                    barrier.wait();
                    let start = Instant::now();
                    for _ in 0..n {
                        black_box(f());
                    }
                    (start, Instant::now())
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().expect("worker thread")).collect()
    });
    let first = spans.iter().map(|s| s.0).min().expect("two spans");
    let last = spans.iter().map(|s| s.1).max().expect("two spans");
    last - first
}

/// Outside any timing: both threads collect their IDs; duplicates across the two, and
/// IDs not above their predecessor within one thread.
fn two_thread_check<T: Ord + Copy + Send>(n: u64, f: &(impl Fn() -> T + Sync)) -> (usize, usize) {
    let barrier = Barrier::new(2);
    let lists: Vec<Vec<T>> = thread::scope(|scope| {
        let handles: Vec<_> = (0..2)
            .map(|_| {
                scope.spawn(|| {
                    let mut ids = Vec::with_capacity(usize::try_from(n).unwrap_or(0));
                    barrier.wait();
                    for _ in 0..n {
                        ids.push(f());
                    }
                    ids
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().expect("worker thread")).collect()
    });
    let unordered = lists.iter().map(|ids| ids.windows(2).filter(|w| w[1] <= w[0]).count()).sum();
    let mut all: Vec<T> = lists.into_iter().flatten().collect();
    let total = all.len();
    all.sort_unstable();
    all.dedup();
    (total - all.len(), unordered)
}

/// A duplicate or an ID out of order from one of our generators fails the run (in the
/// smoke run under `cargo test --benches` too); from a peer it is reported.
fn assert_ours_sound(name: &str, dups: usize, unordered: usize) {
    assert!(
        !name.starts_with("ours") || (dups == 0 && unordered == 0),
        "{name}: {dups} duplicate IDs, {unordered} IDs out of order"
    );
}

fn shared<T: Ord + Copy + Send>(
    g: &mut BenchmarkGroup<'_, WallTime>,
    group: &'static str,
    name: &str,
    per_thread: u64,
    f: impl Fn() -> T + Sync,
) {
    let (dups, unordered) = two_thread_check(per_thread.min(100_000), &f);
    assert_ours_sound(name, dups, unordered);
    record_note(group, name, &format!("dups {dups}, out of order {unordered}"));
    g.throughput(Throughput::Elements(2 * per_thread));
    g.bench_function(name, |b| {
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            for _ in 0..iters {
                total += two_threads(per_thread, &f);
            }
            record_sample(group, name, (2 * per_thread * iters) as f64 / total.as_secs_f64() / 1e6);
            total
        });
    });
}

fn shared_group<'a>(c: &'a mut Criterion, name: &str, s: &Settings) -> BenchmarkGroup<'a, WallTime> {
    let mut g = c.benchmark_group(name);
    g.sample_size(s.s2_sample_size)
        .sampling_mode(SamplingMode::Flat)
        .warm_up_time(Duration::from_millis(300))
        .measurement_time(Duration::from_millis(2000))
        .nresamples(10_000);
    g
}

fn scenario_shared(c: &mut Criterion, s: &Settings) {
    let n = s.per_thread;
    // Sonyflake issues 25 600 IDs/s at most: 2 x 1 000 IDs take about 80 ms.
    let sony_n = n.min(1_000);

    let mut g = shared_group(c, S2_12, s);
    shared(&mut g, S2_12, "ours Id12::generate", n, ours12);
    let ferroid = ferroid12_new();
    shared(&mut g, S2_12, "ferroid Atomic", n, || ferroid.next_id(|_| spin_loop()).to_raw());
    let snowflaked = snowflaked_new();
    shared(&mut g, S2_12, "snowflaked sync", n, || snowflaked.generate::<u64>());
    let rs = rs_snowflake_new();
    shared(&mut g, S2_12, "rs-snowflake in Mutex", n, || rs_snowflake_next(&rs));
    let snowdon = Snowdon12::default();
    shared(&mut g, S2_12, "snowdon lock-free", n, || snowdon_next(&snowdon));
    LazyLock::force(&IDGEN12);
    shared(&mut g, S2_12, "idgenerator IdInstance", n, idgen12);
    shared(&mut g, S2_12, "ulid Ulid::generate (random, unordered)", n, || ulid::Ulid::generate().0);
    let ulid_gen = Mutex::new(ulid::Generator::new());
    shared(&mut g, S2_12, "ulid Generator in Mutex", n, || ulid_generator_next(&ulid_gen));
    shared(&mut g, S2_12, "uuid Uuid::now_v7", n, || uuid::Uuid::now_v7().as_u128());
    let sony = sonyflake_new();
    shared(&mut g, S2_12, "sonyflake (2 x 1000 IDs)", sony_n, || sonyflake_next(&sony));
    let floor = CasFloor::<10, 12>::new();
    shared(&mut g, S2_12, "floor: CAS (tick,seq)", n, || floor.next());
    shared(&mut g, S2_12, "floor: fetch_add (contended)", n, fetch_add);
    g.finish();

    let mut g = shared_group(c, S2_16, s);
    shared(&mut g, S2_16, "ours Id16::generate", n, ours16);
    let ferroid = ferroid16_new();
    shared(&mut g, S2_16, "ferroid Atomic", n, || ferroid.next_id(|_| spin_loop()).to_raw());
    let snowdon = Snowdon16::default();
    shared(&mut g, S2_16, "snowdon lock-free", n, || snowdon_next(&snowdon));
    LazyLock::force(&IDGEN16);
    shared(&mut g, S2_16, "idgenerator IdVecInstance", n, idgen16);
    let floor = CasFloor::<5, 16>::new();
    shared(&mut g, S2_16, "floor: CAS (tick,seq)", n, || floor.next());
    let paused = CasFloor::<5, 16>::new();
    shared(&mut g, S2_16, "floor: CAS, pause after a failed CAS", n, || next_packed_pause::<5, 16>(&paused.state));
    g.finish();

    // 20 sequence bits: the cap (1 048 576 IDs per ms) never binds, so no generator ever
    // waits for the next tick and only the contended hot paths are compared.
    let mut g = shared_group(c, S2_20, s);
    shared(&mut g, S2_20, "ours ShardA::generate", n, || ShardA::generate().get().cast_unsigned());
    let ferroid = ferroid20_new();
    shared(&mut g, S2_20, "ferroid Atomic", n, || ferroid.next_id(|_| spin_loop()).to_raw());
    let floor = CasFloor::<3, 20>::new();
    shared(&mut g, S2_20, "floor: CAS (tick,seq)", n, || floor.next());
    let standalone = typed_snowflake::Generator::builder(ShardA::LAYOUT).worker(1).build().expect("generator");
    shared(&mut g, S2_20, "ours Generator::next_raw, standalone", n, || {
        standalone.next_raw().expect("next_raw").cast_unsigned()
    });
    let outlined = CasFloor::<3, 20>::new();
    shared(&mut g, S2_20, "floor: CAS, called out of line, Result", n, || {
        next_packed_outlined::<3, 20>(&outlined.state).expect("infallible")
    });
    g.finish();
}

// ---------------------------------------------------------------------------------------
// Scenario 3: sustained rate against the cap.

struct Sustained {
    name: String,
    cap_per_s: f64,
    rate: f64,
    dups: usize,
    unordered: usize,
    lead_ms: i64,
    /// Ticks spanned, ticks without an ID, inner ticks partly used (summed over runs).
    ticks: (u64, u64, u64),
}

static SUSTAINED: Mutex<Vec<Sustained>> = Mutex::new(Vec::new());

/// Generates for `s.sustained` into a pre-touched buffer, `s.sustained_runs` times;
/// the median rate, and every duplicate, out-of-order ID and lead over the wall clock.
/// `cap_per_tick` IDs per `tick_ms`; `timestamp_ms` decodes an ID's Unix milliseconds.
fn sustained(
    s: &Settings,
    buf: &mut [u64],
    name: &str,
    cap_per_tick: u64,
    tick_ms: u64,
    timestamp_ms: impl Fn(u64) -> u64,
    mut f: impl FnMut() -> u64,
) {
    let mut rates = Vec::new();
    let (mut dups, mut unordered, mut lead_ms) = (0, 0, i64::MIN);
    let mut ticks = (0, 0, 0);
    for _ in 0..s.sustained_runs {
        let mut i = 0;
        let start = Instant::now();
        let deadline = start + s.sustained;
        'run: loop {
            for _ in 0..256 {
                if i == buf.len() {
                    break 'run;
                }
                buf[i] = f();
                i += 1;
            }
            if Instant::now() >= deadline {
                break;
            }
        }
        let elapsed = start.elapsed();
        let now_ms = unix_ms();
        rates.push(i as f64 / elapsed.as_secs_f64());
        let ids = &mut buf[..i];
        if let Some(&last) = ids.last() {
            lead_ms = lead_ms.max(timestamp_ms(last).cast_signed() - now_ms.cast_signed());
        }
        unordered += ids.windows(2).filter(|w| w[1] <= w[0]).count();
        ids.sort_unstable();
        let mut distinct = usize::from(!ids.is_empty());
        for w in ids.windows(2) {
            if w[1] != w[0] {
                distinct += 1;
            }
        }
        dups += i - distinct;
        let (spanned, empty, partial) = tick_use(ids, cap_per_tick, |id| timestamp_ms(id) / tick_ms);
        ticks.0 += spanned;
        ticks.1 += empty;
        ticks.2 += partial;
    }
    assert_ours_sound(name, dups, unordered);
    let rate = median(&rates).unwrap_or(0.0);
    let cap_per_s = cap_per_tick as f64 * 1000.0 / tick_ms as f64;
    println!(
        "sustained  {name:<34} {:>8.3} M IDs/s  {:>6.1}% of cap  dups {dups}  out of order {unordered}  lead {lead_ms} ms  \
         ticks spanned {}, without IDs {}, partly used {}",
        rate / 1e6,
        100.0 * rate / cap_per_s,
        ticks.0,
        ticks.1,
        ticks.2,
    );
    SUSTAINED.lock().unwrap_or_else(std::sync::PoisonError::into_inner).push(Sustained {
        name: name.to_owned(),
        cap_per_s,
        rate,
        dups,
        unordered,
        lead_ms,
        ticks,
    });
}

/// Over sorted IDs: the ticks from the first ID's to the last's, how many of them hold no
/// ID, and how many inner ticks (not the first or last) hold fewer than `cap` IDs.
fn tick_use(sorted: &[u64], cap: u64, tick_of: impl Fn(u64) -> u64) -> (u64, u64, u64) {
    let (Some(&first), Some(&last)) = (sorted.first(), sorted.last()) else {
        return (0, 0, 0);
    };
    let (first, last) = (tick_of(first), tick_of(last));
    let (mut used, mut partial) = (0, 0);
    let mut i = 0;
    while i < sorted.len() {
        let tick = tick_of(sorted[i]);
        let mut n = 0;
        while i < sorted.len() && tick_of(sorted[i]) == tick {
            n += 1;
            i += 1;
        }
        used += 1;
        if n < cap && tick != first && tick != last {
            partial += 1;
        }
    }
    let spanned = last - first + 1;
    (spanned, spanned.saturating_sub(used), partial)
}

/// The Unix milliseconds of a Snowflake with `shift` bits below the time field.
fn ts(shift: u32, epoch_ms: u64) -> impl Fn(u64) -> u64 {
    move |id| (id >> shift) + epoch_ms
}

fn scenario_sustained(s: &Settings) {
    // Enough for 200 ms at 80 M IDs/s; touched once so page faults stay out of the timing.
    let len = if s.full { 16_000_000 } else { 1_000_000 };
    let mut buf = vec![1u64; len];
    let b = &mut buf[..];
    let ours_ts12 = |id: u64| Id12::try_from(id.cast_signed()).map_or(0, |id| id.timestamp_ms().cast_unsigned());
    let ours_ts16 = |id: u64| Id16::try_from(id.cast_signed()).map_or(0, |id| id.timestamp_ms().cast_unsigned());

    sustained(s, b, "ours Id12 (12-bit)", 4096, 1, ours_ts12, ours12);
    let ferroid = ferroid12_new();
    sustained(s, b, "ferroid Atomic (12-bit)", 4096, 1, ts(22, TWITTER_EPOCH_MS), || {
        ferroid.next_id(|_| spin_loop()).to_raw()
    });
    let snowflaked = snowflaked_new();
    sustained(s, b, "snowflaked sync (12-bit)", 4096, 1, ts(22, EPOCH_2020), || snowflaked.generate::<u64>());
    let rs = rs_snowflake_new();
    sustained(s, b, "rs-snowflake in Mutex (12-bit)", 4096, 1, ts(22, 0), || rs_snowflake_next(&rs));
    let snowdon = Snowdon12::default();
    sustained(s, b, "snowdon lock-free (12-bit)", 4096, 1, ts(22, EPOCH_2020), || snowdon_next(&snowdon));
    LazyLock::force(&IDGEN12);
    sustained(s, b, "idgenerator (12-bit)", 4096, 1, ts(22, EPOCH_2020), idgen12);
    let floor = CasFloor::<10, 12>::new();
    sustained(s, b, "floor: CAS (12-bit)", 4096, 1, ts(22, EPOCH_2020), || floor.next());
    let sony = sonyflake_new();
    sustained(
        s,
        b,
        "sonyflake (8-bit per 10 ms)",
        256,
        10,
        |id| (id >> 24) * 10 + SONYFLAKE_EPOCH_MS,
        || sonyflake_next(&sony),
    );

    sustained(s, b, "ours Id16 (16-bit)", 65_536, 1, ours_ts16, ours16);
    let ferroid = ferroid16_new();
    sustained(s, b, "ferroid Atomic (16-bit)", 65_536, 1, ts(21, EPOCH_2021), || {
        ferroid.next_id(|_| spin_loop()).to_raw()
    });
    let snowdon = Snowdon16::default();
    sustained(s, b, "snowdon lock-free (16-bit)", 65_536, 1, ts(21, EPOCH_2021), || snowdon_next(&snowdon));
    LazyLock::force(&IDGEN16);
    sustained(s, b, "idgenerator (16-bit)", 65_536, 1, ts(21, EPOCH_2021), idgen16);
    let floor = CasFloor::<5, 16>::new();
    sustained(s, b, "floor: CAS (16-bit)", 65_536, 1, ts(21, EPOCH_2020), || floor.next());
}

// ---------------------------------------------------------------------------------------
// Scenario 4: two types on two threads, against each alone.

/// This thread's time on a CPU, in nanoseconds (Linux `schedstat`), so that time spent
/// waiting for a core on a shared machine is not counted against a generator.
fn thread_cpu_ns() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    text.split_whitespace().next()?.parse().ok()
}

/// IDs per wall-clock second and per second on a CPU, from `f` over `d`.
fn rate_for(d: Duration, f: &impl Fn() -> u64) -> (f64, f64) {
    let cpu_start = thread_cpu_ns();
    let start = Instant::now();
    let mut n = 0u64;
    loop {
        for _ in 0..1024 {
            black_box(f());
        }
        n += 1024;
        let elapsed = start.elapsed();
        if elapsed >= d {
            let wall = n as f64 / elapsed.as_secs_f64();
            let cpu = match (cpu_start, thread_cpu_ns()) {
                (Some(a), Some(b)) if b > a => n as f64 / ((b - a) as f64 / 1e9),
                _ => wall,
            };
            return (wall, cpu);
        }
    }
}

struct Pair {
    name: &'static str,
    /// Medians per second on a CPU: A alone, B alone, A together, B together.
    cpu: [f64; 4],
    /// The same per wall-clock second.
    wall: [f64; 4],
}

static PAIRS: Mutex<Vec<Pair>> = Mutex::new(Vec::new());

/// Median rates of `a` alone, `b` alone, and both at once on two threads.
fn pair(s: &Settings, name: &'static str, a: impl Fn() -> u64 + Sync, b: impl Fn() -> u64 + Sync) {
    let mut runs: [Vec<(f64, f64)>; 4] = Default::default();
    for _ in 0..s.cache_line_runs {
        runs[0].push(thread::scope(|scope| scope.spawn(|| rate_for(s.cache_line, &a)).join().expect("a")));
        runs[1].push(thread::scope(|scope| scope.spawn(|| rate_for(s.cache_line, &b)).join().expect("b")));
        let barrier = Barrier::new(2);
        let (ra, rb) = thread::scope(|scope| {
            let ha = scope.spawn(|| {
                barrier.wait();
                rate_for(s.cache_line, &a)
            });
            let hb = scope.spawn(|| {
                barrier.wait();
                rate_for(s.cache_line, &b)
            });
            (ha.join().expect("a"), hb.join().expect("b"))
        });
        runs[2].push(ra);
        runs[3].push(rb);
    }
    let m = |i: usize, cpu: bool| {
        let values: Vec<f64> = runs[i].iter().map(|r| if cpu { r.1 } else { r.0 }).collect();
        median(&values).unwrap_or(0.0)
    };
    let p = Pair {
        name,
        cpu: [m(0, true), m(1, true), m(2, true), m(3, true)],
        wall: [m(0, false), m(1, false), m(2, false), m(3, false)],
    };
    println!(
        "cache_line {name:<44} per CPU-second: alone {:.1} + {:.1} M/s, together {:.1} + {:.1} M/s, ratio {:.2} \
         (wall-clock ratio {:.2})",
        p.cpu[0] / 1e6,
        p.cpu[1] / 1e6,
        p.cpu[2] / 1e6,
        p.cpu[3] / 1e6,
        pair_ratio(&p.cpu),
        pair_ratio(&p.wall),
    );
    PAIRS.lock().unwrap_or_else(std::sync::PoisonError::into_inner).push(p);
}

/// Together against alone, per thread: the mean of `A together / A alone` and `B together / B alone`.
fn pair_ratio(r: &[f64; 4]) -> f64 {
    f64::midpoint(r[2] / r[0], r[3] / r[1])
}

/// Two floor states in one cache line, as the control.
struct SameLine {
    a: AtomicU64,
    b: AtomicU64,
}

fn scenario_cache_line(s: &Settings) {
    pair(
        s,
        "ours ShardA + ShardB (own lines)",
        || ShardA::generate().get().cast_unsigned(),
        || ShardB::generate().get().cast_unsigned(),
    );
    let (fa, fb) = (CasFloor::<3, 20>::new(), CasFloor::<3, 20>::new());
    pair(s, "floor CAS x2, padded (control)", || fa.next(), || fb.next());
    let same = SameLine { a: AtomicU64::new(0), b: AtomicU64::new(0) };
    pair(
        s,
        "floor CAS x2, same cache line (control)",
        || next_packed::<3, 20>(&same.a),
        || next_packed::<3, 20>(&same.b),
    );
}

// ---------------------------------------------------------------------------------------
// The summary.

fn fmt_ratio(value: Option<f64>, base: Option<f64>) -> String {
    match (value, base) {
        (Some(v), Some(b)) if b > 0.0 => format!("{:.2}x", v / b),
        _ => "-".into(),
    }
}

fn fmt_value(value: Option<f64>, digits: usize) -> String {
    value.map_or_else(|| "-".into(), |v| format!("{v:.digits$}"))
}

fn rows(group: &'static str) -> Vec<(String, String)> {
    let records = RECORDS.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    records.iter().filter(|r| r.group == group).map(|r| (r.name.clone(), r.note.clone())).collect()
}

fn summary(s: &Settings) {
    println!();
    println!("==== peers summary (medians; machine shared and noisy: compare ratios, not absolutes) ====");

    let names = rows(S1);
    if !names.is_empty() {
        let floor = measured_median(S1, "floor: CAS (tick,seq), relaxed tick", s.s1_sample_size);
        let ferroid = measured_median(S1, "ferroid Atomic (41/10/12)", s.s1_sample_size);
        println!();
        println!("1. Single thread, burst below the cap (ns per ID; lower is better)");
        println!("| generator | ns/ID | vs CAS floor | vs ferroid |");
        println!("|---|---:|---:|---:|");
        for (name, _) in &names {
            let v = measured_median(S1, name, s.s1_sample_size);
            println!("| {name} | {} | {} | {} |", fmt_value(v, 1), fmt_ratio(v, floor), fmt_ratio(v, ferroid));
        }
    }

    for (group, title) in [
        (S2_12, "2a. Two threads sharing one generator, 12-bit sequence (cap 4.096 M/s) (M IDs/s; higher is better)"),
        (S2_16, "2b. Two threads sharing one generator, 16-bit sequence (cap 65.5 M/s) (M IDs/s; higher is better)"),
        (S2_20, "2c. Two threads sharing one generator, 20-bit sequence (cap never binds) (M IDs/s; higher is better)"),
    ] {
        let names = rows(group);
        if names.is_empty() {
            continue;
        }
        let floor = measured_median(group, "floor: CAS (tick,seq)", s.s2_sample_size);
        let ferroid = measured_median(group, "ferroid Atomic", s.s2_sample_size);
        println!();
        println!("{title}");
        println!("| generator | M IDs/s | vs CAS floor | vs ferroid | check (2 threads, up to 100k IDs each) |");
        println!("|---|---:|---:|---:|---|");
        for (name, note) in &names {
            let v = measured_median(group, name, s.s2_sample_size);
            println!("| {name} | {} | {} | {} | {note} |", fmt_value(v, 2), fmt_ratio(v, floor), fmt_ratio(v, ferroid));
        }
    }

    let sustained = SUSTAINED.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    if !sustained.is_empty() {
        println!();
        println!(
            "3. Sustained, one thread, {} ms x {} (median IDs/s against the layout's cap)",
            s.sustained.as_millis(),
            s.sustained_runs
        );
        println!(
            "| generator | M IDs/s | cap M/s | % of cap | duplicates | out of order | last ID ahead of wall clock \
             | ticks spanned / without IDs / partly used |"
        );
        println!("|---|---:|---:|---:|---:|---:|---:|---:|");
        for r in sustained.iter() {
            println!(
                "| {} | {:.3} | {:.3} | {:.1}% | {} | {} | {} ms | {} / {} / {} |",
                r.name,
                r.rate / 1e6,
                r.cap_per_s / 1e6,
                100.0 * r.rate / r.cap_per_s,
                r.dups,
                r.unordered,
                r.lead_ms,
                r.ticks.0,
                r.ticks.1,
                r.ticks.2
            );
        }
    }
    drop(sustained);

    let pairs = PAIRS.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    if !pairs.is_empty() {
        println!();
        println!(
            "4. Two types, one thread each, against each alone ({} ms x {}, medians, M IDs per second on a CPU)",
            s.cache_line.as_millis(),
            s.cache_line_runs
        );
        println!("| pair | A alone | B alone | A together | B together | together / alone | same, wall clock |");
        println!("|---|---:|---:|---:|---:|---:|---:|");
        for p in pairs.iter() {
            println!(
                "| {} | {:.1} | {:.1} | {:.1} | {:.1} | {:.2} | {:.2} |",
                p.name,
                p.cpu[0] / 1e6,
                p.cpu[1] / 1e6,
                p.cpu[2] / 1e6,
                p.cpu[3] / 1e6,
                pair_ratio(&p.cpu),
                pair_ratio(&p.wall)
            );
        }
    }
    drop(pairs);

    let stats = Registry::stats();
    if !stats.is_empty() {
        println!();
        println!("Our generators' slow-path counters (Registry::stats):");
        for st in stats {
            println!(
                "  {}: exhausted waits {}, clock step-backs {}, errors {}",
                st.name, st.exhausted_waits, st.clock_step_backs, st.errors
            );
        }
    }
}

fn main() {
    let s = Settings::from_args();
    let mut c = Criterion::default().configure_from_args();
    if s.runs(S1) {
        scenario_burst(&mut c, &s);
    }
    if s.runs("two_threads_shared") {
        scenario_shared(&mut c, &s);
    }
    if s.runs("sustained") {
        scenario_sustained(&s);
    }
    if s.runs("cache_line") {
        scenario_cache_line(&s);
    }
    c.final_summary();
    summary(&s);
}
