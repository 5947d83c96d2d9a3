//! Restart safety with a high-water file: a new generator on the same file never issues
//! at or below what the previous one issued, even after the clock stepped back; a file
//! that is not exactly what the generator writes is an error, never a reset.

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};
use std::time::Duration;

use typed_snowflake::{
    Clock, GenerateError, Generator, Layout, MAX_HIGH_WATER_RESERVE, ManualClock, SnowflakeId, StepBack, TickUnit,
};

type TestResult = Result<(), Box<dyn std::error::Error>>;

#[derive(SnowflakeId, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
#[layout(time = 41, worker = 10, seq = 12, epoch = "2020-01-01")]
struct EventId(i64);

const T0: i64 = 1_700_000_000_000;
const HOUR: i64 = 3_600_000;
const HEADER: &str = "typed-snowflake high-water v1";

fn generator(path: &Path, clock: &Arc<ManualClock>, reserve: Duration) -> Result<Generator, GenerateError> {
    Generator::builder(EventId::LAYOUT).worker(3).clock(Arc::clone(clock)).high_water(path, reserve).build()
}

/// The mark in a high-water file, checking the file's exact form.
fn mark_of(path: &Path) -> Result<i64, Box<dyn std::error::Error>> {
    let text = std::fs::read_to_string(path)?;
    let value = text.strip_prefix(HEADER).and_then(|rest| rest.strip_prefix('\n')).and_then(|v| v.strip_suffix('\n'));
    Ok(value.ok_or_else(|| format!("unexpected high-water file {text:?}"))?.parse()?)
}

/// A clock that moves forward by itself, one millisecond every `reads_per_ms` readings, and
/// never back: a generator that waits for it makes it advance, deterministically.
#[derive(Debug)]
struct Ticking {
    start: i64,
    reads: AtomicI64,
    reads_per_ms: i64,
}

impl Ticking {
    fn new(start: i64, reads_per_ms: i64) -> Ticking {
        Ticking { start, reads: AtomicI64::new(0), reads_per_ms }
    }
    /// The current reading, without counting as a reading.
    fn peek(&self) -> i64 {
        self.start + self.reads.load(Ordering::SeqCst) / self.reads_per_ms
    }
}

impl Clock for Ticking {
    fn now_ms(&self) -> i64 {
        self.start + self.reads.fetch_add(1, Ordering::SeqCst) / self.reads_per_ms
    }
}

fn is_high_water(result: &Result<impl std::fmt::Debug, GenerateError>, path: &Path) -> bool {
    matches!(result, Err(GenerateError::HighWater { path: p, .. }) if Path::new(p) == path)
}

#[test]
fn restart_after_a_step_back_never_repeats() -> TestResult {
    let policies = [StepBack::default(), StepBack::Error, StepBack::Wait { max: Duration::from_millis(100) }];
    for policy in policies {
        let dir = tempfile::tempdir()?;
        let path = dir.path().join("EventId-3.hwm");
        let clock_a = Arc::new(ManualClock::new(T0).with_policy(policy));
        let a = generator(&path, &clock_a, Duration::from_secs(1))?;
        let mut issued = Vec::new();
        for _ in 0..5 {
            issued.extend(a.next_batch_raw(1_000)?);
            clock_a.advance(1);
        }
        let last_a = issued[issued.len() - 1];
        assert_eq!(a.stats().high_water_writes, 1);
        assert!(mark_of(&path)? >= EventId::LAYOUT.timestamp_ms_of(last_a));
        drop(a);

        // The process restarts, and its clock reads an hour earlier.
        let clock_b = Arc::new(ManualClock::new(clock_a.now_ms() - HOUR).with_policy(policy));
        let b = Arc::new(generator(&path, &clock_b, Duration::from_secs(1))?);
        let mark = mark_of(&path)?;
        assert_eq!(mark, T0 + 1_000);
        let mut errors = 0;
        let mut after = Vec::new();
        // Further behind the mark than a reservation: the clock was set back across the
        // restart, and the policy refuses (by 1 001 ms, more than Borrow's max_ahead).
        for now in [T0 - HOUR, T0 - 1] {
            clock_b.set(now);
            for _ in 0..3 {
                match b.next_raw() {
                    Ok(id) => after.push(id),
                    Err(GenerateError::ClockBackwards { .. }) => errors += 1,
                    Err(e) => return Err(format!("{policy:?} at {now}: unexpected {e}").into()),
                }
            }
        }
        assert_eq!(errors, 6, "{policy:?}: B issued while its clock was behind A's reservation: {after:?}");
        // Within a reservation of the mark, as after a quick restart: B waits for the clock
        // to pass the mark, whatever the policy; it neither errs nor issues meanwhile.
        clock_b.set(T0);
        let waiter = {
            let b = Arc::clone(&b);
            std::thread::spawn(move || b.next_raw())
        };
        while b.stats().exhausted_waits == 0 && !waiter.is_finished() {
            std::thread::yield_now();
        }
        clock_b.set(T0 + 999);
        assert!(!waiter.is_finished(), "{policy:?}: B did not wait for its clock to pass the mark");
        clock_b.set(mark + 1);
        let id = waiter.join().map_err(|_| "waiter panicked")??;
        assert_eq!(EventId::LAYOUT.timestamp_ms_of(id), mark + 1, "{policy:?}");
        after.push(id);
        clock_b.set(T0 + 2_000);
        after.push(b.next_raw()?);
        assert!(after[0] > last_a, "{policy:?}: B issued {} at or below A's last {last_a}", after[0]);
        for pair in after.windows(2) {
            assert!(pair[0] < pair[1]);
        }
        assert_eq!(b.stats().errors, 6);
    }
    Ok(())
}

#[test]
fn restart_on_the_default_clock_continues_after_the_mark() -> TestResult {
    let dir = tempfile::tempdir()?;
    let path = dir.path().join("mark");
    let build = || Generator::builder(EventId::LAYOUT).high_water(&path, Duration::from_millis(200)).build();
    let a = build()?;
    let ids = a.next_batch_raw(10_000)?;
    let last_a = ids[ids.len() - 1];
    drop(a);
    let mark = mark_of(&path)?;
    assert!(mark >= EventId::LAYOUT.timestamp_ms_of(last_a));
    // A quick restart: B waits for the clock to pass the mark (at most the reservation).
    let b = build()?;
    let first_b = b.next_raw()?;
    assert!(first_b > last_a);
    assert!(EventId::LAYOUT.timestamp_ms_of(first_b) > mark);
    Ok(())
}

#[test]
fn reservations_are_renewed_and_cover_every_id() -> TestResult {
    let dir = tempfile::tempdir()?;
    let path = dir.path().join("EventId-3.hwm");
    let clock = Arc::new(ManualClock::new(T0));
    let generator = generator(&path, &clock, Duration::from_millis(10))?;
    assert!(!path.exists(), "nothing is written before the first ID");
    for _ in 0..=25 {
        let id = generator.next_raw()?;
        // The mark on disk already covers every ID handed out.
        assert!(mark_of(&path)? >= EventId::LAYOUT.timestamp_ms_of(id));
        clock.advance(1);
    }
    // Reservations at T0, T0 + 11 and T0 + 22, each 10 ticks ahead.
    assert_eq!(generator.stats().high_water_writes, 3);
    assert_eq!(mark_of(&path)?, T0 + 32);
    // Only the mark is left in the directory: the temporary file was renamed over it.
    let names: Vec<_> = std::fs::read_dir(dir.path())?.map(|e| e.map(|e| e.file_name())).collect::<Result<_, _>>()?;
    assert_eq!(names, ["EventId-3.hwm"]);
    Ok(())
}

#[test]
fn missing_file_is_a_fresh_start() -> TestResult {
    let dir = tempfile::tempdir()?;
    let path = dir.path().join("fresh.hwm");
    let clock = Arc::new(ManualClock::new(T0));
    let generator = generator(&path, &clock, Duration::from_secs(1))?;
    let id = generator.next_raw()?;
    assert_eq!(EventId::LAYOUT.timestamp_ms_of(id), T0);
    assert_eq!(EventId::LAYOUT.sequence_of(id), 0);
    assert_eq!(mark_of(&path)?, T0 + 1_000);
    Ok(())
}

#[test]
fn corrupt_file_is_an_error_not_a_reset() -> TestResult {
    let corrupt: [&[u8]; 16] = [
        b"garbage",
        b"",
        b"\n",
        b"typed-snowflake high-water v1",
        b"typed-snowflake high-water v1\n",
        b"typed-snowflake high-water v1\n17000000",
        b"typed-snowflake high-water v1\n-1700000000000\n",
        b"typed-snowflake high-water v1\n+1700000000000\n",
        b"typed-snowflake high-water v1\n 1700000000000\n",
        b"typed-snowflake high-water v1\n1700000000000\n1700000000001\n",
        b"typed-snowflake high-water v1\n1700000000000\n\n",
        b"typed-snowflake high-water v1\r\n1700000000000\r\n",
        b"typed-snowflake high-water v1\n99999999999999999999\n",
        b"typed-snowflake high-water v2\n1700000000000\n",
        b"1700000000000\n",
        b"typed-snowflake high-water v1\n\xff\xfe\n",
    ];
    let dir = tempfile::tempdir()?;
    let clock = Arc::new(ManualClock::new(T0));
    for (k, content) in corrupt.iter().enumerate() {
        let path = dir.path().join(format!("corrupt-{k}.hwm"));
        std::fs::write(&path, content)?;
        let result = generator(&path, &clock, Duration::from_secs(1));
        assert!(is_high_water(&result, &path), "{:?}: {result:?}", String::from_utf8_lossy(content));
        // Left as found, for an operator to look at.
        assert_eq!(std::fs::read(&path)?, *content);
    }
    // A directory where the file should be.
    let path = dir.path().join("a-directory.hwm");
    std::fs::create_dir(&path)?;
    assert!(is_high_water(&generator(&path, &clock, Duration::from_secs(1)), &path));
    // A well-formed mark beyond the layout's time field: nothing can be issued after it.
    let path = dir.path().join("beyond.hwm");
    std::fs::write(&path, format!("{HEADER}\n{}\n", i64::MAX))?;
    assert!(matches!(generator(&path, &clock, Duration::from_secs(1)), Err(GenerateError::TimeExhausted { .. })));
    Ok(())
}

/// An empty path is refused at build, as the registry refuses an empty directory (it used to
/// build, and fail at the first reservation); so is a path that names no file.
#[test]
fn a_path_that_names_no_file_is_refused_at_build() -> TestResult {
    let clock = Arc::new(ManualClock::new(T0));
    let result = generator(Path::new(""), &clock, Duration::from_secs(1));
    let Err(GenerateError::HighWater { path, reason, source: None }) = &result else {
        return Err(format!("an empty path must be refused: {result:?}").into());
    };
    assert_eq!(path, Path::new(""));
    assert!(reason.contains("empty path"), "{reason}");
    assert!(result.as_ref().err().map(ToString::to_string).is_some_and(|e| e.starts_with("high-water file : ")));
    let dir = tempfile::tempdir()?;
    for path in [Path::new("/"), &dir.path().join("missing").join("..")] {
        let result = generator(path, &clock, Duration::from_secs(1));
        assert!(
            matches!(&result, Err(GenerateError::HighWater { reason, .. }) if reason.contains("names no file")),
            "{path:?}: {result:?}"
        );
    }
    Ok(())
}

#[test]
fn unwritable_location_is_an_error_and_issues_nothing() -> TestResult {
    let dir = tempfile::tempdir()?;
    let clock = Arc::new(ManualClock::new(T0));
    // Under a regular file: refused at build (whoever runs the test, root included).
    let file = dir.path().join("plain-file");
    std::fs::write(&file, b"x")?;
    let path = file.join("EventId-3.hwm");
    assert!(is_high_water(&generator(&path, &clock, Duration::from_secs(1)), &path));

    // In a directory that does not exist: nothing to read, so the build succeeds, but no ID
    // is issued before a reservation is written.
    let missing = dir.path().join("missing");
    let path = missing.join("EventId-3.hwm");
    let generator = generator(&path, &clock, Duration::from_secs(1))?;
    for _ in 0..3 {
        assert!(is_high_water(&generator.next_raw(), &path));
    }
    assert!(is_high_water(&generator.next_batch_raw(10), &path));
    assert_eq!(generator.stats().errors, 4);
    assert_eq!(generator.stats().high_water_writes, 0);
    // Once the directory exists, it recovers.
    std::fs::create_dir(&missing)?;
    let id = generator.next_raw()?;
    assert!(mark_of(&path)? >= EventId::LAYOUT.timestamp_ms_of(id));
    Ok(())
}

/// A clock at the epoch's own tick: the first ID still waits for a reservation on disk
/// (the generator's initial state is tick 0, so tick 0 would otherwise pass unreserved).
#[test]
fn the_epoch_tick_is_reserved_too() -> TestResult {
    let layout = Layout::new(41, 10, 12, T0)?;
    let dir = tempfile::tempdir()?;
    let path = dir.path().join("epoch.hwm");
    let clock = Arc::new(ManualClock::new(T0));
    let build =
        || Generator::builder(layout).clock(Arc::clone(&clock)).high_water(&path, Duration::from_secs(1)).build();
    let a = Arc::new(build()?);
    let waiter = {
        let a = Arc::clone(&a);
        std::thread::spawn(move || a.next_raw())
    };
    // Tick 0 counts as taken: the first ID waits for tick 1 (unless it was issued at once,
    // which the check below refutes).
    while !waiter.is_finished() {
        if a.stats().exhausted_waits > 0 {
            clock.advance(1);
            break;
        }
        std::thread::yield_now();
    }
    let id = waiter.join().map_err(|_| "waiter panicked")??;
    // Whatever tick it got, the reservation on disk covers it.
    assert!(mark_of(&path)? >= layout.timestamp_ms_of(id), "an ID was issued before its reservation");
    assert_eq!(layout.ticks_of(id), 1);
    let last_a = a.next_raw()?;
    drop(a);
    // Past the mark (tick 1 + 1 000 reserved).
    clock.advance(2_000);
    let b = build()?;
    assert!(b.next_raw()? > last_a);
    Ok(())
}

/// Reservations name exactly the tick reserved, over the whole time field: on layouts whose
/// time field outlasts `i64` milliseconds (62 bits counting seconds) the reservation stops
/// at the tick that holds `i64::MAX`, the last one a mark can name, instead of writing a
/// saturated mark that reads back as an earlier tick than the one reserved.
#[test]
fn reservations_are_exact_on_extreme_layouts() -> TestResult {
    let seconds = Layout::new(62, 0, 1, 0)?.with_unit(TickUnit::Seconds);
    let millis = Layout::new(62, 0, 1, 0)?;
    let dir = tempfile::tempdir()?;
    for (k, layout) in [seconds, millis].into_iter().enumerate() {
        let unit = layout.unit().as_millis();
        let reserve_ticks = u64::try_from(i64::try_from(MAX_HIGH_WATER_RESERVE.as_millis())? / unit)?;
        // The last tick a mark (Unix milliseconds in an i64) can name.
        let end = layout.tick_of(i64::MAX).unwrap_or(layout.max_ticks());
        for start in [T0, layout.tick_start_ms(end) - 10 * unit] {
            let path = dir.path().join(format!("extreme-{k}-{start}.hwm"));
            let clock = Arc::new(ManualClock::new(start));
            let build = || {
                Generator::builder(layout).clock(Arc::clone(&clock)).high_water(&path, MAX_HIGH_WATER_RESERVE).build()
            };
            let a = build()?;
            let last_a = a.next_raw()?;
            assert_eq!(Ok(layout.ticks_of(last_a)), layout.tick_of(start));
            let reserved = (layout.tick_of(start)? + reserve_ticks).min(end);
            let mark = mark_of(&path)?;
            assert_eq!(layout.tick_of(mark)?, reserved, "{layout:?} at {start}: the mark {mark} names another tick");
            drop(a);
            let b = build()?;
            if reserved < end {
                // Past the mark, B issues after it.
                clock.set(layout.tick_start_ms(reserved + 1));
                let id = b.next_raw()?;
                assert!(id > last_a && layout.ticks_of(id) > reserved, "{id} at or below the mark {mark}");
            } else {
                // No tick after the mark can be reserved: B refuses rather than repeat.
                let result = b.next_raw();
                assert!(matches!(result, Err(GenerateError::TimeExhausted { .. })), "{layout:?}: {result:?}");
            }
        }
    }
    Ok(())
}

/// A reservation longer than `MAX_HIGH_WATER_RESERVE` is refused when the generator is
/// built, with the reason; the maximum itself is accepted.
#[test]
fn reserve_above_the_maximum_is_refused() -> TestResult {
    let dir = tempfile::tempdir()?;
    let path = dir.path().join("long.hwm");
    let clock = Arc::new(ManualClock::new(T0));
    for reserve in [Duration::MAX, MAX_HIGH_WATER_RESERVE + Duration::from_nanos(1)] {
        let result = generator(&path, &clock, reserve);
        assert!(is_high_water(&result, &path), "{reserve:?}: {result:?}");
        let Err(error) = result else { unreachable!() };
        assert!(error.to_string().contains("MAX_HIGH_WATER_RESERVE"), "{error}");
    }
    assert_eq!(MAX_HIGH_WATER_RESERVE, Duration::from_secs(3_600));
    let generator = generator(&path, &clock, MAX_HIGH_WATER_RESERVE)?;
    generator.next_raw()?;
    assert_eq!(mark_of(&path)?, T0 + 3_600_000);
    Ok(())
}

/// The regression for a mark saturated at `i64::MAX`: with 61 time bits counting seconds
/// from 1970, the time field outlasts `i64` milliseconds. Restarts near the end, each at
/// the same clock reading, must never issue an ID twice, nor an ID its mark does not cover.
#[test]
fn restarts_at_the_end_of_i64_milliseconds_never_repeat() -> TestResult {
    let layout = Layout::new(61, 1, 1, 0)?.with_unit(TickUnit::Seconds);
    let dir = tempfile::tempdir()?;
    let path = dir.path().join("end.hwm");
    let clock = Arc::new(ManualClock::new(i64::MAX - 10_000));
    let mut issued: Vec<(u32, i64)> = Vec::new();
    let mut refused: Vec<u32> = Vec::new();
    for run in 1..=4 {
        let generator = Generator::builder(layout)
            .worker(1)
            .clock(Arc::clone(&clock))
            .high_water(&path, MAX_HIGH_WATER_RESERVE)
            .build()?;
        // Two IDs fill a tick; a third would wait for a clock that is not moved.
        for _ in 0..2 {
            match generator.next_raw() {
                Ok(id) => {
                    assert!(issued.last().is_none_or(|&(_, last)| id > last), "run {run}: {id} after {issued:?}");
                    let mark = mark_of(&path)?;
                    assert!(layout.ticks_of(id) <= layout.tick_of(mark)?, "run {run}: {id} beyond the mark {mark}");
                    issued.push((run, id));
                }
                Err(GenerateError::TimeExhausted { .. }) => refused.push(run),
                Err(e) => return Err(format!("run {run}: {e}").into()),
            }
        }
    }
    // The first run reserves to the end of the time field (the mark saturates at
    // `i64::MAX`) and fills the clock's tick: both of its IDs are issued, in that tick. No
    // tick lies after that mark, so every later run refuses both times rather than repeat.
    let tick = layout.tick_of(clock.now_ms())?;
    assert_eq!(issued.iter().map(|&(run, _)| run).collect::<Vec<_>>(), [1, 1], "{issued:?}");
    assert!(issued.iter().all(|&(_, id)| layout.ticks_of(id) == tick), "{issued:?} outside tick {tick}");
    assert_eq!(mark_of(&path)?, i64::MAX);
    assert_eq!(refused, [2, 2, 3, 3, 4, 4]);
    Ok(())
}

/// The default clock takes the hot path: a new tick there must stay within the reservation
/// too. With 1 ms reserved per write, the hot path meets the limit every other tick.
#[test]
fn hot_path_stays_within_the_reservation() -> TestResult {
    let dir = tempfile::tempdir()?;
    let path = dir.path().join("hot.hwm");
    let generator = Generator::builder(EventId::LAYOUT).high_water(&path, Duration::from_millis(1)).build()?;
    let mut last_ms = 0;
    let mut checked = 0;
    while checked < 12 {
        let id = generator.next_raw()?;
        let ms = EventId::LAYOUT.timestamp_ms_of(id);
        if ms != last_ms {
            // The first ID of each tick: the mark on disk already covers it.
            assert!(mark_of(&path)? >= ms, "ID at {ms} issued beyond the mark");
            last_ms = ms;
            checked += 1;
        }
    }
    assert!(generator.stats().high_water_writes >= 6);
    Ok(())
}

/// Two generators of one process on one file (two ID types of the same name under a
/// registry's directory): the file holds the larger reservation, never the later one.
#[test]
fn shared_file_keeps_the_larger_reservation() -> TestResult {
    let dir = tempfile::tempdir()?;
    let path = dir.path().join("Id-3.hwm");
    let clock_a = Arc::new(ManualClock::new(T0));
    let clock_b = Arc::new(ManualClock::new(T0 - 500));
    let a = generator(&path, &clock_a, Duration::from_secs(1))?;
    let b = generator(&path, &clock_b, Duration::from_secs(1))?;
    a.next_raw()?;
    assert_eq!(mark_of(&path)?, T0 + 1_000);
    // A issues within its reservation, B reserves less after it.
    clock_a.set(T0 + 800);
    let last_a = a.next_raw()?;
    let last_b = b.next_raw()?;
    assert_eq!(mark_of(&path)?, T0 + 1_000, "a later, smaller reservation lowered the mark");
    drop((a, b));
    // A restart with the clock a little on repeats neither.
    let clock = Arc::new(ManualClock::new(T0 + 1_001));
    let restarted = generator(&path, &clock, Duration::from_secs(1))?;
    let first = restarted.next_raw()?;
    assert!(first > last_a && first > last_b);
    Ok(())
}

/// `high_water_writes` counts the writes made: a reservation that the file already covers
/// (another generator on it reserved further) raises the limit without a write.
#[test]
fn reservations_the_file_already_covers_are_not_counted_as_writes() -> TestResult {
    let dir = tempfile::tempdir()?;
    let path = dir.path().join("Id-3.hwm");
    let clock_a = Arc::new(ManualClock::new(T0));
    let clock_b = Arc::new(ManualClock::new(T0 - 500));
    let a = generator(&path, &clock_a, Duration::from_secs(1))?;
    let b = generator(&path, &clock_b, Duration::from_secs(1))?;
    a.next_raw()?;
    // The file's modification time set far into the past: a write (a new file renamed over
    // it, or one written in place) gives it the present time, however coarse the
    // filesystem's timestamps, so an unchanged time means no write.
    let long_ago = std::time::UNIX_EPOCH + Duration::from_secs(1_000_000);
    std::fs::File::options().append(true).open(&path)?.set_modified(long_ago)?;
    b.next_raw()?;
    assert_eq!(mark_of(&path)?, T0 + 1_000);
    assert_eq!(std::fs::metadata(&path)?.modified()?, long_ago, "the covered reservation rewrote the file");
    assert_eq!(a.stats().high_water_writes, 1);
    assert_eq!(b.stats().high_water_writes, 0, "B counted a write it did not make");
    // Past the mark on the file, B writes its own reservation, and counts it.
    clock_b.set(T0 + 1_001);
    b.next_raw()?;
    assert_eq!(mark_of(&path)?, T0 + 2_001);
    assert_eq!(b.stats().high_water_writes, 1);
    Ok(())
}

/// Restarts quicker than the reservation do not add up: each successor waits for its clock
/// to pass its predecessor's mark, and its own mark lies `reserve` past the clock, not past
/// the mark.
#[test]
fn quick_restarts_do_not_push_the_mark_ever_further() -> TestResult {
    let dir = tempfile::tempdir()?;
    let path = dir.path().join("EventId-3.hwm");
    let clock = Arc::new(Ticking::new(T0, 4));
    let reserve = Duration::from_secs(1);
    let mut last = 0;
    for restart in 0..20 {
        let generator = Generator::builder(EventId::LAYOUT)
            .worker(3)
            .clock(Arc::clone(&clock))
            .high_water(&path, reserve)
            .build()?;
        let id = generator.next_raw()?;
        assert!(id > last, "restart {restart}: {id} at or below {last}");
        last = id;
        let stats = generator.stats();
        assert_eq!((stats.clock_step_backs, stats.errors, stats.high_water_writes), (0, 0, 1), "{stats:?}");
        drop(generator);
        let lead = mark_of(&path)? - clock.peek();
        assert!(lead <= 1_000, "restart {restart}: the mark runs {lead} ms ahead of the clock");
    }
    Ok(())
}

/// A restart quicker than the reservation, under load (two IDs per tick, a clock that only
/// moves forward): the new generator waits for its clock to pass the mark, then issues at
/// the clock's pace, waiting when a tick is full as without a restart. It never runs ahead
/// of the clock, never counts a step back, never errs, and writes once per reservation.
#[test]
fn quick_restart_under_load_issues_at_the_clock_s_pace() -> TestResult {
    let layout = Layout::new(50, 5, 1, 1_609_459_200_000)?;
    let dir = tempfile::tempdir()?;
    let path = dir.path().join("load.hwm");
    let clock = Arc::new(Ticking::new(T0, 4));
    let build = || {
        Generator::builder(layout).worker(3).clock(Arc::clone(&clock)).high_water(&path, Duration::from_secs(1)).build()
    };
    let a = build()?;
    let last_a = a.next_raw()?;
    drop(a);
    let mark = mark_of(&path)?;
    assert_eq!(mark, T0 + 1_000);

    // Restarted at once, on the same file.
    let b = build()?;
    let mut ids = Vec::with_capacity(10_000);
    for k in 0..10_000 {
        let id = b.next_raw().map_err(|e| format!("ID {k} after the restart: {e}; {:?}", b.stats()))?;
        let ms = layout.timestamp_ms_of(id);
        assert!(ms <= clock.peek(), "ID {k} at {ms} runs ahead of the clock at {}", clock.peek());
        ids.push(id);
    }
    assert!(ids[0] > last_a);
    assert!(layout.timestamp_ms_of(ids[0]) > mark, "issued at or below the mark");
    for pair in ids.windows(2) {
        assert!(pair[0] < pair[1], "{} then {}: not strictly increasing", pair[0], pair[1]);
    }
    let stats = b.stats();
    assert_eq!((stats.clock_step_backs, stats.errors), (0, 0), "{stats:?}");
    assert!(stats.exhausted_waits > 0, "full ticks were not waited out: {stats:?}");
    // One write per reservation of 1 000 ticks over the span issued.
    let span = layout.timestamp_ms_of(ids[ids.len() - 1]) - layout.timestamp_ms_of(ids[0]);
    assert!(stats.high_water_writes <= u64::try_from(span / 1_000 + 1)?, "{stats:?} over {span} ms");
    Ok(())
}
