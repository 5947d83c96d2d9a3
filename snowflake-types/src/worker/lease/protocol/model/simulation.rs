//! The seeded simulation: random schedules of the model's world (three holders over two worker
//! IDs, faults, late replies, releases, crashes and new processes, clock steps, the
//! operator's commands), each from one seed, run for a time budget from a seed that changes
//! with every run, as TigerBeetle's VOPR does; a failure prints its seed and the one command
//! that replays it.
//!
//! - `SNOWFLAKE_SIM_SECONDS`: the budget (20 s in the fast tier, 30 s in the model tier's
//!   long run);
//! - `SNOWFLAKE_SIM_SEED`: the first seed (else one from the wall clock, printed);
//! - `SNOWFLAKE_SIM_RUNS`: run exactly this many seeds instead of a budget; `1` replays one
//!   seed and prints its schedule step by step.
//!
//! The planted bugs' test runs a fixed range of seeds, so that each finds its bug every time.

use std::time::{Duration, Instant};

use super::{Action, Faults, LeaseModel, Rules, START, World, fair_tick};

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
enum Finding {
    Duplicate(Box<World>),
    Stalled(String),
}

impl std::fmt::Display for Finding {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Finding::Duplicate(world) => match (world.duplicate, world.stopped_late) {
                (Some((h, other, worker, ms)), _) => {
                    write!(f, "holder {h} issued worker {worker} at {ms} ms, which holder {other} had issued")
                }
                (None, Some((h, worker, ms))) => {
                    write!(f, "holder {h} issued worker {worker} at {ms} ms after it noticed a rollback")
                }
                (None, None) => unreachable!("a finding breaks the invariant"),
            },
            Finding::Stalled(what) => f.write_str(what),
        }
    }
}

/// One seeded schedule: random steps (faults, delays, clock steps, the operator, crashes,
/// releases, new processes) up to the middle of the horizon, then fair turns (no more faults,
/// clocks corrected, every process up): every holder must issue again.
fn simulate(model: &LeaseModel, seed: u64, trace: bool) -> Result<(), Finding> {
    let mut rng = Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
    let mut world = model.initial();
    let fair_from = START + (model.horizon - START) / 2;
    let mut actions = Vec::new();
    while world.now < fair_from {
        actions.clear();
        model.enabled(&world, &mut actions, false);
        // Time passes one step in eight; a fault (or a clock step, or an operator's command)
        // one in a hundred; a crash, a release or a new process one in a hundred; the
        // holders' and the store's own steps make up the rest.
        let rare = |a: &Action| {
            matches!(
                a,
                Action::Fault(_)
                    | Action::Clock(..)
                    | Action::Operator(_)
                    | Action::Restart(_)
                    | Action::Crash(_)
                    | Action::Release(_)
                    | Action::Start(_)
            )
        };
        let pick = |rng: &mut Rng, of: &[&Action]| (!of.is_empty()).then(|| of[rng.below(of.len())].clone());
        let (ends, faults): (Vec<&Action>, Vec<&Action>) = actions
            .iter()
            .filter(|a| rare(a))
            .partition(|a| matches!(a, Action::Crash(_) | Action::Release(_) | Action::Start(_)));
        let ordinary: Vec<&Action> = actions.iter().filter(|a| !rare(a) && **a != Action::Tick).collect();
        let action = match rng.below(300) {
            0..=36 => Some(Action::Tick),
            37..=39 => pick(&mut rng, &faults),
            40..=42 => pick(&mut rng, &ends),
            _ => pick(&mut rng, &ordinary),
        };
        if let Some(next) = action.as_ref().and_then(|action| model.step(&world, action)) {
            if trace && next != world {
                eprintln!("{:>3} {action:?}", next.now);
            }
            world = next;
        }
        if world.broken() {
            return Err(Finding::Duplicate(Box::new(world)));
        }
    }
    world.faults_left = 0;
    // Calls left in flight by the random part fail; clocks are corrected; processes that are
    // down start again.
    for h in 0..model.holders {
        if world.nodes[h].in_flight.is_some() {
            world = model.step(&world, &Action::Fail(h)).expect("a failure");
        }
        world.nodes[h].offset_ms = model.offset(h);
        let node = &world.nodes[h];
        if model.restarts && (node.crashed || node.machine.is_done()) {
            world = model.step(&world, &Action::Start(h)).expect("a start");
            if trace {
                eprintln!("{:>3} {:?}", world.now, Action::Start(h));
            }
        }
    }
    let healed = world.now;
    while world.now < world.end {
        fair_tick(model, &mut world, false);
        if world.broken() {
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

/// The simulation's worlds: three holders over two worker IDs, releases, crashes and new
/// processes, with three faults of any kind (deletes, everything lost, restores told or fenced
/// at once), clock steps within the tolerance, or the operator's commands: with a store clock
/// and without, with state files; a world of restores (told, fenced at once, or untold and
/// fenced later or never).
pub(super) fn sim_models() -> Vec<(&'static str, LeaseModel)> {
    let restores = Faults { restore: true, untold: true, ..Faults::NONE };
    [
        ("faults, the operator", true, false, Faults::ALL, 0, true),
        ("faults, the operator, no store clock", false, false, Faults::ALL, 0, true),
        ("faults, state files, clock steps", true, true, Faults::ALL, 1, false),
        ("state files, clock steps, no store clock", false, true, Faults::ALL, 1, false),
        ("restores, the operator", true, false, restores, 0, true),
        ("faults, renewals further apart than the margin", true, false, Faults::ALL, 0, false),
    ]
    .into_iter()
    .map(|(name, store_clock, state_file, allowed, clock_steps, operator)| {
        let apart = name.contains("apart");
        // The fair half of the horizon bounds recovery: a loss noticed a renewal late, a new
        // grant, its floor waited out; the longer reservation of renewals further apart needs
        // a longer one.
        let mut model = LeaseModel::new(3, 2, if apart { 70 } else { 50 });
        if apart {
            // The defaults' order (renewals every TTL/3, a margin of TTL/5): a renewal's
            // validity reaches past the reservation of the write before it, which the
            // millisecond renewals of the other worlds never show. Generators cache their
            // limits 3 ms ahead (production's step is 100 ms).
            let ms = Duration::from_millis;
            model.rules = Rules { renew_every: ms(3), step_ms: 3, ..Rules::of(ms(6), ms(8), ms(1), ms(1)) };
        }
        model.faults = 3;
        model.allowed = allowed;
        model.liveness = true;
        model.ends = true;
        model.restarts = true;
        model.counted_ends = false;
        model.store_clock = store_clock;
        model.state_file = state_file;
        model.clock_steps = clock_steps;
        model.operator = operator;
        (name, model)
    })
    .collect()
}

/// How long to simulate, from which seed.
struct Budget {
    first: u64,
    seconds: f64,
    /// Exactly this many seeds instead of a time budget.
    runs: Option<u64>,
}

impl Budget {
    /// From the environment, with `seconds` by default.
    fn from_env(seconds: f64) -> Budget {
        let var = |name: &str| std::env::var(name).ok();
        let first = var("SNOWFLAKE_SIM_SEED").and_then(|s| s.trim().parse().ok()).unwrap_or_else(|| {
            // A new seed every run: the wall clock in ms, times a thousand.
            let ms = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_millis());
            u64::try_from(ms).unwrap_or(0).wrapping_mul(1_000)
        });
        Budget {
            first,
            seconds: var("SNOWFLAKE_SIM_SECONDS").and_then(|s| s.trim().parse().ok()).unwrap_or(seconds),
            runs: var("SNOWFLAKE_SIM_RUNS").and_then(|s| s.trim().parse().ok()),
        }
    }
}

/// Runs `models` over the seeds of `budget` (the model of seed `s` is `s % models.len()`):
/// how many ran, or the first failure with the command that replays it (`test`: the test's
/// path; `ignored`: whether it is in the model tier).
fn simulate_for(models: &[(&str, LeaseModel)], budget: &Budget, test: &str) -> Result<u64, String> {
    let began = Instant::now();
    let trace = budget.runs == Some(1);
    let mut count = 0;
    loop {
        let done = match budget.runs {
            Some(runs) => count >= runs,
            None => count > 0 && began.elapsed().as_secs_f64() >= budget.seconds,
        };
        if done {
            return Ok(count);
        }
        let seed = budget.first.wrapping_add(count);
        let (name, model) = &models[(seed % models.len() as u64) as usize];
        if let Err(finding) = simulate(model, seed, trace) {
            return Err(format!(
                "seed {seed} ({name}): {finding}\nreplay it: SNOWFLAKE_SIM_SEED={seed} SNOWFLAKE_SIM_RUNS=1 cargo test -p snowflake-types --all-features --lib {test} -- --exact --include-ignored --nocapture"
            ));
        }
        count += 1;
    }
}

/// Runs `models` for a time budget (`seconds` unless `SNOWFLAKE_SIM_SECONDS` says), from a
/// new seed (unless `SNOWFLAKE_SIM_SEED` says); panics with the replay command on a failure.
fn simulate_budget(models: &[(&str, LeaseModel)], seconds: f64, test: &str) {
    let budget = Budget::from_env(seconds);
    eprintln!(
        "{test}: seeds from {} for {} s (SNOWFLAKE_SIM_SEED, SNOWFLAKE_SIM_SECONDS)",
        budget.first, budget.seconds
    );
    let began = Instant::now();
    match simulate_for(models, &budget, test) {
        Ok(count) => eprintln!(
            "{test}: {count} seeded schedules, seeds {} to {}, in {:?}: no duplicate, every holder recovered",
            budget.first,
            budget.first.wrapping_add(count.saturating_sub(1)),
            began.elapsed()
        ),
        Err(failure) => panic!("{failure}"),
    }
}

const FAST: &str =
    "worker::lease::protocol::model::simulation::the_simulation_finds_no_duplicate_and_every_holder_recovers";
const LONG: &str =
    "worker::lease::protocol::model::simulation::the_long_simulation_finds_no_duplicate_and_every_holder_recovers";

/// The fast tier's simulation: 20 s of seeded schedules from a new seed.
#[test]
fn the_simulation_finds_no_duplicate_and_every_holder_recovers() {
    simulate_budget(&sim_models(), 20.0, FAST);
}

/// The model tier's simulation: 30 s of seeded schedules from a new seed.
#[test]
#[ignore = "the model tier: cargo test --workspace --all-features --lib -- --ignored"]
fn the_long_simulation_finds_no_duplicate_and_every_holder_recovers() {
    simulate_budget(&sim_models(), 30.0, LONG);
}

/// The worlds where a holder's clock may step beyond the tolerance: those with a store clock,
/// one holder's clock stepping up to twice the reservation from the store's.
fn beyond_models() -> Vec<(&'static str, LeaseModel)> {
    // Not the world of renewals further apart: its longer reservation, doubled by the steps,
    // leaves the model's 128 milliseconds.
    let mut models: Vec<(&str, LeaseModel)> =
        sim_models().into_iter().filter(|(n, m)| m.store_clock && !n.contains("apart")).collect();
    for (_, model) in &mut models {
        model.clock_steps = 2 * model.rules.reservation_ms();
        model.faults = 5;
    }
    models
}

const BEYOND: &str =
    "worker::lease::protocol::model::simulation::a_clock_stepping_beyond_the_tolerance_costs_no_duplicate";

/// A holder whose clock steps beyond the tolerance from the store's: it must not issue what
/// another holder issues (the store's clock tells it is off).
#[test]
#[ignore = "the model tier: cargo test --workspace --all-features --lib -- --ignored"]
fn a_clock_stepping_beyond_the_tolerance_costs_no_duplicate() {
    simulate_budget(&beyond_models(), 15.0, BEYOND);
}

#[test]
#[ignore = "the model tier: cargo test --workspace --all-features --lib -- --ignored"]
fn the_simulation_finds_each_planted_bug() {
    // The worlds whose seeds were tuned to find each bug (the renewals further apart than the
    // margin would change which seed runs in which world).
    let planted = |plant: fn(&mut Rules)| {
        let mut models: Vec<_> = sim_models().into_iter().filter(|(n, _)| !n.contains("apart")).collect();
        for (_, model) in &mut models {
            plant(&mut model.rules);
        }
        models
    };
    // A record of another generation trusted, a floor below the reservation and the
    // marker's next not raised: the written-out schedules find them
    // (`scenarios::the_written_out_schedules_find_the_planted_bugs`); a renewal in place on
    // another incarnation and a marker of another incarnation kept too
    // (`scenarios::the_failover_schedule_finds_its_planted_bugs`), which 30 000 random
    // schedules did not reach (a takeover lost with the old store while its writer is cut off).
    let cases: [(&str, Vec<(&str, LeaseModel)>); 3] = [
        // With a reservation twice the model's, a record of the TTL falls short of what a
        // holder issues within its validity by more than the tick the validity's end takes.
        (
            "a reservation not recorded",
            planted(|r| {
                r.planted.reservation_not_recorded = true;
                r.reservation = Duration::from_millis(8);
            }),
        ),
        ("a rollback unnoticed", planted(|r| r.planted.rollback_unnoticed = true)),
        ("a rollback that keeps the generators' limits", planted(|r| r.planted.rollback_keeps_limits = true)),
    ];
    let only: Option<String> = std::env::var("MODEL_PLANTED").ok();
    let runs: u64 = std::env::var("SIM_PLANTED_RUNS").ok().and_then(|s| s.parse().ok()).unwrap_or(3_000);
    let fixed = Budget { first: 0, seconds: 0.0, runs: Some(runs) };
    let test = "worker::lease::protocol::model::simulation::the_simulation_finds_each_planted_bug";
    let mut missed = Vec::new();
    for (name, models) in cases {
        if only.as_deref().is_some_and(|o| !name.contains(o)) {
            continue;
        }
        let began = Instant::now();
        match simulate_for(&models, &fixed, test) {
            Ok(_) => missed.push(name),
            Err(found) => {
                let first = found.lines().next().unwrap_or_default();
                eprintln!("{name}: found in {:?}: {first}", began.elapsed());
                // The control: the same worlds without the bug find nothing on that many seeds.
                let healthy: Vec<(&str, LeaseModel)> = models
                    .into_iter()
                    .map(|(n, mut m)| {
                        m.rules.planted = super::Planted::default();
                        (n, m)
                    })
                    .collect();
                let control = Budget { first: 0, seconds: 0.0, runs: Some(runs.min(1_000)) };
                if let Err(found) = simulate_for(&healthy, &control, test) {
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
        model.rules = Rules { step_ms: 1, renew_every: ms(1), ..Rules::of(ms(4), ms(8), ms(1), ms(1)) };
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
