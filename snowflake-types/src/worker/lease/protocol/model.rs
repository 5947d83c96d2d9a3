//! The lease protocol checked against every fault a store really has: exhaustively at a small
//! scope with the stateright model checker, and through seeded random schedules at a larger
//! one (the simulation). Both drive the production holder ([`Machine`]) against the reference
//! store ([`State`], what `MemoryLeaseStore` keeps): nothing of the protocol is written again
//! here. What this file adds is the world around them: time, the holders' clocks, the network
//! between a holder and its store, the generators, and the faults.
//!
//! - **Clocks**: each holder's clock runs up to the tolerance off the store's (or, in a world
//!   whose store has no clock, off the others'); its monotonic clock runs at the store's rate.
//! - **Messages**: a call is sent, applied by the store at some later step, and answered at a
//!   step after that; or it fails (a timeout) whether it was applied or not. Holders pause
//!   simply by taking no step while time passes.
//! - **Faults**, by default in every world: one record deleted alone; the marker deleted
//!   alone; everything lost (the store's incarnation changes); the store rolled back to a
//!   backup taken at any earlier step, whole with its incarnation changed (a store that tells:
//!   a Redis run, a PostgreSQL timeline, an etcd cluster ID, a replica promoted with a prefix
//!   of the writes), or whole or in part with the operator's fence right after (one that does
//!   not: a table restored from a dump, a ZooKeeper data directory put back); a holder
//!   crashed; a holder's release.
//!
//! Invariant: no two holders (nor one twice) ever issue the same (worker ID, millisecond).
//! "Sometimes": IDs are issued at all. The simulation adds liveness: once the faults stop,
//! every holder that has not crashed issues again within a bound.
//!
//! The fast tier runs the simulation's first 500 seeds; the model tier (`cargo test -p
//! snowflake-types --all-features --lib -- --ignored`) the exhaustive check, 5 000 more seeds
//! and the planted bugs. `SIM_SEED=<seed>` replays one schedule; `SIM_RUNS=<n>` runs more
//! seeds in the fast tier; `MODEL_HORIZON=<ms>` lengthens the exhaustive check. Each planted bug
//! ([`super::Planted`]) that a check finds is listed with it; two are found by neither yet at
//! the scope this machine affords: a floor without the tolerance (the holder's validity,
//! which leaves the tolerance out too, seems to cover it) and a marker of another incarnation
//! kept.

use std::time::Duration;

use stateright::{Checker, Model, Property};

use super::holder::{Call, Machine, Now, Reply, Saved, Settings};
use super::record::Marker;
use super::{Rules, fresh_marker};
use crate::fence::Refusal;
use crate::worker::lease::memory::State;
use crate::worker::lease::store::{Cas, LeaseError, Query, Slot};

const NS: &str = "ns";
const MS: u64 = 1_000_000;
/// Model milliseconds start here.
const START: i64 = 10;

/// A holder process: its machine, its clock, the call it has in flight, its generator.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct Node {
    machine: Machine,
    /// How far its clock runs from the store's.
    offset_ms: i64,
    /// The call sent, and the store's answer once the store applied it.
    in_flight: Option<(Call, Option<Reply>)>,
    /// The grant the generator issues under, its worker ID, and its last millisecond.
    generator: Option<(u64, u64, i64)>,
    crashed: bool,
    /// Its lease state file, as last written.
    file: Option<Saved>,
    /// The exhaustive check lets a holder take one step of its own per model millisecond.
    moved: bool,
    /// The last model millisecond it issued at (for liveness).
    issued_at: Option<i64>,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(super) struct World {
    now: i64,
    /// The last millisecond of this world's schedule.
    end: i64,
    store: State,
    /// A copy of the store taken at some step, for a rollback.
    backup: Option<State>,
    nodes: Vec<Node>,
    faults_left: u8,
    /// Issued milliseconds per (holder, worker): bit `ms`.
    issued: Vec<u128>,
    /// The first duplicate: the holder, the other holder, the worker ID, the millisecond.
    duplicate: Option<(usize, usize, u64, i64)>,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(super) enum Action {
    Tick,
    /// The holder's machine takes its turn: time read, the next call sent.
    Send(usize),
    /// The store applies the holder's call.
    Apply(usize),
    /// The answer reaches the holder.
    Deliver(usize),
    /// The call fails (a timeout), applied or not.
    Fail(usize),
    Issue(usize),
    /// The lease thread writes the state file the machine asks for.
    Save(usize),
    /// The process is killed and started again at once with its state file (if the model
    /// gives holders one).
    Restart(usize),
    /// The exhaustive check's coarser steps: the holder's turn (its machine's next call sent,
    /// its generator's next ID), once per millisecond; a call applied and answered at once;
    /// a call applied whose answer is lost.
    Turn(usize),
    Roundtrip(usize),
    Lost(usize),
    Release(usize),
    Crash(usize),
    Fault(Fault),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(super) enum Fault {
    DeleteRecord(u64),
    DeleteMarker,
    LoseAll,
    Backup,
    /// Rolled back to the backup, all of it, and the store tells (its incarnation changes).
    RestoreTold,
    /// Rolled back to the backup, the slots in the mask (bit 0 the marker, bit 1 + w worker
    /// w), and the operator fences the namespace at once.
    RestoreFenced(u8),
}

/// Which faults a world may have.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(super) struct Faults {
    pub(super) delete: bool,
    pub(super) lose: bool,
    pub(super) restore: bool,
}

impl Faults {
    pub(super) const ALL: Faults = Faults { delete: true, lose: true, restore: true };
}

/// The model: the world's size, its faults, the protocol's rules (with any bug planted).
#[derive(Clone, Debug)]
pub(super) struct LeaseModel {
    pub(super) holders: usize,
    pub(super) workers: u64,
    /// The last model millisecond.
    pub(super) horizon: i64,
    pub(super) faults: u8,
    pub(super) allowed: Faults,
    pub(super) rules: Rules,
    /// Whether the store has a clock (etcd and ZooKeeper have none).
    pub(super) store_clock: bool,
    /// Whether the namespace starts declared new (else known for long).
    pub(super) declared: bool,
    /// Whether holders remember when they last issued (the simulation's liveness check).
    pub(super) liveness: bool,
    /// Holders may release and crash (the simulation).
    pub(super) ends: bool,
    /// Holders keep a lease state file, and may restart with it.
    pub(super) state_file: bool,
}

impl LeaseModel {
    pub(super) fn new(holders: usize, workers: u64, horizon: i64) -> LeaseModel {
        let ms = Duration::from_millis;
        let mut rules = Rules::new(ms(2), ms(1), ms(1)).with_reservation(ms(4));
        rules.step_ms = 1;
        LeaseModel {
            holders,
            workers,
            horizon: START + horizon,
            faults: 1,
            allowed: Faults::ALL,
            rules,
            store_clock: true,
            declared: false,
            liveness: false,
            ends: false,
            state_file: false,
        }
    }

    fn settings(&self, h: usize) -> Settings {
        Settings {
            namespace: NS.into(),
            space: self.workers,
            rules: self.rules,
            renew_every_ns: MS,
            first_wait_ns: u64::MAX / 4,
            acquire_backoff_ns: (MS, 2 * MS),
            create_namespace: false,
            wait_for_free: true,
            state_file: self.state_file,
            name: format!("h{h}:1"),
            store: "memory://".into(),
            seed: 0x9E37_79B9_7F4A_7C15 ^ (h as u64 + 1),
        }
    }

    fn clock(now: i64, offset_ms: i64) -> Now {
        Now { ns: now.unsigned_abs() * MS, ms: now + offset_ms }
    }

    pub(super) fn initial(&self) -> World {
        let mut store = State::default();
        // A namespace the store has known for long (its never-granted worker IDs start at once),
        // or one declared new.
        let marker = Marker {
            rev: 1,
            generation: 1,
            since_ms: START - 100,
            next: 0,
            declared: self.declared,
            incarnation: store.incarnation_text(),
        };
        store.write(NS, &[Cas::new(Slot::Marker, None, &marker.encode())]);
        // Holders' clocks within the tolerance of the store's (of each other's without one).
        let offsets: &[i64] = if self.store_clock { &[1, -1, 0] } else { &[1, 0, 1] };
        let nodes = (0..self.holders)
            .map(|h| {
                let offset_ms = offsets[h % offsets.len()];
                Node {
                    machine: Machine::new(self.settings(h), Self::clock(START, offset_ms)),
                    offset_ms,
                    in_flight: None,
                    generator: None,
                    crashed: false,
                    file: None,
                    moved: false,
                    issued_at: None,
                }
            })
            .collect();
        World {
            now: START,
            end: self.horizon,
            store,
            backup: None,
            nodes,
            faults_left: self.faults,
            issued: vec![0; self.holders * self.workers as usize],
            duplicate: None,
        }
    }

    /// The store's answer to `call` now.
    fn apply(&self, world: &mut World, call: &Call) -> Reply {
        match call {
            Call::Read(query) => {
                let now = self.store_clock.then_some(world.now);
                Reply::Read(world.store.read(NS, query, now))
            }
            Call::Write(ops) => {
                let cas: Vec<Cas<'_>> = ops.iter().map(|op| op.cas()).collect();
                Reply::Written(world.store.write(NS, &cas))
            }
        }
    }

    fn timeout() -> LeaseError {
        LeaseError::Timeout { store: "memory://".into(), what: "a call".into(), after: Duration::from_millis(1) }
    }

    /// The generator of node `h` issues one ID: the next millisecond its lease grants.
    fn issue(&self, world: &mut World, h: usize) {
        let now = world.now;
        let node = &mut world.nodes[h];
        let clock = Self::clock(now, node.offset_ms);
        let view = node.machine.view(clock);
        let (epoch, worker, last) = match node.generator {
            Some((epoch, worker, last)) if epoch == view.epoch => (epoch, worker, last),
            // A new grant: above its floor, and above its own last ID on the same worker ID.
            Some((_, worker, last)) if worker == view.worker => {
                (view.epoch, worker, last.max(view.floor_ms.unwrap_or(i64::MIN)))
            }
            _ => (view.epoch, view.worker, view.floor_ms.unwrap_or(i64::MIN)),
        };
        let from = clock.ms.max(last.saturating_add(1));
        match node.machine.grant_until(clock, from, 1, epoch) {
            Ok(until) if until >= from => {
                assert!((0..128).contains(&from), "model milliseconds out of range: {from}");
                let bit = 1u128 << from;
                for other in 0..self.holders {
                    if world.issued[other * self.workers as usize + worker as usize] & bit != 0
                        && world.duplicate.is_none()
                    {
                        world.duplicate = Some((h, other, worker, from));
                    }
                }
                world.issued[h * self.workers as usize + worker as usize] |= bit;
                let node = &mut world.nodes[h];
                node.generator = Some((epoch, worker, from));
                if self.liveness {
                    node.issued_at = Some(now);
                }
            }
            Ok(_) | Err(Refusal::Fenced(_)) => node.generator = Some((epoch, worker, last)),
            Err(Refusal::Switch(_)) => unreachable!("the generator took the grant it was told of"),
        }
    }

    fn fault(&self, world: &mut World, fault: Fault) {
        if fault != Fault::Backup {
            world.faults_left -= 1;
        }
        match fault {
            Fault::DeleteRecord(w) => world.store.delete(NS, Slot::Worker(w)),
            Fault::DeleteMarker => world.store.delete(NS, Slot::Marker),
            Fault::LoseAll => {
                world.store.spaces.clear();
                world.store.incarnation += 1;
            }
            Fault::Backup => world.backup = Some(world.store.clone()),
            Fault::RestoreTold => {
                let backup = world.backup.clone().expect("a restore follows a backup");
                world.store.spaces = backup.spaces;
                world.store.incarnation += 1;
            }
            Fault::RestoreFenced(mask) => {
                let backup = world.backup.clone().expect("a restore follows a backup");
                let slots = std::iter::once(Slot::Marker).chain((0..self.workers).map(Slot::Worker));
                for (i, slot) in slots.enumerate() {
                    if mask & (1 << i) == 0 {
                        continue;
                    }
                    let query = Query::workers(0..self.workers);
                    let old = backup.read(NS, &query, None);
                    let value = match slot {
                        Slot::Marker => old.marker.clone(),
                        Slot::Worker(w) => old.record(w).map(str::to_owned),
                    };
                    world.store.delete(NS, slot);
                    if let Some(value) = value {
                        world.store.write(NS, &[Cas::new(slot, None, &value)]);
                    }
                }
                // The operator's `snowflake leases fence`, before any holder reaches the store.
                let read = world.store.read(NS, &Query::workers(0..0).with_highest(), Some(world.now));
                let old = read.marker.as_deref().and_then(Marker::decode);
                let generation = 0xFE00 + u64::from(world.faults_left);
                let fenced = fresh_marker(old.as_ref(), read.highest, world.now, &read.incarnation, generation, false);
                let value = fenced.encode();
                world.store.write(NS, &[Cas::new(Slot::Marker, read.marker.as_deref(), &value)]);
            }
        }
    }

    pub(super) fn step(&self, world: &World, action: &Action) -> Option<World> {
        let mut next = world.clone();
        match *action {
            Action::Tick => {
                next.now += 1;
                for node in &mut next.nodes {
                    node.moved = false;
                }
            }
            Action::Send(h) => {
                let now = next.now;
                let node = &mut next.nodes[h];
                let clock = Self::clock(now, node.offset_ms);
                node.machine.handle_timeout(clock);
                let call = node.machine.poll_call(clock);
                node.in_flight = call.map(|call| (call, None));
                while node.machine.poll_note().is_some() {}
            }
            Action::Apply(h) => {
                let (call, _) = next.nodes[h].in_flight.clone()?;
                let reply = self.apply(&mut next, &call);
                next.nodes[h].in_flight = Some((call, Some(reply)));
            }
            Action::Deliver(h) | Action::Fail(h) => {
                let now = next.now;
                let node = &mut next.nodes[h];
                let (_, applied) = node.in_flight.take()?;
                let reply = match action {
                    Action::Deliver(_) => applied?,
                    _ => Reply::Failed(Self::timeout()),
                };
                node.machine.handle_reply(Self::clock(now, node.offset_ms), reply);
                while node.machine.poll_note().is_some() {}
            }
            Action::Issue(h) => self.issue(&mut next, h),
            Action::Save(h) => {
                let now = next.now;
                let node = &mut next.nodes[h];
                let saved = node.machine.save_due(Self::clock(now, node.offset_ms))?;
                node.machine.saved(&saved);
                node.file = Some(saved);
            }
            Action::Restart(h) => {
                next.faults_left -= 1;
                let now = next.now;
                let settings = self.settings(h);
                let node = &mut next.nodes[h];
                let clock = Self::clock(now, node.offset_ms);
                node.machine = node
                    .file
                    .as_ref()
                    .and_then(|saved| Machine::resume(settings.clone(), saved, clock))
                    .unwrap_or_else(|| Machine::new(settings, clock));
                node.in_flight = None;
                // A new process: its generator knows nothing of the last one's IDs.
                node.generator = None;
            }
            Action::Turn(h) => {
                if self.state_file
                    && let Some(saved) = self.step(&next, &Action::Save(h))
                {
                    next = saved;
                }
                if next.nodes[h].in_flight.is_none() {
                    next = self.step(&next, &Action::Send(h))?;
                }
                self.issue(&mut next, h);
            }
            Action::Roundtrip(h) => {
                next = self.step(&next, &Action::Apply(h))?;
                next = self.step(&next, &Action::Deliver(h))?;
            }
            Action::Lost(h) => {
                next = self.step(&next, &Action::Apply(h))?;
                next = self.step(&next, &Action::Fail(h))?;
            }
            Action::Release(h) => {
                let now = next.now;
                let node = &mut next.nodes[h];
                node.machine.release(Self::clock(now, node.offset_ms), 0);
            }
            Action::Crash(h) => {
                let node = &mut next.nodes[h];
                node.crashed = true;
                node.machine.abandon();
                node.in_flight = None;
            }
            Action::Fault(fault) => self.fault(&mut next, fault),
        }
        Some(next)
    }

    pub(super) fn enabled(&self, world: &World, actions: &mut Vec<Action>, exhaustive: bool) {
        if world.duplicate.is_some() {
            return;
        }
        if world.now < world.end {
            actions.push(Action::Tick);
        }
        for (h, node) in world.nodes.iter().enumerate() {
            if node.crashed {
                continue;
            }
            if exhaustive {
                if !node.moved {
                    actions.push(Action::Turn(h));
                }
                if node.in_flight.is_some() {
                    actions.extend([Action::Roundtrip(h), Action::Lost(h), Action::Fail(h)]);
                }
            } else {
                match &node.in_flight {
                    None if !node.machine.is_done() => actions.push(Action::Send(h)),
                    None => {}
                    Some((_, None)) => actions.extend([Action::Apply(h), Action::Fail(h)]),
                    Some((_, Some(_))) => actions.extend([Action::Deliver(h), Action::Fail(h)]),
                }
                actions.push(Action::Issue(h));
                if self.state_file {
                    actions.push(Action::Save(h));
                }
            }
            if self.state_file && world.faults_left > 0 {
                actions.push(Action::Restart(h));
            }
            if self.ends && !node.machine.is_done() {
                actions.extend([Action::Release(h), Action::Crash(h)]);
            }
        }
        if world.faults_left > 0 {
            let a = self.allowed;
            if a.delete {
                actions.extend((0..self.workers).map(|w| Action::Fault(Fault::DeleteRecord(w))));
                actions.push(Action::Fault(Fault::DeleteMarker));
            }
            if a.lose {
                actions.push(Action::Fault(Fault::LoseAll));
            }
            if a.restore {
                match world.backup {
                    None if !exhaustive => actions.push(Action::Fault(Fault::Backup)),
                    None => {}
                    Some(_) => {
                        actions.push(Action::Fault(Fault::RestoreTold));
                        let slots = 1 + self.workers as u8;
                        actions.extend((1..(1u8 << slots)).map(|mask| Action::Fault(Fault::RestoreFenced(mask))));
                    }
                }
            }
        }
    }
}

impl Model for LeaseModel {
    type State = World;
    type Action = Action;

    /// The world once every holder holds a worker ID and issues (fair turns, no fault): the
    /// horizon is left to the faults.
    fn init_states(&self) -> Vec<World> {
        let mut world = self.initial();
        let holding = self.holders.min(self.workers as usize);
        while fair_tick(self, &mut world, false).iter().filter(|&&issued| issued).count() < holding {
            assert!(world.now < START + 40, "the holders never issued: {world:?}");
        }
        world.end = world.now + (self.horizon - START);
        // The backup a restore rolls back to: the store as it was when every holder began to
        // issue (the simulation takes its backups at random steps instead).
        if self.allowed.restore {
            world.backup = Some(world.store.clone());
        }
        for node in &mut world.nodes {
            node.moved = false;
        }
        vec![world]
    }

    fn actions(&self, world: &World, actions: &mut Vec<Action>) {
        self.enabled(world, actions, true);
    }

    fn next_state(&self, world: &World, action: Action) -> Option<World> {
        let mut next = self.step(world, &action)?;
        if let Action::Turn(h) = action {
            next.nodes[h].moved = true;
        }
        Some(next)
    }

    fn properties(&self) -> Vec<Property<Self>> {
        vec![
            Property::always("no ID issued twice", |_, world: &World| world.duplicate.is_none()),
            Property::sometimes("IDs are issued", |_, world: &World| world.issued.iter().any(|&bits| bits != 0)),
        ]
    }
}

/// Checks `model` exhaustively: the counterexample to "no ID issued twice", if any, and how
/// many states were explored.
fn check(model: LeaseModel) -> (Option<String>, usize) {
    let checker = model.checker().threads(2).spawn_bfs().join();
    let states = checker.unique_state_count();
    assert!(checker.discovery("IDs are issued").is_some(), "no schedule issues an ID: the model is vacuous");
    let found = checker.discovery("no ID issued twice").map(|path| {
        let actions: Vec<String> = path.into_actions().iter().map(|a| format!("{a:?}")).collect();
        actions.join(", ")
    });
    (found, states)
}

fn horizon() -> i64 {
    std::env::var("MODEL_HORIZON").ok().and_then(|s| s.parse().ok()).unwrap_or(3)
}

/// The worlds of the exhaustive check: each family of faults alone, with and without a store
/// clock.
fn worlds() -> Vec<(&'static str, LeaseModel)> {
    let only = |allowed: Faults, store_clock: bool| {
        let mut model = LeaseModel::new(2, 1, horizon());
        model.allowed = allowed;
        model.store_clock = store_clock;
        model
    };
    let none = Faults { delete: false, lose: false, restore: false };
    vec![
        ("a slot deleted", only(Faults { delete: true, ..none }, true)),
        ("everything lost", only(Faults { lose: true, ..none }, true)),
        ("a restore", only(Faults { restore: true, ..none }, true)),
        ("a slot deleted, no store clock", only(Faults { delete: true, ..none }, false)),
        ("a restart with the state file", {
            let mut model = only(none, true);
            model.state_file = true;
            model
        }),
    ]
}

#[test]
#[ignore = "the model tier: cargo test --workspace --all-features --lib -- --ignored"]
fn the_model_check_finds_no_duplicate_under_any_fault() {
    for (name, model) in worlds() {
        let began = std::time::Instant::now();
        let (counterexample, states) = check(model);
        assert!(counterexample.is_none(), "{name}: {}", counterexample.unwrap_or_default());
        eprintln!("{name}: {states} states in {:?}, no duplicate", began.elapsed());
    }
}

/// Each planted bug, in the smallest world whose exhaustive check finds it (`None`: the
/// simulation finds it, [`the_simulation_finds_each_planted_bug`]).
#[test]
#[ignore = "the model tier: cargo test --workspace --all-features --lib -- --ignored"]
fn the_model_check_finds_each_planted_bug() {
    let with = |allowed: Faults, horizon: i64, plant: fn(&mut Rules)| {
        let mut model = LeaseModel::new(2, 1, horizon);
        model.allowed = allowed;
        plant(&mut model.rules);
        model
    };
    let delete = Faults { delete: true, lose: false, restore: false };
    let only: Option<String> = std::env::var("MODEL_PLANTED").ok();
    let cases: Vec<(&str, LeaseModel)> = vec![
        ("a gone record counts as never granted", with(delete, 4, |r| r.planted.gone_is_never_used = true)),
        ("the marker's next not raised", with(delete, 4, |r| r.planted.next_not_raised = true)),
    ];
    for (name, model) in cases {
        if only.as_deref().is_some_and(|o| !name.contains(o)) {
            continue;
        }
        let began = std::time::Instant::now();
        let (counterexample, states) = check(model);
        eprintln!("{name}: {states} states in {:?}: {}", began.elapsed(), counterexample.as_deref().unwrap_or("-"));
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

/// One fair millisecond, as the lease threads and the generators run when nothing fails:
/// each holder's machine takes its turn, its call answered at once (or failed while the store
/// is `down`), then its generator issues; then time passes. Whether each holder issued.
fn fair_tick(model: &LeaseModel, world: &mut World, down: bool) -> Vec<bool> {
    let mut issued = vec![false; model.holders];
    for (h, flag) in issued.iter_mut().enumerate() {
        if world.nodes[h].crashed {
            continue;
        }
        // A few turns: a call, its answer, the call it leads to.
        for _ in 0..6 {
            if world.nodes[h].in_flight.is_none() {
                *world = model.step(world, &Action::Send(h)).expect("a turn");
            }
            if world.nodes[h].in_flight.is_none() {
                break;
            }
            let answer = if down { Action::Fail(h) } else { Action::Apply(h) };
            *world = model.step(world, &answer).expect("an answer");
            if !down {
                *world = model.step(world, &Action::Deliver(h)).expect("a delivery");
            }
        }
        if model.state_file
            && let Some(saved) = model.step(world, &Action::Save(h))
        {
            *world = saved;
        }
        let before = world.issued.clone();
        *world = model.step(world, &Action::Issue(h)).expect("an issue");
        *flag = world.issued != before;
    }
    *world = model.step(world, &Action::Tick).expect("time passes");
    issued
}

/// One seeded schedule: random steps (faults, delays, crashes, releases) up to the middle of
/// the horizon, then fair turns (no more faults): every holder still running must issue again.
fn simulate(model: &LeaseModel, seed: u64, trace: bool) -> Result<(), Finding> {
    let mut rng = Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
    let mut world = model.initial();
    let fair_from = START + (model.horizon - START) / 2;
    let mut actions = Vec::new();
    while world.now < fair_from {
        actions.clear();
        model.enabled(&world, &mut actions, false);
        // Time passes one step in eight; a fault one in a hundred, a crash or a release one in
        // three hundred; the holders' and the store's own steps make up the rest.
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
        if world.duplicate.is_some() {
            return Err(Finding::Duplicate(Box::new(world)));
        }
    }
    world.faults_left = 0;
    // Calls left in flight by the random part are answered (or fail) first.
    for h in 0..model.holders {
        if world.nodes[h].in_flight.is_some() {
            world = model.step(&world, &Action::Fail(h)).expect("a failure");
        }
    }
    let healed = world.now;
    while world.now < world.end {
        fair_tick(model, &mut world, false);
        if world.duplicate.is_some() {
            return Err(Finding::Duplicate(Box::new(world)));
        }
    }
    // As many holders as there are worker IDs for (or all still running) issued lately.
    let running = world.nodes.iter().filter(|n| !n.crashed && !n.machine.is_done()).count();
    let recent = model.horizon - 4;
    let issuing = world
        .nodes
        .iter()
        .filter(|n| !n.crashed && !n.machine.is_done() && n.issued_at.is_some_and(|at| at >= recent))
        .count();
    if issuing < running.min(model.workers as usize) {
        return Err(Finding::Stalled(format!(
            "{issuing} of {running} holders issued since {recent} (faults over since {healed}): {:?}",
            world.nodes
        )));
    }
    Ok(())
}

/// The simulation's worlds: three holders over two worker IDs, three faults of any kind,
/// releases and crashes, with a store clock and without, with state files; and a world of
/// restores only (backups taken and put back at random steps).
fn sim_models() -> Vec<LeaseModel> {
    let restores = Faults { delete: false, lose: false, restore: true };
    [(true, false, Faults::ALL), (false, false, Faults::ALL), (true, true, Faults::ALL), (true, false, restores)]
        .into_iter()
        .map(|(store_clock, state_file, allowed)| {
            let mut model = LeaseModel::new(3, 2, 50);
            model.faults = 3;
            model.allowed = allowed;
            model.liveness = true;
            model.ends = true;
            model.store_clock = store_clock;
            model.state_file = state_file;
            model
        })
        .collect()
}

/// Runs `runs` seeds (or the one of `SIM_SEED`) over `models`; the first failure with a
/// one-line reproduction.
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
                "seed {seed}: {finding:?}; reproduce with SIM_SEED={seed} cargo test --workspace --all-features --lib protocol::model"
            ));
        }
    }
    Ok(())
}

/// Seeded schedules in the fast tier: 500, or `SIM_RUNS`.
fn runs() -> u64 {
    std::env::var("SIM_RUNS").ok().and_then(|s| s.parse().ok()).unwrap_or(500)
}

#[test]
fn the_simulation_finds_no_duplicate_and_every_holder_recovers() {
    let began = std::time::Instant::now();
    let runs = runs();
    simulate_all(&sim_models(), runs).unwrap_or_else(|failure| panic!("{failure}"));
    eprintln!("{runs} seeded schedules in {:?}", began.elapsed());
}

/// The model tier's simulation: 5 000 more seeds, after the fast tier's.
#[test]
#[ignore = "the model tier: cargo test --workspace --all-features --lib -- --ignored"]
fn the_long_simulation_finds_no_duplicate_and_every_holder_recovers() {
    let began = std::time::Instant::now();
    let only: Option<u64> = std::env::var("SIM_SEED").ok().and_then(|s| s.parse().ok());
    let models = sim_models();
    for seed in only.map_or(500..5_500, |seed| seed..seed + 1) {
        let model = &models[(seed % models.len() as u64) as usize];
        if let Err(finding) = simulate(model, seed, only.is_some()) {
            panic!(
                "seed {seed}: {finding:?}; reproduce with SIM_SEED={seed} cargo test --workspace --all-features --lib protocol::model -- --include-ignored"
            );
        }
    }
    eprintln!("5 000 seeded schedules in {:?}", began.elapsed());
}

#[test]
#[ignore = "the model tier: cargo test --workspace --all-features --lib -- --ignored"]
fn the_simulation_finds_each_planted_bug() {
    let planted = |plant: fn(&mut Rules)| {
        let mut models = sim_models();
        for model in &mut models {
            plant(&mut model.rules);
        }
        models
    };
    let cases: [(&str, Vec<LeaseModel>); 4] = [
        // With a reservation twice the model's, the TTL falls short of it by more than the
        // margin and the tolerance: a floor of the TTL shows.
        (
            "a floor below the reservation",
            planted(|r| {
                r.planted.floor_ignores_reservation = true;
                r.reservation = Duration::from_millis(8);
            }),
        ),
        ("a record of another generation trusted", planted(|r| r.planted.any_generation = true)),
        ("a reservation not recorded", planted(|r| r.planted.reservation_not_recorded = true)),
        ("a rollback unnoticed", planted(|r| r.planted.rollback_unnoticed = true)),
    ];
    let only: Option<String> = std::env::var("MODEL_PLANTED").ok();
    let runs: u64 = std::env::var("SIM_PLANTED_RUNS").ok().and_then(|s| s.parse().ok()).unwrap_or(3_000);
    let mut missed = Vec::new();
    for (name, models) in cases {
        if only.as_deref().is_some_and(|o| !name.contains(o)) {
            continue;
        }
        match simulate_all(&models, runs) {
            Ok(()) => missed.push(name),
            Err(found) => {
                eprintln!("{name}: {}", found.chars().take(200).collect::<String>());
                // The control: the same worlds without the bug find nothing on that many seeds.
                let healthy: Vec<LeaseModel> = models
                    .into_iter()
                    .map(|mut m| {
                        m.rules.planted = super::Planted::default();
                        m
                    })
                    .collect();
                if let Err(found) = simulate_all(&healthy, runs.min(1_000)) {
                    panic!("{name}: its worlds fail without the bug too: {found}");
                }
            }
        }
    }
    assert!(missed.is_empty(), "{runs} schedules found nothing of: {missed:?}");
}

/// Running holders ride through a store that does not answer for less than `W - margin`:
/// each issues in every millisecond of it, and after.
#[test]
fn running_holders_ride_through_an_outage_shorter_than_the_reservation() {
    let ms = Duration::from_millis;
    for store_clock in [true, false] {
        let mut model = LeaseModel::new(2, 2, 60);
        model.faults = 0;
        model.store_clock = store_clock;
        // TTL 4 ms, W 8 ms, margin 1 ms: 7 ms without the store.
        model.rules = Rules { step_ms: 1, ..Rules::new(ms(4), ms(1), ms(1)).with_reservation(ms(8)) };
        let mut world = model.initial();
        while !fair_tick(&model, &mut world, false).iter().all(|&i| i) {
            assert!(world.now < START + 30, "the holders never issued: {world:?}");
        }
        let outage = 6;
        for tick in 0..outage + 8 {
            let issued = fair_tick(&model, &mut world, tick < outage);
            assert!(issued.iter().all(|&i| i), "a holder stopped {tick} ms into an outage of {outage} ms: {world:?}");
        }
    }
}
