//! The lease protocol checked against every store's fault model: exhaustively at a small scope
//! with the stateright model checker, and through seeded random schedules at a larger one
//! (the simulation), both driving the real [`Lease`] state machine of `protocol.rs` with
//! simulated clocks.
//!
//! The world: holders (processes), each with a clock off the store's by up to the tolerance,
//! one generator each, and the protocol's state of its lease; an in-memory store with the
//! semantics every adapter implements (a lease per worker ID with a token, a fencing number
//! and an expiry on the store's clock; a high-water record per worker ID), and the faults each
//! adapter declares in code ([`StoreFaults`], turned into `Fault` steps): the store loses its
//! data, a replica is promoted while the old master lives on (Redis Sentinel), a worker's lease
//! record is deleted behind its holder (ZooKeeper, Redis), an etcd member hangs, a holder's wall
//! clock steps back (a store without a clock); plus what every store
//! may do: a renewal applied whose answer was lost, a holder paused (it simply takes no step
//! while time passes), a holder crashed. Store calls are atomic steps; a holder may take any
//! step at any time (more schedules than the lease thread's own), so what holds here holds
//! for the thread.
//!
//! Invariant: no two holders (nor one holder twice) ever issue the same (worker ID,
//! millisecond). "Sometimes": IDs are issued at all. The simulation adds liveness: once the
//! store is whole again, every holder that has not crashed issues again within a few TTLs,
//! and a hung etcd member costs no holder its lease.
//!
//! `SIM_SEED=<seed>` replays one schedule of the simulation; `SIM_RUNS=<n>` runs more than the
//! default 10 000. Each planted bug (the `Bugs` flags, and `Planted` in the protocol) is
//! found by the check or the simulation; `docs/many-nodes.md` lists which finds which.

use std::time::Duration;

use stateright::{Checker, Model, Property};

use super::{Lease, Phase, Rules, check_skew};
use crate::fence::Refusal;
use crate::worker::lease::store::{Grant, StoreFaults};

/// Model milliseconds start here (the protocol treats timestamps below 0 as nothing issued).
const START: i64 = 10;
const NS_PER_MS: u64 = 1_000_000;

/// The monotonic clock at model millisecond `now` (the model's time never goes below 0).
fn monotonic_ns(now: i64) -> u64 {
    now.unsigned_abs() * NS_PER_MS
}

/// The world of one store: the faults its adapter declares ([`StoreFaults`]), and its name
/// for messages.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(super) struct Kind {
    name: &'static str,
    faults: StoreFaults,
    /// The adapter says since when it has known the namespace
    /// ([`Grant::namespace_since_ms`]), so never-used worker IDs of an old namespace start at
    /// once.
    since: bool,
    /// The adapter renews a lease that expired while no one took its worker ID (it checks the
    /// token, not the expiry).
    revives: bool,
}

/// No fault at all: the start of a world given one fault alone.
const NONE: StoreFaults = StoreFaults {
    loses_data: false,
    two_primaries: false,
    deleted_behind_holder: false,
    sessions_expire: false,
    member_hangs: false,
    no_clock: false,
};

/// The five adapters' worlds, with the faults each declares.
const STORES: [Kind; 5] = [
    Kind { name: "Redis", faults: StoreFaults::REDIS, since: true, revives: true },
    Kind { name: "Redis Sentinel", faults: StoreFaults::REDIS_SENTINEL, since: true, revives: true },
    Kind { name: "SQL", faults: StoreFaults::SQL, since: true, revives: true },
    Kind { name: "etcd", faults: StoreFaults::ETCD, since: false, revives: true },
    Kind { name: "ZooKeeper", faults: StoreFaults::ZOOKEEPER, since: false, revives: false },
];

/// The exhaustive check's worlds: each fault that bears on uniqueness alone (a hung member and
/// a clock step cost liveness, which the simulation checks), data loss with and without a store
/// clock.
const ONE_FAULT: [Kind; 4] = [
    Kind { name: "data loss", faults: StoreFaults { loses_data: true, ..NONE }, since: true, revives: true },
    Kind {
        name: "data loss, no store clock",
        faults: StoreFaults { loses_data: true, no_clock: true, ..NONE },
        since: false,
        revives: false,
    },
    Kind { name: "two primaries", faults: StoreFaults { two_primaries: true, ..NONE }, since: true, revives: true },
    Kind {
        name: "record deleted behind its holder",
        faults: StoreFaults { deleted_behind_holder: true, ..NONE },
        since: true,
        revives: true,
    },
];

/// Bugs of the store adapters that a test may plant, one flag each; the protocol's own are in
/// [`super::Planted`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub(super) struct Bugs {
    /// Sentinel: an old master that wakes up still takes writes (nothing asks a replica to
    /// acknowledge them) and its records are trusted (its replication ID is unchanged).
    pub(super) sentinel_old_master_trusted: bool,
    /// ZooKeeper: a renewal (and a release) checks that a worker znode exists, not that it is
    /// the one this holder created.
    pub(super) zookeeper_any_znode: bool,
    /// etcd: a call that timed out stays on the hung member.
    pub(super) etcd_timeout_stays: bool,
    /// etcd: the store's clock is the wall clock, the lease's the monotonic one.
    pub(super) etcd_wall_clock: bool,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct Record {
    /// The live lease: token, fence, expiry on the store's clock.
    lease: Option<(String, u64, i64)>,
    high_water_ms: Option<i64>,
    fence: u64,
    /// Whether the store vouches for the high water: not on a promoted replica (it may miss
    /// the old master's last writes) until a holder recorded one there.
    vouched: bool,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct Store {
    records: Vec<Record>,
    /// Whether its writes count (an old master cut off from its replicas: not unless the bug).
    writable: bool,
    /// Since when it has known the namespace (its marker): `None` until an acquisition
    /// writes one, after a data loss, and on a promoted replica.
    since: Option<i64>,
}

impl Store {
    fn new(workers: usize, since: Option<i64>) -> Store {
        let record = Record { lease: None, high_water_ms: None, fence: 0, vouched: true };
        Store { records: vec![record; workers], writable: true, since }
    }
}

/// What a store call answered.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Answer {
    Done,
    Lost,
    /// An error or a timeout: nothing changed for the holder.
    Failed,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct Holder {
    lease: Option<Lease>,
    /// Crashed or released: takes no step any more.
    gone: bool,
    /// Still talks to the old master after a failover (Sentinel).
    on_old_master: bool,
    /// The lease's clock (monotonic) runs this far from the store's.
    offset_ms: i64,
    /// The wall clock's distance from the lease's clock (0 until it steps back).
    wall_shift_ms: i64,
    /// etcd: the member this holder's store client talks to.
    endpoint: u8,
    grants: u32,
    /// The generator: the grant it issues under, and its last issued millisecond.
    generator: Option<(u64, u64, i64)>,
    /// The last model millisecond it issued at (for liveness).
    issued_at: Option<i64>,
    /// The exhaustive check lets a holder take one step per model millisecond (its steps in
    /// one millisecond commute or repeat): whether it took it.
    moved: bool,
}

/// The world's state.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(super) struct World {
    now: i64,
    holders: Vec<Holder>,
    store: Store,
    old_master: Option<Store>,
    /// etcd: the hung member.
    hung: Option<u8>,
    /// The store answers no one (an outage; the ride-through test).
    down: bool,
    faults_left: u8,
    /// Issued milliseconds per (holder, worker): bit `ms`.
    issued: Vec<u64>,
    duplicate: bool,
    /// The first duplicate: the holder that issued it, the one that had, the worker ID, the
    /// millisecond.
    twice: Option<(usize, usize, u64, u32)>,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(super) enum Action {
    Tick,
    Acquire(usize, usize),
    Renew(usize),
    /// The store applies the renewal; its answer is lost.
    RenewUnanswered(usize),
    Issue(usize),
    Release(usize),
    Crash(usize),
    Reconnect(usize),
    Fault(Fault),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(super) enum Fault {
    LoseData,
    Failover,
    DeleteLease(usize),
    HangMember,
    StepBack(usize),
}

/// The model: the world's size, its store's faults, the bugs planted.
#[derive(Clone, Debug)]
pub(super) struct LeaseModel {
    pub(super) kind: Kind,
    pub(super) holders: usize,
    pub(super) workers: usize,
    /// The last model millisecond.
    pub(super) horizon: i64,
    pub(super) faults: u8,
    pub(super) bugs: Bugs,
    pub(super) rules: Rules,
    /// Whether holders remember when they last issued (the simulation's liveness check; the
    /// exhaustive check leaves it out, which keeps its states fewer).
    pub(super) liveness: bool,
    /// Whether a generator that has IDs for the current millisecond takes the next ones
    /// anyway, running ahead of its clock up to the fence deadline (more schedules than a real
    /// generator, which waits for its clock; the ride-through test turns it off).
    pub(super) eager: bool,
}

impl LeaseModel {
    pub(super) fn new(kind: Kind, holders: usize, workers: usize, horizon: i64) -> LeaseModel {
        let ms = Duration::from_millis;
        let mut rules = Rules::new(ms(2), ms(1), ms(1)).with_reservation(ms(4));
        rules.step_ms = 1;
        let (faults, bugs) = (1, Bugs::default());
        LeaseModel {
            kind,
            holders,
            workers,
            horizon: START + horizon,
            faults,
            bugs,
            rules,
            liveness: false,
            eager: true,
        }
    }

    fn ttl_ms(&self) -> i64 {
        super::millis(self.rules.ttl)
    }

    fn initial(&self) -> World {
        // Each holder's clock within the tolerance of the store's; etcd has no clock of its
        // own, and its documented assumption is that the holders' clocks agree within the
        // tolerance of each other.
        let offsets: &[i64] = if self.kind.faults.no_clock { &[0, 1, 0] } else { &[0, 1, -1] };
        World {
            now: START,
            holders: (0..self.holders)
                .map(|h| Holder {
                    lease: None,
                    gone: false,
                    on_old_master: false,
                    offset_ms: offsets[h % offsets.len()],
                    wall_shift_ms: 0,
                    endpoint: 0,
                    grants: 0,
                    generator: None,
                    issued_at: None,
                    moved: false,
                })
                .collect(),
            // A namespace the store has known for long: its never-used worker IDs start at once
            // (on a store that says so), which leaves the horizon to the faults.
            store: Store::new(self.workers, Some(0)),
            old_master: None,
            hung: None,
            down: false,
            faults_left: self.faults,
            issued: vec![0; self.holders * self.workers],
            duplicate: false,
            twice: None,
        }
    }

    /// The faults the world's store may have now.
    fn faults(&self, world: &World) -> Vec<Fault> {
        let declared = self.kind.faults;
        let mut faults = Vec::new();
        if declared.loses_data {
            faults.push(Fault::LoseData);
        }
        if declared.two_primaries && world.old_master.is_none() {
            faults.push(Fault::Failover);
        }
        if declared.deleted_behind_holder {
            faults.extend((0..self.workers).map(Fault::DeleteLease));
        }
        if declared.member_hangs && world.hung.is_none() {
            faults.push(Fault::HangMember);
        }
        if declared.no_clock {
            faults.extend((0..self.holders).map(Fault::StepBack));
        }
        faults
    }

    /// The store a holder's calls reach, if any answers: `None` for a call that times out.
    fn reach<'w>(&self, world: &'w mut World, h: usize) -> Option<&'w mut Store> {
        if world.down {
            return None;
        }
        if world.hung == Some(world.holders[h].endpoint) {
            if !self.bugs.etcd_timeout_stays {
                // A timeout moves the client on to the next member.
                world.holders[h].endpoint = (world.holders[h].endpoint + 1) % 3;
            }
            return None;
        }
        if world.holders[h].on_old_master {
            let old = world.old_master.as_mut()?;
            if !old.writable {
                // No replica acknowledges its writes: a store error.
                return None;
            }
            return Some(old);
        }
        Some(&mut world.store)
    }

    /// The store's clock as the holder's store adapter reports it.
    fn store_clock(&self, world: &World, h: usize) -> i64 {
        let holder = &world.holders[h];
        if self.kind.faults.no_clock {
            // etcd has no clock: the adapter reads the holder's own.
            let lease_clock = world.now + holder.offset_ms;
            return if self.bugs.etcd_wall_clock { lease_clock + holder.wall_shift_ms } else { lease_clock };
        }
        world.now
    }

    fn acquire(&self, world: &mut World, h: usize, worker: usize) -> Option<Grant> {
        let local = world.now + world.holders[h].offset_ms;
        let store_ms = self.store_clock(world, h);
        check_skew(local, store_ms, local, self.rules.tolerance).ok()?;
        let (prefer, fence_above) = match &world.holders[h].lease {
            Some(lease) => {
                let (worker, fence) = lease.last_fence();
                (Some(worker), fence)
            }
            None => (None, 0),
        };
        let token = format!("{h}.{}", world.holders[h].grants);
        let (now, ttl) = (world.now, self.ttl_ms());
        let store = self.reach(world, h)?;
        let free = |r: &Record| r.lease.as_ref().is_none_or(|(_, _, expires)| *expires <= now);
        // The preferred worker ID when it is free, else the one chosen.
        let worker = match prefer {
            Some(p) if free(&store.records[p as usize]) => p as usize,
            _ => worker,
        };
        let record = &mut store.records[worker];
        if !free(record) {
            return None;
        }
        let fence = record.fence.max(fence_above) + 1;
        record.fence = fence;
        record.lease = Some((token.clone(), fence, now + ttl));
        let previous_high_water_ms = if record.vouched { record.high_water_ms } else { None };
        let since = *store.since.get_or_insert(now);
        let namespace_since_ms = self.kind.since.then_some(since);
        world.holders[h].grants += 1;
        Some(Grant {
            worker: worker as u64,
            token,
            fence,
            previous_high_water_ms,
            store_now_ms: store_ms,
            namespace_since_ms,
        })
    }

    /// A renewal or release reaching the store: whether the lease is still the grant's (on a
    /// store that revives, also when it expired but no one took the worker ID since).
    fn owns(&self, record: &Record, grant: &Grant, now: i64) -> bool {
        match &record.lease {
            Some((token, _, expires)) if *expires > now => *token == grant.token || self.bugs.zookeeper_any_znode,
            Some((token, _, _)) => self.kind.revives && *token == grant.token,
            _ => false,
        }
    }

    fn renew(&self, next: &mut World, h: usize, answered: bool) -> Option<()> {
        let lease = next.holders[h].lease.as_ref()?;
        if lease.phase != Phase::Holding {
            return None;
        }
        let local = next.now + next.holders[h].offset_ms;
        let renewal = lease.renewal(local, &self.rules);
        let started = monotonic_ns(next.now);
        let (now, ttl) = (next.now, self.ttl_ms());
        let answer = match self.reach(next, h) {
            None => Answer::Failed,
            Some(store) => {
                let record = &mut store.records[renewal.grant.worker as usize];
                if self.owns(record, &renewal.grant, now) {
                    if let Some(lease) = &mut record.lease {
                        lease.2 = now + ttl;
                    }
                    record.high_water_ms =
                        Some(record.high_water_ms.map_or(renewal.record_ms, |hw| hw.max(renewal.record_ms)));
                    record.vouched = true;
                    Answer::Done
                } else {
                    Answer::Lost
                }
            }
        };
        let lease = next.holders[h].lease.as_mut()?;
        match (answer, answered) {
            (Answer::Done, true) => {
                lease.renewed(&renewal, started, &self.rules);
            }
            (Answer::Lost, true) => {
                lease.stop(Phase::Recovering);
            }
            _ => {}
        }
        Some(())
    }

    fn issue(&self, world: &mut World, h: usize) {
        let local = world.now + world.holders[h].offset_ms;
        let now_ns = monotonic_ns(world.now);
        let holder = &mut world.holders[h];
        let Some(lease) = holder.lease.as_mut() else { return };
        let view = lease.view();
        let (epoch, worker, last) = match holder.generator {
            Some((epoch, worker, last)) if epoch == view.epoch => (epoch, worker, last),
            // A new grant: the generator starts above its floor, and above its own last ID
            // when the worker ID is the same.
            Some((_, worker, last)) if worker == view.worker => {
                (view.epoch, worker, last.max(view.floor_ms.unwrap_or(i64::MIN)))
            }
            _ => (view.epoch, view.worker, view.floor_ms.unwrap_or(i64::MIN)),
        };
        if !self.eager && epoch == view.epoch && last >= local {
            return;
        }
        let from = local.max(last.saturating_add(1));
        match lease.grant_until(now_ns, local, from, 1, epoch, &self.rules) {
            Ok(until) => {
                assert!((0..64).contains(&from) && until < 64, "model milliseconds out of range: {from}..={until}");
                let bits = (u64::MAX >> (63 - until)) & (u64::MAX << from);
                for other in 0..self.holders {
                    let twice = world.issued[other * self.workers + worker as usize] & bits;
                    if twice != 0 {
                        world.duplicate = true;
                        world.twice = Some((h, other, worker, twice.trailing_zeros()));
                    }
                }
                world.issued[h * self.workers + worker as usize] |= bits;
                world.holders[h].generator = Some((epoch, worker, until));
                if self.liveness {
                    world.holders[h].issued_at = Some(world.now);
                }
            }
            Err(Refusal::Switch(_)) => unreachable!("the generator took the grant it was told of"),
            Err(Refusal::Fenced(_)) => {
                world.holders[h].generator = Some((epoch, worker, last));
            }
        }
    }

    fn release(&self, world: &mut World, h: usize) {
        let Some(lease) = world.holders[h].lease.clone() else { return };
        world.holders[h].gone = true;
        if let Some(lease) = world.holders[h].lease.as_mut() {
            lease.stop(Phase::Released);
        }
        if lease.phase != Phase::Holding {
            return;
        }
        let now = world.now;
        if let Some(store) = self.reach(world, h) {
            let record = &mut store.records[lease.grant.worker as usize];
            if self.owns(record, &lease.grant, now) {
                record.lease = None;
                record.high_water_ms = Some(lease.high_water());
                record.vouched = true;
            }
        }
    }

    fn apply_fault(&self, world: &mut World, fault: Fault) {
        world.faults_left -= 1;
        match fault {
            Fault::LoseData => {
                world.store = Store::new(self.workers, None);
            }
            Fault::Failover => {
                let mut old = world.store.clone();
                old.writable = self.bugs.sentinel_old_master_trusted;
                world.old_master = Some(old);
                // The promoted replica may miss the last writes: its leases are gone, and its
                // records are not vouched for.
                for record in &mut world.store.records {
                    record.lease = None;
                    record.vouched = false;
                }
                world.store.since = None;
                for holder in &mut world.holders {
                    holder.on_old_master = true;
                }
            }
            Fault::DeleteLease(worker) => world.store.records[worker].lease = None,
            Fault::HangMember => world.hung = Some(0),
            Fault::StepBack(h) => world.holders[h].wall_shift_ms -= 5,
        }
    }

    fn step(&self, world: &World, action: &Action) -> Option<World> {
        let mut next = world.clone();
        match *action {
            Action::Tick => {
                next.now += 1;
                for holder in &mut next.holders {
                    holder.moved = false;
                }
            }
            Action::Acquire(h, worker) => {
                // A failed call may still move the client on to another member.
                let Some(grant) = self.acquire(&mut next, h, worker) else { return Some(next) };
                let holder = &mut next.holders[h];
                match &mut holder.lease {
                    Some(lease) => lease.regrant(grant, &self.rules, monotonic_ns(next.now)),
                    None => holder.lease = Some(Lease::granted(grant, &self.rules)),
                }
            }
            Action::Renew(h) => self.renew(&mut next, h, true)?,
            Action::RenewUnanswered(h) => self.renew(&mut next, h, false)?,
            Action::Issue(h) => self.issue(&mut next, h),
            Action::Release(h) => self.release(&mut next, h),
            Action::Crash(h) => {
                next.holders[h].gone = true;
                if let Some(lease) = next.holders[h].lease.as_mut() {
                    lease.stop(Phase::Released);
                }
            }
            Action::Reconnect(h) => next.holders[h].on_old_master = false,
            Action::Fault(fault) => self.apply_fault(&mut next, fault),
        }
        Some(next)
    }

    fn enabled(&self, world: &World, actions: &mut Vec<Action>, exhaustive: bool) {
        if world.duplicate {
            return;
        }
        if world.now < self.horizon {
            actions.push(Action::Tick);
        }
        for (h, holder) in world.holders.iter().enumerate() {
            if holder.gone || (exhaustive && holder.moved) {
                continue;
            }
            match holder.lease.as_ref().map(|l| l.phase) {
                None | Some(Phase::Recovering) => {
                    actions.extend((0..self.workers).map(|w| Action::Acquire(h, w)));
                }
                Some(Phase::Holding) => {
                    actions.extend([Action::Renew(h), Action::Issue(h)]);
                    // A renewal applied whose answer was lost only lengthens the lease in the
                    // store and raises its record, and a release ends the holder: neither can
                    // let two holders overlap that the others cannot, so the exhaustive check
                    // leaves them to the simulation.
                    if !exhaustive {
                        actions.extend([Action::RenewUnanswered(h), Action::Release(h)]);
                    }
                }
                Some(Phase::Released) => {}
            }
            if holder.on_old_master {
                actions.push(Action::Reconnect(h));
            }
            if !exhaustive && holder.lease.is_some() {
                actions.push(Action::Crash(h));
            }
        }
        if world.faults_left > 0 {
            actions.extend(self.faults(world).into_iter().map(Action::Fault));
        }
    }
}

impl Model for LeaseModel {
    type State = World;
    type Action = Action;

    fn init_states(&self) -> Vec<World> {
        vec![self.initial()]
    }

    fn actions(&self, world: &World, actions: &mut Vec<Action>) {
        self.enabled(world, actions, true);
    }

    fn next_state(&self, world: &World, action: Action) -> Option<World> {
        let mut next = self.step(world, &action)?;
        if let Action::Acquire(h, _) | Action::Renew(h) | Action::Issue(h) | Action::Reconnect(h) = action {
            next.holders[h].moved = true;
        }
        Some(next)
    }

    fn properties(&self) -> Vec<Property<Self>> {
        vec![
            Property::always("no ID issued twice", |_, world: &World| !world.duplicate),
            Property::sometimes("IDs are issued", |_, world: &World| world.issued.iter().any(|&bits| bits != 0)),
        ]
    }
}

/// Checks `model` exhaustively: the counterexample to "no ID issued twice", if any, and how
/// many states were explored.
fn check(model: LeaseModel) -> (Option<String>, usize) {
    let checker = model.checker().threads(2).spawn_bfs().join();
    let states = checker.unique_state_count();
    let found = checker.discovery("IDs are issued").is_some();
    assert!(found, "no schedule issues an ID: the model is vacuous");
    (checker.discovery("no ID issued twice").map(|path| format!("{path:?}")), states)
}

fn clean(kind: Kind) -> LeaseModel {
    let horizon = std::env::var("MODEL_HORIZON").ok().and_then(|s| s.parse().ok()).unwrap_or(8);
    LeaseModel::new(kind, 2, 1, horizon)
}

#[test]
fn the_model_check_finds_no_duplicate_on_any_store() {
    for kind in ONE_FAULT {
        let began = std::time::Instant::now();
        let (counterexample, states) = check(clean(kind));
        assert!(counterexample.is_none(), "{}: {}", kind.name, counterexample.unwrap_or_default());
        eprintln!("{}: {states} states in {:?}, no duplicate", kind.name, began.elapsed());
    }
}

/// Two holders over two worker IDs: a holder that lost one worker ID may take the other, and
/// fences and records of both must keep them apart. A shorter horizon (5 model ms) keeps it to
/// about a million states; the planted bugs need the longer horizon of one worker ID above.
#[test]
fn the_model_check_finds_no_duplicate_over_two_worker_ids() {
    let horizon = std::env::var("MODEL_HORIZON_2").ok().and_then(|s| s.parse().ok()).unwrap_or(5);
    for kind in ONE_FAULT {
        let began = std::time::Instant::now();
        let (counterexample, states) = check(LeaseModel::new(kind, 2, 2, horizon));
        assert!(counterexample.is_none(), "{}: {}", kind.name, counterexample.unwrap_or_default());
        eprintln!("{} over two worker IDs: {states} states in {:?}, no duplicate", kind.name, began.elapsed());
    }
}

#[test]
fn the_model_check_finds_each_planted_bug() {
    let [data_loss, _, two_primaries, deleted] = ONE_FAULT;
    let mut sentinel = clean(two_primaries);
    sentinel.bugs.sentinel_old_master_trusted = true;
    let mut zookeeper = clean(deleted);
    zookeeper.bugs.zookeeper_any_znode = true;
    let mut forgot = clean(data_loss);
    forgot.rules.planted.trust_a_store_that_forgot = true;
    let mut short_floor = clean(data_loss);
    short_floor.rules.planted.floor_ignores_reservation = true;
    let mut unrecorded = clean(data_loss);
    unrecorded.rules.planted.reservation_not_recorded = true;
    let mut own_worker = clean(data_loss);
    own_worker.rules.planted.own_worker_any_time = true;
    for (name, model) in [
        ("sentinel", sentinel),
        ("zookeeper", zookeeper),
        ("a store that forgot", forgot),
        ("a floor below the reservation", short_floor),
        ("a reservation not recorded", unrecorded),
        ("its own worker ID after any time", own_worker),
    ] {
        let began = std::time::Instant::now();
        let (counterexample, states) = check(model);
        eprintln!("{name}: {states} states in {:?}", began.elapsed());
        assert!(counterexample.is_some(), "{name}: the planted bug was not found in {states} states");
    }
}

/// A seeded xorshift: the simulation's only source of choices.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 % n as u64) as usize
    }
}

/// What one simulated schedule found wrong.
#[derive(Debug)]
#[allow(dead_code)] // read through Debug
enum Finding {
    Duplicate(Box<World>),
    Stalled(String),
}

/// One seeded schedule: random steps (faults included) up to the middle of the horizon, then
/// the store made whole and every holder scheduled fairly, as its lease thread would be:
/// each must issue again. With a hung etcd member, the fair part runs while it hangs.
fn simulate(model: &LeaseModel, seed: u64, trace: bool) -> Result<(), Finding> {
    let mut rng = Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
    let mut world = model.initial();
    let fair_from = START + (model.horizon - START) / 2;
    let mut actions = Vec::new();
    while world.now < fair_from {
        actions.clear();
        model.enabled(&world, &mut actions, false);
        // Time passes one step in eight; a fault comes one step in a hundred, a crash or a
        // release one in three hundred; the holders' own steps make up the rest.
        let rare = |a: &Action| matches!(a, Action::Fault(_) | Action::Crash(_) | Action::Release(_));
        let pick = |rng: &mut Rng, of: &[&Action]| (!of.is_empty()).then(|| of[rng.below(of.len())].clone());
        let (faults, ends): (Vec<&Action>, Vec<&Action>) =
            actions.iter().filter(|a| rare(a)).partition(|a| matches!(a, Action::Fault(_)));
        let ordinary: Vec<&Action> = actions.iter().filter(|a| !rare(a) && **a != Action::Tick).collect();
        let action = match rng.below(300) {
            0..=36 => Some(Action::Tick),
            37..=39 => pick(&mut rng, &faults),
            40 => pick(&mut rng, &ends),
            _ => pick(&mut rng, &ordinary),
        };
        if let Some(next) = action.as_ref().and_then(|action| model.step(&world, action)) {
            if trace && next != world {
                eprintln!("{:>3} {action:?}", next.now);
            }
            world = next;
        }
        if world.duplicate {
            return Err(Finding::Duplicate(Box::new(world)));
        }
    }
    // The store is whole again (a hung member stays hung: the client must get past it).
    for holder in &mut world.holders {
        holder.on_old_master = false;
    }
    world.faults_left = 0;
    let healed = world.now;
    while world.now < model.horizon {
        for h in 0..model.holders {
            if world.holders[h].gone {
                continue;
            }
            let phase = world.holders[h].lease.as_ref().map(|l| l.phase);
            // As the lease thread does: a renewal right after each grant, and renewals more
            // often than the TTL.
            let steps: &[Action] = match phase {
                None | Some(Phase::Recovering) => &[Action::Acquire(h, rng.below(model.workers)), Action::Renew(h)],
                _ => &[Action::Renew(h), Action::Issue(h)],
            };
            for action in steps {
                if let Some(next) = model.step(&world, action) {
                    if trace && next != world {
                        eprintln!("{:>3} {action:?} (fair)", next.now);
                    }
                    world = next;
                }
            }
            if world.duplicate {
                return Err(Finding::Duplicate(Box::new(world)));
            }
        }
        world = model.step(&world, &Action::Tick).expect("time passes");
    }
    // As many holders as there are worker IDs for (or all of them) issued in the last two TTLs.
    let running = world.holders.iter().filter(|h| !h.gone).count();
    let recent = model.horizon - 2 * model.ttl_ms();
    let issuing = world.holders.iter().filter(|h| !h.gone && h.issued_at.is_some_and(|at| at >= recent)).count();
    if issuing < running.min(model.workers) {
        return Err(Finding::Stalled(format!(
            "{issuing} of {running} holders issued since {recent} (store whole since {healed}): {:?}",
            world.holders
        )));
    }
    Ok(())
}

fn sim_model(kind: Kind) -> LeaseModel {
    let mut model = LeaseModel::new(kind, 3, 2, 44);
    model.faults = 3;
    model.liveness = true;
    model
}

/// Runs `runs` seeds (or the one of `SIM_SEED`) over every store's world; the first failure
/// with a one-line reproduction.
fn simulate_all(models: &[LeaseModel], runs: u64) -> Result<(), String> {
    let only: Option<u64> = std::env::var("SIM_SEED").ok().and_then(|s| s.parse().ok());
    let seeds: Box<dyn Iterator<Item = u64>> = match only {
        Some(seed) => Box::new(std::iter::once(seed)),
        None => Box::new(0..runs),
    };
    for seed in seeds {
        let model = &models[(seed % models.len() as u64) as usize];
        if let Err(finding) = simulate(model, seed, only.is_some()) {
            return Err(format!(
                "{} world, seed {seed}: {finding:?}; reproduce with SIM_SEED={seed} cargo test -p snowflake-types --all-features --lib protocol::model",
                model.kind.name
            ));
        }
    }
    Ok(())
}

fn runs() -> u64 {
    std::env::var("SIM_RUNS").ok().and_then(|s| s.parse().ok()).unwrap_or(10_000)
}

#[test]
fn the_simulation_finds_no_duplicate_and_every_holder_recovers() {
    let models: Vec<LeaseModel> = STORES.into_iter().map(sim_model).collect();
    let began = std::time::Instant::now();
    let runs = runs();
    simulate_all(&models, runs).unwrap_or_else(|failure| panic!("{failure}"));
    eprintln!("{runs} seeded schedules in {:?}", began.elapsed());
}

#[test]
fn the_simulation_finds_each_planted_bug() {
    let planted = |kind: Kind, plant: fn(&mut LeaseModel)| {
        let mut model = sim_model(kind);
        plant(&mut model);
        model
    };
    let [redis, sentinel, _, etcd, zookeeper] = STORES;
    let cases: [(&str, LeaseModel); 8] = [
        ("sentinel", planted(sentinel, |m| m.bugs.sentinel_old_master_trusted = true)),
        ("zookeeper", planted(zookeeper, |m| m.bugs.zookeeper_any_znode = true)),
        ("etcd endpoints", planted(etcd, |m| m.bugs.etcd_timeout_stays = true)),
        ("etcd clock", planted(etcd, |m| m.bugs.etcd_wall_clock = true)),
        ("a store that forgot", planted(redis, |m| m.rules.planted.trust_a_store_that_forgot = true)),
        ("a floor below the reservation", planted(redis, |m| m.rules.planted.floor_ignores_reservation = true)),
        ("a reservation not recorded", planted(redis, |m| m.rules.planted.reservation_not_recorded = true)),
        ("its own worker ID after any time", planted(redis, |m| m.rules.planted.own_worker_any_time = true)),
    ];
    for (name, model) in cases {
        let failure = simulate_all(std::slice::from_ref(&model), 2_000);
        assert!(failure.is_err(), "{name}: 2 000 schedules found nothing");
        eprintln!("{name}: {}", failure.unwrap_err());
    }
}

/// The fair schedule of the lease threads for one model millisecond: each holder acquires (and
/// renews at once) when it holds nothing, else renews and issues; then time passes. Whether
/// each holder issued in it.
fn fair_tick(model: &LeaseModel, world: &mut World) -> Vec<bool> {
    let mut issued = vec![false; model.holders];
    for (h, flag) in issued.iter_mut().enumerate() {
        let phase = world.holders[h].lease.as_ref().map(|l| l.phase);
        let steps: Vec<Action> = match phase {
            None | Some(Phase::Recovering) => vec![Action::Acquire(h, h % model.workers), Action::Renew(h)],
            _ => vec![Action::Renew(h), Action::Issue(h)],
        };
        for action in steps {
            if let Some(next) = model.step(world, &action) {
                *world = next;
            }
        }
        // A renewal the store answered with "lost": the lease thread acquires again at once.
        if world.holders[h].lease.as_ref().is_some_and(|l| l.phase == Phase::Recovering) {
            for action in [Action::Acquire(h, h % model.workers), Action::Renew(h), Action::Issue(h)] {
                if let Some(next) = model.step(world, &action) {
                    *world = next;
                }
            }
        }
        // Its lease lets it issue now, and it has IDs for this millisecond (its generator may
        // have issued ahead of it).
        let local = world.now + world.holders[h].offset_ms;
        let holder = &world.holders[h];
        *flag = holder.lease.as_ref().is_some_and(|lease| lease.issuing(monotonic_ns(world.now), local))
            && holder.generator.is_some_and(|(_, _, last)| last >= local);
        assert!(!world.duplicate, "{} world: a duplicate: {world:?}", model.kind.name);
    }
    *world = model.step(world, &Action::Tick).expect("time passes");
    issued
}

/// Running holders ride through what the reservation covers: the store not answering for
/// less than `W - margin` (on every store: Redis and SQL renew a lease that expired meanwhile,
/// etcd and ZooKeeper give leases their TTL again when they return), and (on the stores that keep the lease's last
/// grant and say since when they know the namespace) a store that comes back empty after it.
/// Each holder has IDs for every millisecond of it, and after.
#[test]
fn running_holders_ride_through_an_outage_shorter_than_the_reservation() {
    let ms = Duration::from_millis;
    for kind in STORES {
        let mut model = LeaseModel::new(Kind { faults: NONE, ..kind }, 2, 2, 60);
        model.faults = 0;
        model.eager = false;
        // TTL 4 ms, W 8 ms: the store keeps a lease 3 ms (TTL - margin) after its renewal.
        model.rules = Rules { step_ms: 1, ..Rules::new(ms(4), ms(1), ms(1)).with_reservation(ms(8)) };
        for empty in [false, true] {
            if empty && !kind.revives {
                continue;
            }
            // Up to W - margin; a store that comes back empty must be back within TTL - margin
            // of the last renewal (here, renewals every millisecond).
            let millis = |d: Duration| super::millis(d);
            let outage = if empty { 1 } else { millis(model.rules.reservation) - millis(model.rules.margin) - 1 };
            // Until both issue (a store that cannot say since when it knows the namespace
            // makes first grants wait out W).
            let mut world = model.initial();
            while !fair_tick(&model, &mut world).iter().all(|&i| i) {
                assert!(world.now < START + 30, "{} world: the holders never issued: {world:?}", kind.name);
            }
            world.down = true;
            for tick in 0..outage + 8 {
                if tick == outage {
                    world.down = false;
                    if !kind.revives {
                        // etcd and ZooKeeper count no lease time while they are down: a leader
                        // elected on their return gives every lease (session) its whole TTL.
                        let expires = world.now + model.ttl_ms();
                        for record in &mut world.store.records {
                            if let Some(lease) = &mut record.lease {
                                lease.2 = expires;
                            }
                        }
                    }
                    if empty {
                        world.store = Store::new(model.workers, None);
                    }
                }
                let issued = fair_tick(&model, &mut world);
                assert!(
                    issued.iter().all(|&i| i),
                    "{} world{}: a holder stopped {tick} ms into an outage of {outage} ms: {world:?}",
                    kind.name,
                    if empty { " (store back empty)" } else { "" }
                );
            }
        }
    }
}
