//! Scenarios in a fresh process, for what is configured once per process (the registry, a
//! high-water directory, a lease from the environment): the test binary runs itself again
//! with `--exact <module>::child` (the `child` entry of the module whose test asks), the
//! scenario's name in [`SCENARIO`] and the environment the scenario needs. The `child` test is the entry point; it is ignored in the parent (the
//! other tests run it) and does nothing there even when asked to run ignored tests. A
//! child that finishes its scenario prints `scenario <name> done`, and the parent fails
//! unless it exited with success and printed that line.
//!
//! The child side of a test file:
//!
//! ```ignore
//! #[test]
//! #[ignore = "the entry point of the child processes: the other tests run it"]
//! fn child() -> TestResult {
//!     let Some(scenario) = child::scenario() else { return Ok(()) };
//!     // … the scenario …
//!     child::done(&scenario);
//!     Ok(())
//! }
//! ```
#![allow(dead_code)] // each test file uses what it needs

use std::process::{Command, Output};

/// The variable naming the scenario a child process runs.
pub const SCENARIO: &str = "TYPED_SNOWFLAKE_TEST_CHILD";

/// The scenario this process was started to run, or `None` in the parent process.
pub fn scenario() -> Option<String> {
    let scenario = std::env::var(SCENARIO).ok();
    if scenario.is_none() {
        println!("the entry point of the child processes: nothing to run in the parent");
    }
    scenario
}

/// Printed by a child at the end of its scenario; [`check`] looks for it.
pub fn done(scenario: &str) {
    println!("scenario {scenario} done");
}

/// A command that runs the `child` test of the calling test's module alone, for `scenario`,
/// with this process's environment; add or remove variables before running it. Call it on
/// the test's own thread: the module is the first part of the running test's name, which the
/// test harness gives that thread (`lease_faults::a_store_restarted_empty` runs
/// `lease_faults::child`).
pub fn command(scenario: &str) -> Command {
    let exe = std::env::current_exe().expect("the test binary's path");
    let mut command = Command::new(exe);
    let entry = format!("{}::child", module_of_running_test());
    command.args(["--exact", &entry, "--include-ignored", "--nocapture", "--test-threads=1"]).env(SCENARIO, scenario);
    command
}

/// The module (a file of the test binary) of the test running on this thread.
fn module_of_running_test() -> String {
    let thread = std::thread::current();
    match thread.name().and_then(|name| name.split_once("::")) {
        Some((module, _)) => module.to_owned(),
        None => panic!(
            "child::command is called on a thread named {:?}: call it on the test's own thread, named \
             `<module>::<test>` by the harness",
            thread.name()
        ),
    }
}

/// Checks that a child ran `scenario` to the end: exit status 0 and `scenario <name> done`
/// on its standard output, which it returns. `context` (the variables set, say) goes into
/// the failure message.
pub fn check(scenario: &str, output: &Output, context: &dyn std::fmt::Debug) -> String {
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "scenario {scenario} {context:?} failed ({}):\n{stdout}\n{stderr}", output.status);
    assert!(
        stdout.contains(&format!("scenario {scenario} done")),
        "scenario {scenario} {context:?} did not run to the end:\n{stdout}\n{stderr}"
    );
    stdout
}

/// Runs `command` (made by [`command`]) to completion and [`check`]s it.
pub fn run(scenario: &str, mut command: Command, context: &dyn std::fmt::Debug) -> std::io::Result<String> {
    let output = command.output()?;
    Ok(check(scenario, &output, context))
}
