//! What the generators may issue: under which grant, whether ([`Machine::refusal`]), how far
//! ([`Machine::grant_until`]), and where the lease stands ([`Machine::standing`]).

use super::{Grant, Machine, Now, Standing, Task};
use crate::fence::{FenceReason, GrantView, Refusal};
use crate::worker::lease::store::LeaseError;

impl Grant {
    /// When the grant stops issuing (monotonic ns): a tick before its validity ends.
    pub(super) fn valid_end_ns(&self) -> u64 {
        self.valid_until_ns.saturating_sub(1_000_000)
    }

    /// Whether the grant may issue at `now` (until [`Grant::valid_end_ns`]).
    pub(super) fn valid(&self, now: Now) -> bool {
        now.ns <= self.valid_end_ns()
    }

    pub(super) fn issuing(&self, now: Now) -> bool {
        self.valid(now) && now.ms >= self.ready_ms
    }

    pub(super) fn view(&self) -> GrantView {
        GrantView { epoch: self.epoch, worker: self.worker, floor_ms: self.floor_ms }
    }

    /// The high water its release records (rule 7), never below its floor.
    pub(super) fn high_water(&self) -> i64 {
        self.issued_ms.max(self.floor_ms.unwrap_or(0)).max(0)
    }
}

impl Machine {
    /// Whether the generators issue under the retiring grant (the new one may not yet).
    pub(super) fn on_retiring(&self, now: Now) -> bool {
        self.retiring.as_ref().is_some_and(|r| r.valid(now))
            && !self.current.as_ref().is_some_and(|g| g.issuing(now) && self.filed_for(g, now))
    }

    /// The grant the generators issue under.
    pub(super) fn active(&self, now: Now) -> Option<&Grant> {
        if self.on_retiring(now) { self.retiring.as_ref() } else { self.current.as_ref() }
    }

    /// Why the generators may not issue at `now`, or `None`: the one answer everything that
    /// tells it gives, so that what a lease says of itself is what its generators do.
    pub(crate) fn refusal(&self, now: Now) -> Option<FenceReason> {
        let rules = self.s.rules;
        if self.released {
            return Some(FenceReason::Released);
        }
        let Some(grant) = self.active(now) else {
            return Some(if self.rolled_back { FenceReason::RolledBack } else { FenceReason::Lost });
        };
        if !grant.valid(now) {
            return Some(FenceReason::NotRenewed { reservation: rules.reservation, margin: rules.margin });
        }
        if now.ms < grant.ready_ms {
            return Some(FenceReason::WaitingOut { until_ms: grant.floor_ms.unwrap_or(grant.ready_ms) });
        }
        if !self.filed_for(grant, now) {
            return Some(FenceReason::StateFileBehind);
        }
        if now.ms > grant.bound_ms {
            return Some(FenceReason::ClockAhead { now_ms: now.ms, bound_ms: grant.bound_ms });
        }
        None
    }

    /// The highest timestamp a generator under grant `epoch` may issue now (`from_ms` plus a step, within the
    /// reservation and the validity), recorded as issued; refused ([`Machine::refusal`]) or told to switch grants.
    pub(crate) fn grant_until(&mut self, now: Now, from_ms: i64, min_step_ms: i64, epoch: u64) -> Result<i64, Refusal> {
        if let Some(reason) = self.refusal(now) {
            return Err(Refusal::Fenced(reason));
        }
        let step_ms = self.s.rules.step_ms.max(min_step_ms);
        let file = self.s.state_file.then(|| self.filed.as_ref().map(|f| (f.epoch, f.limit_ms)));
        let retiring = self.on_retiring(now);
        let Some(grant) = (if retiring { self.retiring.as_mut() } else { self.current.as_mut() }) else {
            return Err(Refusal::Fenced(FenceReason::Lost));
        };
        if grant.epoch != epoch {
            return Err(Refusal::Switch(grant.view()));
        }
        // The last tick granted ends within the validity, so a generator issuing from its
        // cached limit stops before the status says so; one ahead of its clock gets one tick.
        let left_ms = i64::try_from((grant.valid_until_ns - now.ns) / 1_000_000).unwrap_or(i64::MAX);
        let last_ms = now.ms.saturating_add(left_ms).saturating_sub(1);
        let mut until = from_ms.saturating_add(step_ms).min(last_ms.max(from_ms)).min(grant.bound_ms);
        // Never above the state file's limit (rule 11); a retiring grant the file no longer
        // describes stays below its reservation.
        if let Some(filed) = file
            && filed.is_none_or(|(e, _)| e <= grant.epoch)
        {
            let limit = filed.filter(|(e, _)| *e == grant.epoch).map_or(i64::MIN, |(_, limit)| limit);
            until = until.min(limit);
            if until < from_ms {
                return Err(Refusal::Fenced(FenceReason::StateFileBehind));
            }
        }
        if until < from_ms {
            return Err(Refusal::Fenced(FenceReason::ClockAhead { now_ms: from_ms, bound_ms: grant.bound_ms }));
        }
        grant.issued_ms = grant.issued_ms.max(until);
        Ok(until)
    }

    /// The grant as a generator sees it: the one it would issue under now.
    pub(crate) fn view(&self, now: Now) -> GrantView {
        match self.active(now) {
            Some(grant) => grant.view(),
            None => GrantView { epoch: 0, worker: self.last.map_or(0, |(w, _)| w), floor_ms: None },
        }
    }

    /// How many times the generators were stopped at once; each change drops their cached
    /// limits, so that they stop at their next tick.
    pub(crate) fn stops(&self) -> u64 {
        self.stops
    }

    /// Whether grant `epoch` is still one the generators may be on.
    pub(crate) fn holds(&self, epoch: u64) -> bool {
        !self.released && self.current.iter().chain(&self.retiring).any(|g| g.epoch == epoch)
    }

    /// Whether a grant resumed from its state file answers its caller before any store call (which may time out).
    pub(crate) fn answers_first(&self, now: Now) -> bool {
        let waiting = self.waiting_first && self.task == Task::Hold;
        self.resumed && waiting && self.current.as_ref().is_some_and(|g| g.valid(now))
    }

    /// Where the lease stands: [`Machine::refusal`], with the grant it concerns.
    pub(crate) fn standing(&self, now: Now) -> Standing {
        if let Some(error) = &self.failed {
            return Standing::Failed(error.clone());
        }
        if self.released {
            return Standing::Released;
        }
        if self.waiting_first && self.current.is_none() {
            return Standing::Acquiring;
        }
        let answering = self.trouble.is_none() && self.ambiguous.is_empty();
        let refusal = self.refusal(now);
        let last = self.last.map_or(0, |(w, _)| w);
        match (self.active(now), refusal) {
            (Some(grant), None) => Standing::Issuing {
                worker: grant.worker,
                fence: grant.record.fence,
                issuing_for_ns: grant.valid_until_ns - now.ns,
                store_answering: answering,
            },
            (Some(grant), Some(reason)) => Standing::Fenced { worker: grant.worker, reason },
            (None, Some(reason @ FenceReason::RolledBack)) => Standing::Fenced { worker: last, reason },
            (None, _) => Standing::Recovering { previous_worker: last },
        }
    }

    /// The current grant's worker ID and fence (or the last grant's).
    pub(crate) fn worker_and_fence(&self) -> (u64, u64) {
        match &self.current {
            Some(grant) => (grant.worker, grant.record.fence),
            None => self.last.unwrap_or((0, 0)),
        }
    }

    /// What earlier holders of the current grant's worker ID may have issued: its floor.
    pub(crate) fn floor_ms(&self) -> Option<i64> {
        self.current.as_ref().and_then(|g| g.floor_ms)
    }

    /// Renewals acknowledged so far.
    pub(crate) fn renewals(&self) -> u64 {
        self.renewals
    }

    /// The lease's clock at the last change of standing.
    pub(crate) fn since_ms(&self) -> i64 {
        self.since_ms
    }

    /// The last store error, while the store does not answer.
    pub(crate) fn error(&self) -> Option<&LeaseError> {
        self.trouble.as_ref().map(|t| &t.error)
    }
}
