//! Bugs planted in front of a lease store: [`Planted`] wraps any [`LeaseStore`] and breaks one
//! promise of the store contract, the way an adapter could break it. The conformance suite
//! (`conformance::planted_bugs_fail`) and the stores' fault tests show each one failing the
//! check that should find it, against the real server behind the store. The adapters
//! themselves carry no planted bug.
//!
//! Include with `#[path = "../common/planted.rs"] mod planted;`.
#![allow(dead_code)]

use std::sync::Arc;

use typed_snowflake::worker::lease::store::{Cas, MAX_READ, Query, Slot, Snapshot, Written};
use typed_snowflake::worker::lease::{LeaseError, LeaseStore, MAX_WORKER_SPACE};

/// One bug of a store adapter, and the promise it breaks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Bug {
    /// A write takes whatever each slot holds instead of comparing: a lost update, a slot
    /// created twice.
    CasIgnoresExpect,
    /// A creation overwrites a slot that holds a value (an upsert); updates still compare.
    CreateOverwrites,
    /// The comparison is a read of its own, the write after it unconditional (ZooKeeper's
    /// `setData` without the version read): a write landing between the two is lost.
    CasNotAtomic,
    /// The two ops of a write, each written on its own: the first stays when the second
    /// conflicts.
    WriteNotAtomic,
    /// The incarnation a constant: a restart, a promotion or a restore goes unseen.
    IncarnationConstant,
    /// The store's clock read in seconds, taken for milliseconds.
    ClockInSeconds,
    /// Namespaces folded to lower case (keys built from it, a `_ci` collation): `Shop` and
    /// `shop` share their slots.
    NamespaceFolded,
    /// A read of worker IDs `a..b` that also returns `b`'s record.
    RangeEndInclusive,
    /// The highest worker ID with a record, looked up in ascending order: the lowest.
    HighestAscending,
    /// Trailing spaces lost on the way in (a `CHAR` column, a `PAD SPACE` comparison).
    ValuesTrimmed,
}

impl Bug {
    /// The bug's name in messages.
    pub fn name(self) -> &'static str {
        match self {
            Bug::CasIgnoresExpect => "cas-ignores-expect",
            Bug::CreateOverwrites => "create-overwrites",
            Bug::CasNotAtomic => "cas-not-atomic",
            Bug::WriteNotAtomic => "write-not-atomic",
            Bug::IncarnationConstant => "incarnation-constant",
            Bug::ClockInSeconds => "clock-in-seconds",
            Bug::NamespaceFolded => "namespace-folded",
            Bug::RangeEndInclusive => "range-end-inclusive",
            Bug::HighestAscending => "highest-ascending",
            Bug::ValuesTrimmed => "values-trimmed",
        }
    }
}

/// The incarnation a store with [`Bug::IncarnationConstant`] reads.
pub const CONSTANT_INCARNATION: &str = "constant";

/// How many times an unconditional write reads its slots again when another write came in
/// between (each attempt a compare-and-set of what it read).
const OVERWRITE_ATTEMPTS: usize = 100;

/// `store` with `bug` planted in front of it.
#[derive(Debug)]
pub struct Planted {
    store: Arc<dyn LeaseStore>,
    bug: Bug,
}

impl Planted {
    pub fn new(store: Arc<dyn LeaseStore>, bug: Bug) -> Self {
        Planted { store, bug }
    }

    /// The namespace the wrapped store is asked about.
    fn namespace(&self, namespace: &str) -> String {
        if self.bug == Bug::NamespaceFolded { namespace.to_lowercase() } else { namespace.to_owned() }
    }

    /// What `slot` holds now.
    fn current(&self, namespace: &str, slot: Slot) -> Result<Option<String>, LeaseError> {
        Ok(match slot {
            Slot::Marker => self.store.read(namespace, &Query::workers(0..0))?.marker,
            Slot::Worker(worker) => {
                self.store.read(namespace, &Query::workers(worker..worker + 1))?.record(worker).map(str::to_owned)
            }
        })
    }

    /// Writes `ops`, those that `overwrite` picks whatever their slot holds: each attempt
    /// reads their slots and expects what it read.
    fn overwrite(
        &self,
        namespace: &str,
        ops: &[Cas<'_>],
        overwrite: fn(&Cas<'_>) -> bool,
    ) -> Result<Written, LeaseError> {
        for _ in 0..OVERWRITE_ATTEMPTS {
            let mut held = Vec::with_capacity(ops.len());
            for op in ops {
                held.push(if overwrite(op) { self.current(namespace, op.slot)? } else { op.expect.map(str::to_owned) });
            }
            let ops: Vec<Cas<'_>> =
                ops.iter().zip(&held).map(|(op, held)| Cas::new(op.slot, held.as_deref(), op.value)).collect();
            match self.store.write(namespace, &ops)? {
                Written::Done => return Ok(Written::Done),
                // Changed since read: read again.
                Written::Conflict if ops.iter().any(overwrite) => {}
                Written::Conflict => return Ok(Written::Conflict),
            }
        }
        Ok(Written::Conflict)
    }

    /// The lowest worker ID of `namespace` with a record, at most `highest`.
    fn lowest(&self, namespace: &str, highest: u64) -> Result<Option<u64>, LeaseError> {
        let mut from = 0;
        while from <= highest {
            let to = (from + MAX_READ).min(MAX_WORKER_SPACE);
            if let Some((worker, _)) = self.store.read(namespace, &Query::workers(from..to))?.records.first() {
                return Ok(Some(*worker));
            }
            from = to;
        }
        Ok(None)
    }
}

impl LeaseStore for Planted {
    fn read(&self, namespace: &str, query: &Query) -> Result<Snapshot, LeaseError> {
        let namespace = self.namespace(namespace);
        let mut read = self.store.read(&namespace, query)?;
        match self.bug {
            Bug::IncarnationConstant => read.incarnation = CONSTANT_INCARNATION.to_owned(),
            Bug::ClockInSeconds => read.now_ms = read.now_ms.map(|ms| ms / 1000),
            Bug::RangeEndInclusive if query.workers.end < MAX_WORKER_SPACE => {
                let end = query.workers.end;
                read.records.extend(self.store.read(&namespace, &Query::workers(end..end + 1))?.records);
            }
            Bug::HighestAscending => {
                if let Some(highest) = read.highest {
                    read.highest = self.lowest(&namespace, highest)?;
                }
            }
            _ => {}
        }
        Ok(read)
    }

    fn write(&self, namespace: &str, ops: &[Cas<'_>]) -> Result<Written, LeaseError> {
        let namespace = self.namespace(namespace);
        match self.bug {
            Bug::CasIgnoresExpect => self.overwrite(&namespace, ops, |_| true),
            Bug::CreateOverwrites => self.overwrite(&namespace, ops, |op| op.expect.is_none()),
            Bug::CasNotAtomic => {
                for op in ops {
                    if self.current(&namespace, op.slot)?.as_deref() != op.expect {
                        return Ok(Written::Conflict);
                    }
                }
                self.overwrite(&namespace, ops, |_| true)
            }
            Bug::WriteNotAtomic if ops.len() == 2 && ops[0].slot != ops[1].slot => {
                for op in ops {
                    if self.store.write(&namespace, std::slice::from_ref(op))? == Written::Conflict {
                        return Ok(Written::Conflict);
                    }
                }
                Ok(Written::Done)
            }
            Bug::ValuesTrimmed => {
                let ops: Vec<Cas<'_>> =
                    ops.iter().map(|op| Cas::new(op.slot, op.expect, op.value.trim_end())).collect();
                self.store.write(&namespace, &ops)
            }
            _ => self.store.write(&namespace, ops),
        }
    }

    fn describe(&self) -> String {
        self.store.describe()
    }

    fn warnings(&self) -> Result<Vec<String>, LeaseError> {
        self.store.warnings()
    }
}

/// `store` with `bug` planted, shared as the conformance suite's stores are.
pub fn plant(store: Arc<dyn LeaseStore>, bug: Bug) -> Arc<dyn LeaseStore> {
    Arc::new(Planted::new(store, bug))
}
