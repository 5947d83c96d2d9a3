//! The start-up check, `Registry::check`: every problem at once, before the first request.
//! The registry is configured once per process, so each scenario runs in a fresh process
//! (this test binary re-run with `--exact child` and the scenario in an environment
//! variable), as in `tests/registry_env.rs`.

use crate::child;
#[cfg(feature = "lease-redis")]
use crate::servers;

use std::sync::Arc;
use std::time::Duration;

use typed_snowflake::worker::lease::LeaseStatus;
use typed_snowflake::{
    CheckError, GenerateError, ManualClock, Problem, Registry, RegistryError, SnowflakeId, WorkerError, WorkerSource,
};

type TestResult = Result<(), Box<dyn std::error::Error>>;

const WORKER_VAR: &str = "SNOWFLAKE_WORKER_ID";
const LEASE_VAR: &str = "SNOWFLAKE_WORKER_LEASE";

/// Five worker bits: workers 0..=31.
#[derive(SnowflakeId, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
#[layout(time = 42, worker = 5, seq = 16, epoch = "2021-05-05")]
struct OrderId(i64);

/// Ten worker bits: workers 0..=1023.
#[derive(SnowflakeId, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
#[layout(time = 41, worker = 10, seq = 12, epoch = "2020-01-01")]
struct CustomerId(i64);

/// Ten worker bits, an epoch in 2023.
#[derive(SnowflakeId, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
#[layout(time = 41, worker = 10, seq = 12, epoch = "2023-01-01")]
struct InvoiceId(i64);

/// Decodes only: the start-up check reports it as a problem when asked to check it.
#[derive(SnowflakeId, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
#[layout(time = 41, worker = 10, seq = 12, epoch = "2020-01-01")]
#[snowflake(decode_only)]
struct ArchivedId(i64);

/// 2022-06-01T00:00:00Z: after the epochs of OrderId and CustomerId, before InvoiceId's.
const JUNE_2022: i64 = 1_654_041_600_000;

/// Runs `scenario` in a fresh process with `env`; fails unless it ran to the end.
fn run(scenario: &str, env: &[(&str, &str)]) -> TestResult {
    let mut command = child::command(scenario);
    command.env_remove(WORKER_VAR).env_remove(LEASE_VAR).env_remove("SNOWFLAKE_WORKER_SPACE");
    // A store that does not answer is reported at once, not after the default wait for it.
    command.env("SNOWFLAKE_LEASE_WAIT", "0");
    command.envs(env.iter().copied());
    child::run(scenario, command, &env)?;
    Ok(())
}

#[test]
fn reading_the_configuration_does_not_fix_it() -> TestResult {
    run("read_then_install", &[(WORKER_VAR, "40")])
}

#[test]
fn a_good_configuration_passes_and_builds_every_generator() -> TestResult {
    run("passes", &[])
}

#[test]
fn a_worker_too_wide_for_one_type_is_reported_for_that_type() -> TestResult {
    run("worker_too_wide", &[(WORKER_VAR, "40")])
}

#[test]
fn a_bad_environment_value_is_one_configuration_problem() -> TestResult {
    for value in ["garbage", "-1", "", "99999999999999999999"] {
        run("bad_env", &[(WORKER_VAR, value)])?;
    }
    Ok(())
}

#[test]
fn a_lease_that_cannot_be_acquired_is_reported() -> TestResult {
    run("lease_unknown_store", &[(LEASE_VAR, "zookeeper://127.0.0.1:2181")])?;
    // Nothing listens on port 1: the store does not answer.
    run("lease_no_store", &[(LEASE_VAR, "redis://127.0.0.1:1")])?;
    run("lease_and_fixed", &[(LEASE_VAR, "redis://127.0.0.1:1"), (WORKER_VAR, "3")])?;
    // Set but blank (`SNOWFLAKE_WORKER_LEASE=$REDIS_URL` with `REDIS_URL` unset): not worker 0.
    run("lease_blank", &[(LEASE_VAR, "")])?;
    run("lease_blank", &[(LEASE_VAR, "  ")])
}

/// `SNOWFLAKE_WORKER_SPACE` wider than the narrowest worker field: the same error at every
/// start, naming the value, the type and its field, found before the store is asked (nothing
/// listens on port 1). Values that are not a space are refused too; a space that fits gets
/// as far as the store.
#[test]
fn a_worker_space_wider_than_a_type_is_reported_before_leasing() -> TestResult {
    for space in ["4096", "33", "4194304"] {
        run("space_too_wide", &[(LEASE_VAR, "redis://127.0.0.1:1"), ("SNOWFLAKE_WORKER_SPACE", space)])?;
    }
    for space in ["0", "", "abc", "-1", "4194305", "99999999999999999999"] {
        run("space_not_a_space", &[(LEASE_VAR, "redis://127.0.0.1:1"), ("SNOWFLAKE_WORKER_SPACE", space)])?;
    }
    for space in ["32", " 1 "] {
        run("lease_no_store", &[(LEASE_VAR, "redis://127.0.0.1:1"), ("SNOWFLAKE_WORKER_SPACE", space)])?;
    }
    Ok(())
}

/// The same against a live store: refused at every start (it used to fail only when the
/// leased ID was too large), and nothing is leased.
#[cfg(feature = "lease-redis")]
#[test]
fn a_worker_space_wider_than_a_type_leases_nothing() -> TestResult {
    let Some(url) = servers::redis_url() else { return Ok(()) };
    let namespace = format!("typed-snowflake-check-space-{}", std::process::id());
    let pattern = servers::redis_lease_keys(&namespace);
    let _cleanup = servers::RedisKeys { url: url.clone(), pattern: pattern.clone() };
    for _ in 0..5 {
        let env = [(LEASE_VAR, url.as_str()), ("SNOWFLAKE_NAMESPACE", &namespace), ("SNOWFLAKE_WORKER_SPACE", "1024")];
        run("space_too_wide", &env)?;
    }
    let mut connection = redis::Client::open(url.as_str())?.get_connection()?;
    let keys: Vec<String> = redis::cmd("KEYS").arg(&pattern).query(&mut connection)?;
    assert!(keys.is_empty(), "nothing may be leased: {keys:?}");
    Ok(())
}

/// A lease the environment asks for covers the narrowest worker field among the types
/// checked, whichever comes first: every one of them then fits. The store takes the first
/// free worker ID from a random start, so a lease from CustomerId's 1 024 IDs would miss
/// OrderId's 32 in 31 runs out of 32.
#[cfg(feature = "lease-redis")]
#[test]
fn an_environment_lease_covers_the_narrowest_type() -> TestResult {
    let Some(url) = servers::redis_url() else { return Ok(()) };
    let namespace = format!("typed-snowflake-check-{}", std::process::id());
    let _cleanup = servers::RedisKeys { url: url.clone(), pattern: format!("*{namespace}*") };
    for _ in 0..4 {
        // A short TTL: each fresh worker ID waits out a TTL before its first ID.
        let env = [
            (LEASE_VAR, url.as_str()),
            ("SNOWFLAKE_NAMESPACE", &namespace),
            ("SNOWFLAKE_LEASE_TTL", "1s"),
            ("SNOWFLAKE_LEASE_RESERVATION", "1s"),
        ];
        run("lease_narrowest", &env)?;
    }
    Ok(())
}

/// Leases of the environment are not left held by a process that stops early: a start-up
/// check that fails releases the worker ID it leased, and `Registry::shutdown_guard()`
/// releases it when `main` returns early through a `?`. The store holds no live lease after
/// either child exits (with a 60 s TTL, a leaked one would still be there).
#[cfg(feature = "lease-redis")]
#[test]
fn processes_that_stop_early_leave_no_lease_held() -> TestResult {
    let Some(url) = servers::redis_url() else { return Ok(()) };
    let namespace = format!("typed-snowflake-check-early-{}", std::process::id());
    let pattern = servers::redis_lease_keys(&namespace);
    let _cleanup = servers::RedisKeys { url: url.clone(), pattern: pattern.clone() };
    // Declared new: a grant does not wait out the long reservation before its first ID.
    servers::declare_namespace(&url, &namespace)?;
    let store = typed_snowflake::worker::lease::RedisLeaseStore::open(&url)?;
    let env = [
        (LEASE_VAR, url.as_str()),
        ("SNOWFLAKE_NAMESPACE", &namespace),
        ("SNOWFLAKE_LEASE_TTL", "60s"),
        ("SNOWFLAKE_LEASE_RESERVATION", "60s"),
    ];
    for scenario in ["lease_failed_check", "lease_early_return"] {
        run(scenario, &env)?;
        let report = typed_snowflake::worker::lease::admin::inspect(&store, &namespace)?;
        assert!(!report.workers.is_empty(), "{scenario}: a worker ID was leased (and released)");
        assert!(report.workers.iter().all(|w| !w.leased), "{scenario} left its worker ID held: {:?}", report.workers);
    }
    Ok(())
}

#[test]
fn unreadable_and_corrupt_high_water_files_are_reported() -> TestResult {
    run("high_water", &[])
}

#[test]
fn a_failed_install_is_reported() -> TestResult {
    run("failed_install", &[])
}

#[test]
fn several_problems_are_reported_at_once() -> TestResult {
    run("several", &[])
}

/// The entry point of every scenario (see `common/child.rs`); ignored in the parent,
/// and does nothing there.
#[test]
#[ignore = "the entry point of the child processes: the other tests run it"]
fn child() -> TestResult {
    let Some(scenario) = child::scenario() else { return Ok(()) };
    match scenario.as_str() {
        "read_then_install" => read_then_install()?,
        "passes" => passes()?,
        "worker_too_wide" => worker_too_wide()?,
        "bad_env" => bad_env()?,
        "lease_unknown_store" => {
            let error = configuration_problem(Registry::check::<(OrderId, CustomerId)>())?;
            assert!(matches!(error, GenerateError::Worker(WorkerError::Lease(_))), "{error:?}");
            assert!(error.to_string().contains("bad lease store URL"), "{error}");
        }
        "lease_no_store" => {
            let result = Registry::check::<(OrderId, CustomerId)>();
            // The report says why, once: "…reading the clock failed: Connection refused (os error 111)".
            let report = result.as_ref().err().map(ToString::to_string).unwrap_or_default();
            assert_eq!(report.matches("refused").count(), 1, "{report}");
            let error = configuration_problem(result)?;
            assert!(matches!(error, GenerateError::Worker(WorkerError::Lease(_))), "{error:?}");
            assert!(error.to_string().contains("127.0.0.1:1"), "{error}");
            assert!(error.to_string().contains("failed: "), "the error names its cause: {error}");
            // Nothing was fixed: the defaults are not taken as worker 0 behind the lease's back.
            assert!(Registry::worker_id().is_err());
        }
        "lease_and_fixed" => {
            let error = configuration_problem(Registry::check::<OrderId>())?;
            assert!(matches!(error, GenerateError::Worker(WorkerError::Conflict { .. })), "{error:?}");
            assert!(error.to_string().contains("are both set"), "{error}");
        }
        "space_too_wide" => {
            let space = std::env::var("SNOWFLAKE_WORKER_SPACE")?;
            // OrderId's 5 bits are the narrowest, whichever type comes first.
            let error = configuration_problem(Registry::check::<(CustomerId, OrderId)>())?;
            let GenerateError::Worker(WorkerError::UnusableEnv { var, value, .. }) = &error else {
                return Err(format!("expected a space too wide, found {error:?}").into());
            };
            assert_eq!((var.as_str(), value.as_str()), ("SNOWFLAKE_WORKER_SPACE", space.as_str()));
            let message = error.to_string();
            assert!(
                message.starts_with(&format!("environment variable SNOWFLAKE_WORKER_SPACE={space:?} ")),
                "{message}"
            );
            assert!(
                message.contains(&format!("a space of {space} worker IDs is wider than the worker field of OrderId (5 bits, worker IDs 0..=31)"))
                    && message.contains("set it to at most 32"),
                "{message}"
            );
            assert!(!message.contains("refused"), "checked before the store is asked: {message}");
            assert!(Registry::worker_id().is_err(), "nothing is fixed, not worker 0");
            assert_eq!(Registry::lease_stats(), None);
        }
        "space_not_a_space" => {
            let error = configuration_problem(Registry::check::<(CustomerId, OrderId)>())?;
            let GenerateError::Worker(WorkerError::UnusableEnv { var, .. }) = &error else {
                return Err(format!("expected a bad space, found {error:?}").into());
            };
            assert_eq!(var, "SNOWFLAKE_WORKER_SPACE");
            assert!(error.to_string().contains("expected a number of worker IDs"), "{error}");
        }
        "lease_blank" => {
            let error = configuration_problem(Registry::check::<(OrderId, CustomerId)>())?;
            let GenerateError::Worker(WorkerError::UnusableEnv { var, .. }) = &error else {
                return Err(format!("expected an unusable variable, found {error:?}").into());
            };
            assert_eq!(var, LEASE_VAR);
            assert!(error.to_string().contains("SNOWFLAKE_WORKER_LEASE=") && error.to_string().contains("is set but"));
            assert!(Registry::worker_id().is_err(), "not worker 0");
        }
        "high_water" => high_water()?,
        "lease_failed_check" => {
            let error = Registry::check::<(CustomerId, ArchivedId)>().expect_err("a decode-only type is a problem");
            assert!(error.to_string().contains("ArchivedId"), "{error}");
            assert!(matches!(Registry::lease_status(), Some(LeaseStatus::Released)), "{:?}", Registry::lease_status());
        }
        "lease_early_return" => {
            fn serve() -> Result<(), Box<dyn std::error::Error>> {
                let _shutdown = Registry::shutdown_guard();
                Registry::check::<CustomerId>()?;
                assert!(matches!(Registry::lease_status(), Some(LeaseStatus::Issuing { .. })));
                CustomerId::try_generate()?;
                // Two replicas racing on a migration: this one loses, and returns early.
                Err("relation already exists")?
            }
            assert!(serve().is_err());
            assert!(matches!(Registry::lease_status(), Some(LeaseStatus::Released)), "{:?}", Registry::lease_status());
        }
        "lease_narrowest" => {
            Registry::check::<(CustomerId, OrderId)>()?;
            let worker = Registry::worker_id()?;
            assert!(worker <= OrderId::MAX_WORKER, "leased worker {worker} does not fit OrderId");
            assert_eq!(OrderId::generate().worker(), worker);
            Registry::shutdown()?;
        }
        "failed_install" => {
            let refused = Registry::builder().worker(WorkerSource::Env("TYPED_SNOWFLAKE_CHECK_UNSET".into())).install();
            let Err(install_error) = refused else { return Err("an unset variable must be refused".into()) };
            let error = configuration_problem(Registry::check::<(OrderId, CustomerId)>())?;
            assert_eq!(error, GenerateError::Registry(install_error));
        }
        "several" => several()?,
        other => return Err(format!("unknown scenario {other}").into()),
    }
    child::done(&scenario);
    Ok(())
}

/// The one problem of a check that failed before any type: the shared configuration.
fn configuration_problem(result: Result<(), CheckError>) -> Result<GenerateError, Box<dyn std::error::Error>> {
    let Err(error) = result else { return Err("the check passed a configuration that cannot work".into()) };
    match error.problems() {
        [Problem { type_name: None, error: inner, .. }] => {
            let text = error.to_string();
            assert!(text.starts_with("the start-up check found a problem:\n  - configuration: "), "{text}");
            assert!(text.contains(&inner.to_string()), "{text}");
            Ok(inner.clone())
        }
        other => Err(format!("expected one configuration problem, found {other:?}").into()),
    }
}

fn read_then_install() -> TestResult {
    // Reading, however often, fixes nothing.
    for _ in 0..2 {
        assert_eq!(Registry::worker_id(), Ok(40));
        assert_eq!(Registry::worker_source(), Ok(WorkerSource::EnvOrZero));
        assert!(Registry::stats().is_empty());
        assert_eq!(Registry::lease_stats(), None);
    }
    Registry::builder().worker_id(3).install()?;
    assert_eq!(Registry::worker_id(), Ok(3));
    assert_eq!(Registry::worker_source(), Ok(WorkerSource::Fixed(3)));
    // Still not fixed: a second install replaces the first.
    Registry::builder().worker_id(4).install()?;
    Registry::check::<(OrderId, CustomerId)>()?;
    // The check built the generators: the configuration is in use from now on.
    assert_eq!(
        Registry::builder().worker_id(5).install(),
        Err(RegistryError::AlreadyInstalled { worker: 4, from_defaults: false })
    );
    assert_eq!(OrderId::generate().worker(), 4);
    Ok(())
}

fn passes() -> TestResult {
    Registry::builder().worker_id(31).install()?;
    Registry::check::<(OrderId, CustomerId, InvoiceId)>()?;
    // Each generator exists before its type's first ID, one per type, with nothing issued.
    let mut stats = Registry::stats();
    stats.sort_by_key(|s| s.name);
    assert_eq!(
        stats.iter().map(|s| (s.name, s.worker)).collect::<Vec<_>>(),
        [("CustomerId", 31), ("InvoiceId", 31), ("OrderId", 31)]
    );
    // Checking again, or a type twice, builds nothing new.
    Registry::check::<(OrderId, (OrderId, CustomerId))>()?;
    Registry::check::<OrderId>()?;
    // The largest tuple.
    type Twelve = (
        OrderId,
        CustomerId,
        InvoiceId,
        OrderId,
        OrderId,
        OrderId,
        OrderId,
        OrderId,
        OrderId,
        OrderId,
        OrderId,
        OrderId,
    );
    Registry::check::<Twelve>()?;
    assert_eq!(Registry::stats().len(), 3);
    assert!(OrderId::generate() < OrderId::generate());
    assert_eq!(Registry::stats().len(), 3);
    Ok(())
}

fn worker_too_wide() -> TestResult {
    let error = Registry::check::<(CustomerId, OrderId, InvoiceId)>().expect_err("worker 40 does not fit OrderId");
    let [problem] = error.problems() else { return Err(format!("expected one problem, found {error}").into()) };
    assert_eq!(problem.type_name, Some("OrderId"));
    assert_eq!(problem.error, GenerateError::WorkerOutOfRange { type_name: "OrderId", worker: 40, max: 31 });
    assert_eq!(
        error.to_string(),
        "the start-up check found a problem:\n  - OrderId: worker ID 40 does not fit OrderId, whose layout holds 0..=31"
    );
    // The types that fit are ready; the one that does not fails as the check said.
    assert_eq!(CustomerId::generate().worker(), 40);
    assert_eq!(InvoiceId::generate().worker(), 40);
    assert_eq!(
        OrderId::try_generate(),
        Err(GenerateError::WorkerOutOfRange { type_name: "OrderId", worker: 40, max: 31 })
    );
    Ok(())
}

fn bad_env() -> TestResult {
    let error = configuration_problem(Registry::check::<(OrderId, CustomerId)>())?;
    let GenerateError::Worker(WorkerError::BadEnv { var, .. }) = &error else {
        return Err(format!("expected a bad environment value, found {error:?}").into());
    };
    assert_eq!(var, WORKER_VAR);
    assert!(error.to_string().contains("SNOWFLAKE_WORKER_ID="), "{error}");
    // Nothing was fixed: an install takes over.
    Registry::builder().worker_id(2).install()?;
    Registry::check::<(OrderId, CustomerId)>()?;
    assert_eq!(OrderId::generate().worker(), 2);
    Ok(())
}

fn high_water() -> TestResult {
    let dir = tempfile::tempdir()?;
    // A directory where OrderId's mark should be, and a corrupt mark for CustomerId.
    std::fs::create_dir(dir.path().join("fast.registry_check.OrderId-3.hwm"))?;
    std::fs::write(dir.path().join("fast.registry_check.CustomerId-3.hwm"), b"not a mark\n")?;
    Registry::builder().worker_id(3).high_water(dir.path(), Duration::from_secs(1)).install()?;
    let error = Registry::check::<(OrderId, CustomerId, InvoiceId)>().expect_err("two marks cannot be read");
    let [order, customer] = error.problems() else {
        return Err(format!("expected two problems, found {error}").into());
    };
    assert_eq!(order.type_name, Some("OrderId"));
    let GenerateError::HighWater { source: Some(io), .. } = &order.error else {
        return Err(format!("expected an I/O error, found {order}").into());
    };
    assert_eq!(io.kind(), std::io::ErrorKind::IsADirectory);
    assert_eq!(customer.type_name, Some("CustomerId"));
    assert!(
        matches!(&customer.error, GenerateError::HighWater { reason, .. } if reason.contains("corrupt")),
        "{customer}"
    );
    let text = error.to_string();
    assert!(text.starts_with("the start-up check found 2 problems:\n  - OrderId: high-water file "), "{text}");
    // The cause is in the report: what a person fixing it needs.
    assert!(text.contains(&io.to_string()), "{text}");
    assert!(text.contains("\n  - CustomerId: high-water file ") && text.contains("is corrupt"), "{text}");
    // InvoiceId's mark was fine: it issues.
    assert_eq!(InvoiceId::generate().worker(), 3);
    Ok(())
}

fn several() -> TestResult {
    let dir = tempfile::tempdir()?;
    std::fs::create_dir(dir.path().join("fast.registry_check.CustomerId-40.hwm"))?;
    let clock = Arc::new(ManualClock::new(JUNE_2022));
    Registry::builder().worker_id(40).clock(clock).high_water(dir.path(), Duration::from_secs(1)).install()?;
    let error = Registry::check::<(OrderId, CustomerId, InvoiceId)>().expect_err("three types, three problems");
    let names: Vec<_> = error.problems().iter().map(|p| p.type_name).collect();
    assert_eq!(names, [Some("OrderId"), Some("CustomerId"), Some("InvoiceId")]);
    assert_eq!(
        error.problems()[0].error,
        GenerateError::WorkerOutOfRange { type_name: "OrderId", worker: 40, max: 31 }
    );
    assert!(matches!(error.problems()[1].error, GenerateError::HighWater { .. }), "{error}");
    assert_eq!(
        error.problems()[2].error,
        GenerateError::ClockBeforeEpoch { now_ms: JUNE_2022, epoch_ms: InvoiceId::EPOCH_MS }
    );
    let text = error.to_string();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 4, "{text}");
    assert_eq!(lines[0], "the start-up check found 3 problems:");
    assert_eq!(lines[1], "  - OrderId: worker ID 40 does not fit OrderId, whose layout holds 0..=31");
    assert!(lines[2].starts_with("  - CustomerId: high-water file "), "{text}");
    assert_eq!(
        lines[3],
        format!("  - InvoiceId: the clock reads {JUNE_2022} (Unix ms), before the epoch {}", InvoiceId::EPOCH_MS)
    );
    Ok(())
}
