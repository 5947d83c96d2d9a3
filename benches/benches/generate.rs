//! The generator's cost per ID, beside the floor: one uncontended compare-and-swap on a
//! packed `u64` with the tick from a relaxed atomic load.
//!
//! Groups:
//! - `burst`: single-thread bursts that start right after a tick and stay below the
//!   sequence cap (12 bits: k = 2 048 < 4 096), so nothing waits: the hot path alone.
//!   Each burst first waits for the ticker's millisecond to change; that wait is not
//!   timed, so the wall time of this group is about 50 times its measured time.
//! - `hot`: back-to-back IDs on a layout whose cap (22 bits: 4 194 304 per ms) one thread
//!   cannot reach: the hot path including tick changes, never a wait.
//! - `shared`: two threads on one generator (16 bits, cap out of reach): contention.
//! - `sustained`: back-to-back IDs on the 12-bit layout, where the cap (4 096 per ms,
//!   244.1 ns per ID) is the limit: rate ÷ cap shows how close the generator runs to it.
//! - `lease`: back-to-back IDs on one layout (5 worker bits, 17 sequence bits: a cap one
//!   thread cannot reach), without a lease and on a worker-ID lease from the Redis at
//!   `REDIS_URL` (default `redis://127.0.0.1:6379`; skipped when it does not answer): the
//!   lease costs a lock about every 100 ms of issuing, outside the hot path. The namespace is
//!   `typed-snowflake-bench`; the first run in it waits out one lease TTL before its first ID.
//!
//! Run: `cargo bench --bench generate -- --warm-up-time 1 --measurement-time 3`.

use std::hint::black_box;
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use criterion::{Criterion, Throughput};
use typed_snowflake::clock::MonotonicClock;
use typed_snowflake::{Clock, Generator, Layout, SnowflakeId};

#[derive(SnowflakeId, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
#[layout(time = 41, worker = 10, seq = 12, epoch = "2020-01-01")]
struct EventId(i64);

const EPOCH: i64 = 1_577_836_800_000;
/// IDs per burst: below the 12-bit cap of 4 096 per tick, with room to spare.
const BURST: u64 = 2_048;

fn ticker() -> &'static AtomicI64 {
    MonotonicClock.cached().expect("the ticker thread runs")
}

/// The floor: what one ID costs at least with this design, without the generator's
/// checks (limit, sequence cap, epoch): a relaxed load of the tick and one CAS.
struct Floor {
    tick: &'static AtomicI64,
    state: AtomicU64,
}

impl Floor {
    #[inline]
    fn next(&self) -> u64 {
        #[allow(clippy::cast_sign_loss, reason = "Unix milliseconds after the epoch are positive")]
        let now = (self.tick.load(Ordering::Relaxed) - EPOCH) as u64;
        let mut cur = self.state.load(Ordering::Relaxed);
        loop {
            let next = if now > cur >> 12 { now << 12 } else { cur + 1 };
            match self.state.compare_exchange_weak(cur, next, Ordering::Relaxed, Ordering::Relaxed) {
                Ok(_) => return next,
                Err(actual) => cur = actual,
            }
        }
    }
}

/// Times `iters` calls of `op` in bursts of at most [`BURST`], each started right after
/// the ticker's millisecond changes; only the bursts are timed.
fn bursts(iters: u64, mut op: impl FnMut()) -> Duration {
    let tick = ticker();
    let mut left = iters;
    let mut total = Duration::ZERO;
    while left > 0 {
        let k = left.min(BURST);
        let seen = tick.load(Ordering::Relaxed);
        while tick.load(Ordering::Relaxed) == seen {
            std::hint::spin_loop();
        }
        let start = Instant::now();
        for _ in 0..k {
            op();
        }
        total += start.elapsed();
        left -= k;
    }
    total
}

fn generator(seq_bits: u32, worker_bits: u32) -> Generator {
    let layout = Layout::new(41, worker_bits, seq_bits, EPOCH).expect("a valid layout");
    Generator::builder(layout).worker(layout.max_worker().min(1)).build().expect("a generator")
}

fn burst(c: &mut Criterion) {
    let standalone = generator(12, 10);
    let floor = Floor { tick: ticker(), state: AtomicU64::new(0) };
    EventId::generate();
    let mut group = c.benchmark_group("burst");
    group.throughput(Throughput::Elements(1));
    // Measured time only; the untimed waits for the next tick make the wall time ~50x.
    group.warm_up_time(Duration::from_millis(30));
    group.measurement_time(Duration::from_millis(100));
    group.sample_size(20);
    group.bench_function("floor_cas", |b| b.iter_custom(|iters| bursts(iters, || _ = black_box(floor.next()))));
    group.bench_function("next_raw_seq12", |b| {
        b.iter_custom(|iters| bursts(iters, || _ = black_box(standalone.next_raw())));
    });
    // The same bursts on the 22-bit layout of `hot`: the layout costs nothing.
    let wide = generator(22, 0);
    group.bench_function("next_raw_seq22", |b| {
        b.iter_custom(|iters| bursts(iters, || _ = black_box(wide.next_raw())));
    });
    group.bench_function("derived_generate_seq12", |b| {
        b.iter_custom(|iters| bursts(iters, || _ = black_box(EventId::generate())));
    });
    group.finish();
    assert_eq!(standalone.stats().exhausted_waits, 0, "a burst reached the sequence cap");
}

fn hot(c: &mut Criterion) {
    let wide = generator(22, 0);
    let floor = Floor { tick: ticker(), state: AtomicU64::new(0) };
    let mut group = c.benchmark_group("hot");
    group.throughput(Throughput::Elements(1));
    group.bench_function("floor_cas", |b| b.iter(|| floor.next()));
    group.bench_function("next_raw_seq22", |b| b.iter(|| wide.next_raw()));
    group.finish();
}

/// Wall time for `iters` IDs taken by two threads together from one generator.
fn two_threads(iters: u64, op: &(impl Fn() + Sync)) -> Duration {
    let half = iters.div_ceil(2);
    let start = Instant::now();
    std::thread::scope(|scope| {
        for _ in 0..2 {
            scope.spawn(|| {
                for _ in 0..half {
                    op();
                }
            });
        }
    });
    start.elapsed()
}

fn shared(c: &mut Criterion) {
    let wide = generator(16, 6);
    let floor = Floor { tick: ticker(), state: AtomicU64::new(0) };
    let mut group = c.benchmark_group("shared");
    group.throughput(Throughput::Elements(1));
    group.bench_function("floor_cas_2_threads", |b| {
        b.iter_custom(|iters| two_threads(iters, &|| _ = black_box(floor.next())))
    });
    group.bench_function("next_raw_seq16_2_threads", |b| {
        b.iter_custom(|iters| two_threads(iters, &|| _ = black_box(wide.next_raw())));
    });
    group.finish();
}

fn sustained(c: &mut Criterion) {
    let capped = generator(12, 10);
    let mut group = c.benchmark_group("sustained");
    group.throughput(Throughput::Elements(1));
    group.bench_function("next_raw_seq12", |b| b.iter(|| capped.next_raw()));
    group.bench_function("next_raw_seq12_2_threads", |b| {
        b.iter_custom(|iters| two_threads(iters, &|| _ = black_box(capped.next_raw())));
    });
    group.finish();
    let stats = capped.stats();
    eprintln!(
        "sustained seq12: cap {} IDs/s; {} waits for the next tick; {} errors",
        Layout::new(41, 10, 12, EPOCH).map_or(0, |l| (l.max_seq() + 1) * 1_000),
        stats.exhausted_waits,
        stats.errors
    );
}

fn lease(c: &mut Criterion) {
    use typed_snowflake::worker::lease::WorkerLease;

    let url = std::env::var("REDIS_URL").unwrap_or_else(|_| "redis://127.0.0.1:6379".into());
    let lease = match WorkerLease::from_url(&url)
        .namespace("typed-snowflake-bench")
        .worker_bits(5)
        .wait_for_store(Duration::ZERO)
        .acquire()
    {
        Ok(lease) => lease,
        Err(e) => {
            eprintln!("lease group skipped: no lease from {url}: {e}");
            return;
        }
    };
    let layout = Layout::new(41, 5, 17, EPOCH).expect("a valid layout");
    let plain = Generator::builder(layout).worker(lease.worker()).build().expect("a generator");
    let leased = Generator::builder(layout).lease(lease.clone()).build().expect("a generator");
    let mut group = c.benchmark_group("lease");
    group.throughput(Throughput::Elements(1));
    group.bench_function("next_raw_no_lease", |b| b.iter(|| plain.next_raw()));
    group.bench_function("next_raw_leased", |b| b.iter(|| leased.next_raw()));
    group.finish();
    assert_eq!(leased.stats().errors, 0, "the lease fenced the generator during the run");
    let _ = lease.release();
}

fn main() {
    let mut c = Criterion::default().configure_from_args();
    burst(&mut c);
    hot(&mut c);
    shared(&mut c);
    sustained(&mut c);
    lease(&mut c);
    c.final_summary();
}
