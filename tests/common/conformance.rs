//! The store contract, checked on a real store: one suite of cases, each what the reference
//! store (`MemoryLeaseStore`) does, run against every adapter on its real server (Redis,
//! Sentinel, PostgreSQL, MySQL/MariaDB, etcd, ZooKeeper), and against the reference itself.
//! Each adapter's test also plants bugs in front of the adapter (`planted.rs`) and shows that
//! each fails its case against the real server: [`planted_bugs_fail`].
//!
//! Include with `#[path = "../common/conformance.rs"] mod conformance;`, beside `planted`.
#![allow(dead_code)]

use std::sync::{Arc, Barrier};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use typed_snowflake::worker::lease::admin::create_namespace;
use typed_snowflake::worker::lease::store::{Cas, MAX_READ, MAX_VALUE_LEN, Query, Slot, Written};
use typed_snowflake::worker::lease::{LeaseError, LeaseStore, WorkerLease};
use typed_snowflake::{Generator, Layout};

use crate::planted::{Bug, plant};

/// What a test does to a store from outside, as an operator, a cleanup job or the store
/// itself would.
pub trait Faults: Send + Sync {
    /// Deletes one slot's value, and nothing else: an operator's `DEL`, a row deleted, a znode
    /// removed, a key evicted.
    fn delete(&self, namespace: &str, slot: Slot);
}

/// A store under test: how to open a client of it (each case opens two, as two processes
/// would have), how to hurt it, and what it is.
pub struct Subject<'a> {
    pub name: &'a str,
    pub open: &'a (dyn Fn() -> Arc<dyn LeaseStore> + Sync),
    pub faults: &'a dyn Faults,
    /// A prefix of this run's own: the cases' namespaces start with it.
    pub prefix: String,
    /// Whether the store has a clock of its own (etcd has none).
    pub has_clock: bool,
}

impl Subject<'_> {
    fn namespace(&self, case: &str) -> String {
        format!("{}-{case}", self.prefix)
    }
}

type Outcome = Result<(), String>;

/// A case of the suite.
pub type Case = fn(&Subject<'_>) -> Outcome;

/// Every case, by name.
pub const CASES: &[(&str, Case)] = &[
    ("an_unknown_namespace_reads_empty", an_unknown_namespace_reads_empty),
    ("a_slot_is_created_only_if_absent", a_slot_is_created_only_if_absent),
    ("a_write_is_compare_and_set", a_write_is_compare_and_set),
    ("two_slots_are_written_together_or_not_at_all", two_slots_are_written_together_or_not_at_all),
    ("values_are_kept_byte_for_byte", values_are_kept_byte_for_byte),
    ("reads_take_ranges_and_say_the_highest", reads_take_ranges_and_say_the_highest),
    ("namespaces_are_apart", namespaces_are_apart),
    ("concurrent_writes_lose_nothing", concurrent_writes_lose_nothing),
    ("the_clock_is_close", the_clock_is_close),
    ("bad_arguments_are_refused", bad_arguments_are_refused),
    ("a_slot_deleted_alone_reads_absent", a_slot_deleted_alone_reads_absent),
    ("holders_share_the_space", holders_share_the_space),
];

/// Runs every case; the failures, each with its case's name.
pub fn run_all(subject: &Subject<'_>) -> Outcome {
    let failures: Vec<String> = CASES
        .iter()
        .filter_map(|(name, case)| case(subject).err().map(|e| format!("{}: {name}: {e}", subject.name)))
        .collect();
    if failures.is_empty() { Ok(()) } else { Err(failures.join("\n")) }
}

/// For each `(bug, case)`: a store with `bug` planted in front of it fails `case` against
/// the real server. Each bug is planted in stores of its own (`open` makes new ones), never
/// in those other tests use.
pub fn planted_bugs_fail(subject: &Subject<'_>, bugs: &[(Bug, &str)]) -> Outcome {
    for (index, &(bug, case_name)) in bugs.iter().enumerate() {
        let case = CASES.iter().find(|(name, _)| *name == case_name).map(|(_, case)| *case);
        let case = case.ok_or_else(|| format!("no case named {case_name}"))?;
        let open = || plant((subject.open)(), bug);
        let planted = Subject {
            name: subject.name,
            open: &open,
            faults: subject.faults,
            prefix: format!("{}-bug{index}", subject.prefix),
            has_clock: subject.has_clock,
        };
        let bug = bug.name();
        match case(&planted) {
            Err(found) => eprintln!("{}: planted {bug}: {case_name} fails: {found}", subject.name),
            Ok(()) => return Err(format!("{}: with {bug} planted, {case_name} still passes", subject.name)),
        }
    }
    Ok(())
}

fn ensure(ok: bool, what: impl FnOnce() -> String) -> Outcome {
    if ok { Ok(()) } else { Err(what()) }
}

fn call<T>(result: Result<T, LeaseError>) -> Result<T, String> {
    result.map_err(|e| format!("the store failed: {e}"))
}

fn write(store: &dyn LeaseStore, namespace: &str, ops: &[Cas<'_>]) -> Result<Written, String> {
    call(store.write(namespace, ops))
}

fn read_slot(store: &dyn LeaseStore, namespace: &str, slot: Slot) -> Result<Option<String>, String> {
    let query = match slot {
        Slot::Marker => Query::workers(0..0),
        Slot::Worker(w) => Query::workers(w..w + 1),
    };
    let read = call(store.read(namespace, &query))?;
    Ok(match slot {
        Slot::Marker => read.marker,
        Slot::Worker(w) => read.record(w).map(str::to_owned),
    })
}

fn an_unknown_namespace_reads_empty(s: &Subject<'_>) -> Outcome {
    let store = (s.open)();
    let ns = s.namespace("empty");
    let first = call(store.read(&ns, &Query::workers(0..MAX_READ).with_highest()))?;
    ensure(first.marker.is_none() && first.records.is_empty() && first.highest.is_none(), || {
        format!("an unknown namespace read {first:?}")
    })?;
    let second = call(store.read(&ns, &Query::workers(0..1)))?;
    ensure(first.incarnation == second.incarnation, || {
        format!("the incarnation changed between two reads: {:?} then {:?}", first.incarnation, second.incarnation)
    })?;
    ensure(!first.incarnation.contains('|') && first.incarnation.len() <= 128, || {
        format!("an incarnation of {} bytes with a '|': {:?}", first.incarnation.len(), first.incarnation)
    })
}

fn a_slot_is_created_only_if_absent(s: &Subject<'_>) -> Outcome {
    let (a, b) = ((s.open)(), (s.open)());
    let ns = s.namespace("create");
    for slot in [Slot::Worker(1), Slot::Marker] {
        ensure(write(&*a, &ns, &[Cas::new(slot, None, "first")])? == Written::Done, || format!("{slot:?} created"))?;
        ensure(write(&*b, &ns, &[Cas::new(slot, None, "second")])? == Written::Conflict, || {
            format!("{slot:?} created twice")
        })?;
        let value = read_slot(&*b, &ns, slot)?;
        ensure(value.as_deref() == Some("first"), || format!("{slot:?} holds {value:?}, not the first value"))?;
    }
    Ok(())
}

fn a_write_is_compare_and_set(s: &Subject<'_>) -> Outcome {
    let (a, b) = ((s.open)(), (s.open)());
    let ns = s.namespace("cas");
    for slot in [Slot::Worker(3), Slot::Marker] {
        write(&*a, &ns, &[Cas::new(slot, None, "v1")])?;
        ensure(write(&*b, &ns, &[Cas::new(slot, Some("v0"), "v2")])? == Written::Conflict, || {
            format!("{slot:?} taken from a value it did not hold")
        })?;
        let value = read_slot(&*a, &ns, slot)?;
        ensure(value.as_deref() == Some("v1"), || format!("a conflict changed {slot:?} to {value:?}"))?;
        ensure(write(&*b, &ns, &[Cas::new(slot, Some("v1"), "v2")])? == Written::Done, || format!("{slot:?} v1 → v2"))?;
        ensure(write(&*a, &ns, &[Cas::new(slot, Some("v1"), "v3")])? == Written::Conflict, || {
            format!("{slot:?} written from a value read before another write (a lost update)")
        })?;
        let value = read_slot(&*a, &ns, slot)?;
        ensure(value.as_deref() == Some("v2"), || format!("{slot:?} holds {value:?}, not v2"))?;
    }
    Ok(())
}

fn two_slots_are_written_together_or_not_at_all(s: &Subject<'_>) -> Outcome {
    let store = (s.open)();
    let ns = s.namespace("atomic");
    write(&*store, &ns, &[Cas::new(Slot::Worker(2), None, "w1"), Cas::new(Slot::Marker, None, "m1")])?;
    let both = |w: &str, m: &str| -> Outcome {
        let (worker, marker) = (read_slot(&*store, &ns, Slot::Worker(2))?, read_slot(&*store, &ns, Slot::Marker)?);
        ensure(worker.as_deref() == Some(w) && marker.as_deref() == Some(m), || {
            format!("expected worker {w:?} and marker {m:?}, read {worker:?} and {marker:?}")
        })
    };
    both("w1", "m1")?;
    for ops in [
        [Cas::new(Slot::Worker(2), Some("w1"), "w2"), Cas::new(Slot::Marker, Some("m0"), "m2")],
        [Cas::new(Slot::Worker(2), Some("w0"), "w2"), Cas::new(Slot::Marker, Some("m1"), "m2")],
        [Cas::new(Slot::Marker, Some("m1"), "m2"), Cas::new(Slot::Worker(2), None, "w2")],
    ] {
        ensure(write(&*store, &ns, &ops)? == Written::Conflict, || format!("{ops:?} written though one op failed"))?;
        both("w1", "m1")?;
    }
    // A new slot and an update together.
    let ops = [Cas::new(Slot::Worker(9), None, "w9"), Cas::new(Slot::Marker, Some("m1"), "m2")];
    ensure(write(&*store, &ns, &ops)? == Written::Done, || "a creation and an update together".into())?;
    let nine = read_slot(&*store, &ns, Slot::Worker(9))?;
    ensure(nine.as_deref() == Some("w9"), || format!("worker 9 holds {nine:?}"))?;
    both("w1", "m2")
}

fn values_are_kept_byte_for_byte(s: &Subject<'_>) -> Outcome {
    let (a, b) = ((s.open)(), (s.open)());
    let ns = s.namespace("bytes");
    let every: String = (0x20u8..0x7f).map(char::from).collect();
    let long: String = every.chars().cycle().take(MAX_VALUE_LEN).collect();
    let values = [
        every.clone(),
        long,
        "r1|7|1700000000000000|-|x y|'\"\\%{}".to_owned(),
        " leading and trailing ".to_owned(),
        "x".to_owned(),
    ];
    for (i, value) in values.iter().enumerate() {
        let slot = Slot::Worker(100 + i as u64);
        write(&*a, &ns, &[Cas::new(slot, None, value)])?;
        let read = read_slot(&*b, &ns, slot)?;
        ensure(read.as_deref() == Some(value.as_str()), || format!("wrote {value:?}, read {read:?}"))?;
        ensure(write(&*b, &ns, &[Cas::new(slot, Some(value), "next")])? == Written::Done, || {
            format!("the exact value {value:?} did not compare equal to itself")
        })?;
    }
    Ok(())
}

fn reads_take_ranges_and_say_the_highest(s: &Subject<'_>) -> Outcome {
    let store = (s.open)();
    let ns = s.namespace("ranges");
    let workers = [0u64, 5, 1023, 1024, 4000];
    for w in workers {
        write(&*store, &ns, &[Cas::new(Slot::Worker(w), None, &format!("v{w}"))])?;
    }
    write(&*store, &ns, &[Cas::new(Slot::Marker, None, "m")])?;
    for (range, expect) in [
        (0..1024, vec![0, 5, 1023]),
        (1024..2048, vec![1024]),
        (5..6, vec![5]),
        (6..1023, vec![]),
        (3000..4001, vec![4000]),
        (4001..4100, vec![]),
    ] {
        let read = call(store.read(&ns, &Query::workers(range.clone())))?;
        let got: Vec<u64> = read.records.iter().map(|(w, _)| *w).collect();
        ensure(got == expect, || format!("a read of {range:?} gave {got:?}, not {expect:?}"))?;
        ensure(read.records.iter().all(|(w, v)| *v == format!("v{w}")), || format!("{range:?}: {:?}", read.records))?;
        ensure(read.marker.as_deref() == Some("m"), || format!("{range:?}: the marker read {:?}", read.marker))?;
        ensure(read.highest.is_none(), || format!("{range:?}: the highest said unasked: {:?}", read.highest))?;
    }
    let read = call(store.read(&ns, &Query::workers(0..0).with_highest()))?;
    ensure(read.highest == Some(4000), || format!("the highest worker ID with a record read {:?}", read.highest))?;
    ensure(read.records.is_empty(), || format!("an empty range read {:?}", read.records))
}

fn namespaces_are_apart(s: &Subject<'_>) -> Outcome {
    let store = (s.open)();
    let base = s.namespace("apart");
    let names = [base.clone(), base.to_uppercase(), format!("{base}.x"), format!("{base}:x"), format!("{base}_")];
    for (i, ns) in names.iter().enumerate() {
        write(&*store, ns, &[Cas::new(Slot::Worker(1), None, &format!("n{i}")), Cas::new(Slot::Marker, None, "m")])?;
    }
    for (i, ns) in names.iter().enumerate() {
        let read = call(store.read(ns, &Query::workers(0..4).with_highest()))?;
        ensure(read.record(1) == Some(format!("n{i}").as_str()) && read.highest == Some(1), || {
            format!("namespace {ns:?} read {read:?}")
        })?;
    }
    Ok(())
}

fn concurrent_writes_lose_nothing(s: &Subject<'_>) -> Outcome {
    const THREADS: usize = 8;
    const EACH: u64 = 15;
    let stores = [(s.open)(), (s.open)()];
    let ns = s.namespace("race");
    write(&*stores[0], &ns, &[Cas::new(Slot::Worker(7), None, "0")])?;
    let start = Barrier::new(THREADS);
    let results: Vec<Result<u64, String>> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..THREADS)
            .map(|t| {
                let (store, start, ns) = (&*stores[t % 2], &start, &ns);
                scope.spawn(move || {
                    start.wait();
                    let mut conflicts = 0;
                    for _ in 0..EACH {
                        loop {
                            let current = read_slot(store, ns, Slot::Worker(7))?.ok_or("the counter vanished")?;
                            let next = (current.parse::<u64>().map_err(|e| e.to_string())? + 1).to_string();
                            match write(store, ns, &[Cas::new(Slot::Worker(7), Some(&current), &next)])? {
                                Written::Done => break,
                                Written::Conflict => conflicts += 1,
                            }
                        }
                    }
                    Ok(conflicts)
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap_or_else(|_| Err("a thread panicked".into()))).collect()
    });
    let conflicts: u64 = results.into_iter().sum::<Result<u64, String>>()?;
    let total = read_slot(&*stores[0], &ns, Slot::Worker(7))?;
    let expected = (THREADS as u64 * EACH).to_string();
    ensure(total.as_deref() == Some(expected.as_str()), || {
        format!("{THREADS} threads counted to {total:?}, not {expected} ({conflicts} conflicts)")
    })
}

fn the_clock_is_close(s: &Subject<'_>) -> Outcome {
    let store = (s.open)();
    let before = wall_ms();
    let read = call(store.read(&s.namespace("clock"), &Query::workers(0..1)))?;
    let after = wall_ms();
    match (read.now_ms, s.has_clock) {
        (Some(ms), true) => ensure(ms >= before - 1_000 && ms <= after + 1_000, || {
            format!("the store's clock reads {ms}, the local one {before}..{after}")
        }),
        (None, false) => Ok(()),
        (clock, has) => Err(format!("a store {} a clock read {clock:?}", if has { "with" } else { "without" })),
    }
}

fn bad_arguments_are_refused(s: &Subject<'_>) -> Outcome {
    let store = (s.open)();
    let ns = s.namespace("bad");
    let long = "x".repeat(MAX_VALUE_LEN + 1);
    let refused = |result: Result<Written, LeaseError>, what: &str| -> Outcome {
        match result {
            Err(LeaseError::BadSettings { .. } | LeaseError::BadNamespace { .. }) => Ok(()),
            other => Err(format!("{what}: {other:?}")),
        }
    };
    refused(store.write("bad ns", &[Cas::new(Slot::Worker(1), None, "x")]), "a bad namespace")?;
    refused(store.write(&ns, &[Cas::new(Slot::Worker(1), None, &long)]), "a value too long")?;
    refused(store.write(&ns, &[Cas::new(Slot::Worker(1), None, "é")]), "a value not ASCII")?;
    refused(store.write(&ns, &[Cas::new(Slot::Worker(1), None, "a\nb")]), "a value with a newline")?;
    refused(store.write(&ns, &[]), "no op")?;
    let three =
        [Cas::new(Slot::Worker(1), None, "a"), Cas::new(Slot::Worker(2), None, "b"), Cas::new(Slot::Marker, None, "c")];
    refused(store.write(&ns, &three), "three ops")?;
    refused(
        store.write(&ns, &[Cas::new(Slot::Worker(1), None, "a"), Cas::new(Slot::Worker(1), None, "b")]),
        "one slot twice",
    )?;
    match store.read(&ns, &Query::workers(0..MAX_READ + 1)) {
        Err(LeaseError::BadSettings { .. }) => {}
        other => return Err(format!("a read of {} worker IDs: {other:?}", MAX_READ + 1)),
    }
    let read = call(store.read(&ns, &Query::workers(0..4).with_highest()))?;
    ensure(read.records.is_empty() && read.marker.is_none(), || format!("a refused write wrote: {read:?}"))
}

fn a_slot_deleted_alone_reads_absent(s: &Subject<'_>) -> Outcome {
    let store = (s.open)();
    let ns = s.namespace("deleted");
    for (slot, value) in [(Slot::Marker, "m"), (Slot::Worker(1), "w1"), (Slot::Worker(2), "w2")] {
        write(&*store, &ns, &[Cas::new(slot, None, value)])?;
    }
    s.faults.delete(&ns, Slot::Worker(1));
    let read = call(store.read(&ns, &Query::workers(0..4).with_highest()))?;
    ensure(read.record(1).is_none() && read.record(2) == Some("w2") && read.marker.as_deref() == Some("m"), || {
        format!("after worker 1's record was deleted: {read:?}")
    })?;
    // Deleted, it may be created again (by expecting nothing), not updated.
    ensure(write(&*store, &ns, &[Cas::new(Slot::Worker(1), Some("w1"), "x")])? == Written::Conflict, || {
        "a deleted record updated as if it were there".into()
    })?;
    s.faults.delete(&ns, Slot::Marker);
    let read = call(store.read(&ns, &Query::workers(0..4).with_highest()))?;
    ensure(read.marker.is_none() && read.record(2) == Some("w2") && read.highest == Some(2), || {
        format!("after the marker was deleted: {read:?}")
    })
}

/// The protocol on the store: holders of a namespace declared new take distinct worker IDs
/// and issue at once; a released worker ID's next holder starts above its last ID.
fn holders_share_the_space(s: &Subject<'_>) -> Outcome {
    let ns = s.namespace("holders");
    call(create_namespace(&*(s.open)(), &ns))?;
    let lease = |store: Arc<dyn LeaseStore>| {
        WorkerLease::builder_shared(store)
            .namespace(ns.clone())
            .space(4)
            .ttl(Duration::from_secs(30))
            .wait_for_store(Duration::from_secs(5))
            .acquire()
    };
    let mut leases: Vec<WorkerLease> = (0..4).map(|_| call(lease((s.open)()))).collect::<Result<_, _>>()?;
    let mut workers: Vec<u64> = leases.iter().map(WorkerLease::worker).collect();
    workers.sort_unstable();
    ensure(workers == [0, 1, 2, 3], || format!("four holders hold {workers:?}"))?;
    match lease((s.open)()) {
        Err(LeaseError::NoFreeWorker { .. }) => {}
        other => return Err(format!("a fifth holder of four worker IDs: {other:?}")),
    }
    let layout = Layout::new(41, 2, 12, 1_288_834_974_657).map_err(|e| e.to_string())?;
    let first = leases.remove(0);
    let worker = first.worker();
    let generator = Generator::builder(layout).lease(first.clone()).build().map_err(|e| e.to_string())?;
    let last = generator.next_raw().map_err(|e| e.to_string())?;
    call(first.release())?;
    let next = call(lease((s.open)()))?;
    ensure(next.worker() == worker, || format!("the released worker ID {worker} was not taken again"))?;
    let generator = Generator::builder(layout).lease(next.clone()).build().map_err(|e| e.to_string())?;
    let after = generator.next_raw().map_err(|e| e.to_string())?;
    ensure(after > last, || format!("the next holder issued {after}, not above {last}"))?;
    for lease in leases {
        call(lease.release())?;
    }
    call(next.release())
}

fn wall_ms() -> i64 {
    let now = SystemTime::now().duration_since(UNIX_EPOCH).expect("the clock is after 1970");
    i64::try_from(now.as_millis()).expect("Unix ms fit in an i64")
}
