//! The reference store ([`MemoryLeaseStore`]), which the model check runs the protocol against.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use super::store::support::{check_query, check_write};
use super::store::{Cas, LeaseError, LeaseStore, Query, Slot, Snapshot, Written};
use crate::clock::{Clock, SystemClock};

/// One namespace's slots.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub(crate) struct Space {
    pub(crate) marker: Option<String>,
    pub(crate) records: BTreeMap<u64, String>,
}

/// The contract over plain data: what [`MemoryLeaseStore`] does under its lock, and the model check's store.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub(crate) struct State {
    pub(crate) spaces: BTreeMap<String, Space>,
    /// Counts the store's incarnations.
    pub(crate) incarnation: u64,
}

impl State {
    fn value(&self, namespace: &str, slot: Slot) -> Option<&str> {
        let space = self.spaces.get(namespace)?;
        match slot {
            Slot::Marker => space.marker.as_deref(),
            Slot::Worker(worker) => space.records.get(&worker).map(String::as_str),
        }
    }

    fn set(&mut self, namespace: &str, slot: Slot, value: Option<String>) {
        let space = self.spaces.entry(namespace.to_owned()).or_default();
        match (slot, value) {
            (Slot::Marker, value) => space.marker = value,
            (Slot::Worker(worker), Some(value)) => {
                space.records.insert(worker, value);
            }
            (Slot::Worker(worker), None) => {
                space.records.remove(&worker);
            }
        }
        if space.marker.is_none() && space.records.is_empty() {
            self.spaces.remove(namespace);
        }
    }

    /// The incarnation as the contract shows it.
    pub(crate) fn incarnation_text(&self) -> String {
        format!("memory-{}", self.incarnation)
    }

    /// A read, at `now_ms` on the store's clock.
    pub(crate) fn read(&self, namespace: &str, query: &Query, now_ms: Option<i64>) -> Snapshot {
        let space = self.spaces.get(namespace);
        let records = space
            .map(|space| space.records.range(query.workers.clone()).map(|(w, v)| (*w, v.clone())).collect())
            .unwrap_or_default();
        let highest = if query.highest { space.and_then(|s| s.records.keys().next_back().copied()) } else { None };
        Snapshot::new(now_ms, self.incarnation_text())
            .with_marker(space.and_then(|s| s.marker.clone()))
            .with_records(records)
            .with_highest(highest)
    }

    /// A write: all of `ops` or none.
    pub(crate) fn write(&mut self, namespace: &str, ops: &[Cas<'_>]) -> Written {
        if ops.iter().any(|op| self.value(namespace, op.slot) != op.expect) {
            return Written::Conflict;
        }
        for op in ops {
            self.set(namespace, op.slot, Some(op.value.to_owned()));
        }
        Written::Done
    }

    /// Deletes one slot's value alone.
    pub(crate) fn delete(&mut self, namespace: &str, slot: Slot) {
        self.set(namespace, slot, None);
    }
}

/// The store contract kept in this process's memory: the reference every real store is held to, and a store for
/// tests of code that leases worker IDs, with a real store's faults at their command. Two processes never share one.
///
/// ```
/// use typed_snowflake::worker::lease::{MemoryLeaseStore, WorkerLease};
///
/// let store = MemoryLeaseStore::new();
/// let lease = WorkerLease::builder(store.clone()).namespace("shop").create_namespace().acquire()?;
/// assert!(lease.is_valid());
/// lease.release()?;
/// Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone)]
pub struct MemoryLeaseStore {
    inner: Arc<Inner>,
}

struct Inner {
    state: Mutex<State>,
    clock: Option<Arc<dyn Clock>>,
    answering: std::sync::atomic::AtomicBool,
    /// How long each call hangs before it times out (ms); 0: none.
    stall_ms: std::sync::atomic::AtomicU64,
}

impl std::fmt::Debug for MemoryLeaseStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MemoryLeaseStore").field("state", &*self.lock()).finish()
    }
}

impl Default for MemoryLeaseStore {
    fn default() -> Self {
        MemoryLeaseStore::new()
    }
}

/// A copy of a [`MemoryLeaseStore`]'s values, taken by [`MemoryLeaseStore::backup`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MemoryBackup(State);

impl MemoryLeaseStore {
    /// An empty store whose clock is the system clock.
    pub fn new() -> Self {
        MemoryLeaseStore::with_clock(SystemClock::default())
    }

    /// An empty store whose clock is `clock`.
    ///
    /// ```
    /// use typed_snowflake::worker::lease::MemoryLeaseStore;
    /// use typed_snowflake::ManualClock;
    ///
    /// let store = MemoryLeaseStore::with_clock(ManualClock::new(1_700_000_000_000));
    /// ```
    pub fn with_clock(clock: impl Clock) -> Self {
        MemoryLeaseStore::build(Some(Arc::new(clock)))
    }

    /// An empty store without a clock: the holders' clocks stand in for it, as with etcd.
    pub fn without_clock() -> Self {
        MemoryLeaseStore::build(None)
    }

    fn build(clock: Option<Arc<dyn Clock>>) -> Self {
        MemoryLeaseStore {
            inner: Arc::new(Inner {
                state: Mutex::new(State::default()),
                clock,
                answering: std::sync::atomic::AtomicBool::new(true),
                stall_ms: std::sync::atomic::AtomicU64::new(0),
            }),
        }
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.inner.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Deletes one record or the marker of a namespace alone, as an eviction would.
    ///
    /// ```
    /// use typed_snowflake::worker::lease::{MemoryLeaseStore, WorkerLease};
    /// use typed_snowflake::worker::lease::store::Slot;
    ///
    /// let store = MemoryLeaseStore::new();
    /// let lease = WorkerLease::builder(store.clone()).namespace("shop").create_namespace().acquire()?;
    /// store.delete("shop", Slot::Worker(lease.worker()));
    /// Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn delete(&self, namespace: &str, slot: Slot) {
        self.lock().delete(namespace, slot);
    }

    /// Loses every value, as a store restarted without persistence does (a new incarnation).
    pub fn lose_everything(&self) {
        let mut state = self.lock();
        state.spaces.clear();
        state.incarnation += 1;
    }

    /// A copy of every value, to [`restore`](Self::restore) later.
    pub fn backup(&self) -> MemoryBackup {
        MemoryBackup(self.lock().clone())
    }

    /// Rolls the namespaces named (every namespace for `None`) back to `backup`, as a restore
    /// does; `detectable`: the store's incarnation changes, as a store that can tell shows it.
    pub fn restore(&self, backup: &MemoryBackup, namespaces: Option<&[&str]>, detectable: bool) {
        let mut state = self.lock();
        match namespaces {
            None => state.spaces = backup.0.spaces.clone(),
            Some(names) => {
                for name in names {
                    match backup.0.spaces.get(*name) {
                        Some(space) => state.spaces.insert((*name).to_owned(), space.clone()),
                        None => state.spaces.remove(*name),
                    };
                }
            }
        }
        if detectable {
            state.incarnation += 1;
        }
    }

    /// A new incarnation with every value kept (a store that cannot tell a restart from a restore).
    pub fn restart(&self) {
        self.lock().incarnation += 1;
    }

    /// Whether the store answers: while it does not, every call fails with a store error.
    pub fn set_answering(&self, answering: bool) {
        self.inner.answering.store(answering, std::sync::atomic::Ordering::SeqCst);
    }

    /// A store that hangs (a paused server): each call waits `stall`, then times out; `Duration::ZERO` ends it.
    ///
    /// ```
    /// use std::time::Duration;
    /// use typed_snowflake::worker::lease::{LeaseError, LeaseStore, MemoryLeaseStore};
    /// use typed_snowflake::worker::lease::store::Query;
    ///
    /// let store = MemoryLeaseStore::new();
    /// store.set_stalled(Duration::from_millis(10));
    /// assert!(matches!(store.read("shop", &Query::workers(0..1)), Err(LeaseError::Timeout { .. })));
    /// store.set_stalled(Duration::ZERO);
    /// assert!(store.read("shop", &Query::workers(0..1)).is_ok());
    /// ```
    pub fn set_stalled(&self, stall: std::time::Duration) {
        let ms = u64::try_from(stall.as_millis()).unwrap_or(u64::MAX);
        self.inner.stall_ms.store(ms, std::sync::atomic::Ordering::SeqCst);
    }

    fn answer(&self, what: impl FnOnce() -> String) -> Result<(), LeaseError> {
        let stall_ms = self.inner.stall_ms.load(std::sync::atomic::Ordering::SeqCst);
        if stall_ms > 0 {
            let after = std::time::Duration::from_millis(stall_ms);
            std::thread::sleep(after);
            return Err(LeaseError::Timeout { store: self.describe(), what: what(), after });
        }
        if self.inner.answering.load(std::sync::atomic::Ordering::SeqCst) {
            return Ok(());
        }
        Err(LeaseError::store(self.describe(), what(), std::io::Error::other("the store does not answer")))
    }
}

impl LeaseStore for MemoryLeaseStore {
    fn read(&self, namespace: &str, query: &Query) -> Result<Snapshot, LeaseError> {
        check_query(namespace, query)?;
        self.answer(|| super::store::support::reading(namespace, query))?;
        let now_ms = self.inner.clock.as_ref().map(|clock| clock.now_ms());
        Ok(self.lock().read(namespace, query, now_ms))
    }

    fn write(&self, namespace: &str, ops: &[Cas<'_>]) -> Result<Written, LeaseError> {
        check_write(namespace, ops)?;
        self.answer(|| super::store::support::writing(namespace, ops))?;
        Ok(self.lock().write(namespace, ops))
    }

    fn describe(&self) -> String {
        "memory://".to_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    impl MemoryLeaseStore {
        /// A store holding `state`, its clock stopped at `now_ms`, for the model check (tests only).
        pub(crate) fn holding(state: State, now_ms: Option<i64>) -> Self {
            let clock = now_ms.map(|ms| Arc::new(crate::clock::ManualClock::new(ms)) as Arc<dyn Clock>);
            let store = MemoryLeaseStore::build(clock);
            *store.lock() = state;
            store
        }

        /// What it holds now (tests only).
        pub(crate) fn state(&self) -> State {
            self.lock().clone()
        }
    }

    #[test]
    fn writes_are_compare_and_set_and_atomic() {
        let store = MemoryLeaseStore::without_clock();
        let w = |n| Slot::Worker(n);
        assert_eq!(store.write("ns", &[Cas::new(w(1), None, "a")]).unwrap(), Written::Done);
        assert_eq!(store.write("ns", &[Cas::new(w(1), None, "b")]).unwrap(), Written::Conflict);
        assert_eq!(store.write("ns", &[Cas::new(w(1), Some("b"), "c")]).unwrap(), Written::Conflict);
        // One op fails: neither is written.
        let both = [Cas::new(w(1), Some("a"), "c"), Cas::new(Slot::Marker, Some("m"), "m2")];
        assert_eq!(store.write("ns", &both).unwrap(), Written::Conflict);
        let read = store.read("ns", &Query::workers(0..4).with_highest()).unwrap();
        assert_eq!((read.record(1), read.marker.as_deref(), read.highest), (Some("a"), None, Some(1)));
        let both = [Cas::new(w(1), Some("a"), "c"), Cas::new(Slot::Marker, None, "m")];
        assert_eq!(store.write("ns", &both).unwrap(), Written::Done);
        let read = store.read("ns", &Query::workers(0..4)).unwrap();
        assert_eq!(
            (read.record(1), read.marker.as_deref(), read.highest, read.now_ms),
            (Some("c"), Some("m"), None, None)
        );
        assert_eq!(store.read("other", &Query::workers(0..4)).unwrap().records, vec![]);
    }

    #[test]
    fn the_faults_do_what_they_say() {
        let store = MemoryLeaseStore::new();
        let ops = |slot, value| [Cas::new(slot, None, value)];
        store.write("a", &ops(Slot::Marker, "m")).unwrap();
        store.write("a", &ops(Slot::Worker(2), "r2")).unwrap();
        store.write("b", &ops(Slot::Worker(3), "r3")).unwrap();
        let read = |ns| store.read(ns, &Query::workers(0..8).with_highest()).unwrap();
        let first = read("a").incarnation;
        let backup = store.backup();
        store.delete("a", Slot::Worker(2));
        assert_eq!((read("a").records, read("a").marker.as_deref()), (vec![], Some("m")));
        store.delete("a", Slot::Marker);
        assert_eq!(read("a").marker, None);
        store.restore(&backup, Some(&["a"]), false);
        assert_eq!((read("a").record(2), read("a").incarnation), (Some("r2"), first.clone()));
        store.lose_everything();
        assert_eq!((read("a").records, read("b").records), (vec![], vec![]));
        assert_ne!(read("a").incarnation, first);
        let lost = read("a").incarnation;
        store.restore(&backup, None, true);
        assert_eq!(read("b").record(3), Some("r3"));
        let restored = read("b").incarnation;
        assert!(restored != lost && restored != first, "a detectable restore shows a new incarnation: {restored}");
        store.restart();
        assert_ne!(read("b").incarnation, restored);
        assert!(read("b").now_ms.is_some());
        store.set_answering(false);
        assert!(matches!(store.read("b", &Query::workers(0..1)), Err(LeaseError::Store { .. })));
        assert!(matches!(store.write("b", &ops(Slot::Marker, "m")), Err(LeaseError::Store { .. })));
        store.set_answering(true);
        assert!(store.read("b", &Query::workers(0..1)).is_ok());
        store.set_stalled(std::time::Duration::from_millis(1));
        let stalled = store.read("b", &Query::workers(0..1));
        assert!(matches!(&stalled, Err(LeaseError::Timeout { store, .. }) if store == "memory://"), "{stalled:?}");
        store.set_stalled(std::time::Duration::ZERO);
        assert!(store.read("b", &Query::workers(0..1)).is_ok());
        assert!(format!("{store:?}").starts_with("MemoryLeaseStore { state: "), "{store:?}");
    }
}
