//! The acquisition of a worker ID, a sub-machine of the holder's: read, write the marker afresh
//! where it does not hold, choose a candidate (docs/lease-rules.md rule 3), write the grant and
//! read it back. What is left for the machine to do comes back as a [`Step`].

use std::ops::Range;

use super::{Acquire, Call, Candidate, Grant, Machine, Note, Now, Op, Rng, Sent, Settings, Task};
use crate::worker::lease::protocol::record::{Holder, Marker, Record};
use crate::worker::lease::protocol::{Basis, Rules, floor_of, fresh_marker, marker_holds};
use crate::worker::lease::store::{LeaseError, MAX_READ, Query, Slot, Snapshot, Written};

/// How often trouble while acquiring is noted.
const NOTE_EVERY_NS: u64 = 5_000_000_000;

/// When a grant on a candidate of `basis` and floor `floor_ms` may issue: past its floor, or
/// within the resume window below a vouched record's.
fn ready_ms(rules: &Rules, basis: Basis, floor_ms: i64) -> i64 {
    match basis {
        Basis::Record => floor_ms.saturating_sub(rules.resume_window_ms()),
        Basis::Declared => i64::MIN,
        Basis::NeverGranted | Basis::Unvouched => floor_ms.saturating_add(1),
    }
}

/// What an answer to the acquisition leaves the machine to do.
pub(super) enum Step {
    /// Nothing: the next call is asked for when due.
    Wait,
    /// Tell `note` (if any) and make the next call at `due_ns`.
    Again { note: Option<Note>, due_ns: u64 },
    /// Try again after the backoff; the attempt starts again from its first read.
    Later,
    /// The attempt failed; it starts again, but for a grant whose answer was lost.
    Failed(LeaseError),
    /// The grant of the candidate, written at the instant given, is this holder's.
    Install(Box<(Candidate, Grant, Now)>),
}

impl Acquire {
    pub(super) fn new(prefer: Option<u64>, fence_above: u64, refresh: bool) -> Acquire {
        Acquire { prefer, fence_above, refresh, ..Acquire::default() }
    }

    /// Starts the attempt again from its first read, keeping what it was asked.
    fn restart(&mut self) {
        *self = Acquire { conflicts: self.conflicts, ..Acquire::new(self.prefer, self.fence_above, self.refresh) };
    }

    /// The attempt's next call, or the error when no worker ID may be taken (`epochs`: grants ever held).
    pub(super) fn call(&mut self, now: Now, s: &Settings, rng: &mut Rng, epochs: u64) -> Result<Call, LeaseError> {
        let space = s.space;
        if let Some((candidate, _, _)) = &self.pending {
            return Ok(Call::Read(Query::workers(candidate.worker..candidate.worker + 1)));
        }
        let Some((text, marker)) = self.marker.clone() else {
            // The first read: the marker and the first chunk.
            return Ok(Call::Read(Query::workers(0..space.min(MAX_READ))));
        };
        if self.refresh || !marker_holds(&s.rules, marker.as_ref(), &self.incarnation) {
            let Some(highest) = self.highest else {
                return Ok(Call::Read(Query::workers(0..space.min(MAX_READ)).with_highest()));
            };
            // A marker written afresh; declared new only at the process's first start (rule 10).
            let nothing = text.is_none() && highest.is_none();
            let generation = rng.random();
            let declared = s.create_namespace && nothing && epochs == 0;
            let fresh = fresh_marker(marker.as_ref(), highest, self.now_ms, &self.incarnation, generation, declared);
            return Ok(Call::Write(vec![Op { slot: Slot::Marker, expect: text, value: fresh.encode() }]));
        }
        if let Some(chunk) = self.plan.first() {
            return Ok(Call::Read(Query::workers(chunk.clone())));
        }
        let chosen = match self.ready.iter().position(|c| Some(c.worker) == self.prefer) {
            Some(i) => Some(self.ready[i].clone()),
            None if !self.ready.is_empty() => {
                let pick = (rng.random() % self.ready.len() as u64) as usize;
                Some(self.ready[pick].clone())
            }
            None => self.best.clone(),
        };
        let Some(candidate) = chosen else {
            self.restart();
            return Err(LeaseError::NoFreeWorker { namespace: s.namespace.clone(), space });
        };
        Ok(self.grant_call(now, s, rng, candidate))
    }

    /// The grant of `candidate`: its record and the marker, in one write (rule 1).
    fn grant_call(&mut self, now: Now, s: &Settings, rng: &mut Rng, candidate: Candidate) -> Call {
        let token = rng.token();
        let (marker_text, marker) = self.marker.clone().expect("a grant follows the marker's read");
        let marker = marker.expect("a grant follows a marker that holds");
        let old = candidate.record.as_ref();
        let fence = old
            .map_or(0, |r| r.fence.saturating_add(1))
            .max(self.fence_above.saturating_add(1))
            .max(u64::try_from(self.now_ms).unwrap_or(0).saturating_mul(1_000));
        let rules = s.rules;
        let record = Record {
            rev: old.map_or(1, |r| r.rev + 1),
            fence,
            expires_ms: now.ms.saturating_add(rules.ttl_ms()),
            high_water_ms: rules.reserve(now.ms, candidate.floor_ms),
            generation: marker.generation,
            holder: Some(Holder { token: token.clone(), name: s.name.clone() }),
        };
        let value = record.encode();
        let mut ops = vec![Op { slot: Slot::Worker(candidate.worker), expect: candidate.expect.clone(), value }];
        if rules.raises_next() && candidate.worker >= marker.next {
            let raised = Marker { rev: marker.rev + 1, next: candidate.worker + 1, ..marker };
            ops.push(Op { slot: Slot::Marker, expect: marker_text, value: raised.encode() });
        } else if let Some(text) = marker_text {
            // Confirmed unchanged, so that a grant read before a fence fails if written after.
            ops.push(Op { slot: Slot::Marker, expect: Some(text.clone()), value: text });
        }
        let floor_ms = (candidate.basis != Basis::Declared).then_some(candidate.floor_ms);
        let ready_ms = ready_ms(&rules, candidate.basis, candidate.floor_ms);
        let grant = Grant {
            epoch: 0,
            worker: candidate.worker,
            token,
            value: ops[0].value.clone(),
            record,
            floor_ms,
            basis: candidate.basis,
            ready_ms,
            valid_until_ns: 0,
            bound_ms: i64::MIN,
            issued_ms: i64::MIN,
            incarnation: None,
        };
        self.pending = Some((candidate, grant, now));
        Call::Write(ops)
    }

    /// A read of the attempt's, answered at `now`.
    pub(super) fn read(&mut self, now: Now, s: &Settings, sent: &Sent, snapshot: Snapshot) -> Step {
        let rules = s.rules;
        let space = s.space;
        let tolerance_ms = rules.tolerance_ms();
        // A grant written, read back (rule 4): ours if the record is what it wrote; planned
        // from a read of another incarnation, it waits out `W` + `ε`.
        if let Some((mut candidate, mut grant, at)) = self.pending.take() {
            if snapshot.record(candidate.worker) != Some(grant.value.as_str()) {
                self.restart();
                return Step::Later;
            }
            grant.incarnation = Some(snapshot.incarnation.clone());
            if snapshot.incarnation != self.incarnation {
                let floor_ms = candidate.floor_ms.max(rules.unvouched_floor(snapshot.now_ms.unwrap_or(now.ms)));
                (candidate.floor_ms, candidate.basis) = (floor_ms, Basis::Unvouched);
                (grant.floor_ms, grant.basis, grant.ready_ms) =
                    (Some(floor_ms), Basis::Unvouched, ready_ms(&rules, Basis::Unvouched, floor_ms));
            }
            return Step::Install(Box::new((candidate, grant, at)));
        }
        if let Some(error) = s.skew(sent, now, &snapshot) {
            self.restart();
            return Step::Failed(error);
        }
        let asked_highest = matches!(&sent.call, Call::Read(query) if query.highest);
        if self.marker.is_none() || asked_highest {
            // The first read, or the one with the highest record: the marker, incarnation, clock.
            self.marker = Some((snapshot.marker.clone(), snapshot.marker.as_deref().and_then(Marker::decode)));
            self.incarnation = snapshot.incarnation.clone();
            self.now_ms = snapshot.now_ms.unwrap_or(now.ms);
        }
        if asked_highest {
            self.highest = Some(snapshot.highest);
        }
        let Some((_, Some(marker))) = self.marker.clone() else { return Step::Wait };
        if self.refresh || !marker_holds(&rules, Some(&marker), &self.incarnation) {
            return Step::Wait;
        }
        let Call::Read(query) = &sent.call else { return Step::Wait };
        let range = query.workers.clone();
        self.plan.retain(|chunk| *chunk != range);
        if !self.planned {
            self.planned = true;
            // The first chunk: plan the others that may matter (the preferred one first).
            let limit = space.min(marker.next.saturating_add(1).max(self.prefer.map_or(0, |p| p + 1)));
            let mut plan: Vec<Range<u64>> =
                (range.end..limit).step_by(MAX_READ as usize).map(|lo| lo..(lo + MAX_READ).min(limit)).collect();
            if let Some(p) = self.prefer.filter(|&p| p >= range.end && p < space)
                && let Some(i) = plan.iter().position(|c| c.contains(&p))
            {
                let chunk = plan.remove(i);
                plan.insert(0, chunk);
            }
            self.plan = plan;
        }
        let now_ms = self.now_ms;
        for worker in range.clone().filter(|&w| w < space) {
            let text = snapshot.record(worker);
            let record = text.and_then(Record::decode);
            if text.is_some() && record.is_none() {
                // Text this protocol does not write: not ours to overwrite.
                continue;
            }
            if record.as_ref().is_some_and(|r| r.held_at(now_ms, tolerance_ms)) {
                continue;
            }
            if record.is_none() && worker > marker.next && Some(worker) != self.prefer {
                // Never granted: the lowest such worker ID is enough.
                continue;
            }
            let (floor_ms, basis) = floor_of(&rules, &marker, worker, record.as_ref(), now_ms);
            let candidate = Candidate { worker, expect: text.map(str::to_owned), record, floor_ms, basis };
            if floor_ms <= now_ms.saturating_add(rules.step_ms) {
                self.ready.push(candidate);
            } else if self
                .best
                .as_ref()
                .is_none_or(|b| floor_ms < b.floor_ms || floor_ms == b.floor_ms && Some(worker) == self.prefer)
            {
                self.best = Some(candidate);
            }
        }
        if !self.ready.is_empty() {
            self.plan.clear();
        }
        Step::Wait
    }

    /// A write of the attempt's (a fresh marker, or a grant), answered at `now`.
    pub(super) fn written(&mut self, now: Now, sent: &Sent, written: Written, rng: &mut Rng) -> Step {
        let Call::Write(ops) = &sent.call else { return Step::Wait };
        if ops[0].slot == Slot::Marker {
            let mut note = None;
            if written == Written::Done {
                let declared = Marker::decode(&ops[0].value).is_some_and(|m| m.declared);
                let fenced = self.refresh;
                self.refresh = false;
                note = Some(Note::Marked { declared, fenced });
            }
            self.restart();
            return Step::Again { note, due_ns: now.ns };
        }
        if self.pending.is_none() {
            return Step::Wait;
        }
        match written {
            // Read back before it issues (`read`): the read tells the store's incarnation now.
            Written::Done => Step::Again { note: None, due_ns: now.ns },
            Written::Conflict => {
                self.conflicts += 1;
                let conflicts = self.conflicts;
                self.restart();
                // Others took it first: look again at once, with a little jitter after a few.
                let jitter = if conflicts > 2 { rng.random() % 20_000_000 } else { 0 };
                Step::Again { note: None, due_ns: now.ns.saturating_add(jitter) }
            }
        }
    }

    /// A call failed: the attempt starts again, but for a grant whose answer was lost (the next read checks it).
    pub(super) fn call_failed(&mut self, call: &Call) {
        let marker = matches!(call, Call::Write(ops) if ops[0].slot == Slot::Marker);
        if marker || self.pending.is_none() {
            self.restart();
        }
    }
}

impl Machine {
    /// Carries out what an answer to the acquisition left to do, at `now`.
    pub(super) fn acquired(&mut self, now: Now, step: Step) {
        match step {
            Step::Wait => {}
            Step::Again { note, due_ns } => {
                if let Some(note) = note {
                    self.note(note);
                }
                self.due_ns = due_ns;
            }
            Step::Later => self.retry_later(now),
            Step::Failed(error) => self.failed(now, error),
            Step::Install(pending) => {
                let (candidate, grant, at) = *pending;
                self.install(now, candidate, grant, at);
            }
        }
    }

    /// An attempt failed: tried again later, unless the first acquisition cannot mend it.
    pub(super) fn failed(&mut self, now: Now, error: LeaseError) {
        // Waiting may mend a store error or a timeout (and a full space, if asked); nothing else.
        let mendable = matches!(error, LeaseError::Store { .. } | LeaseError::Timeout { .. })
            || self.s.wait_for_free && matches!(error, LeaseError::NoFreeWorker { .. });
        if self.waiting_first && !mendable {
            return self.give_up(error);
        }
        self.trouble_with(now, error);
        let Some(trouble) = &mut self.trouble else { return };
        if trouble.noted_ns.is_none_or(|at| now.ns >= at.saturating_add(NOTE_EVERY_NS)) {
            trouble.noted_ns = Some(now.ns);
            let note =
                Note::Trouble { error: trouble.error.clone(), waited_ns: now.ns.saturating_sub(trouble.since_ns) };
            self.note(note);
        }
        self.retry_later(now);
    }

    /// Installs a grant written at `at`: the generators move to it once it may issue.
    fn install(&mut self, now: Now, candidate: Candidate, mut grant: Grant, at: Now) {
        let rules = self.s.rules;
        self.epochs += 1;
        grant.epoch = self.epochs;
        (grant.bound_ms, grant.valid_until_ns) = rules.acknowledged(at.ms, at.ns);
        self.note(Note::Acquired {
            worker: grant.worker,
            fence: grant.record.fence,
            basis: candidate.basis,
            floor_ms: candidate.floor_ms,
            ready_ms: grant.ready_ms,
        });
        self.last = Some((grant.worker, grant.record.fence));
        self.current = Some(grant);
        self.rolled_back = false;
        self.trouble = None;
        self.ambiguous.clear();
        self.backoff_ns = 0;
        self.since_ms = now.ms;
        self.task = Task::Hold;
        self.due_ns = now.ns.saturating_add(self.s.rules.renew_every_ns());
        if self.released {
            // Released while the grant was being written: hand it back at once.
            self.task = Task::Release { checking: false };
            self.due_ns = now.ns;
        }
    }
}
