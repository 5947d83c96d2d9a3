//! Restarts by `kill -9`: a process generating at full speed with a high-water directory is
//! killed at a random moment, again and again; a new one starts on the same directory each
//! time. Over every ID any of them wrote out before it died: no duplicate.
//!
//! The processes are this test binary run again with `--exact child` (`common/child.rs`),
//! the high-water directory in `KILL_TEST_DIR`.

use crate::child;

use std::io::{BufRead, BufReader, Write};
use std::process::Stdio;
use std::time::{Duration, Instant};

use typed_snowflake::{Registry, SnowflakeId};

type TestResult = Result<(), Box<dyn std::error::Error>>;

/// 16 IDs per millisecond: the restarts land in full ticks and in the middle of them.
#[derive(SnowflakeId, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
#[layout(time = 42, worker = 5, seq = 4, epoch = "2021-05-05")]
struct Killed(i64);

/// The child: installs the high-water directory, then prints IDs until it is killed.
/// Ignored in the parent, and does nothing there.
#[test]
#[ignore = "the entry point of the child processes: the other tests run it"]
fn child() -> TestResult {
    if child::scenario().is_none() {
        return Ok(());
    }
    let dir = std::env::var("KILL_TEST_DIR")?;
    Registry::builder().worker_id(3).high_water(dir, Duration::from_millis(50)).install()?;
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    writeln!(out, "ready")?;
    out.flush()?;
    loop {
        for _ in 0..64 {
            writeln!(out, "{}", Killed::try_generate()?)?;
        }
        out.flush()?;
    }
}

#[test]
fn killed_processes_never_repeat_an_id() -> TestResult {
    let restarts: usize = std::env::var("KILL_RESTARTS").ok().and_then(|v| v.parse().ok()).unwrap_or(40);
    let dir = tempfile::tempdir()?;
    let mut seen = std::collections::HashSet::new();
    let mut rng = 0x2545_F491_4F6C_DD1Du64;
    let started = Instant::now();
    // Runs that issued IDs: "no repeat across restarts" needs at least two.
    let mut issuing_runs = 0;
    for run in 0..restarts {
        let mut child = child::command("print_until_killed")
            .env("KILL_TEST_DIR", dir.path())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()?;
        let stdout = child.stdout.take().ok_or("no stdout")?;
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        let lifetime = Duration::from_millis(20 + rng % 200);
        let (ready_tx, ready_rx) = std::sync::mpsc::channel();
        let reader = std::thread::spawn(move || {
            let mut ids = Vec::new();
            let mut ready = false;
            let mut reader = BufReader::new(stdout);
            let mut line = String::new();
            // Only whole lines: the kill can cut the last one, and a cut ID is another number.
            while reader.read_line(&mut line).is_ok_and(|n| n > 0) && line.ends_with('\n') {
                let text = std::mem::take(&mut line);
                let text = text.trim_end();
                if let Ok(id) = text.parse::<i64>() {
                    ids.push(id);
                } else if text.contains("ready") {
                    ready = true;
                    let _ = ready_tx.send(());
                }
            }
            (ready, ids)
        });
        // The lifetime counts from the ready line (the registry installed, the high-water
        // file read): a child killed while it starts issues nothing and proves nothing. A
        // child that exits first closes the channel; the minute is a hang guard.
        let ready_seen = ready_rx.recv_timeout(Duration::from_secs(60));
        std::thread::sleep(lifetime);
        // SIGKILL: no destructor, no flush, no chance to write anything more.
        child.kill()?;
        child.wait()?;
        let (ready, ids) = reader.join().map_err(|_| "the reader panicked")?;
        assert!(ready && ready_seen.is_ok(), "run {run}: the child never printed its ready line");
        issuing_runs += usize::from(!ids.is_empty());
        for id in ids {
            let id = Killed::try_from(id)?;
            assert_eq!(id.worker(), 3);
            assert!(seen.insert(id), "run {run}: {id} was issued before the restart");
        }
    }
    eprintln!("{restarts} kill -9 restarts in {:?}: {} IDs, no duplicate", started.elapsed(), seen.len());
    assert!(issuing_runs >= 2, "{issuing_runs} of {restarts} runs issued IDs: no restart was tested");
    Ok(())
}
