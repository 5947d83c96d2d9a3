//! Slow-path events (features `tracing` and `metrics`): a test subscriber and a test
//! recorder, installed for one thread at a time, see what a generator on a `ManualClock`
//! emits when its sequence runs out, its clock steps back, it fails, and it writes a
//! high-water mark; and see nothing from IDs issued on the fast path.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use metrics_util::debugging::{DebugValue, DebuggingRecorder};
use tracing_subscriber::layer::{Context, SubscriberExt};
use typed_snowflake::{GenerateError, Generator, Layout, ManualClock, StepBack, events};

type TestResult = Result<(), Box<dyn std::error::Error>>;

/// 2023-11-14T22:13:20Z.
const T0: i64 = 1_700_000_000_000;

/// Four IDs per tick.
fn tiny() -> Layout {
    Layout::new(41, 10, 2, 1_577_836_800_000).expect("a valid layout")
}

/// One `tracing` event, its fields as text.
#[derive(Debug, Clone)]
struct Seen {
    level: tracing::Level,
    target: String,
    fields: BTreeMap<String, String>,
}

impl Seen {
    fn field(&self, name: &str) -> &str {
        self.fields.get(name).map_or("", String::as_str)
    }
}

#[derive(Clone, Default)]
struct Collect(Arc<Mutex<Vec<Seen>>>);

struct Fields(BTreeMap<String, String>);

impl tracing::field::Visit for Fields {
    fn record_debug(&mut self, field: &tracing::field::Field, value: &dyn std::fmt::Debug) {
        self.0.insert(field.name().to_owned(), format!("{value:?}"));
    }
    fn record_str(&mut self, field: &tracing::field::Field, value: &str) {
        self.0.insert(field.name().to_owned(), value.to_owned());
    }
}

impl<S: tracing::Subscriber> tracing_subscriber::Layer<S> for Collect {
    fn on_event(&self, event: &tracing::Event<'_>, _: Context<'_, S>) {
        let mut fields = Fields(BTreeMap::new());
        event.record(&mut fields);
        let seen =
            Seen { level: *event.metadata().level(), target: event.metadata().target().to_owned(), fields: fields.0 };
        self.0.lock().unwrap_or_else(|p| p.into_inner()).push(seen);
    }
}

/// A counter's value and labels.
#[derive(Debug, PartialEq, Eq)]
struct Count {
    name: String,
    labels: BTreeMap<String, String>,
    value: u64,
}

/// Runs `f` on this thread with a test subscriber and a test recorder; returns what they saw.
fn observe<R>(f: impl FnOnce() -> R) -> (R, Vec<Seen>, Vec<Count>) {
    let collect = Collect::default();
    let subscriber = tracing_subscriber::registry().with(collect.clone());
    let recorder = DebuggingRecorder::new();
    let snapshotter = recorder.snapshotter();
    let result = tracing::subscriber::with_default(subscriber, || metrics::with_local_recorder(&recorder, f));
    let mut counts: Vec<Count> = snapshotter
        .snapshot()
        .into_vec()
        .into_iter()
        .filter_map(|(key, _, _, value)| {
            let DebugValue::Counter(value) = value else { return None };
            let key = key.key();
            let labels = key.labels().map(|l| (l.key().to_owned(), l.value().to_owned())).collect();
            Some(Count { name: key.name().to_owned(), labels, value })
        })
        .collect();
    counts.sort_by(|a, b| (&a.name, &a.labels).cmp(&(&b.name, &b.labels)));
    let seen = collect.0.lock().unwrap_or_else(|p| p.into_inner()).clone();
    (result, seen, counts)
}

fn labels(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect()
}

fn count(name: &str, pairs: &[(&str, &str)], value: u64) -> Count {
    Count { name: name.to_owned(), labels: labels(pairs), value }
}

#[test]
fn an_exhausted_sequence_is_one_event_and_one_count_per_waiting_call() -> TestResult {
    let clock = Arc::new(ManualClock::new(T0));
    let generator = Arc::new(Generator::builder(tiny()).name("TinyId").worker(3).clock(Arc::clone(&clock)).build()?);
    for _ in 0..4 {
        generator.next_raw()?;
    }
    // The tick is spent: the next call waits, on a thread observed by the test subscriber
    // and recorder, until the clock moves on.
    let waiter = {
        let generator = Arc::clone(&generator);
        std::thread::spawn(move || observe(|| generator.next_raw()))
    };
    let deadline = Instant::now() + Duration::from_secs(60);
    while generator.stats().exhausted_waits == 0 {
        assert!(Instant::now() < deadline, "the waiter never waited: {:?}", generator.stats());
        std::thread::yield_now();
    }
    clock.advance(1);
    let (id, seen, counts) = waiter.join().map_err(|_| "the waiter panicked")?;
    assert_eq!(tiny().timestamp_ms_of(id?), T0 + 1);
    let [event] = seen.as_slice() else { return Err(format!("expected one event, saw {seen:?}").into()) };
    assert_eq!((event.level, event.target.as_str()), (tracing::Level::DEBUG, "typed_snowflake"));
    assert_eq!((event.field("type"), event.field("worker")), ("TinyId", "3"), "{event:?}");
    assert!(event.field("message").contains("sequence exhausted"), "{event:?}");
    assert_eq!(counts, [count(events::SEQUENCE_EXHAUSTED, &[("type", "TinyId"), ("worker", "3")], 1)]);
    Ok(())
}

#[test]
fn a_step_back_is_one_event_per_episode_and_refusals_are_errors() -> TestResult {
    // Borrow: 1 000 IDs through a step back of 1 ms are one episode, and no error.
    let clock = Arc::new(ManualClock::new(T0));
    let generator = Generator::builder(tiny()).name("BorrowId").worker(7).clock(Arc::clone(&clock)).build()?;
    generator.next_raw()?;
    clock.step_back(1);
    let (ids, seen, counts) = observe(|| (0..100).map(|_| generator.next_raw()).collect::<Result<Vec<_>, _>>());
    assert_eq!(ids?.len(), 100);
    let [event] = seen.as_slice() else { return Err(format!("expected one event, saw {seen:?}").into()) };
    assert_eq!(event.level, tracing::Level::WARN);
    assert_eq!((event.field("type"), event.field("worker"), event.field("behind_ms")), ("BorrowId", "7", "1"));
    assert!(event.field("message").contains("stepped back"), "{event:?}");
    assert_eq!(counts, [count(events::CLOCK_STEP_BACKS, &[("type", "BorrowId"), ("worker", "7")], 1)]);

    // Error: each refusal is an error event and count; the episode is counted once.
    let clock = Arc::new(ManualClock::new(T0).with_policy(StepBack::Error));
    let generator = Generator::builder(tiny()).name("StrictId").worker(2).clock(Arc::clone(&clock)).build()?;
    generator.next_raw()?;
    clock.step_back(5);
    let (results, seen, counts) = observe(|| (0..3).map(|_| generator.next_raw()).collect::<Vec<_>>());
    assert!(results.iter().all(|r| *r == Err(GenerateError::ClockBackwards { behind_ms: 5 })), "{results:?}");
    let levels: Vec<_> = seen.iter().map(|e| (e.level, e.field("message").to_owned())).collect();
    assert_eq!(seen.len(), 4, "{levels:?}");
    assert!(seen[0].field("message").contains("stepped back"), "{levels:?}");
    for error in &seen[1..] {
        assert_eq!(error.level, tracing::Level::WARN);
        assert_eq!((error.field("type"), error.field("kind")), ("StrictId", "clock_backwards"));
        assert!(error.field("error").contains("5 ms behind"), "{error:?}");
    }
    assert_eq!(
        counts,
        [
            count(events::CLOCK_STEP_BACKS, &[("type", "StrictId"), ("worker", "2")], 1),
            count(events::ERRORS, &[("error", "clock_backwards"), ("type", "StrictId"), ("worker", "2")], 3),
        ]
    );
    Ok(())
}

#[test]
fn errors_and_high_water_writes_are_counted_by_kind() -> TestResult {
    let dir = tempfile::tempdir()?;
    let path = dir.path().join("MarkedId-4.hwm");
    let clock = Arc::new(ManualClock::new(T0));
    let generator = Generator::builder(tiny())
        .name("MarkedId")
        .worker(4)
        .clock(Arc::clone(&clock))
        .high_water(&path, Duration::from_millis(10))
        .batch_limit(8)
        .build()?;
    let ((), seen, counts) = observe(|| {
        // The first ID reserves 10 ms; the tick after the reservation writes again.
        assert!(generator.next_raw().is_ok());
        clock.advance(11);
        assert!(generator.next_raw().is_ok());
        assert_eq!(generator.next_batch_raw(9), Err(GenerateError::BatchTooLarge { requested: 9, limit: 8 }));
    });
    let writes: Vec<_> = seen.iter().filter(|e| e.field("message").contains("high-water")).collect();
    assert_eq!(writes.len(), 2, "{seen:?}");
    assert_eq!(writes[0].level, tracing::Level::DEBUG);
    assert_eq!(writes[0].field("path"), path.display().to_string());
    // The clock's tick plus the 10 ms reserve.
    assert_eq!(writes[1].field("mark_ms"), (T0 + 11 + 10).to_string(), "{:?}", writes[1]);
    assert_eq!(
        counts,
        [
            count(events::ERRORS, &[("error", "batch_too_large"), ("type", "MarkedId"), ("worker", "4")], 1),
            count(events::HIGH_WATER_WRITES, &[("type", "MarkedId"), ("worker", "4")], 2),
        ]
    );
    Ok(())
}

#[test]
fn ids_issued_on_time_emit_nothing() -> TestResult {
    let clock = Arc::new(ManualClock::new(T0));
    let generator = Generator::builder(tiny()).name("QuietId").clock(Arc::clone(&clock)).build()?;
    let (result, seen, counts) = observe(|| -> Result<(), GenerateError> {
        for _ in 0..1_000 {
            for _ in 0..4 {
                generator.next_raw()?;
            }
            clock.advance(1);
        }
        Ok(())
    });
    result?;
    assert!(seen.is_empty(), "{seen:?}");
    assert!(counts.is_empty(), "{counts:?}");
    // The default clock's hot path too.
    let generator = Generator::builder(Layout::new(41, 10, 12, 1_577_836_800_000)?).name("FastId").build()?;
    let (result, seen, counts) = observe(|| (0..1_000).try_for_each(|_| generator.next_raw().map(drop)));
    result?;
    assert!(seen.is_empty() && counts.is_empty(), "{seen:?} {counts:?}");
    Ok(())
}

/// Five worker bits.
#[derive(typed_snowflake::SnowflakeId, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Debug)]
#[layout(time = 42, worker = 5, seq = 16, epoch = "2021-05-05")]
struct NarrowId(i64);

/// A type whose generator cannot be built (here: the worker ID does not fit) fails every
/// call with an error event, labelled worker `none`. The only test in this binary that uses
/// the registry.
#[test]
fn a_generator_that_cannot_be_built_is_an_error_event() -> TestResult {
    typed_snowflake::Registry::builder().worker_id(40).install()?;
    let (results, seen, counts) = observe(|| [NarrowId::try_generate(), NarrowId::try_generate()]);
    let expected = GenerateError::WorkerOutOfRange { type_name: "NarrowId", worker: 40, max: 31 };
    assert_eq!(results, [Err(expected.clone()), Err(expected)]);
    assert_eq!(seen.len(), 2, "{seen:?}");
    assert!(
        seen.iter().all(|e| e.level == tracing::Level::WARN && e.field("kind") == "worker_out_of_range"),
        "{seen:?}"
    );
    assert_eq!(
        counts,
        [count(events::ERRORS, &[("error", "worker_out_of_range"), ("type", "NarrowId"), ("worker", "none")], 2)]
    );
    Ok(())
}
