//! Schedules written out step by step in the model's world, for paths that random schedules
//! reach too rarely to be sure of them in a fast tier's budget: each drives the production
//! machine and the operator's commands against the reference store, as the model does, and
//! checks what the store keeps and what the holders issue.

use super::{Action, Command, Fault, LeaseModel, Rules, START, World};
use crate::worker::lease::protocol::holder::Call;
use crate::worker::lease::protocol::record::Record;
use crate::worker::lease::store::Query;

/// Holder `h`'s turn: its calls made and answered at once until it waits, then its generator.
fn turn(model: &LeaseModel, world: &mut World, h: usize) {
    for _ in 0..6 {
        if world.nodes[h].in_flight.is_none() {
            *world = model.step(world, &Action::Send(h)).expect("a turn");
        }
        if world.nodes[h].in_flight.is_none() {
            break;
        }
        *world = model.step(world, &Action::Apply(h)).expect("applied");
        *world = model.step(world, &Action::Deliver(h)).expect("answered");
    }
    if model.state_file
        && let Some(saved) = model.step(world, &Action::Save(h))
    {
        *world = saved;
    }
    *world = model.step(world, &Action::Issue(h)).expect("an issue");
}

/// `ms` milliseconds in which the holders in `active` take their turns (the others pause).
fn run(model: &LeaseModel, world: &mut World, active: &[usize], ms: i64) {
    for _ in 0..ms {
        run_on(model, world, active, 1);
        assert_eq!(world.duplicate, None, "(holder, other holder, worker, ms) issued twice, found at {} ms", world.now);
    }
}

/// The same, on past a duplicate (to show a planted bug found).
fn run_on(model: &LeaseModel, world: &mut World, active: &[usize], ms: i64) {
    for _ in 0..ms {
        for &h in active {
            turn(model, world, h);
        }
        *world = model.step(world, &Action::Tick).expect("time passes");
    }
}

/// `ms` milliseconds in which holder `cut` is cut off from the store (every call it makes
/// fails; its generator issues on what it holds) and holder `active` takes its turns; they
/// end at the first duplicate.
fn run_cut_off(model: &LeaseModel, world: &mut World, cut: usize, active: usize, ms: i64) {
    for _ in 0..ms {
        if world.nodes[cut].in_flight.is_none()
            && let Some(sent) = model.step(world, &Action::Send(cut))
        {
            *world = sent;
        }
        if world.nodes[cut].in_flight.is_some() {
            *world = model.step(world, &Action::Fail(cut)).expect("failed");
        }
        *world = model.step(world, &Action::Issue(cut)).expect("an issue");
        turn(model, world, active);
        if world.duplicate.is_some() {
            return;
        }
        *world = model.step(world, &Action::Tick).expect("time passes");
    }
}

/// Whether holder `h` issued worker `worker` at millisecond `ms`.
fn issued(model: &LeaseModel, world: &World, h: usize, worker: u64, ms: i64) -> bool {
    world.issued[h * model.workers as usize + worker as usize] & (1u128 << ms) != 0
}

/// The record of `worker` as the store keeps it.
fn record(world: &World, worker: u64) -> Option<Record> {
    let read = world.store.read(super::NS, &Query::workers(worker..worker + 1), None);
    read.record(worker).and_then(Record::decode)
}

/// A holder that paused past its lease and releases after another took its worker ID: its
/// release conflicts, and it leaves the successor's record as it is (overwriting it would
/// hand the next holder this holder's lower high water while the successor still issues).
#[test]
fn a_release_that_conflicts_leaves_the_successors_record_alone() {
    let mut model = LeaseModel::new(3, 1, 80);
    model.faults = 0;
    model.counted_ends = false;
    let (a, b, c) = (0, 1, 2);
    let mut world = model.initial();
    run(&model, &mut world, &[a], 6);
    assert!(record(&world, 0).is_some_and(|r| r.holder.is_some()), "A holds the worker ID");
    // A pauses: its lease runs out, B takes the worker ID above A's high water and issues.
    run(&model, &mut world, &[b], 12);
    let taken = record(&world, 0).expect("B's record");
    assert!((world.now - 3..world.now).any(|ms| issued(&model, &world, b, 0, ms)), "B issues: {world:?}");
    // A comes back and releases: the write conflicts, the read finds B's record.
    world = model.step(&world, &Action::Release(a)).expect("a release");
    run(&model, &mut world, &[a], 2);
    assert!(world.nodes[a].machine.is_done(), "A's release ended");
    let after = record(&world, 0).expect("a record");
    assert!(after.holder == taken.holder && after.high_water_ms >= taken.high_water_ms, "{taken:?} became {after:?}");
    // B and a newcomer run on: no duplicate, and B keeps issuing.
    run(&model, &mut world, &[b, c], 10);
    assert!((world.now - 3..world.now).any(|ms| issued(&model, &world, b, 0, ms)), "B stopped: {world:?}");
}

/// A holder with a state file whose clock steps back (within the tolerance), then crashes and
/// starts again with the file: it issues only above what the earlier process may have
/// issued, never at a millisecond it issued already.
#[test]
fn a_restart_with_the_state_file_after_a_clock_step_back_issues_above_the_file() {
    let mut model = LeaseModel::new(1, 1, 60);
    model.faults = 4;
    model.state_file = true;
    model.clock_steps = 1;
    let mut world = model.initial();
    run(&model, &mut world, &[0], 8);
    let last = (START..world.now + 2).rev().find(|&ms| issued(&model, &world, 0, 0, ms)).expect("it issued");
    // The clock steps back from 1 ms ahead of the store's to 1 ms behind it; the process is
    // killed at once and started again with its file.
    world = model.step(&world, &Action::Clock(0, -1)).expect("a step");
    world = model.step(&world, &Action::Restart(0)).expect("a restart");
    run(&model, &mut world, &[0], 12);
    assert!((world.now - 3..world.now).any(|ms| issued(&model, &world, 0, 0, ms)), "it issues again");
    assert!(world.nodes[0].generator.is_some_and(|g| g.last > last));
}

/// The marker deleted, then one holder's record: the operator's `create_namespace` is refused
/// (the store still holds records), so the worker ID whose record went is not taken as new.
#[test]
fn the_operator_cannot_declare_a_namespace_new_while_records_remain() {
    let mut model = LeaseModel::new(3, 2, 60);
    model.faults = 3;
    model.operator = true;
    let (a, b, c) = (0, 1, 2);
    let mut world = model.initial();
    run(&model, &mut world, &[a, b], 6);
    let worker = world.nodes[a].generator.expect("A issues").worker;
    world = model.step(&world, &Action::Fault(Fault::DeleteMarker)).expect("the marker deleted");
    world = model.step(&world, &Action::Fault(Fault::DeleteRecord(worker))).expect("A's record deleted");
    world = model.step(&world, &Action::Operator(Command::Create)).expect("the command");
    let read = world.store.read(super::NS, &Query::workers(0..0), None);
    assert_eq!(read.marker, None, "declared new beside a record of worker {}", 1 - worker);
    // A and B run on, C looks for a worker ID: nothing is issued twice.
    run(&model, &mut world, &[a, b, c], 12);
}

/// A holder's record rolled back by a restore nothing tells, the operator's fence at once: a
/// newcomer trusts no record the restore put back (each was written under the marker the
/// fence replaced), and waits out the reservation instead of starting above the restored
/// high water, below what the running holder issued since.
#[test]
fn after_a_fenced_restore_no_restored_record_is_trusted() {
    let world = fenced_restore(&LeaseModel::new(2, 1, 60));
    assert_eq!(world.duplicate, None, "(holder, other holder, worker, ms) issued twice");
}

/// The schedule of [`after_a_fenced_restore_no_restored_record_is_trusted`].
fn fenced_restore(model: &LeaseModel) -> World {
    let mut model = model.clone();
    model.faults = 2;
    let (a, b) = (0, 1);
    let mut world = model.initial();
    run_on(&model, &mut world, &[a], 4);
    world = model.step(&world, &Action::Fault(Fault::Backup)).expect("a backup");
    run_on(&model, &mut world, &[a], 8);
    // A pauses; its record goes back to the backup's, and the operator fences at once.
    world = model.step(&world, &Action::Fault(Fault::RestoreFenced(0b10))).expect("a restore");
    run_on(&model, &mut world, &[b], 8);
    run_on(&model, &mut world, &[a, b], 12);
    world
}

/// A newcomer reads a worker ID whose holder paused past its TTL, and its grant is on its
/// way when the store is put back to a copy taken right after that read and the operator
/// fences at once; meanwhile the holder renewed, so the copy's record is below what it
/// reserved since. The grant, written after the fence, fails (it confirms the marker it read)
/// and reads again. A grant that matched the restored record alone would start on the floor
/// the old marker vouched for, and issue what the holder issues.
#[test]
fn a_grant_read_before_a_fence_and_written_after_it_reads_again() {
    let world = grant_across_a_fence(&LeaseModel::new(2, 1, 60));
    assert_eq!(world.duplicate, None, "(holder, other holder, worker, ms) issued twice");
}

/// The schedule of [`a_grant_read_before_a_fence_and_written_after_it_reads_again`].
fn grant_across_a_fence(model: &LeaseModel) -> World {
    let mut model = model.clone();
    model.faults = 2;
    let (a, b) = (0, 1);
    let mut world = model.initial();
    // B's clock runs a millisecond behind the store's (within the tolerance).
    world.nodes[b].offset_ms = -1;
    run(&model, &mut world, &[a], 4);
    // A pauses until its record expires in the store (it still issues for `W - margin`).
    run(&model, &mut world, &[], 3);
    // B reads the namespace once A's record expired; its grant's write waits, sent and not
    // yet applied.
    for _ in 0..20 {
        match &world.nodes[b].in_flight {
            Some((Call::Write(_), None)) => break,
            None => {
                world = model.step(&world, &Action::Send(b)).expect("B calls");
                if world.nodes[b].in_flight.is_none() {
                    world = model.step(&world, &Action::Tick).expect("time passes");
                }
            }
            Some(_) => {
                world = model.step(&world, &Action::Apply(b)).expect("applied");
                world = model.step(&world, &Action::Deliver(b)).expect("answered");
            }
        }
    }
    assert!(
        matches!(&world.nodes[b].in_flight, Some((Call::Write(_), None))),
        "B's grant is on its way at {} ms: {:?}, A's record {:?}",
        world.now,
        world.nodes[b].in_flight,
        record(&world, 0)
    );
    world = model.step(&world, &Action::Fault(Fault::Backup)).expect("a backup");
    // A renews, late, and issues on: its reservation moves past the copy's.
    run_on(&model, &mut world, &[a], 2);
    // The copy's record of worker 0 put back, and the operator's fence at once.
    world = model.step(&world, &Action::Fault(Fault::RestoreFenced(0b10))).expect("a restore");
    world = model.step(&world, &Action::Apply(b)).expect("B's grant applied");
    world = model.step(&world, &Action::Deliver(b)).expect("B's grant answered");
    run_on(&model, &mut world, &[a, b], 12);
    world
}

/// A holder of a worker ID never granted before (`W` four times the TTL) is cut off from
/// the store from its grant on: its calls fail, and it issues on what it reserved. Its record is deleted alone,
/// and a newcomer takes the worker ID: the marker says it was granted, so the newcomer floors
/// at the store's clock plus `W` and the tolerance, above that reservation. (A holder that
/// reaches the store sees the newcomer's first record at its next renewal and stops: cut off,
/// it cannot.)
fn a_deleted_record_while_its_holder_is_cut_off(model: &LeaseModel) -> World {
    let (a, b) = (0, 1);
    let mut world = model.initial();
    // A acquires and issues; cut off before its first renewal.
    run(model, &mut world, &[a], 1);
    world = model.step(&world, &Action::Fault(Fault::DeleteRecord(0))).expect("deleted");
    run_cut_off(model, &mut world, a, b, 2 * model.rules.reservation_ms());
    world
}

/// `W` four times the TTL, and renewals 4 ms apart: the newcomer issues a few milliseconds
/// before its own first renewal reads the store again.
fn cut_off_model() -> LeaseModel {
    let mut model = LeaseModel::new(2, 1, 60);
    model.rules.reservation = std::time::Duration::from_millis(8);
    model.rules.renew_every = std::time::Duration::from_millis(4);
    model
}

#[test]
fn a_newcomer_after_a_record_deleted_alone_starts_above_a_cut_off_holders_reservation() {
    let model = cut_off_model();
    let world = a_deleted_record_while_its_holder_is_cut_off(&model);
    assert_eq!(world.duplicate, None);
    assert!((START..world.now).any(|ms| issued(&model, &world, 1, 0, ms)), "the newcomer never issued");
}

/// The planted bugs these schedules find (the random ones rarely reach them): a record of
/// another generation trusted; a floor below the reservation; the marker's `next` not raised
/// (a worker ID granted and deleted alone then looks never granted).
#[test]
fn the_written_out_schedules_find_the_planted_bugs() {
    let mut model = LeaseModel::new(2, 1, 60);
    model.rules.planted.any_generation = true;
    assert!(fenced_restore(&model).duplicate.is_some(), "a record of another generation trusted: not found");
    let mut model = cut_off_model();
    model.rules.planted.floor_ignores_reservation = true;
    let found = a_deleted_record_while_its_holder_is_cut_off(&model).duplicate;
    assert!(found.is_some(), "a floor below the reservation: not found");
    let mut model = cut_off_model();
    model.rules.planted.next_not_raised = true;
    let found = a_deleted_record_while_its_holder_is_cut_off(&model).duplicate;
    assert!(found.is_some(), "the marker's next not raised: not found");
}

/// A holder whose clock jumps ahead by twice the reservation while it holds (beyond the
/// tolerance: the store's clock tells), then its record is deleted: a newcomer floors at the
/// store's clock plus `W` and the tolerance, below what the jumped holder reserved, so the
/// holder must stop issuing above its last reservation made with a sound clock.
#[test]
fn a_clock_jump_beyond_the_tolerance_then_a_deleted_record() {
    let mut model = LeaseModel::new(2, 1, 60);
    model.faults = 3;
    model.clock_steps = 8;
    let (a, b) = (0, 1);
    let mut world = model.initial();
    run(&model, &mut world, &[a], 4);
    world = model.step(&world, &Action::Clock(a, 8)).expect("a jump");
    run(&model, &mut world, &[a], 3);
    world = model.step(&world, &Action::Fault(Fault::DeleteRecord(0))).expect("deleted");
    run(&model, &mut world, &[a, b], 14);
}

/// A restore nothing tells puts a holder's record back to an older value; a newcomer takes the
/// worker ID above the restored high water (it cannot know), below what the holder issued
/// since. The holder learns it at its next renewal: the record that replaced its own
/// replaced an older value than its last write (its `rev` is not above it), so the store
/// went back, and it stops at once; issuing on as a lost lease would issue what the
/// newcomer issues.
#[test]
fn a_holder_stops_at_its_next_renewal_after_a_restore_nothing_told() {
    let mut model = LeaseModel::new(2, 1, 60);
    model.faults = 2;
    // TTL 4 ms, W 8 ms, margin 1 ms: A's last renewal still lets it issue when it hears.
    let ms = std::time::Duration::from_millis;
    model.rules = Rules { step_ms: 1, renew_every: ms(1), ..Rules::of(ms(4), ms(8), ms(1), ms(1)) };
    let (a, b) = (0, 1);
    let mut world = model.initial();
    run(&model, &mut world, &[a], 2);
    world = model.step(&world, &Action::Fault(Fault::Backup)).expect("a backup");
    run(&model, &mut world, &[a], 8);
    // A pauses; its record goes back to the backup's (long expired), B takes the worker ID.
    world = model.step(&world, &Action::Fault(Fault::RestoreUntold(0b10))).expect("a restore");
    run_on(&model, &mut world, &[b], 2);
    assert!(record(&world, 0).is_some_and(|r| r.holder.is_some_and(|h| h.name == "h1:1")), "B took it");
    // A's next renewal conflicts and reads B's record back: from then on A issues nothing.
    run_on(&model, &mut world, &[a], 1);
    let now = LeaseModel::clock(world.now, world.nodes[a].offset_ms);
    assert!(!world.nodes[a].machine.issuing(now), "A issues on beside B: {:?}", world.nodes[a].machine.standing(now));
}

/// A holder that renews keeps its worker ID: each renewal records the lease until its clock
/// plus the TTL, and a holder waiting for a free worker ID never takes it meanwhile.
#[test]
fn a_renewing_holder_keeps_its_worker_id() {
    let mut model = LeaseModel::new(2, 1, 60);
    model.faults = 0;
    let (a, b) = (0, 1);
    let mut world = model.initial();
    run(&model, &mut world, &[a], 4);
    let held = record(&world, 0).expect("A's record");
    for _ in 0..20 {
        run(&model, &mut world, &[a, b], 1);
        let now = record(&world, 0).expect("a record");
        // Renewed in the millisecond just past, on A's clock.
        let renewed_at = world.now - 1 + world.nodes[a].offset_ms;
        let ttl_ms = i64::try_from(model.rules.ttl.as_millis()).expect("a TTL in ms");
        assert_eq!(now.expires_ms, renewed_at + ttl_ms, "{now:?}");
        assert_eq!((now.fence, &now.holder), (held.fence, &held.holder), "B took A's worker ID");
    }
}

/// A failover to a replica without the last writes (a Redis master frozen until replaced,
/// whose other replica still acknowledged what it wrote after the promotion): A pauses past
/// its lease, the copy holding A's last write; B takes the worker ID on the old store and
/// issues; the store goes back to the copy and tells (a new incarnation), and B is cut off
/// from it (its calls fail), issuing on what it reserved. A finds its record as it last wrote
/// it, but that does not mean nobody took the worker ID: renewed in place, A would issue what
/// B issues. A loses the lease instead and waits out `W` on a new grant (rules 4 and 6).
fn a_takeover_lost_with_the_old_store(model: &LeaseModel) -> World {
    let mut model = model.clone();
    model.faults = 2;
    let (a, b) = (0, 1);
    let mut world = model.initial();
    run_on(&model, &mut world, &[a], 4);
    // A pauses; the copy the new store starts from holds A's last write.
    world = model.step(&world, &Action::Fault(Fault::Backup)).expect("a backup");
    run_on(&model, &mut world, &[b], 2 * model.rules.reservation_ms());
    assert!(record(&world, 0).is_some_and(|r| r.holder.is_some_and(|h| h.name == "h1:1")), "B took it");
    assert!((world.now - 3..world.now).any(|ms| issued(&model, &world, b, 0, ms)), "B issues: {world:?}");
    world = model.step(&world, &Action::Fault(Fault::RestoreTold)).expect("the failover");
    run_cut_off(&model, &mut world, b, a, 2 * model.rules.reservation_ms());
    world
}

/// `W` four times the TTL: B's reservation on the old store outlasts A's return by far.
fn failover_model() -> LeaseModel {
    let mut model = LeaseModel::new(2, 1, 80);
    model.rules.reservation = std::time::Duration::from_millis(8);
    model
}

#[test]
fn a_record_back_unchanged_in_another_incarnation_is_not_renewed_in_place() {
    let model = failover_model();
    let world = a_takeover_lost_with_the_old_store(&model);
    assert_eq!(world.duplicate, None, "(holder, other holder, worker, ms) issued twice");
    assert!((world.now - 3..world.now).any(|ms| issued(&model, &world, 0, 0, ms)), "A never issued again: {world:?}");
}

/// The planted bugs of a store of another incarnation: a renewal in place under a marker
/// written afresh, and a marker of another incarnation kept.
#[test]
fn the_failover_schedule_finds_its_planted_bugs() {
    let mut model = failover_model();
    model.rules.planted.renews_across_incarnations = true;
    assert!(a_takeover_lost_with_the_old_store(&model).duplicate.is_some(), "a renewal in place: not found");
    let mut model = failover_model();
    model.rules.planted.any_incarnation = true;
    assert!(a_takeover_lost_with_the_old_store(&model).duplicate.is_some(), "a marker kept: not found");
}
