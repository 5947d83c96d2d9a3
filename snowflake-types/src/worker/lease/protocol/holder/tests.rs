//! The holder machine's unit tests: one holder (or two) driven against the reference store,
//! a millisecond at a time.

use super::*;
use crate::worker::lease::memory::State;
use crate::worker::lease::protocol::fresh_marker;
use std::time::Duration;

const MS: u64 = 1_000_000;

impl Machine {
    /// What its decisions depend on (not what it counts or tells), so that the model check
    /// takes two holders that differ only in those for one (here, where the machine's fields
    /// may be read).
    fn deciding(&self) -> impl PartialEq + std::hash::Hash + '_ {
        (
            (&self.s, &self.rng, &self.current, &self.retiring, self.epochs, &self.task, &self.sent),
            (self.due_ns, self.backoff_ns, self.waiting_first, self.trouble.as_ref().map(|t| (t.since_ns, &t.error))),
            (self.released, self.rolled_back, self.stops, self.resumed, self.last, &self.ambiguous, &self.vouched),
        )
    }
}

impl PartialEq for Machine {
    fn eq(&self, other: &Machine) -> bool {
        self.deciding() == other.deciding()
    }
}

impl Eq for Machine {}

impl std::hash::Hash for Machine {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.deciding().hash(state);
    }
}

fn settings(create: bool) -> Settings {
    let ms = Duration::from_millis;
    Settings {
        namespace: "ns".into(),
        space: 4,
        rules: Rules { renew_every: ms(100), ..Rules::of(ms(400), ms(2_000), ms(100), ms(50)) },
        first_wait_ns: 1_000 * MS,
        acquire_backoff_ns: (MS, 2 * MS),
        create_namespace: create,
        wait_for_free: false,
        state_file: false,
        name: "h:1".into(),
        store: "memory://".into(),
        seed: 7,
    }
}

/// Drives `machine` against `store` until `until_ms` (1 ms steps, calls answered at once).
fn run(machine: &mut Machine, store: &mut State, clock: &mut i64, until_ms: i64) {
    run_off(machine, store, clock, until_ms, 0);
}

/// [`run`], writing each state file the machine asks for at once, as the lease thread does
/// (a resumed grant makes no store call before its first file is written and it issues).
fn run_filing(machine: &mut Machine, store: &mut State, clock: &mut i64, until_ms: i64) {
    while *clock < until_ms {
        let now = at(*clock);
        if let Some(saved) = machine.save_due(now) {
            machine.saved_at(now, &saved);
        }
        let until = *clock + 1;
        run(machine, store, clock, until);
    }
}

/// [`run`], with the store's clock `offset_ms` off the holder's.
fn run_off(machine: &mut Machine, store: &mut State, clock: &mut i64, until_ms: i64, offset_ms: i64) {
    while *clock < until_ms {
        let now = Now { ns: u64::try_from(*clock).unwrap() * MS, ms: *clock };
        while let Some(call) = machine.poll_call(now) {
            let reply = answer(store, call, now.ms + offset_ms);
            machine.handle_reply(now, reply);
        }
        machine.handle_timeout(now);
        *clock += 1;
    }
}

/// The store's answer to `call`, its clock at `store_ms`.
fn answer(store: &mut State, call: Call, store_ms: i64) -> Reply {
    match call {
        Call::Read(query) => Reply::Read(store.read("ns", &query, Some(store_ms))),
        Call::Write(ops) => {
            let cas: Vec<Cas<'_>> = ops.iter().map(Op::cas).collect();
            Reply::Written(store.write("ns", &cas))
        }
    }
}

/// A store call that timed out.
fn timeout() -> LeaseError {
    LeaseError::Timeout { store: "m".into(), what: "w".into(), after: Duration::from_secs(1) }
}

/// Drives `machine` until `until_ms` with every call failing, as against a store that does
/// not answer.
fn run_failing(machine: &mut Machine, clock: &mut i64, until_ms: i64) {
    while *clock < until_ms {
        let now = at(*clock);
        while machine.poll_call(now).is_some() {
            machine.handle_reply(now, Reply::Failed(timeout()));
        }
        machine.handle_timeout(now);
        *clock += 1;
    }
}

/// Drives `machine`, answering its reads, up to its next write: that write's operations, sent
/// and not applied.
fn next_write(machine: &mut Machine, store: &mut State, clock: &mut i64) -> Vec<Op> {
    loop {
        let now = at(*clock);
        while let Some(call) = machine.poll_call(now) {
            match call {
                read @ Call::Read(_) => machine.handle_reply(now, answer(store, read, now.ms)),
                Call::Write(ops) => return ops,
            }
        }
        machine.handle_timeout(now);
        *clock += 1;
    }
}

fn notes(machine: &mut Machine) -> Vec<Note> {
    std::iter::from_fn(|| machine.poll_note()).collect()
}

#[test]
fn a_declared_namespace_issues_at_once_and_a_known_one_after_w() {
    let mut store = State::default();
    let mut clock = 1_000;
    let mut declared = Machine::new(settings(true), Now { ns: 1_000 * MS, ms: 1_000 });
    run(&mut declared, &mut store, &mut clock, 1_005);
    let seen = notes(&mut declared);
    assert!(seen.contains(&Note::Marked { declared: true, fenced: false }), "{seen:?}");
    assert!(seen.contains(&Note::Ready), "{seen:?}");
    // A second holder in the same namespace: the next never-granted worker ID, at once.
    let mut second =
        Machine::new(Settings { seed: 9, ..settings(false) }, Now { ns: clock.cast_unsigned() * MS, ms: clock });
    run(&mut second, &mut store, &mut clock, 1_010);
    assert!(notes(&mut second).contains(&Note::Ready));
    assert_ne!(declared.worker_and_fence().0, second.worker_and_fence().0);
    // A namespace the store did not know, undeclared: W + tolerance.
    let mut fresh_store = State::default();
    let mut clock = 1_000;
    let mut waiting = Machine::new(settings(false), Now { ns: 1_000 * MS, ms: 1_000 });
    run(&mut waiting, &mut fresh_store, &mut clock, 3_000);
    assert!(!notes(&mut waiting).contains(&Note::Ready));
    run(&mut waiting, &mut fresh_store, &mut clock, 3_060);
    assert!(notes(&mut waiting).contains(&Note::Ready));
}

#[test]
fn a_deleted_record_makes_its_successor_wait_and_its_holder_issue_on() {
    let mut store = State::default();
    let mut clock = 1_000;
    // One worker ID: its record deleted, nothing else is free.
    let mut a = Machine::new(Settings { space: 1, ..settings(true) }, Now { ns: 1_000 * MS, ms: 1_000 });
    run(&mut a, &mut store, &mut clock, 1_050);
    let worker = a.worker_and_fence().0;
    store.delete("ns", Slot::Worker(worker));
    run(&mut a, &mut store, &mut clock, 1_200);
    let seen = notes(&mut a);
    assert!(seen.contains(&Note::Lost { worker, why: LostWhy::Gone }), "{seen:?}");
    // Still issuing on what it reserved.
    let now = Now { ns: clock.cast_unsigned() * MS, ms: clock };
    assert!(a.issuing(now), "{:?}", a.standing(now));
    // Its new grant (the same worker ID, gone from the store) waits out W.
    let acquired = seen.iter().rev().find_map(|n| match n {
        Note::Acquired { basis, floor_ms, .. } => Some((*basis, *floor_ms)),
        _ => None,
    });
    assert!(matches!(acquired, Some((Basis::Unvouched, floor)) if floor > 3_000), "{acquired:?}");
}

fn at(clock: i64) -> Now {
    Now { ns: clock.cast_unsigned() * MS, ms: clock }
}

fn rolled_back(machine: &mut Machine) -> bool {
    notes(machine).iter().any(|n| matches!(n, Note::RolledBack { .. }))
}

#[test]
fn a_restore_that_hands_a_held_worker_id_to_a_newcomer_stops_its_holder_at_its_next_renewal() {
    // A holds the one worker ID; a backup is taken; A renews for a while; the backup is put
    // back (no new incarnation, no fence): the record in it expired long ago, so a newcomer
    // takes the worker ID above its old high water, below what A reserved since.
    let mut store = State::default();
    let mut clock = 1_000;
    let mut a = Machine::new(Settings { space: 1, ..settings(true) }, at(clock));
    run(&mut a, &mut store, &mut clock, 1_005);
    let backup = store.clone();
    run(&mut a, &mut store, &mut clock, 1_500);
    store = backup;
    let mut b = Machine::new(Settings { space: 1, seed: 11, ..settings(false) }, at(clock));
    run(&mut b, &mut store, &mut clock, 1_502);
    assert!(notes(&mut b).iter().any(|n| matches!(n, Note::Acquired { .. })));
    // A's next renewal finds the worker ID another's, taken while its own lease ran and
    // over an older write than its own: the store went back, and A stops at once.
    run(&mut a, &mut store, &mut clock, 1_650);
    assert!(rolled_back(&mut a));
    assert!(!a.issuing(at(clock)), "{:?}", a.standing(at(clock)));
}

#[test]
fn a_worker_id_taken_lawfully_after_the_lease_expired_is_lost_and_issued_on_within_the_reservation() {
    // A's renewals fail past its record's expiry; a newcomer then takes the worker ID over
    // A's last write (above its revision): a lawful successor, which starts above A's
    // reservation. A's next renewal finds it taken over: A acquires again, and issues on
    // what it reserved meanwhile (rule 6).
    let mut store = State::default();
    let mut clock = 1_000;
    let mut a = Machine::new(Settings { space: 1, ..settings(true) }, at(clock));
    run(&mut a, &mut store, &mut clock, 1_500);
    let mine = stored(&store, 0, clock);
    // Past the expiry and the clocks' tolerance (50 ms).
    run_failing(&mut a, &mut clock, mine.expires_ms + 100);
    let mut b = Machine::new(Settings { space: 1, seed: 11, ..settings(false) }, at(clock));
    let until = clock + 2;
    run(&mut b, &mut store, &mut clock, until);
    let theirs = stored(&store, 0, clock);
    assert!(theirs.rev > mine.rev && !theirs.is_token(&mine.holder.as_ref().expect("a holder").token), "{theirs:?}");
    notes(&mut a);
    let until = clock + 150;
    run(&mut a, &mut store, &mut clock, until);
    let seen = notes(&mut a);
    assert!(seen.contains(&Note::Lost { worker: 0, why: LostWhy::TakenOver }), "{seen:?}");
    assert!(a.issuing(at(clock)), "it issues on what it reserved: {:?}", a.standing(at(clock)));
}

#[test]
fn a_newcomer_over_an_older_revision_after_the_lease_expired_is_a_rollback() {
    // A's renewals fail until its record expired in the store (its reservation still lets it
    // issue). A newcomer may then take the worker ID lawfully, over A's last write: above its
    // revision. Here the store was put back first, and the newcomer wrote over the older
    // copy, below A's revision: the store went back, and A stops at once.
    let mut store = State::default();
    let mut clock = 1_000;
    let mut a = Machine::new(Settings { space: 1, ..settings(true) }, at(clock));
    run(&mut a, &mut store, &mut clock, 1_005);
    let backup = store.clone();
    run(&mut a, &mut store, &mut clock, 1_500);
    let mine = stored(&store, 0, clock);
    store = backup;
    let mut b = Machine::new(Settings { space: 1, seed: 11, ..settings(false) }, at(clock));
    run(&mut b, &mut store, &mut clock, 1_502);
    let theirs = stored(&store, 0, clock);
    assert!(theirs.rev <= mine.rev && theirs.fence > mine.fence, "{theirs:?} over {mine:?}");
    run_failing(&mut a, &mut clock, mine.expires_ms + 50);
    assert!(a.issuing(at(clock)), "still within its reservation: {:?}", a.standing(at(clock)));
    notes(&mut a);
    run(&mut a, &mut store, &mut clock, mine.expires_ms + 200);
    assert!(rolled_back(&mut a), "{:?}", a.standing(at(clock)));
    assert!(!a.issuing(at(clock)));
}

#[test]
fn its_own_older_record_put_back_is_a_rollback() {
    // A backup holds A's own record, from before its last renewals; put back, A reads its
    // own token with a value it no longer wrote: the store went back.
    let mut store = State::default();
    let mut clock = 1_000;
    let mut a = Machine::new(Settings { space: 1, ..settings(true) }, at(clock));
    run(&mut a, &mut store, &mut clock, 1_005);
    let backup = store.clone();
    run(&mut a, &mut store, &mut clock, 1_300);
    assert_eq!(a.stops(), 0, "acquiring and renewing stop nothing");
    store = backup;
    notes(&mut a);
    run(&mut a, &mut store, &mut clock, 1_450);
    let seen = notes(&mut a);
    assert!(seen.iter().any(|n| matches!(n, Note::RolledBack { .. })), "{seen:?}");
    assert!(!a.issuing(at(clock)));
    assert_eq!(a.stops(), 1, "the generators' cached limits dropped");
}

/// P declares the namespace and takes worker ID 0; the backup holds that much. A then takes
/// worker ID 1 (never granted: at once), and the backup is put back: the store, the clock,
/// A, and A's worker ID.
fn a_restore_that_forgets_a_grant() -> (State, i64, Machine, u64) {
    let mut store = State::default();
    let mut clock = 1_000;
    let mut p = Machine::new(Settings { space: 2, ..settings(true) }, at(clock));
    run(&mut p, &mut store, &mut clock, 1_005);
    let backup = store.clone();
    let mut a = Machine::new(Settings { space: 2, seed: 13, ..settings(false) }, at(clock));
    run(&mut a, &mut store, &mut clock, 1_300);
    let worker = a.worker_and_fence().0;
    assert_ne!(worker, p.worker_and_fence().0);
    (backup, clock, a, worker)
}

#[test]
fn a_newcomer_on_a_worker_id_a_restore_forgot_stops_its_holder() {
    // As below, and a newcomer takes the worker ID the restored marker says was never
    // granted before A's next renewal: a first record (revision 1) over nothing, where A's
    // was, and the marker raised as A's grant had raised it. The newcomer issues at once,
    // below A's reservation: A stops at once.
    let (mut store, mut clock, mut a, worker) = a_restore_that_forgets_a_grant();
    let mut c = Machine::new(Settings { space: 2, seed: 19, ..settings(false) }, at(clock));
    run(&mut c, &mut store, &mut clock, 1_302);
    assert_eq!(c.worker_and_fence().0, worker, "the newcomer takes A's worker ID");
    assert_eq!(stored(&store, worker, clock).rev, 1);
    notes(&mut a);
    run(&mut a, &mut store, &mut clock, 1_450);
    let seen = notes(&mut a);
    assert!(seen.contains(&Note::Lost { worker, why: LostWhy::TakenEarly }), "{seen:?}");
    assert!(!a.issuing(at(clock)), "{:?}", a.standing(at(clock)));
    assert_eq!(a.stops(), 1, "the generators' cached limits dropped");
}

#[test]
fn a_renewal_is_told_late_only_when_sent_after_the_validity_ended() {
    let late = |m: &mut Machine| notes(m).iter().any(|n| matches!(n, Note::RenewedLate { .. }));
    let mut store = State::default();
    let mut clock = 1_000;
    let mut a = Machine::new(settings(true), at(clock));
    run(&mut a, &mut store, &mut clock, 1_500);
    assert!(!late(&mut a), "renewals in time");
    // The store does not answer past the validity (W - margin after the last renewal sent).
    run_failing(&mut a, &mut clock, 3_500);
    assert!(!a.issuing(at(clock)));
    run(&mut a, &mut store, &mut clock, 3_700);
    assert!(late(&mut a), "{:?}", a.standing(at(clock)));
}

#[test]
fn a_restore_that_forgets_a_grant_stops_its_holder_at_its_next_renewal() {
    // The backup put back, the marker says A's worker ID was never granted: anyone would
    // take it at once, below A's reservation.
    let (mut store, mut clock, mut a, _) = a_restore_that_forgets_a_grant();
    run(&mut a, &mut store, &mut clock, 1_450);
    assert!(rolled_back(&mut a));
    assert!(!a.issuing(at(clock)));
}

#[test]
fn a_fence_stops_every_holder_at_its_next_renewal_without_a_second_fence() {
    let mut store = State::default();
    let mut clock = 1_000;
    let mut a = Machine::new(settings(true), at(clock));
    run(&mut a, &mut store, &mut clock, 1_050);
    notes(&mut a);
    // The operator's fence: the marker written afresh.
    let read = store.read("ns", &Query::workers(0..0).with_highest(), Some(clock));
    let old = read.marker.as_deref().and_then(Marker::decode);
    let fenced = fresh_marker(old.as_ref(), read.highest, clock, &read.incarnation, 0xFE, false);
    assert_eq!(store.write("ns", &[Cas::new(Slot::Marker, read.marker.as_deref(), &fenced.encode())]), Written::Done);
    run(&mut a, &mut store, &mut clock, 1_200);
    let seen = notes(&mut a);
    assert!(seen.iter().any(|n| matches!(n, Note::RolledBack { .. })), "{seen:?}");
    assert!(!seen.iter().any(|n| matches!(n, Note::Marked { .. })), "a fence owes no second fence: {seen:?}");
    let marker = store.read("ns", &Query::workers(0..0), Some(clock)).marker;
    assert_eq!(marker.as_deref().and_then(Marker::decode).map(|m| m.generation), Some(0xFE));
}

#[test]
fn a_running_holder_never_declares_the_namespace_new_again() {
    let mut store = State::default();
    let mut clock = 1_000;
    let mut a = Machine::new(Settings { space: 1, ..settings(true) }, at(clock));
    run(&mut a, &mut store, &mut clock, 1_050);
    assert!(notes(&mut a).contains(&Note::Marked { declared: true, fenced: false }));
    // The store restarts empty: the holder acquires again, and what it writes is not a
    // declaration (it may have issued on the worker ID).
    store.spaces.clear();
    store.incarnation += 1;
    run(&mut a, &mut store, &mut clock, 1_300);
    let seen = notes(&mut a);
    assert!(seen.contains(&Note::Marked { declared: false, fenced: false }), "{seen:?}");
    let marker = store.read("ns", &Query::workers(0..0), Some(clock)).marker;
    assert_eq!(marker.as_deref().and_then(Marker::decode).map(|m| m.declared), Some(false));
}

#[test]
fn a_renewal_from_a_clock_off_the_stores_reserves_nothing_more() {
    let mut store = State::default();
    let mut clock = 1_000;
    let mut a = Machine::new(settings(true), at(clock));
    run(&mut a, &mut store, &mut clock, 1_050);
    let worker = a.worker_and_fence().0;
    let before = store.read("ns", &Query::workers(worker..worker + 1), Some(clock)).records;
    // The store's clock now reads a second behind the holder's (the tolerance is 50 ms).
    run_off(&mut a, &mut store, &mut clock, 1_500, -1_000);
    let seen = notes(&mut a);
    assert!(
        seen.iter().any(|n| matches!(n, Note::RenewalFailed { error: LeaseError::ClockSkew { .. }, .. })),
        "{seen:?}"
    );
    assert_eq!(store.read("ns", &Query::workers(worker..worker + 1), Some(clock)).records, before);
    // Back within the tolerance, it renews again.
    run_off(&mut a, &mut store, &mut clock, 1_700, 10);
    assert_ne!(store.read("ns", &Query::workers(worker..worker + 1), Some(clock)).records, before);
    assert!(a.issuing(at(clock)));
}

#[test]
fn an_older_copy_of_the_state_file_loses_its_grant_without_a_fence() {
    let mut store = State::default();
    let mut clock = 1_000;
    let filing = Settings { state_file: true, ..settings(true) };
    let mut a = Machine::new(filing.clone(), at(clock));
    run(&mut a, &mut store, &mut clock, 1_050);
    let old = a.save_due(at(clock)).expect("a file is due");
    a.saved(&old);
    run(&mut a, &mut store, &mut clock, 1_400);
    // The process restarts from the older file (a disk snapshot put back).
    a.abandon();
    let mut b = Machine::resume(Settings { seed: 21, ..filing }, &old, at(clock)).expect("resumed");
    run_filing(&mut b, &mut store, &mut clock, 1_450);
    let seen = notes(&mut b);
    assert!(seen.iter().any(|n| matches!(n, Note::Lost { why: LostWhy::FileOlder, .. })), "{seen:?}");
    assert!(!seen.iter().any(|n| matches!(n, Note::RolledBack { .. } | Note::Marked { fenced: true, .. })));
    // Given up without issuing on it: the generators' cached limits are dropped too.
    assert_eq!(b.stops(), 1);
}

#[test]
fn a_state_file_says_a_release_may_follow_before_it_is_written_and_is_not_resumed() {
    let mut store = State::default();
    let mut clock = 1_000;
    let filing = Settings { state_file: true, ..settings(true) };
    let mut a = Machine::new(filing.clone(), at(clock));
    run(&mut a, &mut store, &mut clock, 1_010);
    let saved = a.save_due(at(clock)).expect("a file is due");
    a.saved(&saved);
    a.release(at(clock), 0);
    // No release call before the file says it may follow.
    assert_eq!(a.poll_call(at(clock)), None);
    let releasing = a.save_due(at(clock)).expect("the releasing file");
    assert!(releasing.releasing);
    a.saved(&releasing);
    assert!(matches!(a.poll_call(at(clock)), Some(Call::Write(_))));
    assert!(Machine::resume(filing, &releasing, at(clock)).is_none());
}

#[test]
fn a_state_file_due_on_the_boundary_is_written_or_woken_for() {
    let mut store = State::default();
    let mut clock = 1_000;
    let mut a = Machine::new(Settings { state_file: true, ..settings(true) }, at(clock));
    run(&mut a, &mut store, &mut clock, 1_010);
    let first = a.save_due(at(clock)).expect("a file is due");
    a.saved(&first);
    // At every millisecond until past the file's limit, a file is due or a wake is set.
    for ms in clock..first.issued_limit_ms + 10 {
        let now = at(ms);
        assert!(a.save_due(now).is_some() || a.save_wake(now).is_some_and(|w| w > now.ns), "stuck at {ms}");
    }
}

#[test]
fn a_release_asked_while_a_renewal_is_in_flight_is_still_written() {
    let mut store = State::default();
    let mut clock = 1_000;
    let mut a = Machine::new(settings(true), at(clock));
    run(&mut a, &mut store, &mut clock, 1_050);
    notes(&mut a);
    // Up to the renewal's write, in flight.
    let write = next_write(&mut a, &mut store, &mut clock);
    a.release(at(clock), 0);
    a.handle_reply(at(clock), answer(&mut store, Call::Write(write), clock));
    assert!(!notes(&mut a).iter().any(|n| matches!(n, Note::Released { .. })), "the renewal's answer is no release");
    let until = clock + 300;
    run(&mut a, &mut store, &mut clock, until);
    assert!(notes(&mut a).contains(&Note::Released { worker: Some(a.worker_and_fence().0), result: Ok(()) }));
    let worker = a.worker_and_fence().0;
    let record = store.read("ns", &Query::workers(worker..worker + 1), Some(clock)).records;
    assert!(record[0].1.ends_with("|-|-"), "released: {record:?}");
}

#[test]
fn every_change_of_what_the_generators_may_do_is_told_once() {
    let mut store = State::default();
    let mut clock = 1_000;
    let mut a = Machine::new(settings(true), at(clock));
    run(&mut a, &mut store, &mut clock, 1_050);
    let changes = |m: &mut Machine| {
        notes(m)
            .into_iter()
            .filter_map(|n| match n {
                Note::Changed { refusal, .. } => Some(refusal),
                _ => None,
            })
            .collect::<Vec<_>>()
    };
    assert_eq!(changes(&mut a), vec![None], "issuing, told once");
    // The store stops answering: the call in flight never comes back. Told once when the
    // reservation less the margin runs out, whatever the wake-ups in between.
    while clock < 3_500 {
        let now = at(clock);
        let _ = a.poll_call(now);
        a.handle_timeout(now);
        clock += 7;
    }
    let told = changes(&mut a);
    assert!(matches!(told.as_slice(), [Some(FenceReason::NotRenewed { .. })]), "{told:?}");
    // The answer comes at last (a failure), and the store answers again: told once more.
    a.handle_reply(at(clock), Reply::Failed(timeout()));
    run(&mut a, &mut store, &mut clock, 4_500);
    assert_eq!(changes(&mut a), vec![None]);
}

/// A holder's first state file, written once it acquired at 1 000 ms; the holder is gone
/// (abandoned, as by a crash). The store holds its record, and the clock is where it wrote
/// the file.
fn first_file(filing: &Settings) -> (State, i64, crate::worker::lease::protocol::saved::Saved) {
    let mut store = State::default();
    let mut clock = 1_000;
    let mut a = Machine::new(filing.clone(), at(clock));
    run(&mut a, &mut store, &mut clock, 1_010);
    let saved = a.save_due(at(clock)).expect("a file is due");
    a.abandon();
    (store, clock, saved)
}

#[test]
fn a_grant_resumed_from_its_state_file_names_the_live_holder_at_its_first_renewal() {
    let filing = Settings { state_file: true, name: "old:1".into(), ..settings(true) };
    let (mut store, mut clock, saved) = first_file(&filing);
    let mut b = Machine::resume(Settings { name: "new:2".into(), ..filing }, &saved, at(clock)).expect("resumed");
    // Its first store call once it issues again, above the file's limit.
    run_filing(&mut b, &mut store, &mut clock, saved.issued_limit_ms + 20);
    let worker = b.worker_and_fence().0;
    let record = store.read("ns", &Query::workers(worker..worker + 1), Some(clock)).records;
    assert!(record[0].1.ends_with("|new:2"), "{record:?}");
}

#[test]
fn a_grant_resumed_from_its_state_file_answers_before_any_store_call_and_says_where_it_stands() {
    // A replica restarted with its state file issues on its file's grant without waiting for
    // the store (here, one that never answers); its status says so all along: the worker ID
    // it holds while it waits for the file's limit to pass, then issuing, then that the store
    // does not answer.
    let filing = Settings { state_file: true, ..settings(true) };
    let (_, mut clock, saved) = first_file(&filing);
    let mut b = Machine::resume(filing, &saved, at(clock)).expect("resumed");
    let worker = saved.worker;
    assert!(
        matches!(b.standing(at(clock)), Standing::Fenced { worker: w, .. } if w == worker),
        "holding its worker ID, not acquiring: {:?}",
        b.standing(at(clock))
    );
    // What the status reports besides: since when, and the floor it issues above.
    assert_eq!(b.since_ms(), clock);
    assert_eq!(b.floor_ms(), Some(saved.issued_limit_ms));
    let mut ready = false;
    while !ready {
        assert!(clock <= saved.issued_limit_ms + 1_000, "never ready: {:?}", b.standing(at(clock)));
        let now = at(clock);
        if let Some(file) = b.save_due(now) {
            b.saved_at(now, &file);
        }
        assert_eq!(b.poll_call(now), None, "a store call before the caller is answered, at {clock}");
        b.handle_timeout(now);
        ready = notes(&mut b).contains(&Note::Ready);
        clock += 1;
    }
    assert!(clock > saved.issued_limit_ms, "issuing only above the file's limit");
    let now = at(clock);
    let valid_for_ns = b.current.as_ref().map(|g| g.valid_until_ns - now.ns);
    assert!(
        matches!(b.standing(now), Standing::Issuing { worker: w, store_answering: true, issuing_for_ns, .. }
            if w == worker && Some(issuing_for_ns) == valid_for_ns),
        "{:?}, valid for {valid_for_ns:?} ns",
        b.standing(now)
    );
    assert!(b.error().is_none());
    // Its first store call, the renewal's read, fails: it issues on, and says the store does
    // not answer.
    assert!(matches!(b.poll_call(now), Some(Call::Read(_))), "the renewal reads first");
    b.handle_reply(now, Reply::Failed(timeout()));
    assert!(matches!(b.standing(now), Standing::Issuing { store_answering: false, .. }), "{:?}", b.standing(now));
    assert!(matches!(b.error(), Some(LeaseError::Timeout { .. })), "{:?}", b.error());
}

#[test]
fn a_record_deleted_alone_and_taken_by_a_newcomer_is_a_loss_not_a_rollback() {
    let mut store = State::default();
    let mut clock = 1_000;
    let mut a = Machine::new(Settings { space: 1, ..settings(true) }, at(clock));
    run(&mut a, &mut store, &mut clock, 1_050);
    let worker = a.worker_and_fence().0;
    store.delete("ns", Slot::Worker(worker));
    // The newcomer writes its grant where the record was gone (its floor: W + ε ahead).
    let mut b = Machine::new(Settings { space: 1, seed: 17, ..settings(false) }, at(clock));
    run(&mut b, &mut store, &mut clock, 1_052);
    assert!(notes(&mut b).iter().any(|n| matches!(n, Note::Acquired { basis: Basis::Unvouched, .. })));
    run(&mut a, &mut store, &mut clock, 1_200);
    let seen = notes(&mut a);
    assert!(seen.contains(&Note::Lost { worker, why: LostWhy::TakenEarly }), "{seen:?}");
    assert!(!seen.iter().any(|n| matches!(n, Note::RolledBack { .. })), "{seen:?}");
    // Taken before its lease expired: whether the newcomer waited is not known (a restore
    // that forgot the grant looks the same once the newcomer raised the marker), so the
    // holder issues nothing more on its reservation.
    assert!(!a.issuing(at(clock)), "{:?}", a.standing(at(clock)));
}

/// The record a holder's store keeps for its grant, decoded.
fn stored(store: &State, worker: u64, clock: i64) -> Record {
    let snapshot = store.read("ns", &Query::workers(worker..worker + 1), Some(clock));
    snapshot.record(worker).and_then(Record::decode).expect("the grant's record")
}

#[test]
fn every_acknowledged_renewal_records_what_its_holder_may_issue() {
    // A successor starts above the record's high water: whatever an acknowledgement lets the
    // holder issue (a generator that ran out of sequence numbers borrows milliseconds ahead of
    // its clock, up to the validity's last tick) must be below it, after the grant and after
    // every renewal. Renewals further apart than the margin: the validity of a renewal then
    // reaches past the reservation of the write before it.
    let mut store = State::default();
    let mut clock = 1_000;
    let ms = Duration::from_millis;
    let rules = Rules { renew_every: ms(200), ..Rules::of(ms(400), ms(2_000), ms(100), ms(50)) };
    let mut a = Machine::new(Settings { rules, ..settings(true) }, at(clock));
    run(&mut a, &mut store, &mut clock, 1_010);
    let worker = a.worker_and_fence().0;
    let epoch = a.view(at(clock)).epoch;
    let mut renewals = 0;
    while clock < 2_400 {
        let until_ms = clock + 10;
        run(&mut a, &mut store, &mut clock, until_ms);
        // A generator at the edge of what it may issue.
        let edge = a.grant_until(at(clock), clock, i64::MAX, epoch).expect("issuing");
        assert!(edge > clock + 1_000, "the edge {edge} at {clock}");
        let record = stored(&store, worker, clock);
        assert!(record.high_water_ms >= edge, "record {record:?} below the edge {edge} at {clock}");
        renewals = a.renewals();
    }
    assert!(renewals >= 5, "{renewals} renewals");
}

#[test]
fn a_lost_marker_is_written_afresh_and_the_holder_keeps_its_worker_id_under_it() {
    // The marker alone is gone (evicted, deleted by hand): the next renewal writes a fresh
    // marker and moves the record under it, so that the marker vouches for the record again
    // and the holder renews on, without a loss.
    let mut store = State::default();
    let mut clock = 1_000;
    let mut a = Machine::new(settings(true), at(clock));
    run(&mut a, &mut store, &mut clock, 1_050);
    let worker = a.worker_and_fence().0;
    let _ = notes(&mut a);
    store.delete("ns", Slot::Marker);
    run(&mut a, &mut store, &mut clock, 2_000);
    let seen = notes(&mut a);
    assert!(!seen.iter().any(|n| matches!(n, Note::Lost { .. } | Note::RolledBack { .. })), "{seen:?}");
    assert_eq!(a.worker_and_fence().0, worker);
    let snapshot = store.read("ns", &Query::workers(worker..worker + 1), Some(clock));
    let marker = snapshot.marker.as_deref().and_then(Marker::decode).expect("a marker written afresh");
    let record = stored(&store, worker, clock);
    assert!(marker.vouches(worker, &record), "{marker:?} does not vouch for {record:?}");
    assert!(a.issuing(at(clock)));
}

#[test]
fn a_record_back_unchanged_under_another_incarnation_loses_the_lease_and_rides_its_reservation() {
    // The store is another incarnation (a failover, a restart), the holder's record as it
    // last wrote it, the marker kept or gone: the writes lost may have given the worker ID to
    // another holder, so the renewal does not renew in place. The lease is lost, the
    // generators issue on what it reserved, and the grant acquired again waits out `W`.
    for marker_kept in [true, false] {
        let mut store = State::default();
        let mut clock = 1_000;
        let mut a = Machine::new(settings(true), at(clock));
        run(&mut a, &mut store, &mut clock, 1_050);
        let (worker, fence) = a.worker_and_fence();
        let _ = notes(&mut a);
        store.incarnation += 1;
        if !marker_kept {
            store.delete("ns", Slot::Marker);
        }
        let changed = clock;
        run(&mut a, &mut store, &mut clock, changed + 150);
        let seen = notes(&mut a);
        assert!(seen.contains(&Note::Lost { worker, why: LostWhy::Incarnation }), "{marker_kept}: {seen:?}");
        assert!(a.issuing(at(clock)), "{marker_kept}: it issues on what it reserved");
        let grant = a.current.as_ref().expect("a new grant");
        assert!(grant.record.fence > fence, "{marker_kept}: {grant:?}");
        assert!(grant.ready_ms >= changed + a.s.rules.reservation_ms(), "{marker_kept}: it waits out W: {grant:?}");
        let ready_ms = grant.ready_ms;
        run(&mut a, &mut store, &mut clock, ready_ms + 10);
        assert!(a.issuing(at(clock)), "{marker_kept}: the new grant issues");
    }
}

#[test]
fn each_loss_is_told_with_its_own_cause() {
    // The log line of a lost lease names why, so that an operator can tell a failover from a
    // deleted record: one sentence per cause, each its own.
    let all = [LostWhy::Gone, LostWhy::TakenOver, LostWhy::TakenEarly, LostWhy::FileOlder, LostWhy::Incarnation];
    let causes: std::collections::BTreeSet<&str> = all.iter().map(|why| why.cause()).collect();
    assert_eq!(causes.len(), all.len(), "{causes:?}");
    assert!(causes.iter().all(|cause| cause.split(' ').count() >= 4), "{causes:?}");
    assert!(LostWhy::Incarnation.cause().contains("incarnation"));
    assert!(LostWhy::FileOlder.cause().contains("state file"));
}

#[test]
fn a_state_file_is_not_resumed_for_another_namespace_a_worker_outside_the_space_or_once_run_out() {
    let filing = Settings { state_file: true, ..settings(true) };
    let (_, clock, saved) = first_file(&filing);
    assert!(Machine::resume(filing.clone(), &saved, at(clock)).is_some(), "the file itself resumes");
    let elsewhere = Settings { namespace: "other".into(), ..filing.clone() };
    assert!(Machine::resume(elsewhere, &saved, at(clock)).is_none(), "another namespace");
    let narrower = Settings { space: saved.worker, ..filing.clone() };
    assert!(Machine::resume(narrower, &saved, at(clock)).is_none(), "a worker ID outside the space");
    assert!(Machine::resume(filing.clone(), &saved, at(saved.valid_until_ms)).is_none(), "a file run out");
    let releasing = crate::worker::lease::protocol::saved::Saved { releasing: true, ..saved };
    assert!(Machine::resume(filing, &releasing, at(clock)).is_none(), "a file that says a release may follow");
}

#[test]
fn a_filing_holder_issues_on_past_its_first_files_limit() {
    // The file thread writes every file the machine asks for: the generators issue on, each
    // file a little ahead of the last, for as long as the lease is renewed.
    let mut store = State::default();
    let mut clock = 1_000;
    let mut a = Machine::new(Settings { state_file: true, ..settings(true) }, at(clock));
    let mut files = Vec::new();
    while clock < 3_000 {
        let until_ms = clock + 1;
        run(&mut a, &mut store, &mut clock, until_ms);
        if let Some(saved) = a.save_due(at(clock)) {
            a.saved_at(at(clock), &saved);
            files.push(saved.issued_limit_ms);
        }
    }
    let epoch = a.view(at(clock)).epoch;
    assert_eq!(a.grant_until(at(clock), clock, 1, epoch).ok().map(|until| until >= clock), Some(true));
    assert!(files.len() > 5 && files.windows(2).all(|w| w[0] <= w[1]), "{files:?}");
    assert!(files.last().is_some_and(|&limit| limit >= clock), "{files:?} at {clock}");
}

#[test]
fn a_newcomer_on_the_revision_a_lost_renewal_would_have_written_is_a_rollback() {
    // The renewal's write is lost with its answer (a store restored to before it, say), and a
    // newcomer's grant lands, before this lease expired, on the revision the renewal would have
    // written. Read back, it is not this holder's renewal but a store gone back: noticed at
    // once, and nothing more is issued under the worker ID.
    let mut store = State::default();
    let mut clock = 1_000;
    let mut a = Machine::new(settings(true), at(clock));
    run(&mut a, &mut store, &mut clock, 1_010);
    let worker = a.worker_and_fence().0;
    let ops = next_write(&mut a, &mut store, &mut clock);
    let mine = ops.iter().map(Op::cas).find(|c| c.slot == Slot::Worker(worker)).expect("the record");
    let attempted = Record::decode(mine.value).expect("a record");
    a.handle_reply(at(clock), Reply::Failed(timeout()));
    let current = store.read("ns", &Query::workers(worker..worker + 1), Some(clock)).record(worker).map(str::to_owned);
    let newcomer = Record {
        fence: attempted.fence + 1,
        holder: Some(crate::worker::lease::protocol::record::Holder {
            token: "f".repeat(32),
            name: "newcomer:2".into(),
        }),
        ..attempted.clone()
    };
    let text = newcomer.encode();
    let cas = [Cas { slot: Slot::Worker(worker), expect: current.as_deref(), value: &text }];
    assert!(matches!(store.write("ns", &cas), Written::Done), "the newcomer's record written");
    let until = clock + 50;
    run(&mut a, &mut store, &mut clock, until);
    let seen = notes(&mut a);
    assert!(seen.contains(&Note::RolledBack { worker }), "{seen:?}");
    assert_ne!(a.view(at(clock)).worker, worker, "{seen:?}");
}

#[test]
fn with_a_state_file_the_status_and_the_grants_agree_on_every_millisecond() {
    // Readiness follows the refusal; generators follow `grant_until`. Before the grant's first
    // file, while its limit lasts and after, on every millisecond, both say the same.
    let mut store = State::default();
    let mut clock = 1_000;
    let mut a = Machine::new(Settings { state_file: true, ..settings(true) }, at(clock));
    run(&mut a, &mut store, &mut clock, 1_010);
    let epoch = a.view(at(clock)).epoch;
    let agree = |a: &mut Machine, ms: i64| {
        let refusal = a.refusal(at(ms));
        let granted = a.grant_until(at(ms), ms, i64::MAX, epoch);
        assert_eq!(refusal.is_none(), granted.is_ok(), "at {ms}: {refusal:?}, {granted:?}");
        let limit = a.filed.as_ref().map_or(i64::MIN, |f| f.limit_ms);
        assert!(
            granted.as_ref().is_err() || granted.as_ref().is_ok_and(|&u| u <= limit),
            "at {ms}: {granted:?} past {limit}"
        );
        refusal.is_none()
    };
    assert!(!agree(&mut a, clock), "issuing before the grant's first file");
    let saved = a.save_due(at(clock)).expect("a file is due");
    a.saved(&saved);
    let limit = saved.issued_limit_ms;
    assert!(limit > clock + 10, "the file's limit {limit} at {clock}");
    for ms in clock..=limit {
        assert!(agree(&mut a, ms), "refused at {ms}, within the file's limit {limit}");
    }
    assert!(!agree(&mut a, limit + 1), "issuing past the file's limit {limit}");
}

#[test]
fn a_release_records_what_its_generators_issued() {
    // A released worker ID is taken without waiting, above the released record's high water:
    // it must cover what the generators issued, also ahead of the clock (a generator that ran
    // out of sequence numbers), and what earlier holders may have (the grant's floor).
    let mut store = State::default();
    let mut clock = 1_000;
    let mut a = Machine::new(settings(true), at(clock));
    run(&mut a, &mut store, &mut clock, 1_010);
    let worker = a.worker_and_fence().0;
    let epoch = a.view(at(clock)).epoch;
    let issued = a.grant_until(at(clock), clock + 500, 1, epoch).expect("issuing ahead of the clock");
    assert!(issued >= clock + 500);
    assert!(a.holds(epoch));
    a.release(at(clock), 0);
    // Asked, not yet written: the generators stop at once.
    assert!(!a.holds(epoch));
    let until = clock + 5;
    run(&mut a, &mut store, &mut clock, until);
    let seen = notes(&mut a);
    assert!(seen.iter().any(|n| matches!(n, Note::Released { result: Ok(()), .. })), "{seen:?}");
    let record = stored(&store, worker, clock);
    assert!(record.holder.is_none(), "{record:?}");
    assert!(record.high_water_ms >= issued, "released at {record:?}, below what was issued: {issued}");
    // A generator that stores a limit after the release sees that the grant is gone.
    assert!(!a.holds(epoch));
}

#[test]
fn a_grant_ends_within_the_validity_and_below_the_bound() {
    // What a generator takes ahead (its cached limit) is issued until the clock passes it: the
    // last tick granted ends by the time the validity does, and reaches it. A wall clock that
    // stepped past the bound is refused, by the status as by the grants.
    let mut store = State::default();
    let mut clock = 1_000;
    let mut a = Machine::new(settings(true), at(clock));
    run(&mut a, &mut store, &mut clock, 1_010);
    let epoch = a.view(at(clock)).epoch;
    for ms in clock..clock + 50 {
        let now = at(ms);
        let valid_until_ms = i64::try_from(a.current.as_ref().expect("held").valid_until_ns / MS).unwrap();
        let until = a.grant_until(now, ms, i64::MAX, epoch).expect("issuing");
        assert_eq!(until, valid_until_ms - 1, "at {ms}: the validity ends at {valid_until_ms}");
    }
    let bound = a.current.as_ref().expect("held").bound_ms;
    let stepped = Now { ns: at(clock).ns, ms: bound + 1 };
    assert!(matches!(a.refusal(stepped), Some(FenceReason::ClockAhead { .. })), "{:?}", a.refusal(stepped));
    assert!(a.grant_until(stepped, stepped.ms, 1, epoch).is_err());
}

#[test]
fn a_lost_renewal_is_not_taken_for_a_newcomers_record_of_the_same_revision() {
    // Renewals further apart than the margin (the defaults: TTL/3 against TTL/5). A renewal's
    // write is lost with its answer, then the store is out of reach; past the holder's expiry a
    // newcomer takes the worker ID lawfully, over the holder's last record: its record has the
    // revision the lost write had. When the store answers again (a round trip per call), that
    // record is not the holder's renewal: counted as one, the lost write would let the holder
    // issue up to `W - margin` after it was sent, above its last record's high water, where the
    // newcomer issues.
    let ms = Duration::from_millis;
    let rules = Rules { renew_every: ms(200), ..Rules::of(ms(400), ms(2_000), ms(100), ms(50)) };
    let mut store = State::default();
    let mut clock = 1_000;
    let mut a = Machine::new(Settings { rules, ..settings(true) }, at(clock));
    run(&mut a, &mut store, &mut clock, 1_010);
    let worker = a.worker_and_fence().0;
    let epoch = a.view(at(clock)).epoch;
    let last = stored(&store, worker, clock);
    // Reads answered until the renewal's write, which is lost; then nothing is answered.
    let mut lost = false;
    let mut newcomer_written = false;
    while clock <= last.high_water_ms {
        let now = at(clock);
        while let Some(call) = a.poll_call(now) {
            match call {
                read @ Call::Read(_) if !lost => a.handle_reply(now, answer(&mut store, read, now.ms)),
                Call::Write(_) if !lost => {
                    lost = true;
                    a.handle_reply(now, Reply::Failed(timeout()));
                }
                _ => a.handle_reply(now, Reply::Failed(timeout())),
            }
        }
        a.handle_timeout(now);
        if !newcomer_written && clock > last.expires_ms + 60 {
            let newcomer = Record {
                rev: last.rev + 1,
                fence: last.fence + 1,
                expires_ms: clock + 400,
                high_water_ms: clock + 2_000,
                holder: Some(crate::worker::lease::protocol::record::Holder {
                    token: "f".repeat(32),
                    name: "newcomer:2".into(),
                }),
                ..last.clone()
            };
            let (expect, text) = (last.encode(), newcomer.encode());
            let cas = [Cas { slot: Slot::Worker(worker), expect: Some(&expect), value: &text }];
            assert!(matches!(store.write("ns", &cas), Written::Done), "the newcomer's record written");
            newcomer_written = true;
        }
        clock += 1;
    }
    assert!(lost && newcomer_written);
    // The store answers again, each call a millisecond after it was made. The newcomer issues
    // above the holder's last high water.
    let mut pending: Option<Call> = None;
    for _ in 0..300 {
        let now = at(clock);
        if let Some(call) = pending.take() {
            let reply = answer(&mut store, call, now.ms);
            a.handle_reply(now, reply);
        }
        pending = a.poll_call(now);
        a.handle_timeout(now);
        if let Ok(tick) = a.grant_until(now, clock, 1, epoch) {
            assert!(
                tick <= last.high_water_ms,
                "issues {tick} at {clock}, above {}: {:?}",
                last.high_water_ms,
                notes(&mut a)
            );
        }
        clock += 1;
    }
}

#[test]
fn the_machines_choices_do_not_repeat() {
    // A marker written afresh takes its generation from these draws: one that repeated an
    // earlier generation would vouch for records granted under that one. Every draw of a run is
    // new, and every bit is set about half the time.
    let mut rng = Rng(7 | 1);
    let draws: Vec<u64> = (0..4_096).map(|_| rng.random()).collect();
    let distinct: std::collections::HashSet<_> = draws.iter().collect();
    assert_eq!(distinct.len(), draws.len(), "a draw repeated");
    for bit in 0..64 {
        let set = draws.iter().filter(|d| *d >> bit & 1 == 1).count();
        assert!((1_600..2_500).contains(&set), "bit {bit} set in {set} of {} draws", draws.len());
    }
}

#[test]
fn a_grant_below_the_markers_next_never_lowers_it() {
    // The marker's `next` says which worker IDs may have been granted since it was written: a
    // grant of a released worker ID below it leaves it where it is (lowered, the worker IDs
    // between would look never granted to a newcomer, which takes one at once).
    let mut store = State::default();
    let mut clock = 1_000;
    let mut a = Machine::new(Settings { space: 2, ..settings(true) }, at(clock));
    run(&mut a, &mut store, &mut clock, 1_010);
    let mut b = Machine::new(Settings { space: 2, seed: 9, ..settings(false) }, at(clock));
    run(&mut b, &mut store, &mut clock, 1_020);
    let next = |store: &State, clock: i64| {
        let snapshot = store.read("ns", &Query::workers(0..1), Some(clock));
        snapshot.marker.as_deref().and_then(Marker::decode).expect("the marker").next
    };
    let before = next(&store, clock);
    assert!(before >= 2, "two worker IDs granted, next {before}");
    a.release(at(clock), 0);
    run(&mut a, &mut store, &mut clock, 1_030);
    let released = a.worker_and_fence().0;
    let mut c = Machine::new(Settings { space: 2, seed: 11, ..settings(false) }, at(clock));
    run(&mut c, &mut store, &mut clock, 1_040);
    assert!(c.issuing(at(clock)));
    assert_eq!(c.worker_and_fence().0, released, "the released worker ID is taken again");
    assert_eq!(next(&store, clock), before);
}

#[test]
fn a_first_start_that_finds_a_marker_of_another_incarnation_does_not_declare_the_namespace_new() {
    // The store went back (a new incarnation) and holds the marker but no record: a holder may
    // still issue on what the store lost. A process's first start with `create_namespace` finds
    // the namespace known, not new: it waits `W + ε` like any start on an unvouched store.
    let mut store = State::default();
    let mut clock = 1_000;
    let mut a = Machine::new(settings(true), at(clock));
    run(&mut a, &mut store, &mut clock, 1_010);
    let worker = a.worker_and_fence().0;
    store.delete("ns", Slot::Worker(worker));
    store.incarnation += 1;
    let mut b = Machine::new(Settings { seed: 9, ..settings(true) }, at(clock));
    run(&mut b, &mut store, &mut clock, 1_020);
    let seen = notes(&mut b);
    assert!(!seen.iter().any(|n| matches!(n, Note::Marked { declared: true, .. })), "{seen:?}");
    assert!(!b.issuing(at(clock)), "{seen:?}");
}

#[test]
fn a_release_before_any_issue_keeps_the_earlier_holders_high_water() {
    // A holder crashes; its successor on the worker ID starts above the crashed holder's
    // reservation (its floor) and is released before it issues anything. The released record
    // must still cover the crashed holder's reservation: the next holder takes a released
    // worker ID at once, above that record's high water.
    let mut store = State::default();
    let mut clock = 1_000;
    let one = |seed| Settings { space: 1, seed, wait_for_free: true, ..settings(true) };
    let mut a = Machine::new(one(7), at(clock));
    run(&mut a, &mut store, &mut clock, 1_010);
    let worker = a.worker_and_fence().0;
    let crashed = stored(&store, worker, clock);
    a.abandon();
    let mut b = Machine::new(one(9), at(clock));
    run(&mut b, &mut store, &mut clock, crashed.expires_ms + 100);
    assert_eq!(b.worker_and_fence().0, worker);
    assert!(!b.issuing(at(clock)), "it waits for the crashed holder's reservation");
    b.release(at(clock), 0);
    let until = clock + 5;
    run(&mut b, &mut store, &mut clock, until);
    let released = stored(&store, worker, clock);
    assert!(released.holder.is_none(), "{released:?}");
    assert!(released.high_water_ms >= crashed.high_water_ms, "released {released:?} below {crashed:?}");
}

#[test]
fn a_grant_planned_before_the_store_changed_incarnation_waits_out_w() {
    // A plans its grant from a read of the store (a declared namespace: a worker ID never
    // granted issues at once); before its write lands, the store is put back and says so (a
    // new incarnation), and the write still lands (the marker's text is the same). What the
    // plan trusted may be gone (a grant written and undone), so A, reading its grant back,
    // waits out W, as under any marker of another incarnation.
    let mut store = State::default();
    let mut clock = 1_000;
    let mut p = Machine::new(Settings { space: 2, ..settings(true) }, at(clock));
    run(&mut p, &mut store, &mut clock, 1_005);
    let mut a = Machine::new(Settings { space: 2, seed: 13, ..settings(false) }, at(clock));
    let ops = next_write(&mut a, &mut store, &mut clock);
    store.incarnation += 1;
    let written = answer(&mut store, Call::Write(ops), clock);
    assert!(matches!(written, Reply::Written(Written::Done)));
    a.handle_reply(at(clock), written);
    let until = clock + 100;
    run(&mut a, &mut store, &mut clock, until);
    let seen = notes(&mut a);
    assert!(seen.iter().any(|n| matches!(n, Note::Acquired { basis: Basis::Unvouched, .. })), "{seen:?}");
    assert!(!a.issuing(at(clock)), "{:?}", a.standing(at(clock)));
}

#[test]
fn a_failed_read_starts_the_acquisition_again_from_its_first_read() {
    // What an attempt read before a call failed may be stale by the time the store answers
    // again (restored, fenced, taken, its clock moved on): the attempt starts again from its
    // first read (the marker, the incarnation and the store's clock read anew) instead of going
    // on with what it read. Here: a store without a marker, so the first read is followed by a
    // read of the highest record, which fails.
    let mut store = State::default();
    let mut clock = 1_000;
    let mut a = Machine::new(settings(false), at(clock));
    let now = at(clock);
    let first = a.poll_call(now).expect("the first read");
    assert!(matches!(&first, Call::Read(q) if !q.highest), "{first:?}");
    a.handle_reply(now, answer(&mut store, first, clock));
    let second = a.poll_call(now).expect("the read of the highest record");
    assert!(matches!(&second, Call::Read(q) if q.highest), "{second:?}");
    a.handle_reply(now, Reply::Failed(timeout()));
    let next = loop {
        clock += 1;
        let now = at(clock);
        a.handle_timeout(now);
        if let Some(call) = a.poll_call(now) {
            break call;
        }
        assert!(clock < 2_000, "no call after the failed read");
    };
    assert!(matches!(&next, Call::Read(q) if !q.highest), "went on instead of starting again: {next:?}");
}

/// A namespace of `space` worker IDs declared by a first holder (which holds worker ID 0),
/// its other worker IDs' records written by other holders under its marker, `(worker,
/// expires_ms, high_water_ms)` each relative to the clock, and the marker's `next` raised to
/// `space`: the store, and its clock.
fn held_by_others(space: u64, records: &[(u64, i64, i64)]) -> (State, i64) {
    use crate::worker::lease::protocol::record::Holder;
    let mut store = State::default();
    let mut clock = 100_000;
    let mut p = Machine::new(Settings { space, ..settings(true) }, at(clock));
    run(&mut p, &mut store, &mut clock, 100_005);
    let text = store.read("ns", &Query::workers(0..1), Some(clock)).marker.expect("the marker");
    let marker = Marker::decode(&text).expect("a marker");
    for &(worker, expires_in_ms, high_water_in_ms) in records {
        let record = Record {
            rev: 1,
            fence: 1,
            expires_ms: clock + expires_in_ms,
            high_water_ms: clock + high_water_in_ms,
            generation: marker.generation,
            holder: Some(Holder { token: "0".repeat(32), name: "other:1".into() }),
        };
        assert_eq!(store.write("ns", &[Cas::new(Slot::Worker(worker), None, &record.encode())]), Written::Done);
    }
    let raised = Marker { rev: marker.rev + 1, next: space, ..marker }.encode();
    assert_eq!(store.write("ns", &[Cas::new(Slot::Marker, Some(&text), &raised)]), Written::Done);
    (store, clock)
}

#[test]
fn a_space_of_several_chunks_is_read_a_chunk_at_a_time_to_its_free_worker_id() {
    // Every worker ID of a 2 900 space granted under the namespace's marker and held by
    // others, all but 2 100 (whose lease ended long ago): a newcomer reads the space a chunk
    // (`MAX_READ`) at a time past the first, never more at once, and takes 2 100.
    use crate::worker::lease::store::MAX_READ;
    let space = 2_900;
    let records: Vec<(u64, i64, i64)> = (1..space)
        .map(|worker| if worker == 2_100 { (worker, -50_000, -50_000) } else { (worker, 1_000_000, 1_000_000) })
        .collect();
    let (mut store, mut clock) = held_by_others(space, &records);
    let mut a = Machine::new(Settings { space, seed: 13, ..settings(false) }, at(clock));
    let mut reads = Vec::new();
    while clock < 100_200 && a.current.is_none() {
        let now = at(clock);
        while let Some(call) = a.poll_call(now) {
            if let Call::Read(query) = &call {
                reads.push(query.workers.clone());
                assert!(reads.len() < 100, "reads without end: {:?}", &reads[..10]);
            }
            let reply = answer(&mut store, call, clock);
            a.handle_reply(now, reply);
        }
        a.handle_timeout(now);
        clock += 1;
    }
    assert!(reads.iter().all(|r| r.end - r.start <= MAX_READ), "{reads:?}");
    assert_eq!(a.current.as_ref().map(|g| g.worker), Some(2_100), "reads: {reads:?}");
}

#[test]
fn with_no_worker_id_ready_the_one_whose_floor_comes_first_is_taken() {
    // Worker IDs 1 and 2 left by holders whose reservations reach past now (1 by 600 ms, 2
    // by 400 ms: both past a generator's step), 0 held: nothing may issue at once, and the
    // newcomer takes 2, the one that may issue first, whichever it read first.
    let (store, clock) = held_by_others(3, &[(1, -50_000, 600), (2, -50_000, 400)]);
    for seed in 1..=8 {
        let (mut store, mut clock) = (store.clone(), clock);
        let mut a = Machine::new(Settings { space: 3, seed, ..settings(false) }, at(clock));
        run(&mut a, &mut store, &mut clock, 100_010);
        assert_eq!(a.current.as_ref().map(|g| g.worker), Some(2), "seed {seed}");
    }
}
