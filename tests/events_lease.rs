//! Lease events (features `tracing`, `metrics`, `redis`) against a real Redis: acquired,
//! lost and released, seen by a process-wide test subscriber and recorder (the events come
//! from the lease's own thread). The one test here that emits, so nothing else reaches them.

#[path = "common/servers.rs"]
mod servers;

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use metrics_util::debugging::{DebugValue, DebuggingRecorder, Snapshotter};
use tracing_subscriber::layer::{Context, SubscriberExt};
use typed_snowflake::events;
use typed_snowflake::worker::lease::{RedisLeaseStore, WorkerLease};

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

/// The value of counter `name` with these labels (0 when absent).
fn counter(snapshotter: &Snapshotter, name: &str, labels: &[(&str, &str)]) -> u64 {
    let want: BTreeMap<String, String> = labels.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect();
    snapshotter
        .snapshot()
        .into_vec()
        .into_iter()
        .filter_map(|(key, _, _, value)| {
            let key = key.key();
            let labels: BTreeMap<String, String> =
                key.labels().map(|l| (l.key().to_owned(), l.value().to_owned())).collect();
            match value {
                DebugValue::Counter(n) if key.name() == name && labels == want => Some(n),
                _ => None,
            }
        })
        .sum()
}

#[test]
fn lease_events_reach_the_subscriber_and_the_recorder() -> TestResult {
    let Some(url) = servers::redis_url() else { return Ok(()) };
    let messages = Messages::default();
    tracing::subscriber::set_global_default(tracing_subscriber::registry().with(messages.clone()))?;
    let recorder = DebuggingRecorder::new();
    let snapshotter = recorder.snapshotter();
    metrics::set_global_recorder(recorder)?;
    let namespace = format!("typed-snowflake-events-{}", std::process::id());
    let _cleanup = servers::RedisKeys { url: url.clone(), pattern: format!("*{namespace}*") };
    let acquire = || -> Result<WorkerLease, Box<dyn std::error::Error>> {
        Ok(WorkerLease::builder(RedisLeaseStore::open(&url)?)
            .namespace(namespace.clone())
            .worker_bits(5)
            .ttl(Duration::from_secs(5))
            .renew_every(Duration::from_millis(50))
            .acquire()?)
    };

    // Acquired, then released.
    let lease = acquire()?;
    let worker = lease.worker().to_string();
    let labels = [("namespace", namespace.as_str()), ("worker", worker.as_str())];
    assert_eq!(counter(&snapshotter, events::LEASE_ACQUIRED, &labels), 1);
    lease.release()?;
    let released = [labels[0], labels[1], ("result", "ok")];
    assert_eq!(counter(&snapshotter, events::LEASE_RELEASES, &released), 1);

    // Acquired, then lost: its key is deleted behind its back, and the next renewal says so.
    let lease = acquire()?;
    let worker = lease.worker().to_string();
    let labels = [("namespace", namespace.as_str()), ("worker", worker.as_str())];
    let mut conn = redis::Client::open(url.as_str())?.get_connection()?;
    let _: i64 = redis::cmd("DEL").arg(format!("snowflake:{{{namespace}}}:worker:{worker}")).query(&mut conn)?;
    let deadline = Instant::now() + Duration::from_secs(60);
    while counter(&snapshotter, events::LEASE_LOST, &labels) == 0 {
        assert!(Instant::now() < deadline, "the lease was never found lost: {:?}", lease.stats());
        std::thread::sleep(Duration::from_millis(10));
    }
    assert!(lease.stats().lost);
    lease.abandon();

    let seen = messages.0.lock().unwrap_or_else(|p| p.into_inner()).clone();
    let ours: Vec<_> = seen.iter().filter(|(_, ns, _)| ns.contains(&namespace)).collect();
    let find = |level: tracing::Level, text: &str| ours.iter().any(|(l, _, m)| *l == level && m.contains(text));
    assert!(find(tracing::Level::INFO, "worker ID leased"), "{ours:?}");
    assert!(find(tracing::Level::INFO, "worker-ID lease released"), "{ours:?}");
    assert!(find(tracing::Level::ERROR, "worker-ID lease lost"), "{ours:?}");
    Ok(())
}
