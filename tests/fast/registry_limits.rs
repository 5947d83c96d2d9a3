//! Registry options at their extremes. The registry is configured once per process, so
//! each scenario runs in a fresh process: the test re-runs this test binary with `--exact
//! child` and the scenario's name in `TYPED_SNOWFLAKE_TEST_CHILD`, and checks that the
//! child ran to the end.

use crate::child;

use std::sync::atomic::{AtomicI64, Ordering};
use std::time::Duration;

use typed_snowflake::{Clock, GenerateError, MAX_HIGH_WATER_RESERVE, Registry, RegistryError, SnowflakeId};

type TestResult = Result<(), Box<dyn std::error::Error>>;

#[derive(SnowflakeId, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
#[layout(time = 41, worker = 10, seq = 12, epoch = "2020-01-01")]
struct EventId(i64);

/// Runs `scenario` in a fresh process; fails unless it ran to the end.
fn run(scenario: &str) -> TestResult {
    let mut command = child::command(scenario);
    command.env_remove("SNOWFLAKE_WORKER_ID");
    child::run(scenario, command, &())?;
    Ok(())
}

/// A reservation longer than `MAX_HIGH_WATER_RESERVE` is refused by `install()`, not at the
/// first ID.
#[test]
fn high_water_reserve_above_the_maximum_is_refused_at_install() -> TestResult {
    run("reserve_too_long")
}

/// With `batch_limit(usize::MAX)`, `generate_batch` does not allocate the batch up front:
/// the largest batches end when the time field does, not in a panic or an abort.
#[test]
fn largest_batch_limit_never_allocates_up_front() -> TestResult {
    run("batch_limit_max")
}

/// A clock one millisecond further on at every reading.
#[derive(Debug)]
struct Ticking(AtomicI64);

impl Clock for Ticking {
    fn now_ms(&self) -> i64 {
        self.0.fetch_add(1, Ordering::SeqCst)
    }
}

/// The entry point of every scenario (see `common/child.rs`); ignored in the parent,
/// and does nothing there.
#[test]
#[ignore = "the entry point of the child processes: the other tests run it"]
fn child() -> TestResult {
    let Some(scenario) = child::scenario() else { return Ok(()) };
    match scenario.as_str() {
        "reserve_too_long" => {
            let dir = tempfile::tempdir()?;
            for reserve in [Duration::MAX, MAX_HIGH_WATER_RESERVE + Duration::from_millis(1)] {
                let result = Registry::builder().high_water(dir.path(), reserve).install();
                let Err(RegistryError::HighWater { path, reason, source: None }) = result else {
                    return Err(format!("{reserve:?}: {result:?}").into());
                };
                assert_eq!(std::path::Path::new(&path), dir.path());
                assert!(reason.contains("MAX_HIGH_WATER_RESERVE"), "{reason}");
            }
            Registry::builder().high_water(dir.path(), MAX_HIGH_WATER_RESERVE).install()?;
            EventId::try_generate()?;
        }
        "batch_limit_max" => {
            // Three ticks before the end of the time field.
            let clock = Ticking(AtomicI64::new(EventId::MAX_TIMESTAMP_MS - 2));
            Registry::builder().batch_limit(usize::MAX).clock(clock).install()?;
            let exhausted = GenerateError::TimeExhausted { type_name: "EventId", max_ms: EventId::MAX_TIMESTAMP_MS };
            for n in [usize::MAX, 1 << 40] {
                assert_eq!(EventId::generate_batch(n), Err(exhausted.clone()), "a batch of {n}");
            }
        }
        other => return Err(format!("unknown scenario {other}").into()),
    }
    child::done(&scenario);
    Ok(())
}
