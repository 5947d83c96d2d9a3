//! The state file, as the machine keeps it: a holder resumed from one ([`Machine::resume`]),
//! when the next is due and what it says ([`Machine::save_due`], [`Machine::save_wake`]), and
//! how far a file written lets the generators issue ([`Machine::saved`]). Its line is
//! `protocol/saved.rs`'s; the lease's handle reads, writes and locks the file
//! (`handle/state_file.rs`).

use super::{Filed, Grant, Machine, Now, Settings, Task};
use crate::worker::lease::protocol::Basis;
use crate::worker::lease::protocol::record::Record;
use crate::worker::lease::protocol::saved::Saved;

/// The longest a state file lets the generators run ahead of the clock, in ms.
const FILE_AHEAD_MAX_MS: i64 = 250;

impl Machine {
    /// A holder restarted with its state file, at `now`: it holds the grant the file
    /// describes, issues above what the file says it may have issued and up to the reservation
    /// the store acknowledged, while that lasts (less the tolerance: the monotonic clock of
    /// the earlier process is gone, and the lease's clock stands in), and reconciles with the
    /// store at once: a renewal that succeeds goes on, one that finds the record another's
    /// loses it. `None` when the file's reservation has run out.
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

    /// With a state file: the file to write now, if one is due (the grant changed since the
    /// last, or its generators come near the limit it set). Generators issue above the last
    /// file's limit only once [`Machine::saved`] says this one is written.
    pub(crate) fn save_due(&self, now: Now) -> Option<Saved> {
        if !self.s.state_file {
            return None;
        }
        let grant = self.current.as_ref()?;
        if self.released {
            // Before a release is written, the file says so: resumed after it, the grant
            // would issue above what the release recorded.
            let filed = self.filed.as_ref().is_some_and(|f| f.releasing);
            return (!filed && self.task == (Task::Release { checking: false })).then(|| Saved {
                namespace: self.s.namespace.clone(),
                worker: grant.worker,
                token: grant.token.clone(),
                value: grant.value.clone(),
                bound_ms: grant.bound_ms,
                valid_until_ms: now.ms,
                issued_limit_ms: grant.bound_ms,
                releasing: true,
            });
        }
        if !grant.valid(now) {
            return None;
        }
        let ahead_ms = self.file_ahead_ms();
        let limit_ms =
            now.ms.max(grant.issued_ms).saturating_add(ahead_ms.max(self.s.rules.step_ms)).min(grant.bound_ms);
        let due = match &self.filed {
            Some(filed) if filed.epoch == grant.epoch && filed.value == grant.value => {
                filed.limit_ms.saturating_sub(now.ms) <= ahead_ms / 2 && limit_ms > filed.limit_ms
            }
            _ => true,
        };
        let limit_ms = match &self.filed {
            Some(filed) if filed.epoch == grant.epoch => limit_ms.max(filed.limit_ms),
            _ => limit_ms.max(grant.issued_ms),
        };
        let left_ns = grant.valid_until_ns.saturating_sub(now.ns);
        let valid_until_ms = now.ms.saturating_add(i64::try_from(left_ns / 1_000_000).unwrap_or(i64::MAX));
        due.then(|| Saved {
            namespace: self.s.namespace.clone(),
            worker: grant.worker,
            token: grant.token.clone(),
            value: grant.value.clone(),
            bound_ms: grant.bound_ms,
            valid_until_ms,
            issued_limit_ms: limit_ms,
            releasing: false,
        })
    }

    /// How far ahead of the clock a state file lets the generators issue: two renewals, at
    /// most a quarter of a second (a process restarted with the file waits that long at
    /// most), so that a write that comes late once does not stop them.
    pub(super) fn file_ahead_ms(&self) -> i64 {
        let renew_ms = i64::try_from(self.s.rules.renew_every_ns() / 1_000_000).unwrap_or(i64::MAX);
        renew_ms.saturating_mul(2).min(FILE_AHEAD_MAX_MS).max(self.s.rules.step_ms).max(1)
    }

    /// Whether the state file (if one is kept) lets `grant` issue at `now`: up to its limit's
    /// own tick, which a generator issues from its cached limit until the clock passes it.
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

    /// With a state file: when the next file is due (monotonic ns), once the generators come
    /// within half the window of the last file's limit. Past due, it waits for what holds it
    /// back (a renewal, whose answer wakes the machine). A wake that lands on the boundary
    /// finds the file due: [`Machine::save_due`] writes at `due_ms <= 0`, and whenever it does
    /// not, a wake is set.
    pub(crate) fn save_wake(&self, now: Now) -> Option<u64> {
        let filed = self.filed.as_ref().filter(|_| self.s.state_file)?;
        let due_ms = filed.limit_ms.saturating_sub(self.file_ahead_ms() / 2).saturating_sub(now.ms);
        let due_ms = u64::try_from(due_ms).ok().filter(|&ms| ms > 0)?;
        Some(now.ns.saturating_add(due_ms.saturating_mul(1_000_000)))
    }
}
