//! The process-wide registry. It is configured once per process, so each scenario runs in a
//! fresh process: the test re-runs this test binary with `--exact child`, the scenario's
//! name in `TYPED_SNOWFLAKE_TEST_CHILD` and the environment it needs, and checks that the
//! child ran to the end.

use crate::child;
#[cfg(feature = "lease-redis")]
use crate::servers;

use std::ffi::OsStr;
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use typed_snowflake::{
    GenerateError, ManualClock, Registry, RegistryError, SnowflakeId, StepBack, WorkerError, WorkerSource,
};

type TestResult = Result<(), Box<dyn std::error::Error>>;

const WORKER_VAR: &str = "SNOWFLAKE_WORKER_ID";
const LEASE_VAR: &str = "SNOWFLAKE_WORKER_LEASE";

/// Five worker bits: workers 0..=31.
#[derive(SnowflakeId, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
#[layout(time = 42, worker = 5, seq = 16, epoch = "2021-05-05")]
struct Narrow(i64);

/// Ten worker bits: workers 0..=1023.
#[derive(SnowflakeId, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
#[layout(time = 41, worker = 10, seq = 12, epoch = "2020-01-01")]
struct Wide(i64);

/// Four IDs per tick.
#[derive(SnowflakeId, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
#[layout(time = 41, worker = 10, seq = 2, epoch = "2020-01-01")]
struct Tiny(i64);

const T0: i64 = 1_700_000_000_000;

// ---------------------------------------------------------------------------------------
// The parent side
// ---------------------------------------------------------------------------------------

/// Runs `scenario` in a fresh process with `env` (a `None` value removes the variable);
/// returns its standard output.
fn run(scenario: &str, env: &[(&str, Option<&str>)]) -> Result<String, Box<dyn std::error::Error>> {
    let env: Vec<(&str, Option<&OsStr>)> = env.iter().map(|&(name, value)| (name, value.map(OsStr::new))).collect();
    run_os(scenario, &env)
}

/// [`run`] with values that need not be UTF-8.
fn run_os(scenario: &str, env: &[(&str, Option<&OsStr>)]) -> Result<String, Box<dyn std::error::Error>> {
    let mut command = child::command(scenario);
    command.env_remove(WORKER_VAR).env_remove("HOSTNAME");
    command.env_remove(LEASE_VAR).env_remove("SNOWFLAKE_NAMESPACE").env_remove("SNOWFLAKE_WORKER_SPACE");
    // A store that does not answer is reported at once, not after the default wait for it.
    command.env("SNOWFLAKE_LEASE_WAIT", "0");
    for (name, value) in env {
        match value {
            Some(value) => command.env(name, value),
            None => command.env_remove(name),
        };
    }
    Ok(child::run(scenario, command, &env)?)
}

#[test]
fn default_worker_comes_from_the_environment() -> TestResult {
    run("env_worker", &[(WORKER_VAR, Some("17"))])?;
    run("env_worker_trimmed", &[(WORKER_VAR, Some(" 17\n"))])?;
    run("env_unset", &[])?;
    Ok(())
}

/// Worker 0 by default is said once on stderr, whatever features are on: with `tracing` and
/// no subscriber installed (another dependency turned the feature on), the line is not lost.
#[test]
fn worker_zero_by_default_is_said_on_stderr() -> TestResult {
    let mut command = child::command("env_unset");
    command.env_remove(WORKER_VAR).env_remove(LEASE_VAR).env_remove("HOSTNAME");
    let output = command.output()?;
    child::check("env_unset", &output, &"no worker configuration");
    let stderr = String::from_utf8_lossy(&output.stderr);
    let said = stderr.matches("no worker ID is configured, so this process issues IDs as worker 0").count();
    assert_eq!(said, 1, "{stderr}");
    Ok(())
}

#[test]
fn bad_worker_values_name_the_variable() -> TestResult {
    for value in ["abc", "-1", "", " ", "99999999999999999999", "1.5", "+3", "0x1f", "７"] {
        run("env_bad", &[(WORKER_VAR, Some(value))])?;
    }
    Ok(())
}

#[test]
fn worker_out_of_range_for_one_type_only() -> TestResult {
    run("range_installed", &[])?;
    run("range_env", &[(WORKER_VAR, Some("100"))])?;
    Ok(())
}

#[test]
fn install_once_before_the_first_id() -> TestResult {
    run("second_install", &[])?;
    run("install_after_generate", &[])?;
    run("install_after_worker_id", &[(WORKER_VAR, Some("4"))])?;
    run("install_after_bad_env", &[(WORKER_VAR, Some("forty"))])?;
    Ok(())
}

#[test]
fn lease_variables_that_cannot_work_are_errors_not_worker_zero() -> TestResult {
    run("lease_and_worker_id", &[(WORKER_VAR, Some("3")), ("SNOWFLAKE_WORKER_LEASE", Some("redis://127.0.0.1:1"))])?;
    run("lease_bad_url", &[("SNOWFLAKE_WORKER_LEASE", Some("zookeeper://127.0.0.1:2181"))])?;
    Ok(())
}

/// `SNOWFLAKE_WORKER_LEASE=$REDIS_URL` with `REDIS_URL` unset: an error naming the variable,
/// never worker 0 (nor `SNOWFLAKE_WORKER_ID`'s) behind the lease's back.
#[test]
fn a_blank_lease_variable_is_an_error() -> TestResult {
    for value in ["", " ", "\n\t "] {
        run("lease_blank", &[(LEASE_VAR, Some(value))])?;
        run("lease_blank", &[(LEASE_VAR, Some(value)), (WORKER_VAR, Some("3"))])?;
    }
    // The namespace beside it, blank or not UTF-8, is refused too: before the store is
    // asked (nothing listens on port 1), not replaced by the default namespace.
    run("namespace_blank", &[(LEASE_VAR, Some("redis://127.0.0.1:1")), ("SNOWFLAKE_NAMESPACE", Some(""))])?;
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStrExt;
        let not_utf8 = OsStr::from_bytes(b"redis://127.0.0.1:1/\xff");
        run_os("lease_not_utf8", &[(LEASE_VAR, Some(not_utf8))])?;
        let not_utf8 = OsStr::from_bytes(b"shop\xff");
        let store = OsStr::new("redis://127.0.0.1:1");
        run_os("namespace_not_utf8", &[(LEASE_VAR, Some(store)), ("SNOWFLAKE_NAMESPACE", Some(not_utf8))])?;
    }
    Ok(())
}

/// Without the start-up check, the first type generated bounds `SNOWFLAKE_WORKER_SPACE`:
/// wider than its worker field is an error at once (nothing listens on port 1: the store is
/// never asked), not a lease that fails only when the ID it got is too large.
#[test]
fn a_worker_space_wider_than_the_first_type_is_an_error() -> TestResult {
    run("space_too_wide", &[(LEASE_VAR, Some("redis://127.0.0.1:1")), ("SNOWFLAKE_WORKER_SPACE", Some("4096"))])?;
    Ok(())
}

/// The registry's lease lost behind its back (its key deleted, as an eviction or a
/// `FLUSHALL` would): the lease is acquired again by itself, the registry's generators resume
/// on it without a restart, above every ID they issued before, and `Registry::shutdown()`
/// then releases the new grant.
#[cfg(feature = "lease-redis")]
#[test]
fn a_lost_registry_lease_is_acquired_again_and_released_at_shutdown() -> TestResult {
    let Some(url) = servers::redis_url() else { return Ok(()) };
    let namespace = format!("typed-snowflake-registry-env-{}", std::process::id());
    let _cleanup = servers::RedisKeys { url: url.clone(), pattern: servers::redis_lease_keys(&namespace) };
    run("lost_and_found", &[("REDIS_URL", Some(&url)), ("TEST_NAMESPACE", Some(&namespace))])?;
    Ok(())
}

/// A store that refuses the connection: the error and `generate()`'s panic say so, once.
#[test]
fn a_refused_lease_store_is_named_once() -> TestResult {
    // Nothing listens on port 1.
    run("lease_refused", &[("SNOWFLAKE_WORKER_LEASE", Some("redis://127.0.0.1:1"))])?;
    Ok(())
}

#[test]
fn a_failed_install_never_falls_back_to_the_defaults() -> TestResult {
    run("failed_install_fails_loudly", &[])?;
    run("high_water_empty_path", &[])?;
    Ok(())
}

#[test]
fn hostname_ordinals() -> TestResult {
    for (hostname, expected) in [
        ("web-0", "0"),
        ("orders-31", "31"),
        ("orders-7.orders.default.svc.cluster.local", "7"),
        ("no-ordinal", "none"),
    ] {
        run("hostname", &[("HOSTNAME", Some(hostname)), ("EXPECTED_ORDINAL", Some(expected))])?;
    }
    Ok(())
}

#[test]
fn stats_count_exhausted_waits() -> TestResult {
    run("stats", &[])?;
    Ok(())
}

#[test]
fn registry_options_reach_every_generator() -> TestResult {
    run("options", &[])?;
    run("high_water_bad_dir", &[])?;
    Ok(())
}

/// Two processes in a row on one high-water directory: the second never repeats the first.
#[test]
fn restart_across_processes() -> TestResult {
    let dir = tempfile::tempdir()?;
    let dir_text = dir.path().to_str().ok_or("temporary directory is not UTF-8")?;
    let first = run("hw_first", &[("HW_DIR", Some(dir_text)), (WORKER_VAR, Some("9"))])?;
    let last = first.split("last=").nth(1).ok_or("the first process printed no last ID")?;
    let last: String = last.chars().take_while(char::is_ascii_digit).collect();
    let last = Some(last.as_str());
    run("hw_second", &[("HW_DIR", Some(dir_text)), (WORKER_VAR, Some("9")), ("LAST_ID", last)])?;
    run("hw_second_clock_back", &[("HW_DIR", Some(dir_text)), (WORKER_VAR, Some("9")), ("LAST_ID", last)])?;
    Ok(())
}

// ---------------------------------------------------------------------------------------
// The child side
// ---------------------------------------------------------------------------------------

/// The entry point of every scenario (see `common/child.rs`); ignored in the parent,
/// and does nothing there.
#[test]
#[ignore = "the entry point of the child processes: the other tests run it"]
fn child() -> TestResult {
    let Some(scenario) = child::scenario() else { return Ok(()) };
    match scenario.as_str() {
        "env_worker" | "env_worker_trimmed" => env_worker(17)?,
        "env_unset" => env_worker(0)?,
        "env_bad" => env_bad()?,
        "range_installed" => {
            Registry::builder().worker_id(100).install()?;
            range()?;
        }
        "range_env" => range()?,
        "second_install" => second_install()?,
        "install_after_generate" => {
            Wide::generate();
            let refused = Registry::builder().worker_id(5).install();
            assert_eq!(refused, Err(RegistryError::AlreadyInstalled { worker: 0, from_defaults: true }));
            let message = refused.expect_err("refused").to_string();
            assert!(message.contains("default configuration") && message.contains("worker ID 0"), "{message}");
            assert_eq!(Wide::generate().worker(), 0);
        }
        "install_after_worker_id" => {
            // Reading the configuration does not fix it.
            assert_eq!(Registry::worker_id(), Ok(4));
            assert_eq!(Registry::worker_source(), Ok(WorkerSource::EnvOrZero));
            assert_eq!(Registry::stats(), Vec::new());
            Registry::builder().worker_id(5).install()?;
            assert_eq!(Registry::worker_id(), Ok(5));
            assert_eq!(Wide::generate().worker(), 5);
        }
        "install_after_bad_env" => {
            // A refused default is not a configuration in use: install() says nothing of
            // "already installed", and takes over.
            let refused = Wide::try_generate().expect_err("SNOWFLAKE_WORKER_ID=forty must be refused");
            assert!(
                matches!(&refused, GenerateError::Worker(WorkerError::BadEnv { var, value, .. })
                    if var == WORKER_VAR && value == "forty"),
                "{refused}"
            );
            Registry::builder().worker_id(6).install()?;
            assert_eq!(Wide::generate().worker(), 6);
        }
        "failed_install_fails_loudly" => {
            let result =
                Registry::builder().worker(WorkerSource::Env("TYPED_SNOWFLAKE_UNSET_VARIABLE".into())).install();
            let Err(install_error) = result else { return Err("an unset variable must be refused".into()) };
            // Not worker 0 from the defaults: every way in fails with the install's error.
            let error = Wide::try_generate().expect_err("a failed install must not generate");
            assert_eq!(error, GenerateError::Registry(install_error.clone()));
            assert!(error.to_string().contains("TYPED_SNOWFLAKE_UNSET_VARIABLE"), "{error}");
            assert!(Wide::generate_batch(2).is_err());
            assert_eq!(Registry::worker_id(), Err(install_error));
            let panic = std::panic::catch_unwind(Wide::generate).expect_err("generate() must panic");
            let message = panic.downcast_ref::<String>().map(String::as_str).unwrap_or_default();
            assert!(message.contains("install() failed"), "{message}");
            // A later install that works replaces it.
            Registry::builder().worker_id(9).install()?;
            assert_eq!(Wide::generate().worker(), 9);
        }
        "high_water_empty_path" => {
            let result = Registry::builder().high_water("", Duration::from_secs(1)).install();
            let Err(RegistryError::HighWater { reason, .. }) = &result else {
                return Err(format!("an empty high-water path must be refused: {result:?}").into());
            };
            assert!(reason.contains("empty"), "{reason}");
            assert!(Wide::try_generate().is_err());
        }
        "lease_and_worker_id" => {
            let error = Wide::try_generate().expect_err("both variables set must be refused");
            let message = error.to_string();
            assert!(
                message.contains("SNOWFLAKE_WORKER_ID and SNOWFLAKE_WORKER_LEASE are both set")
                    && message.contains("unset SNOWFLAKE_WORKER_ID"),
                "{message}"
            );
            // Refused, not in use: an install still works.
            Registry::builder().worker_id(2).install()?;
            assert_eq!(Wide::generate().worker(), 2);
        }
        "lease_bad_url" => {
            let error = Wide::try_generate().expect_err("an unknown store must be refused");
            assert!(error.to_string().contains("bad lease store URL"), "{error}");
            assert!(Registry::worker_id().is_err(), "reading says a lease is coming, not worker 0");
        }
        "lease_refused" => {
            let error = Wide::try_generate().expect_err("a store that refuses must not give a worker ID");
            let message = error.to_string();
            assert!(message.contains("redis://127.0.0.1:1/0") && message.contains("failed: "), "{message}");
            assert_eq!(message.matches("refused").count(), 1, "{message}");
            let panic = std::panic::catch_unwind(Wide::generate).expect_err("generate() must panic");
            let panic = panic.downcast_ref::<String>().map(String::as_str).unwrap_or_default();
            assert!(panic.starts_with("Wide::generate() failed: lease store redis://127.0.0.1:1/0: "), "{panic}");
            assert_eq!(panic.matches("refused").count(), 1, "{panic}");
        }
        "lease_blank" | "lease_not_utf8" => {
            let error = Wide::try_generate().expect_err("an unusable lease variable must be refused");
            let GenerateError::Worker(worker_error @ WorkerError::UnusableEnv { var, .. }) = &error else {
                return Err(format!("expected an unusable variable, found {error:?}").into());
            };
            assert_eq!(var, LEASE_VAR);
            let message = error.to_string();
            assert!(message.starts_with("environment variable SNOWFLAKE_WORKER_LEASE="), "{message}");
            if scenario == "lease_blank" {
                assert!(message.contains("is set but empty") || message.contains("is set but blank"), "{message}");
                assert!(message.contains("give it a store URL") && message.contains("or unset it"), "{message}");
            } else {
                assert!(message.contains("not valid UTF-8"), "{message}");
            }
            // Reading the configuration says the same; nothing is fixed, so an install works.
            assert_eq!(Registry::worker_id(), Err(RegistryError::Worker(worker_error.clone())));
            Registry::builder().worker_id(2).install()?;
            assert_eq!(Wide::generate().worker(), 2);
        }
        "space_too_wide" => {
            let error = Wide::try_generate().expect_err("4096 worker IDs do not fit 10 bits");
            assert!(
                matches!(&error, GenerateError::Worker(WorkerError::UnusableEnv { var, .. }) if var == "SNOWFLAKE_WORKER_SPACE")
            );
            let message = error.to_string();
            assert!(
                message.starts_with("environment variable SNOWFLAKE_WORKER_SPACE=\"4096\" cannot be used: a space of 4096 worker IDs is wider than the worker field of Wide (10 bits, worker IDs 0..=1023)"),
                "{message}"
            );
            assert_eq!(Wide::try_generate(), Err(error), "the same error every time");
        }
        "namespace_blank" | "namespace_not_utf8" => {
            let error = Wide::try_generate().expect_err("an unusable namespace must be refused");
            let GenerateError::Worker(WorkerError::UnusableEnv { var, .. }) = &error else {
                return Err(format!("expected an unusable variable, found {error:?}").into());
            };
            assert_eq!(var, "SNOWFLAKE_NAMESPACE");
            let message = error.to_string();
            assert!(message.starts_with("environment variable SNOWFLAKE_NAMESPACE="), "{message}");
            assert!(!message.contains("refused"), "checked before the store is asked: {message}");
        }
        #[cfg(feature = "lease-redis")]
        "lost_and_found" => lost_and_found()?,
        "hostname" => hostname()?,
        "stats" => stats()?,
        "options" => options()?,
        "high_water_bad_dir" => {
            let dir = tempfile::tempdir()?;
            let file = dir.path().join("file");
            std::fs::write(&file, b"x")?;
            let result = Registry::builder().high_water(file.join("marks"), Duration::from_secs(1)).install();
            let Err(RegistryError::HighWater { source: Some(io), .. }) = &result else {
                return Err(format!("a directory below a file must be refused: {result:?}").into());
            };
            // The cause is kept: its kind is matchable and it is the error's source.
            assert_eq!(io.kind(), std::io::ErrorKind::NotADirectory);
            assert!(std::error::Error::source(result.as_ref().expect_err("refused")).is_some());
            // Refused, and generation fails with that, not with worker 0 from the defaults.
            assert!(matches!(Wide::try_generate(), Err(GenerateError::Registry(RegistryError::HighWater { .. }))));
        }
        "hw_first" => hw_first()?,
        "hw_second" => hw_second()?,
        "hw_second_clock_back" => hw_second_clock_back()?,
        other => return Err(format!("unknown scenario {other}").into()),
    }
    child::done(&scenario);
    Ok(())
}

#[cfg(feature = "lease-redis")]
fn lost_and_found() -> TestResult {
    use typed_snowflake::worker::lease::{LeaseStatus, RedisLeaseStore, WorkerLease};

    let url = std::env::var("REDIS_URL")?;
    let namespace = std::env::var("TEST_NAMESPACE")?;
    let lease = WorkerLease::builder(RedisLeaseStore::open(&url)?)
        .namespace(&namespace)
        .worker_bits(10)
        .ttl(Duration::from_millis(900))
        .reservation(Duration::from_millis(900))
        .margin(Duration::from_millis(300))
        .renew_every(Duration::from_millis(50))
        .clock_tolerance(Duration::from_millis(200))
        .acquire()?;
    let worker = lease.worker();
    let fence = lease.fence();
    Registry::builder().worker_lease(lease).install()?;
    let before = Wide::generate();
    assert_eq!(before.worker(), worker);
    assert!(matches!(Registry::lease_status(), Some(LeaseStatus::Issuing { .. })), "{:?}", Registry::lease_status());
    // The worker ID's record deleted behind its back: the next renewal finds the lease lost,
    // and the lease is acquired again (`docs/lease-rules.md`, rule 6).
    let mut connection = redis::Client::open(url.as_str())?.get_connection()?;
    let deleted: i64 =
        redis::cmd("DEL").arg(format!("snowflake:{{{namespace}}}:worker:{worker}")).query(&mut connection)?;
    assert_eq!(deleted, 1);
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    while Registry::lease_stats().is_none_or(|stats| stats.recoveries == 0) {
        assert!(std::time::Instant::now() < deadline, "never acquired again: {:?}", Registry::lease_status());
        std::thread::sleep(Duration::from_millis(5));
    }
    let stats = Registry::lease_stats().ok_or("no lease")?;
    // The worker ID that issues soonest: another never granted, here, rather than the one
    // whose record is gone, which waits out the reservation (`docs/lease-rules.md`, rule 3).
    let worker = stats.worker;
    assert!(stats.fence > fence, "fences only grow: {} after {fence}", stats.fence);
    // The same generator moves to the new grant once it issues (rule 6), above its own last ID.
    let after = loop {
        match Wide::try_generate() {
            Ok(id) if id.worker() == worker => break id,
            Ok(id) if std::time::Instant::now() < deadline => {
                assert!(id > before, "{id:?} after {before:?}");
                std::thread::sleep(Duration::from_millis(5));
            }
            Ok(id) => return Err(format!("still issuing on worker {} after the new grant", id.worker()).into()),
            Err(GenerateError::Fenced { .. }) if std::time::Instant::now() < deadline => {
                std::thread::sleep(Duration::from_millis(5));
            }
            Err(other) => return Err(other.into()),
        }
    };
    assert_eq!(after.worker(), worker);
    assert!(after > before, "{after:?} after {before:?}");
    assert_eq!(Registry::worker_id()?, worker);
    Registry::shutdown()?;
    assert_eq!(Registry::lease_status(), Some(LeaseStatus::Released));
    assert!(matches!(Wide::try_generate(), Err(GenerateError::Fenced { .. })));
    // Released once: nothing is left to release.
    assert_eq!(Registry::shutdown(), Ok(()));
    Ok(())
}

fn env_worker(expected: u64) -> TestResult {
    assert_eq!(Registry::worker_id(), Ok(expected));
    assert_eq!(Registry::worker_source(), Ok(WorkerSource::EnvOrZero));
    assert_eq!(Narrow::generate().worker(), expected);
    assert_eq!(Wide::try_generate()?.worker(), expected);
    assert!(Wide::generate_batch(10)?.iter().all(|id| id.worker() == expected));
    // The default is taken now; installing is too late.
    assert_eq!(
        Registry::builder().install(),
        Err(RegistryError::AlreadyInstalled { worker: expected, from_defaults: true })
    );
    Ok(())
}

fn env_bad() -> TestResult {
    let value = std::env::var(WORKER_VAR)?;
    let refused = |error: &GenerateError| {
        matches!(error, GenerateError::Worker(WorkerError::BadEnv { var, value: v, .. }) if var == WORKER_VAR && *v == value)
            && error.to_string().contains(WORKER_VAR)
    };
    let error = Wide::try_generate().expect_err("a bad worker ID must not generate");
    assert!(refused(&error), "{error}");
    // Every way in says the same, every time.
    assert!(refused(&Narrow::try_generate().expect_err("refused")));
    assert!(refused(&Wide::generate_batch(3).expect_err("refused")));
    assert!(refused(&Wide::try_generate().expect_err("refused")));
    let registry_error = Registry::worker_id().expect_err("refused");
    assert!(registry_error.to_string().contains(WORKER_VAR), "{registry_error}");
    // generate() panics with the same message.
    let panic = std::panic::catch_unwind(Wide::generate).expect_err("generate() must panic");
    let message = panic.downcast_ref::<String>().map(String::as_str).unwrap_or_default();
    assert!(message.contains("Wide::generate() failed") && message.contains(WORKER_VAR), "{message}");
    Ok(())
}

fn range() -> TestResult {
    assert_eq!(Registry::worker_id(), Ok(100));
    let error = Narrow::try_generate().expect_err("worker 100 does not fit 5 bits");
    assert_eq!(error, GenerateError::WorkerOutOfRange { type_name: "Narrow", worker: 100, max: 31 });
    assert!(error.to_string().contains("Narrow"), "{error}");
    assert!(Narrow::generate_batch(2).is_err());
    let wide = Wide::try_generate()?;
    assert_eq!(wide.worker(), 100);
    // Still refused on a second try; the type that fits is unaffected.
    assert!(Narrow::try_generate().is_err());
    assert!(Wide::generate() > wide);
    Ok(())
}

fn second_install() -> TestResult {
    Registry::builder().worker_id(3).install()?;
    // A second install before the first ID replaces the first; after it, it is refused.
    Registry::builder().worker_id(4).install()?;
    assert_eq!(Registry::worker_id(), Ok(4));
    Registry::builder().worker_id(3).install()?;
    assert_eq!(Wide::generate().worker(), 3);
    assert_eq!(
        Registry::builder().worker_id(4).install(),
        Err(RegistryError::AlreadyInstalled { worker: 3, from_defaults: false })
    );
    assert_eq!(Registry::worker_id(), Ok(3));
    assert_eq!(Registry::worker_source(), Ok(WorkerSource::Fixed(3)));
    assert_eq!(Wide::generate().worker(), 3);
    Ok(())
}

fn hostname() -> TestResult {
    let expected = std::env::var("EXPECTED_ORDINAL")?;
    let hostname = std::env::var("HOSTNAME")?;
    let result = Registry::builder().worker(WorkerSource::HostnameOrdinal).install();
    if expected == "none" {
        assert_eq!(result, Err(RegistryError::Worker(WorkerError::NoOrdinal { hostname })));
    } else {
        result?;
        let ordinal: u64 = expected.parse()?;
        assert_eq!(Registry::worker_id(), Ok(ordinal));
        assert_eq!(Wide::generate().worker(), ordinal);
        assert_eq!(Narrow::generate().worker(), ordinal);
    }
    Ok(())
}

fn stats() -> TestResult {
    let clock = Arc::new(ManualClock::new(T0));
    Registry::builder().worker_id(1).clock(Arc::clone(&clock)).install()?;
    let tiny = |stats: &[typed_snowflake::GeneratorStats]| stats.iter().find(|s| s.name == "Tiny").cloned();
    Wide::generate();
    let first: Vec<Tiny> = (0..4).map(|_| Tiny::generate()).collect();
    assert_eq!(tiny(&Registry::stats()).map(|s| s.exhausted_waits), Some(0));
    // The fifth ID of the tick must wait for the clock.
    let waiter = std::thread::spawn(Tiny::try_generate);
    // (Or until it is done, which the checks below refute: a loop that cannot hang.)
    while tiny(&Registry::stats()).is_none_or(|s| s.exhausted_waits == 0) && !waiter.is_finished() {
        std::thread::yield_now();
    }
    clock.advance(1);
    let fifth = waiter.join().map_err(|_| "waiter panicked")??;
    assert!(fifth > first[3]);
    assert_eq!(fifth.timestamp_ms(), T0 + 1);
    let stats = Registry::stats();
    let tiny = tiny(&stats).ok_or("no stats for Tiny")?;
    assert_eq!((tiny.exhausted_waits, tiny.errors, tiny.worker), (1, 0, 1));
    let wide = stats.iter().find(|s| s.name == "Wide").ok_or("no stats for Wide")?;
    assert_eq!(wide.exhausted_waits, 0);
    assert_eq!(stats.len(), 2, "{stats:?}");
    Ok(())
}

fn options() -> TestResult {
    let clock = Arc::new(ManualClock::new(T0).with_policy(StepBack::Error));
    Registry::builder().worker_id(2).clock(Arc::clone(&clock)).batch_limit(10).random_sequence_start(100).install()?;
    assert_eq!(Wide::generate_batch(11), Err(GenerateError::BatchTooLarge { requested: 11, limit: 10 }));
    let mut previous = Wide::generate();
    assert_eq!(previous.timestamp_ms(), T0);
    let mut firsts = std::collections::BTreeSet::new();
    for _ in 0..100 {
        clock.advance(1);
        let id = Wide::generate();
        assert!(id > previous);
        assert!(id.sequence() <= 100);
        firsts.insert(id.sequence());
        previous = id;
    }
    assert!(firsts.len() > 1, "random start never varied: {firsts:?}");
    clock.step_back(1);
    assert!(matches!(Wide::try_generate(), Err(GenerateError::ClockBackwards { behind_ms: 1 })));
    Ok(())
}

fn install_high_water(clock: Option<Arc<ManualClock>>) -> Result<std::path::PathBuf, Box<dyn std::error::Error>> {
    let dir = std::path::PathBuf::from(std::env::var("HW_DIR")?);
    let mut builder = Registry::builder().high_water(&dir, Duration::from_secs(1));
    if let Some(clock) = clock {
        builder = builder.clock(clock);
    }
    builder.install()?;
    Ok(dir)
}

fn hw_first() -> TestResult {
    let dir = install_high_water(None)?;
    let ids = Wide::generate_batch(10_000)?;
    let last = ids[ids.len() - 1];
    // Keyed by the type's full path: `fast::registry_env::Wide`.
    assert!(dir.join("fast.registry_env.Wide-9.hwm").is_file());
    println!("last={last}");
    Ok(())
}

fn hw_second() -> TestResult {
    install_high_water(None)?;
    let last: Wide = std::env::var("LAST_ID")?.parse()?;
    let first = Wide::generate();
    assert!(first > last, "{first} after a restart, at or below {last}");
    Ok(())
}

fn wall_ms() -> Result<i64, Box<dyn std::error::Error>> {
    Ok(i64::try_from(SystemTime::now().duration_since(UNIX_EPOCH)?.as_millis())?)
}

fn hw_second_clock_back() -> TestResult {
    let clock = Arc::new(ManualClock::new(wall_ms()? - 3_600_000).with_policy(StepBack::Error));
    install_high_water(Some(Arc::clone(&clock)))?;
    let last: Wide = std::env::var("LAST_ID")?.parse()?;
    // An hour behind the previous processes: refused, not repeated.
    assert!(matches!(Wide::try_generate(), Err(GenerateError::ClockBackwards { .. })));
    // Past the reservations of the processes before (1 s each): issued above them all.
    clock.set(wall_ms()? + 10_000);
    let first = Wide::try_generate()?;
    assert!(first > last);
    Ok(())
}
