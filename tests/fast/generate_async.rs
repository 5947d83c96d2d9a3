//! `generate_async` (feature `tokio`): where generation would block the thread (a spent
//! sequence, a `Wait` policy), it awaits, so the other tasks of a current-thread runtime
//! keep running; and many tasks on a multi-thread runtime get no ID twice.
//!
//! Each runtime runs on a thread of its own while the test thread waits for its result with
//! a hang guard: a generation that blocked the runtime's only thread would otherwise hang
//! the test instead of failing it.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use typed_snowflake::{GenerateError, Generator, Layout, ManualClock, SnowflakeId, StepBack};

type TestResult = Result<(), Box<dyn std::error::Error + Send + Sync>>;

/// 2023-11-14T22:13:20Z.
const T0: i64 = 1_700_000_000_000;

/// 256 IDs per millisecond.
#[derive(SnowflakeId, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
#[layout(time = 41, worker = 10, seq = 8, epoch = "2020-01-01")]
struct TaskId(i64);

/// Four IDs per tick.
fn tiny() -> Layout {
    Layout::new(41, 10, 2, 1_577_836_800_000).expect("a valid layout")
}

/// Runs `test` on a runtime built by `build`, on a thread of its own; fails, rather than
/// hangs, if it has not finished within a minute (a hang guard, not a timing check).
fn on_runtime<F>(
    build: fn() -> std::io::Result<tokio::runtime::Runtime>,
    test: impl FnOnce() -> F + Send + 'static,
) -> TestResult
where
    F: Future<Output = TestResult>,
{
    let (done, result) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let outcome = build().map_err(Into::into).and_then(|runtime| runtime.block_on(test()));
        let _ = done.send(outcome);
    });
    result
        .recv_timeout(Duration::from_secs(60))
        .map_err(|_| "the runtime's thread hung for a minute: a generation blocked it")?
}

fn current_thread() -> std::io::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_current_thread().enable_time().build()
}

fn multi_thread() -> std::io::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread().worker_threads(4).enable_time().build()
}

/// A task waits for a spent tick; another task on the same (only) thread keeps running
/// meanwhile, sees the wait begin, and moves the clock on, which ends the wait.
#[test]
fn a_spent_tick_awaits_while_other_tasks_run() -> TestResult {
    on_runtime(current_thread, || async {
        let clock = Arc::new(ManualClock::new(T0));
        let generator = Arc::new(Generator::builder(tiny()).worker(3).clock(Arc::clone(&clock)).build()?);
        let mut ids = Vec::new();
        for _ in 0..4 {
            ids.push(generator.next_raw_async().await?);
        }
        let waiter = tokio::spawn({
            let generator = Arc::clone(&generator);
            async move { generator.next_raw_async().await }
        });
        // The other task: it runs only if the waiter yields the thread.
        let mut turns_while_waiting = 0u64;
        while generator.stats().exhausted_waits == 0 || turns_while_waiting < 100 {
            if generator.stats().exhausted_waits > 0 {
                assert!(!waiter.is_finished(), "an ID was issued from a spent tick");
                turns_while_waiting += 1;
            }
            tokio::task::yield_now().await;
        }
        clock.advance(1);
        let next = waiter.await??;
        assert_eq!(tiny().timestamp_ms_of(next), T0 + 1);
        assert_eq!(tiny().sequence_of(next), 0);
        assert!(next > ids[3]);
        assert_eq!(generator.stats().exhausted_waits, 1);
        Ok(())
    })
}

/// A `Wait` policy waits for a stepped-back clock by awaiting: the task that moves the clock
/// back runs on the same thread.
#[test]
fn a_wait_policy_awaits_the_clock() -> TestResult {
    on_runtime(current_thread, || async {
        let clock = Arc::new(ManualClock::new(T0).with_policy(StepBack::Wait { max: Duration::from_secs(3_600) }));
        let generator = Arc::new(Generator::builder(tiny()).worker(3).clock(Arc::clone(&clock)).build()?);
        let first = generator.next_raw_async().await?;
        clock.step_back(1);
        let waiter = tokio::spawn({
            let generator = Arc::clone(&generator);
            async move { generator.next_raw_async().await }
        });
        while generator.stats().clock_step_backs == 0 {
            tokio::task::yield_now().await;
        }
        assert!(!waiter.is_finished(), "issued while the clock was behind");
        clock.set(T0);
        let next = waiter.await??;
        assert!(next > first);
        assert_eq!(tiny().timestamp_ms_of(next), T0);
        assert_eq!(generator.stats().errors, 0);
        // A bound the clock does not meet ends in the error, awaited as well.
        let clock = Arc::new(ManualClock::new(T0).with_policy(StepBack::Wait { max: Duration::from_millis(5) }));
        let generator = Generator::builder(tiny()).clock(Arc::clone(&clock)).build()?;
        generator.next_raw_async().await?;
        clock.step_back(1);
        assert_eq!(generator.next_raw_async().await, Err(GenerateError::ClockBackwards { behind_ms: 1 }));
        Ok(())
    })
}

/// Through the derived type and the trait, on the default clock: two tasks on one thread
/// take 3 000 IDs of a type that issues 256 per millisecond, so both wait for ticks many
/// times; each task's IDs increase, and none repeats.
#[test]
fn derived_types_on_one_thread() -> TestResult {
    async fn take<T: SnowflakeId>(n: usize) -> Vec<i64> {
        let mut ids = Vec::with_capacity(n);
        for _ in 0..n {
            ids.push(T::generate_async().await.to_raw());
        }
        ids
    }
    on_runtime(current_thread, || async {
        let a = tokio::spawn(take::<TaskId>(1_500));
        let b = tokio::spawn(async {
            let mut ids = Vec::new();
            for _ in 0..1_500 {
                ids.push(TaskId::try_generate_async().await?.get());
            }
            Ok::<_, GenerateError>(ids)
        });
        let (a, b) = (a.await?, b.await??);
        check_unique(vec![a, b], 3_000)
    })
}

/// Many tasks on a multi-thread runtime: no ID twice.
#[test]
fn many_tasks_on_many_threads_get_no_duplicates() -> TestResult {
    on_runtime(multi_thread, || async {
        let started = Arc::new(AtomicU64::new(0));
        let tasks: Vec<_> = (0..16)
            .map(|_| {
                let started = Arc::clone(&started);
                tokio::spawn(async move {
                    started.fetch_add(1, Ordering::Relaxed);
                    let mut ids = Vec::with_capacity(5_000);
                    for _ in 0..5_000 {
                        ids.push(TaskId::generate_async().await.get());
                    }
                    ids
                })
            })
            .collect();
        let mut per_task = Vec::new();
        for task in tasks {
            per_task.push(task.await?);
        }
        assert_eq!(started.load(Ordering::Relaxed), 16);
        check_unique(per_task, 80_000)
    })
}

fn check_unique(per_task: Vec<Vec<i64>>, total: usize) -> TestResult {
    for (task, ids) in per_task.iter().enumerate() {
        assert!(ids.windows(2).all(|w| w[0] < w[1]), "task {task}: IDs not increasing");
        for &id in ids {
            TaskId::try_from(id)?;
        }
    }
    let mut all: Vec<i64> = per_task.into_iter().flatten().collect();
    assert_eq!(all.len(), total);
    all.sort_unstable();
    all.dedup();
    assert_eq!(all.len(), total, "{} duplicate IDs", total - all.len());
    Ok(())
}
