//! For operators (`snowflake leases`): read a namespace ([`inspect`]), declare it new
//! ([`create_namespace`]), fence it after a restore ([`fence_namespace`]); and the SQL tables.

use std::time::Duration;

use super::protocol::fresh_marker;
use super::protocol::record::{Marker, Record};
use super::store::support::{check_namespace, random_u64, recorded_holder};
use super::store::{Cas, LeaseError, LeaseStore, MAX_READ, Query, Slot, Written};
use crate::clock::wall_ms;

// The tables to create where the application's role may not.
#[cfg(any(feature = "lease-postgres", feature = "lease-mysql"))]
pub use super::sql::{MYSQL_TABLE_DDL, POSTGRES_TABLE_DDL};

/// One worker ID of a namespace as its store records it.
///
/// ```
/// use std::time::Duration;
/// use typed_snowflake::worker::lease::admin::WorkerRecord;
///
/// let record = WorkerRecord::new(7)
///     .leased_by(Some("orders-5d9c7:4242".into()), 1_700_000_000_000_000, Some(Duration::from_secs(8)))
///     .high_water(Some(1_700_000_010_000));
/// assert!(record.leased);
/// assert_eq!(record.holder.as_deref(), Some("orders-5d9c7:4242"));
/// assert_eq!(WorkerRecord::new(8).high_water(Some(1)).leased, false);
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct WorkerRecord {
    /// The worker ID.
    pub worker: u64,
    /// Whether a live lease holds it.
    pub leased: bool,
    /// The holder of the live lease, as it recorded itself: `host:pid`. `None` when free.
    pub holder: Option<String>,
    /// The fencing number of the last grant; `None` when never granted.
    pub fence: Option<u64>,
    /// How long the live lease lasts without a renewal. `None` when free.
    pub expires_in: Option<Duration>,
    /// The high water its holders recorded (Unix ms): a new holder issues only above it.
    pub high_water_ms: Option<i64>,
    /// Whether the store vouches for the record (`docs/lease-rules.md` rule 3).
    pub vouched: bool,
}

impl WorkerRecord {
    /// A free worker ID with nothing recorded.
    pub fn new(worker: u64) -> Self {
        WorkerRecord {
            worker,
            leased: false,
            holder: None,
            fence: None,
            expires_in: None,
            high_water_ms: None,
            vouched: false,
        }
    }

    /// Leased by `holder` under `fence`, for `expires_in` more.
    #[must_use]
    pub fn leased_by(mut self, holder: Option<String>, fence: u64, expires_in: Option<Duration>) -> Self {
        self.leased = true;
        self.holder = holder;
        self.fence = Some(fence);
        self.expires_in = expires_in;
        self
    }

    /// With the high water recorded for it.
    #[must_use]
    pub fn high_water(mut self, high_water_ms: Option<i64>) -> Self {
        self.high_water_ms = high_water_ms;
        self
    }
}

/// A namespace as its store holds it: the marker's facts and every worker ID with a record.
///
/// ```
/// use typed_snowflake::worker::lease::MemoryLeaseStore;
/// use typed_snowflake::worker::lease::admin::inspect;
///
/// let report = inspect(&MemoryLeaseStore::new(), "shop")?;
/// assert_eq!((report.known_since_ms, report.workers.len()), (None, 0));
/// Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct NamespaceReport {
    /// The store's clock when it was read (Unix ms; the local clock for a store without one).
    pub now_ms: i64,
    /// Since when (Unix ms) the store has known the namespace under its marker of this incarnation.
    pub known_since_ms: Option<i64>,
    /// Whether the namespace was declared new ([`create_namespace`]).
    pub declared: bool,
    /// Worker IDs below this may have been granted under the marker; those above never were.
    pub granted_below: u64,
    /// Every worker ID with a record, in ascending order.
    pub workers: Vec<WorkerRecord>,
}

/// Reads a namespace: its marker and every worker ID's record (no lock: leases change meanwhile).
///
/// ```no_run
/// use typed_snowflake::worker::lease::open_store;
/// use typed_snowflake::worker::lease::admin::inspect;
///
/// let store = open_store("redis://127.0.0.1:6379")?;
/// for record in inspect(&*store, "shop")?.workers.iter().filter(|r| r.leased) {
///     println!("{} held by {:?}", record.worker, record.holder);
/// }
/// Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn inspect(store: &dyn LeaseStore, namespace: &str) -> Result<NamespaceReport, LeaseError> {
    check_namespace(namespace)?;
    let first = store.read(namespace, &Query::workers(0..0).with_highest())?;
    let now_ms = first.now_ms.unwrap_or_else(wall_ms);
    let marker = first.marker.as_deref().and_then(Marker::decode).filter(|m| m.incarnation == first.incarnation);
    let mut workers = Vec::new();
    let end = first.highest.map_or(0, |h| h + 1);
    for lo in (0..end).step_by(MAX_READ as usize) {
        let chunk = store.read(namespace, &Query::workers(lo..(lo + MAX_READ).min(end)))?;
        for (worker, text) in &chunk.records {
            workers.push(match Record::decode(text) {
                Some(record) => listed(*worker, &record, marker.as_ref(), now_ms),
                // Text this protocol does not write: shown as held by no one, vouched for never.
                None => WorkerRecord::new(*worker),
            });
        }
    }
    Ok(NamespaceReport {
        now_ms,
        known_since_ms: marker.as_ref().map(|m| m.since_ms),
        declared: marker.as_ref().is_some_and(|m| m.declared),
        granted_below: marker.as_ref().map_or(0, |m| m.next),
        workers,
    })
}

fn listed(worker: u64, record: &Record, marker: Option<&Marker>, now_ms: i64) -> WorkerRecord {
    let leased = record.held_at(now_ms, 0);
    let expires_in = leased.then(|| Duration::from_millis(record.expires_ms.saturating_sub(now_ms).unsigned_abs()));
    WorkerRecord {
        worker,
        leased,
        holder: record.holder.as_ref().filter(|_| leased).and_then(|h| recorded_holder(&h.name)),
        fence: Some(record.fence),
        expires_in,
        high_water_ms: Some(record.high_water_ms),
        vouched: marker.is_some_and(|m| m.vouches(worker, record)),
    }
}

/// Declares `namespace` new, so that its first holders issue at once; refused where the store
/// holds anything of it. Only before its first holder starts (`docs/lease-rules.md`).
///
/// ```
/// use typed_snowflake::worker::lease::MemoryLeaseStore;
/// use typed_snowflake::worker::lease::admin::create_namespace;
///
/// let store = MemoryLeaseStore::new();
/// create_namespace(&store, "shop")?;
/// assert!(create_namespace(&store, "shop").is_err(), "only once");
/// Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn create_namespace(store: &dyn LeaseStore, namespace: &str) -> Result<(), LeaseError> {
    create_namespace_with(store, namespace, &mut random_u64, &wall_ms)
}

/// [`create_namespace`], with the marker's generation and the local clock given (the model check's).
pub(crate) fn create_namespace_with(
    store: &dyn LeaseStore,
    namespace: &str,
    generation: &mut dyn FnMut() -> u64,
    local_ms: &dyn Fn() -> i64,
) -> Result<(), LeaseError> {
    check_namespace(namespace)?;
    let read = store.read(namespace, &Query::workers(0..0).with_highest())?;
    let refuse = |what: String| {
        Err(LeaseError::BadSettings {
            reason: format!(
                "namespace {namespace:?} is not new in lease store {}: it holds {what}; a namespace is declared new only where the store holds nothing of it",
                store.describe()
            ),
        })
    };
    if read.marker.is_some() {
        return refuse("its marker".into());
    }
    if let Some(highest) = read.highest {
        return refuse(format!("records of worker IDs (up to {highest})"));
    }
    let now_ms = read.now_ms.unwrap_or_else(local_ms);
    let marker = fresh_marker(None, None, now_ms, &read.incarnation, generation(), true);
    match store.write(namespace, &[Cas::new(Slot::Marker, None, &marker.encode())])? {
        Written::Done => Ok(()),
        Written::Conflict => refuse("a marker written meanwhile".into()),
    }
}

/// Fences `namespace` after a restore its store cannot tell: writes its marker afresh, so
/// that no record written before is trusted (`docs/lease-rules.md`, "What the operator must do").
///
/// ```
/// use typed_snowflake::worker::lease::MemoryLeaseStore;
/// use typed_snowflake::worker::lease::admin::{fence_namespace, inspect};
///
/// let store = MemoryLeaseStore::new();
/// fence_namespace(&store, "shop")?;
/// assert!(inspect(&store, "shop")?.known_since_ms.is_some());
/// Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn fence_namespace(store: &dyn LeaseStore, namespace: &str) -> Result<(), LeaseError> {
    fence_namespace_with(store, namespace, &mut random_u64, &wall_ms)
}

/// [`fence_namespace`], as [`create_namespace_with`].
pub(crate) fn fence_namespace_with(
    store: &dyn LeaseStore,
    namespace: &str,
    generation: &mut dyn FnMut() -> u64,
    local_ms: &dyn Fn() -> i64,
) -> Result<(), LeaseError> {
    check_namespace(namespace)?;
    for _ in 0..10 {
        let read = store.read(namespace, &Query::workers(0..0).with_highest())?;
        let now_ms = read.now_ms.unwrap_or_else(local_ms);
        let old = read.marker.as_deref().and_then(Marker::decode);
        let marker = fresh_marker(old.as_ref(), read.highest, now_ms, &read.incarnation, generation(), false);
        let value = marker.encode();
        let op = Cas::new(Slot::Marker, read.marker.as_deref(), &value);
        if store.write(namespace, &[op])? == Written::Done {
            return Ok(());
        }
    }
    Err(LeaseError::BadSettings {
        reason: format!("namespace {namespace:?}: its marker kept changing while it was being fenced; try again"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::worker::lease::MemoryLeaseStore;
    use crate::worker::lease::protocol::marker_holds;

    /// Whether the marker read holds for this incarnation.
    fn holds(store: &dyn LeaseStore, namespace: &str) -> bool {
        let read = store.read(namespace, &Query::workers(0..0)).expect("a read");
        let marker = read.marker.as_deref().and_then(Marker::decode);
        let rules = super::super::protocol::Rules::of(
            Duration::from_secs(1),
            Duration::from_secs(1),
            Duration::ZERO,
            Duration::ZERO,
        );
        marker_holds(&rules, marker.as_ref(), &read.incarnation)
    }

    #[test]
    fn inspect_reports_every_record_and_which_the_marker_vouches_for() {
        let store = MemoryLeaseStore::with_clock(crate::clock::ManualClock::new(10_000));
        let incarnation = store.read("ns", &Query::workers(0..0)).expect("a read").incarnation;
        let marker = Marker { rev: 1, generation: 9, since_ms: 500, next: 3, declared: false, incarnation };
        let record = |generation: u64, held: bool| Record {
            rev: 2,
            fence: 7,
            expires_ms: 12_000,
            high_water_ms: 11_000,
            generation,
            holder: held
                .then(|| super::super::protocol::record::Holder { token: "a".repeat(32), name: "web-1:42".into() }),
        };
        let mut writes = vec![(Slot::Marker, marker.encode())];
        // Vouched and held; released; another generation; at or above `next`; in a second chunk.
        for (worker, generation, held) in [(0, 9, true), (1, 9, false), (2, 8, true), (3, 9, true), (1_030, 9, true)] {
            writes.push((Slot::Worker(worker), record(generation, held).encode()));
        }
        for (slot, value) in &writes {
            store.write("ns", &[Cas::new(*slot, None, value)]).expect("a write");
        }
        let report = inspect(&store, "ns").expect("a read");
        assert_eq!((report.now_ms, report.known_since_ms, report.granted_below), (10_000, Some(500), 3));
        let seen: Vec<(u64, bool, bool)> = report.workers.iter().map(|r| (r.worker, r.leased, r.vouched)).collect();
        assert_eq!(seen, [(0, true, true), (1, false, true), (2, true, false), (3, true, false), (1_030, true, false)]);
        let first = &report.workers[0];
        assert_eq!(first.holder.as_deref(), Some("web-1:42"));
        assert_eq!(
            (first.fence, first.expires_in, first.high_water_ms),
            (Some(7), Some(Duration::from_secs(2)), Some(11_000))
        );
        assert_eq!((report.workers[1].holder.as_deref(), report.workers[1].expires_in), (None, None));
    }

    #[test]
    fn a_fence_writes_the_marker_afresh_above_every_record() {
        let store = MemoryLeaseStore::with_clock(crate::clock::ManualClock::new(10_000));
        let marker = |store: &MemoryLeaseStore| {
            let read = store.read("ns", &Query::workers(0..0)).expect("a read");
            read.marker.as_deref().and_then(Marker::decode).expect("a marker")
        };
        create_namespace(&store, "ns").expect("new");
        let created = marker(&store);
        assert_eq!((created.rev, created.next, created.since_ms, created.declared), (1, 0, 10_000, true));
        store.write("ns", &[Cas::new(Slot::Worker(6), None, "x")]).expect("a record");
        fence_namespace(&store, "ns").expect("fenced");
        let fenced = marker(&store);
        assert_eq!((fenced.rev, fenced.next, fenced.declared), (2, 7, false));
        assert_ne!(fenced.generation, created.generation);
    }

    #[test]
    fn a_namespace_is_declared_new_once_and_fenced_any_time() {
        let store = MemoryLeaseStore::new();
        create_namespace(&store, "ns").expect("new");
        assert!(holds(&store, "ns"));
        let report = inspect(&store, "ns").expect("a read");
        assert!(report.declared && report.known_since_ms.is_some() && report.workers.is_empty());
        let err = create_namespace(&store, "ns").unwrap_err().to_string();
        assert!(err.contains("it holds its marker"), "{err}");
        let other = MemoryLeaseStore::new();
        other.write("ns", &[Cas::new(Slot::Worker(5), None, "x")]).expect("a write");
        let err = create_namespace(&other, "ns").unwrap_err().to_string();
        assert!(err.contains("records of worker IDs (up to 5)"), "{err}");
        fence_namespace(&store, "ns").expect("fenced");
        let report = inspect(&store, "ns").expect("a read");
        assert!(!report.declared);
        // A fence after a restart the store tells: the marker holds again.
        store.restart();
        assert!(!holds(&store, "ns"));
        fence_namespace(&store, "ns").expect("fenced");
        assert!(holds(&store, "ns"));
        assert!(matches!(create_namespace(&store, "bad ns"), Err(LeaseError::BadNamespace { .. })));
    }
}
