//! The state file as the machine keeps it (docs/lease-rules.md rule 11): a holder resumed from
//! one, when the next is due and what it says, how far a file written lets the generators issue.

use super::{Filed, Grant, Machine, Now, Settings, Task};
use crate::worker::lease::protocol::Basis;
use crate::worker::lease::protocol::record::Record;
use crate::worker::lease::protocol::saved::Saved;

/// The longest a state file lets the generators run ahead of the clock, in ms.
const FILE_AHEAD_MAX_MS: i64 = 250;

impl Machine {
    /// A holder restarted from its state file, holding its grant above the file's limit while the reservation lasts
    /// less the tolerance (the earlier process's monotonic clock is gone); `None` once it ran out.
    pub(crate) fn resume(settings: Settings, saved: &Saved, now: Now) -> Option<Machine> {
        let record = Record::decode(&saved.value)?;
        let left_ms = saved.valid_until_ms.saturating_sub(now.ms).saturating_sub(settings.rules.tolerance_ms());
        if saved.releasing || saved.namespace != settings.namespace || saved.worker >= settings.space || left_ms <= 0 {
            return None;
        }
        let mut machine = Machine::new(settings, now);
        machine.epochs = 1;
        machine.resumed = true;
        machine.current = Some(Grant {
            epoch: 1,
            worker: saved.worker,
            token: saved.token.clone(),
            value: saved.value.clone(),
            record: record.clone(),
            floor_ms: Some(saved.issued_limit_ms),
            basis: Basis::Record,
            ready_ms: saved.issued_limit_ms.saturating_add(1),
            valid_until_ns: now.ns.saturating_add(left_ms.unsigned_abs().saturating_mul(1_000_000)),
            bound_ms: saved.bound_ms,
            issued_ms: saved.issued_limit_ms,
            incarnation: None,
        });
        machine.last = Some((saved.worker, record.fence));
        // Nothing is issued until a file is written above what this one allowed.
        machine.task = Task::Hold;
        machine.due_ns = now.ns;
        Some(machine)
    }

    /// With a state file: the file to write now, if one is due (the grant changed, or its generators near the
    /// last file's limit, which they pass only once it is [`saved`](Machine::saved)).
    pub(crate) fn save_due(&self, now: Now) -> Option<Saved> {
        if !self.s.state_file {
            return None;
        }
        let grant = self.current.as_ref()?;
        let saved = |valid_until_ms, issued_limit_ms, releasing| Saved {
            namespace: self.s.namespace.clone(),
            worker: grant.worker,
            token: grant.token.clone(),
            value: grant.value.clone(),
            bound_ms: grant.bound_ms,
            valid_until_ms,
            issued_limit_ms,
            releasing,
        };
        if self.released {
            // Before a release is written, the file says so.
            let filed = self.filed.as_ref().is_some_and(|f| f.releasing);
            return (!filed && self.task == (Task::Release { checking: false }))
                .then(|| saved(now.ms, grant.bound_ms, true));
        }
        if !grant.valid(now) {
            return None;
        }
        let ahead_ms = self.file_ahead_ms();
        let limit_ms =
            now.ms.max(grant.issued_ms).saturating_add(ahead_ms.max(self.s.rules.step_ms)).min(grant.bound_ms);
        let (due, limit_ms) = match &self.filed {
            Some(filed) if filed.epoch == grant.epoch => {
                let near = filed.limit_ms.saturating_sub(now.ms) <= ahead_ms / 2 && limit_ms > filed.limit_ms;
                (filed.value != grant.value || near, limit_ms.max(filed.limit_ms))
            }
            _ => (true, limit_ms.max(grant.issued_ms)),
        };
        let left_ns = grant.valid_until_ns.saturating_sub(now.ns);
        let valid_until_ms = now.ms.saturating_add(i64::try_from(left_ns / 1_000_000).unwrap_or(i64::MAX));
        due.then(|| saved(valid_until_ms, limit_ms, false))
    }

    /// How far ahead of the clock a state file lets the generators issue: two renewals, so
    /// that one late write does not stop them, at most a quarter of a second.
    pub(super) fn file_ahead_ms(&self) -> i64 {
        let renew_ms = i64::try_from(self.s.rules.renew_every_ns() / 1_000_000).unwrap_or(i64::MAX);
        renew_ms.saturating_mul(2).min(FILE_AHEAD_MAX_MS).max(self.s.rules.step_ms).max(1)
    }

    /// Whether the state file (if one is kept) lets `grant` issue at `now`.
    pub(super) fn filed_for(&self, grant: &Grant, now: Now) -> bool {
        !self.s.state_file
            || self
                .filed
                .as_ref()
                .is_some_and(|f| f.epoch > grant.epoch || f.epoch == grant.epoch && f.limit_ms >= now.ms)
    }

    /// `saved` is written (durably): its grant's generators may issue up to its limit.
    pub(crate) fn saved(&mut self, saved: &Saved) {
        let Some(grant) = self.current.as_ref().filter(|g| g.token == saved.token) else { return };
        let epoch = grant.epoch;
        let limit_ms = match &self.filed {
            Some(filed) if filed.epoch == epoch => filed.limit_ms.max(saved.issued_limit_ms),
            _ => saved.issued_limit_ms,
        };
        self.filed = Some(Filed { epoch, value: saved.value.clone(), limit_ms, releasing: saved.releasing });
    }

    /// [`Machine::saved`], then whatever changed for the generators is told.
    pub(crate) fn saved_at(&mut self, now: Now, saved: &Saved) {
        self.saved(saved);
        self.tell(now);
    }

    /// With a state file: when the next file is due (monotonic ns); past due, what holds it
    /// back (a renewal) wakes the machine.
    pub(crate) fn save_wake(&self, now: Now) -> Option<u64> {
        let filed = self.filed.as_ref().filter(|_| self.s.state_file)?;
        let due_ms = filed.limit_ms.saturating_sub(self.file_ahead_ms() / 2).saturating_sub(now.ms);
        let due_ms = u64::try_from(due_ms).ok().filter(|&ms| ms > 0)?;
        Some(now.ns.saturating_add(due_ms.saturating_mul(1_000_000)))
    }
}
