//! The holder of a worker ID as one state machine without I/O, in the manner of quinn-proto:
//! its driver makes the calls it asks for ([`Machine::poll_call`], [`Machine::handle_reply`])
//! and wakes it when it asks ([`Machine::poll_timeout`]). Every policy of a lease lives here;
//! the lease thread, the model check and the simulation only drive it. Its modules extend it;
//! their state's types are defined here, so that they name the machine and not the reverse.

use std::collections::VecDeque;
use std::ops::Range;

use super::record::{Marker, Record};
use super::{Basis, Rules, check_skew};
use crate::fence::FenceReason;
use crate::worker::lease::store::{Cas, LeaseError, Query, Slot, Snapshot, Written};

mod acquire;
mod grant;
mod renew;
mod state_file;

/// How a lease is set up: what the builder checked.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) struct Settings {
    pub(crate) namespace: String,
    /// Worker IDs `0..space`.
    pub(crate) space: u64,
    pub(crate) rules: Rules,
    /// How long the first acquisition keeps trying a store that does not answer.
    pub(crate) first_wait_ns: u64,
    /// The shortest and longest delay between attempts to acquire (doubling, with jitter).
    pub(crate) acquire_backoff_ns: (u64, u64),
    /// Declare the namespace new where the store holds nothing of it.
    pub(crate) create_namespace: bool,
    /// Whether the first acquisition keeps trying while every worker ID is held.
    pub(crate) wait_for_free: bool,
    /// Whether a state file keeps the grant across a restart ([`Machine::save_due`]).
    pub(crate) state_file: bool,
    /// `host:pid`, recorded with every grant.
    pub(crate) name: String,
    /// The store, as it describes itself (for errors).
    pub(crate) store: String,
    /// Seeds the tokens, the marker generations and the choices among equals.
    pub(crate) seed: u64,
}

/// The two clocks, read together.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) struct Now {
    /// Monotonic nanoseconds from the driver's anchor.
    pub(crate) ns: u64,
    /// The lease's clock, Unix ms.
    pub(crate) ms: i64,
}

/// A store call the machine asks for.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Call {
    Read(Query),
    Write(Vec<Op>),
}

/// One compare-and-set of a write, owned.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) struct Op {
    pub(crate) slot: Slot,
    pub(crate) expect: Option<String>,
    pub(crate) value: String,
}

impl Op {
    /// As the store contract takes it.
    pub(crate) fn cas(&self) -> Cas<'_> {
        Cas::new(self.slot, self.expect.as_deref(), &self.value)
    }
}

/// The answer to a call.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Reply {
    Read(Snapshot),
    Written(Written),
    /// The call failed: a write may or may not have been applied.
    Failed(LeaseError),
}

/// Why a lease was lost.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum LostWhy {
    /// The record is gone: deleted, evicted, or lost with the store's data.
    Gone,
    /// Another holder took the worker ID (the lease expired during an outage).
    TakenOver,
    /// A first record took the grant's place before it expired (docs/lease-rules.md rule 6).
    TakenEarly,
    /// The store holds a later write of this grant than the state file it was resumed from.
    FileOlder,
    /// The store is another incarnation than the one that granted it (rule 6).
    Incarnation,
}

impl LostWhy {
    /// Whether the generators issue on what the lease reserved while it acquires again.
    pub(crate) fn rides(self) -> bool {
        matches!(self, LostWhy::Gone | LostWhy::TakenOver | LostWhy::Incarnation)
    }

    /// Why, as the logs say it.
    pub(crate) fn cause(self) -> &'static str {
        match self {
            LostWhy::Gone => "its record is gone",
            LostWhy::TakenOver => "another holder took it after it expired",
            LostWhy::TakenEarly => {
                "a first record took the place of its own before it expired: deleted alone, or forgotten by a restore"
            }
            LostWhy::FileOlder => "the state file it was resumed from is older than the store's record",
            LostWhy::Incarnation => {
                "the store is another incarnation (a failover, a restart, a restore it tells), whose lost writes may have granted the worker ID to another holder"
            }
        }
    }
}

/// What happened, for the driver's logs and answers.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Note {
    /// A worker ID was granted; it issues once the lease's clock reaches `ready_ms`.
    Acquired { worker: u64, fence: u64, basis: Basis, floor_ms: i64, ready_ms: i64 },
    /// The first acquisition may issue: answer the caller.
    Ready,
    /// The first acquisition failed for good.
    GaveUp(LeaseError),
    /// A marker was written afresh (a new namespace, another incarnation, a rollback).
    Marked { declared: bool, fenced: bool },
    /// A renewal failed; the lease issues on while its reservation lasts.
    RenewalFailed { worker: u64, error: LeaseError },
    /// A renewal succeeded after the reservation had run out.
    RenewedLate { worker: u64 },
    /// The lease is lost; the generators issue on what it reserved while a new one is sought.
    Lost { worker: u64, why: LostWhy },
    /// The store was rolled back under the record: nothing is issued on it any more.
    RolledBack { worker: u64 },
    /// A store call failed while acquiring (at most one in five seconds is noted).
    Trouble { error: LeaseError, waited_ns: u64 },
    /// The store answers again after trouble.
    Back { waited_ns: u64 },
    /// The release ended.
    Released { worker: Option<u64>, result: Result<(), LeaseError> },
    /// Whether the generators issue (`None`) or why not changed, in kind ([`Machine::refusal`]).
    Changed { worker: u64, refusal: Option<FenceReason> },
}

/// A grant held (its methods are `holder/grant.rs`'s).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct Grant {
    epoch: u64,
    worker: u64,
    token: String,
    /// The record as last acknowledged: what the next write expects.
    value: String,
    record: Record,
    /// Everything earlier holders may have issued lies at or below it (`None`: nothing).
    floor_ms: Option<i64>,
    basis: Basis,
    /// Generators issue once the lease's clock reaches this.
    ready_ms: i64,
    /// Until when (monotonic) it may issue: `W - margin` after its last acknowledged write began.
    valid_until_ns: u64,
    /// The highest reservation acknowledged: no timestamp above it is issued.
    bound_ms: i64,
    /// The highest timestamp any generator may have issued under the grant.
    issued_ms: i64,
    /// The store's incarnation that granted it (`None`: resumed, not known yet).
    incarnation: Option<String>,
}

/// A write whose answer was lost: it may have been applied.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct Attempt {
    value: String,
    sent: Now,
}

/// A worker ID an acquisition may take, and what it would start above.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct Candidate {
    worker: u64,
    expect: Option<String>,
    record: Option<Record>,
    floor_ms: i64,
    basis: Basis,
}

/// An acquisition under way (its steps are `holder/acquire.rs`'s).
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
struct Acquire {
    prefer: Option<u64>,
    fence_above: u64,
    /// A fresh marker is owed whatever the store holds (a rollback was noticed).
    refresh: bool,
    /// What this attempt read: the marker (as text and decoded), the incarnation, the clock.
    marker: Option<(Option<String>, Option<Marker>)>,
    incarnation: String,
    now_ms: i64,
    /// Whether the last read said which worker ID is the highest with a record, and which.
    highest: Option<Option<u64>>,
    /// Chunks of worker IDs still to read in this attempt, once planned after the first.
    plan: Vec<Range<u64>>,
    planned: bool,
    ready: Vec<Candidate>,
    best: Option<Candidate>,
    /// A grant written whose answer was lost: checked before anything else.
    pending: Option<(Candidate, Grant, Now)>,
    /// Conflicts in a row: a little jitter after a few.
    conflicts: u32,
}

/// What the machine does with the store.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
enum Task {
    Acquire(Box<Acquire>),
    /// Renews on schedule.
    Hold,
    /// Reads its own record back after a write that conflicted.
    Check,
    /// Writes the release, then reads back after a conflict.
    Release {
        checking: bool,
    },
    Done,
}

/// What the call in flight was.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct Sent {
    call: Call,
    at: Now,
    /// Made for the release (else for the renewal, in flight when the release was asked).
    release: bool,
}

/// Store trouble in progress.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct Trouble {
    since_ns: u64,
    error: LeaseError,
    noted_ns: Option<u64>,
}

/// Where a lease stands, for its status.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Standing {
    /// The first acquisition is under way.
    Acquiring,
    /// The first acquisition failed for good.
    Failed(LeaseError),
    Issuing {
        worker: u64,
        fence: u64,
        issuing_for_ns: u64,
        store_answering: bool,
    },
    Fenced {
        worker: u64,
        reason: FenceReason,
    },
    Recovering {
        previous_worker: u64,
    },
    Released,
}

/// The state file as written: its grant's epoch and limit (`holder/state_file.rs`).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct Filed {
    epoch: u64,
    value: String,
    limit_ms: i64,
    /// It says a release may have been written.
    releasing: bool,
}

/// The marker the next renewal of `value` writes beside it, unchanged or afresh (rule 4).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct Confirm {
    value: String,
    expect: Option<String>,
    marker: String,
}

/// A seeded xorshift: the machine's only source of choices.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct Rng(u64);

impl Rng {
    fn random(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    /// A grant's token: 32 hexadecimal digits.
    fn token(&mut self) -> String {
        let (a, b) = (self.random(), self.random());
        format!("{a:016x}{b:016x}")
    }
}

/// The holder of a worker ID. See the module's docs.
#[derive(Clone, Debug)]
pub(crate) struct Machine {
    s: Settings,
    rng: Rng,
    current: Option<Grant>,
    /// A grant lost whose reservation still lets it issue, until the next grant issues.
    retiring: Option<Grant>,
    epochs: u64,
    task: Task,
    sent: Option<Sent>,
    due_ns: u64,
    backoff_ns: u64,
    /// The caller still waits for the first acquisition's answer.
    waiting_first: bool,
    trouble: Option<Trouble>,
    released: bool,
    /// A rollback was noticed: nothing issues until a new grant.
    rolled_back: bool,
    /// How many times the generators were stopped at once ([`Machine::stops`]).
    stops: u64,
    resumed: bool,
    /// Why the first acquisition failed for good.
    failed: Option<LeaseError>,
    /// The last grant's worker ID and fence: tried first, and exceeded, after a loss.
    last: Option<(u64, u64)>,
    /// Renewals whose answers were lost since the last acknowledged one.
    ambiguous: Vec<Attempt>,
    /// The lease's clock at the last change of standing.
    since_ms: i64,
    renewals: u64,
    /// With a state file: what it says (`None` before the first is written).
    filed: Option<Filed>,
    /// What [`Note::Changed`] last told: whether the generators issue, or the kind of refusal.
    told: Option<Option<std::mem::Discriminant<FenceReason>>>,
    /// The marker a read found vouching for the current grant, for its renewal to write.
    vouched: Option<Confirm>,
    notes: VecDeque<Note>,
}

impl Settings {
    /// The error a clock more than `ε` off the store's makes, for a read sent at `sent` (rule 9).
    fn skew(&self, sent: &Sent, now: Now, snapshot: &Snapshot) -> Option<LeaseError> {
        let (store_ms, tolerance) = (snapshot.now_ms?, self.rules.tolerance);
        let local_ms = check_skew(sent.at.ms, store_ms, now.ms, tolerance).err()?;
        Some(LeaseError::ClockSkew { store: self.store.clone(), local_ms, store_ms, tolerance })
    }
}

impl Machine {
    /// A holder about to acquire its first worker ID, at `now`.
    pub(crate) fn new(settings: Settings, now: Now) -> Machine {
        let rng = Rng(settings.seed | 1);
        Machine {
            s: settings,
            rng,
            current: None,
            retiring: None,
            epochs: 0,
            task: Task::Acquire(Box::new(Acquire::new(None, 0, false))),
            sent: None,
            due_ns: now.ns,
            backoff_ns: 0,
            waiting_first: true,
            trouble: None,
            released: false,
            rolled_back: false,
            stops: 0,
            resumed: false,
            failed: None,
            last: None,
            ambiguous: Vec::new(),
            since_ms: now.ms,
            renewals: 0,
            filed: None,
            told: None,
            vouched: None,
            notes: VecDeque::new(),
        }
    }

    /// Whether the machine has ended: released, abandoned, or the first acquisition failed.
    pub(crate) fn is_done(&self) -> bool {
        self.task == Task::Done
    }

    /// The next note ([`Note`]), if any.
    pub(crate) fn poll_note(&mut self) -> Option<Note> {
        self.notes.pop_front()
    }

    fn note(&mut self, note: Note) {
        self.notes.push_back(note);
    }

    /// Tells [`Note::Changed`] if what the generators may do changed since it last told.
    fn tell(&mut self, now: Now) {
        if self.waiting_first && self.current.is_none() {
            // Acquiring its first grant: nothing changed for the generators yet.
            return;
        }
        let refusal = self.refusal(now);
        let kind = refusal.as_ref().map(std::mem::discriminant);
        if self.told != Some(kind) {
            self.told = Some(kind);
            let worker = self.active(now).map_or_else(|| self.last.map_or(0, |(w, _)| w), |g| g.worker);
            self.note(Note::Changed { worker, refusal });
        }
    }

    // ---- the store side ----

    /// The store call to make now, if one is due (one at a time).
    pub(crate) fn poll_call(&mut self, now: Now) -> Option<Call> {
        if self.sent.is_some() || now.ns < self.due_ns || self.answers_first(now) {
            return None;
        }
        let call = match &mut self.task {
            Task::Done => return None,
            Task::Hold => self.renewal_call(now)?,
            Task::Check | Task::Release { checking: true } => {
                let worker = self.current.as_ref()?.worker;
                Call::Read(Query::workers(worker..worker + 1))
            }
            Task::Release { checking: false } => {
                let grant = self.current.as_ref()?;
                if self.s.state_file && !self.filed.as_ref().is_some_and(|f| f.releasing) {
                    // The state file first says that a release may follow ([`Machine::save_due`]).
                    return None;
                }
                let record = Record {
                    rev: grant.record.rev + 1,
                    expires_ms: now.ms,
                    high_water_ms: grant.high_water(),
                    holder: None,
                    ..grant.record.clone()
                };
                Call::Write(vec![Op {
                    slot: Slot::Worker(grant.worker),
                    expect: Some(grant.value.clone()),
                    value: record.encode(),
                }])
            }
            Task::Acquire(a) => match a.call(now, &self.s, &mut self.rng, self.epochs) {
                Ok(call) => call,
                Err(error) => {
                    self.failed(now, error);
                    return None;
                }
            },
        };
        let release = matches!(self.task, Task::Release { .. });
        self.sent = Some(Sent { call: call.clone(), at: now, release });
        Some(call)
    }

    /// Hands back the answer to the call in flight, at `now`.
    pub(crate) fn handle_reply(&mut self, now: Now, reply: Reply) {
        self.answer(now, reply);
        self.tell(now);
    }

    fn answer(&mut self, now: Now, reply: Reply) {
        let Some(sent) = self.sent.take() else { return };
        if matches!(self.task, Task::Release { .. }) && !sent.release {
            // A renewal's call, in flight when the release was asked: the release follows,
            // from its write if acknowledged (a lost answer is found on a conflict).
            if let Call::Write(ops) = &sent.call {
                match reply {
                    Reply::Written(Written::Done) => self.renewed(&ops[0].value.clone(), sent.at, now),
                    Reply::Failed(_) => self.ambiguous.push(Attempt { value: ops[0].value.clone(), sent: sent.at }),
                    _ => {}
                }
            }
            return;
        }
        if let Reply::Failed(error) = reply {
            return self.call_failed(now, &sent, error);
        }
        if let Some(trouble) = self.trouble.take()
            && matches!(self.task, Task::Acquire(_))
        {
            self.note(Note::Back { waited_ns: now.ns.saturating_sub(trouble.since_ns) });
        }
        match (&mut self.task, reply) {
            (Task::Done, _) => {}
            (Task::Hold, Reply::Written(Written::Done)) => {
                let Call::Write(ops) = &sent.call else { return };
                let value = ops[0].value.clone();
                if ops.get(1).is_some_and(|m| m.expect.as_deref() != Some(m.value.as_str())) {
                    self.note(Note::Marked { declared: false, fenced: false });
                }
                self.renewed(&value, sent.at, now);
                self.ambiguous.clear();
                self.backoff_ns = 0;
                self.due_ns = now.ns.saturating_add(self.s.rules.renew_every_ns());
            }
            (Task::Hold, Reply::Written(Written::Conflict)) => {
                self.task = Task::Check;
                self.due_ns = now.ns;
            }
            (Task::Check, Reply::Read(snapshot)) => self.checked(now, &sent, &snapshot),
            (Task::Release { checking: false }, Reply::Written(Written::Done)) => self.end_release(Ok(())),
            (Task::Release { checking: false }, Reply::Written(Written::Conflict)) => {
                if let Call::Write(ops) = &sent.call {
                    self.ambiguous.push(Attempt { value: ops[0].value.clone(), sent: sent.at });
                }
                self.task = Task::Release { checking: true };
                self.due_ns = now.ns;
            }
            (Task::Release { checking: true }, Reply::Read(snapshot)) => self.release_checked(now, &snapshot),
            (Task::Acquire(a), Reply::Read(snapshot)) => {
                let step = a.read(now, &self.s, &sent, snapshot);
                self.acquired(now, step);
            }
            (Task::Acquire(a), Reply::Written(written)) => {
                let step = a.written(now, &sent, written, &mut self.rng);
                self.acquired(now, step);
            }
            // An answer that does not fit the call: ignored, the call is made again.
            _ => {}
        }
    }

    fn release_checked(&mut self, now: Now, snapshot: &Snapshot) {
        let Some(grant) = self.current.as_mut() else { return self.end_release(Ok(())) };
        let worker = grant.worker;
        match snapshot.record(worker) {
            Some(text) if self.ambiguous.iter().any(|a| a.value == text) => {
                let released = Record::decode(text).is_some_and(|r| r.holder.is_none());
                if released {
                    return self.end_release(Ok(()));
                }
                // A renewal whose answer was lost was applied: release from there.
                grant.value = text.to_owned();
                if let Some(record) = Record::decode(text) {
                    grant.record = record;
                }
                self.ambiguous.clear();
                self.task = Task::Release { checking: false };
                self.due_ns = now.ns;
            }
            _ => self.end_release(Err(LeaseError::Lost { namespace: self.s.namespace.clone(), worker })),
        }
    }

    fn end_release(&mut self, result: Result<(), LeaseError>) {
        let worker = self.current.as_ref().map(|g| g.worker);
        self.current = None;
        self.retiring = None;
        self.task = Task::Done;
        self.note(Note::Released { worker, result });
    }

    /// A call failed.
    fn call_failed(&mut self, now: Now, sent: &Sent, error: LeaseError) {
        match &mut self.task {
            Task::Done => {}
            // A renewal's write or read (before it, or after a conflict) failed.
            Task::Hold | Task::Check => {
                if let Call::Write(ops) = &sent.call {
                    self.ambiguous.push(Attempt { value: ops[0].value.clone(), sent: sent.at });
                }
                let worker = self.current.as_ref().map_or(0, |g| g.worker);
                self.note(Note::RenewalFailed { worker, error: error.clone() });
                self.trouble_with(now, error);
                self.retry_later(now);
            }
            // The worker ID frees when its lease expires; nothing is retried.
            Task::Release { .. } => self.end_release(Err(error)),
            Task::Acquire(a) => {
                a.call_failed(&sent.call);
                self.failed(now, error);
            }
        }
    }

    fn trouble_with(&mut self, now: Now, error: LeaseError) {
        match &mut self.trouble {
            Some(trouble) => trouble.error = error,
            None => self.trouble = Some(Trouble { since_ns: now.ns, error, noted_ns: None }),
        }
    }

    /// The next call after doubling delays with ±20 % jitter, so that a fleet that lost its
    /// store does not return to it in step.
    fn retry_later(&mut self, now: Now) {
        let (min, max) = match self.task {
            Task::Acquire(_) => self.s.acquire_backoff_ns,
            _ => {
                let every = self.s.rules.renew_every_ns();
                ((every / 4).max(1_000_000), every.max(1_000_000))
            }
        };
        self.backoff_ns = if self.backoff_ns == 0 { min } else { (self.backoff_ns * 2).min(max) };
        let jitter = 800 + self.rng.random() % 400;
        self.due_ns = now.ns.saturating_add(self.backoff_ns / 1_000 * jitter);
    }

    fn give_up(&mut self, error: LeaseError) {
        self.waiting_first = false;
        self.failed = Some(error.clone());
        self.note(Note::GaveUp(error));
        if self.current.is_some() {
            self.released = true;
            self.task = Task::Release { checking: false };
        } else {
            self.task = Task::Done;
        }
    }

    // ---- time ----

    /// When the machine next wants to be woken (monotonic ns).
    pub(crate) fn poll_timeout(&self, now: Now) -> Option<u64> {
        let mut wake: Option<u64> = None;
        let mut at = |ns: u64| wake = Some(wake.map_or(ns, |w| w.min(ns)));
        if self.sent.is_none() && self.task != Task::Done && !self.answers_first(now) {
            at(self.due_ns);
        }
        for grant in self.current.iter().chain(&self.retiring) {
            // When it stops being valid.
            if grant.valid(now) {
                at(grant.valid_end_ns().saturating_add(1));
            }
            // The instants at which what the generators may do changes, to be told.
            let file_limit =
                self.filed.as_ref().filter(|f| f.epoch == grant.epoch).map(|f| f.limit_ms.saturating_add(1));
            for ms in [Some(grant.ready_ms), Some(grant.bound_ms.saturating_add(1)), file_limit] {
                if let Some(ms) = ms.filter(|&ms| ms > now.ms) {
                    let wait_ms = u64::try_from(ms.saturating_sub(now.ms)).unwrap_or(u64::MAX);
                    at(now.ns.saturating_add(wait_ms.saturating_mul(1_000_000)));
                }
            }
        }
        if self.waiting_first
            && let Some(trouble) = &self.trouble
        {
            at(trouble.since_ns.saturating_add(self.s.first_wait_ns));
        }
        if let Some(ns) = self.save_wake(now) {
            at(ns);
        }
        wake
    }

    /// Time passed: the first acquisition may be answered, or given up.
    pub(crate) fn handle_timeout(&mut self, now: Now) {
        self.first_answer(now);
        self.tell(now);
    }

    fn first_answer(&mut self, now: Now) {
        if !self.waiting_first {
            return;
        }
        if self.current.is_some() && self.refusal(now).is_none() {
            self.waiting_first = false;
            self.note(Note::Ready);
        } else if let Some(trouble) = &self.trouble
            && now.ns >= trouble.since_ns.saturating_add(self.s.first_wait_ns)
        {
            let error = trouble.error.clone();
            self.give_up(error);
        }
    }

    // ---- commands ----

    /// Stops the generators and, once `wait_ns` has passed, releases (rule 7).
    pub(crate) fn release(&mut self, now: Now, wait_ns: u64) {
        self.release_asked(now, wait_ns);
        self.tell(now);
    }

    fn release_asked(&mut self, now: Now, wait_ns: u64) {
        if self.released && self.task == Task::Done {
            return;
        }
        if !self.released {
            self.stops += 1;
        }
        self.released = true;
        self.retiring = None;
        match self.task {
            Task::Done | Task::Release { .. } => {}
            _ if self.current.is_some() => {
                self.task = Task::Release { checking: false };
                // A call in flight is answered first; the release follows.
                self.due_ns = now.ns.saturating_add(wait_ns);
            }
            _ => {
                if self.sent.as_ref().is_some_and(|s| matches!(s.call, Call::Write(_))) {
                    // A grant may be under way: its answer installs it, and releases it.
                    return;
                }
                self.end_release(Ok(()));
            }
        }
    }

    /// Stops without releasing, as a crashed process would.
    pub(crate) fn abandon(&mut self) {
        self.stops += 1;
        self.released = true;
        self.current = None;
        self.retiring = None;
        self.task = Task::Done;
    }
}

#[cfg(test)]
mod tests;
