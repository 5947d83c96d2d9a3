//! Lease events (features `tracing`, `metrics`) on the reference store: acquired, lost,
//! acquired again and released, seen by a process-wide test subscriber and recorder (the
//! events come from the lease's own thread). The one test here that emits, so nothing else
//! reaches them.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use metrics_util::debugging::{DebugValue, DebuggingRecorder, Snapshotter};
use tracing_subscriber::layer::{Context, SubscriberExt};
use typed_snowflake::events;
use typed_snowflake::worker::lease::admin::create_namespace;
use typed_snowflake::worker::lease::store::Slot;
use typed_snowflake::worker::lease::{MemoryLeaseStore, WorkerLease};

type TestResult = Result<(), Box<dyn std::error::Error>>;

#[derive(Clone, Default)]
struct Messages(Arc<Mutex<Vec<(tracing::Level, String, String)>>>);

struct Fields(BTreeMap<String, String>);

impl tracing::field::Visit for Fields {
    fn record_debug(&mut self, field: &tracing::field::Field, value: &dyn std::fmt::Debug) {
        self.0.insert(field.name().to_owned(), format!("{value:?}"));
    }
}

impl<S: tracing::Subscriber> tracing_subscriber::Layer<S> for Messages {
    fn on_event(&self, event: &tracing::Event<'_>, _: Context<'_, S>) {
        let mut fields = Fields(BTreeMap::new());
        event.record(&mut fields);
        let message = fields.0.remove("message").unwrap_or_default();
        let namespace = fields.0.remove("namespace").unwrap_or_default();
        self.0.lock().unwrap_or_else(|p| p.into_inner()).push((*event.metadata().level(), namespace, message));
    }
}

/// What the recorder saw, accumulated across snapshots: a snapshot drains counters and
/// gauges (it swaps them to 0), so each one is read once, here.
struct Seen<'a> {
    snapshotter: &'a Snapshotter,
    counters: BTreeMap<(String, BTreeMap<String, String>), u64>,
    gauges: BTreeMap<(String, BTreeMap<String, String>), Vec<f64>>,
}

impl<'a> Seen<'a> {
    fn new(snapshotter: &'a Snapshotter) -> Self {
        Seen { snapshotter, counters: BTreeMap::new(), gauges: BTreeMap::new() }
    }

    fn update(&mut self) {
        for (key, _, _, value) in self.snapshotter.snapshot().into_vec() {
            let key = key.key();
            let labels = key.labels().map(|l| (l.key().to_owned(), l.value().to_owned())).collect();
            let id = (key.name().to_owned(), labels);
            match value {
                DebugValue::Counter(n) => *self.counters.entry(id).or_default() += n,
                DebugValue::Gauge(v) => self.gauges.entry(id).or_default().push(v.into_inner()),
                DebugValue::Histogram(_) => {}
            }
        }
    }

    fn id(name: &str, labels: &[(&str, &str)]) -> (String, BTreeMap<String, String>) {
        (name.to_owned(), labels.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect())
    }

    /// The total of counter `name` with these labels so far (0 when absent).
    fn counter(&mut self, name: &str, labels: &[(&str, &str)]) -> u64 {
        self.update();
        self.counters.get(&Self::id(name, labels)).copied().unwrap_or(0)
    }

    /// Whether gauge `name` with these labels was ever seen at `value`.
    fn gauge_was(&mut self, name: &str, labels: &[(&str, &str)], value: f64) -> bool {
        self.update();
        self.gauges.get(&Self::id(name, labels)).is_some_and(|seen| seen.contains(&value))
    }
}

#[test]
fn lease_events_reach_the_subscriber_and_the_recorder() -> TestResult {
    let messages = Messages::default();
    tracing::subscriber::set_global_default(tracing_subscriber::registry().with(messages.clone()))?;
    let recorder = DebuggingRecorder::new();
    let snapshotter = recorder.snapshotter();
    let mut seen = Seen::new(&snapshotter);
    metrics::set_global_recorder(recorder)?;
    let namespace = format!("typed-snowflake-events-{}", std::process::id());
    let store = MemoryLeaseStore::new();
    create_namespace(&store, &namespace)?;
    let acquire = || -> Result<WorkerLease, Box<dyn std::error::Error>> {
        Ok(WorkerLease::builder(store.clone())
            .namespace(namespace.clone())
            // One worker ID: the lease, once lost, must take it again, and wait out what the
            // store can no longer vouch for.
            .space(1)
            .ttl(Duration::from_secs(1))
            .reservation(Duration::from_secs(1))
            .margin(Duration::from_millis(200))
            .clock_tolerance(Duration::from_millis(200))
            .renew_every(Duration::from_millis(50))
            .acquire()?)
    };

    // Acquired, then released.
    let lease = acquire()?;
    let worker = lease.worker().to_string();
    let labels = [("namespace", namespace.as_str()), ("worker", worker.as_str())];
    assert_eq!(seen.counter(events::LEASE_ACQUIRED, &labels), 1);
    // The lease thread's gauges: the worker ID held, the store answering.
    let deadline = Instant::now() + Duration::from_secs(10);
    while !seen.gauge_was(events::LEASE_STORE_UP, &labels[..1], 1.0) {
        assert!(Instant::now() < deadline, "no store gauge");
        std::thread::sleep(Duration::from_millis(10));
    }
    assert!(seen.gauge_was(events::LEASE_WORKER, &labels[..1], lease.worker() as f64), "the worker gauge");
    lease.release()?;
    let released = [labels[0], labels[1], ("result", "ok")];
    assert_eq!(seen.counter(events::LEASE_RELEASES, &released), 1);

    // Acquired, then lost: its record is deleted behind its back, and the next renewal says so.
    let lease = acquire()?;
    let worker = lease.worker().to_string();
    let labels = [("namespace", namespace.as_str()), ("worker", worker.as_str())];
    store.delete(&namespace, Slot::Worker(lease.worker()));
    let deadline = Instant::now() + Duration::from_secs(60);
    while seen.counter(events::LEASE_LOST, &labels) == 0 {
        assert!(Instant::now() < deadline, "the lease was never found lost: {:?}", lease.stats());
        std::thread::sleep(Duration::from_millis(10));
    }
    // Acquired again by itself: the worker ID it held comes first, and it is free.
    while lease.stats().recoveries == 0 {
        assert!(Instant::now() < deadline, "the lease was never acquired again: {:?}", lease.stats());
        std::thread::sleep(Duration::from_millis(10));
    }
    assert_eq!(lease.worker().to_string(), worker, "the worker ID held before is preferred");
    assert!(!lease.stats().lost, "{:?}", lease.stats());
    assert!(lease.is_valid(), "{:?}", lease.status());
    lease.abandon();

    let seen = messages.0.lock().unwrap_or_else(|p| p.into_inner()).clone();
    let ours: Vec<_> = seen.iter().filter(|(_, ns, _)| ns.contains(&namespace)).collect();
    let find = |level: tracing::Level, text: &str| ours.iter().any(|(l, _, m)| *l == level && m.contains(text));
    assert!(find(tracing::Level::INFO, "worker ID leased"), "{ours:?}");
    assert!(find(tracing::Level::INFO, "worker-ID lease released"), "{ours:?}");
    assert!(find(tracing::Level::ERROR, "the store no longer holds the worker-ID lease"), "{ours:?}");
    assert!(find(tracing::Level::WARN, "cannot vouch for this worker ID's record"), "{ours:?}");
    Ok(())
}
