//! The renewal of a grant: its read, its write, and what a record found otherwise means
//! (docs/lease-rules.md rules 1, 4 to 6 and 9).

use super::{Acquire, Call, Confirm, LostWhy, Machine, Note, Now, Op, Sent, Task};
use crate::worker::lease::protocol::record::{Holder, Marker, Record};
use crate::worker::lease::protocol::{floor_of, fresh_marker, marker_holds};
use crate::worker::lease::store::{Query, Slot, Snapshot};

impl Machine {
    /// The renewal's next call: its write once a read found the marker vouching for its record (rule 1), else the read.
    pub(super) fn renewal_call(&mut self, now: Now) -> Option<Call> {
        let grant = self.current.as_ref()?;
        let confirm = self.vouched.as_ref().filter(|c| c.value == grant.value).cloned();
        let Some(confirm) = confirm else {
            let worker = grant.worker;
            self.task = Task::Check;
            return Some(Call::Read(Query::workers(worker..worker + 1)));
        };
        let record = Record {
            rev: grant.record.rev + 1,
            expires_ms: now.ms.saturating_add(self.s.rules.ttl_ms()),
            high_water_ms: self.s.rules.reserve(now.ms, grant.record.high_water_ms.max(grant.issued_ms)),
            // The live holder's name, also after a resume from the state file.
            holder: Some(Holder { token: grant.token.clone(), name: self.s.name.clone() }),
            generation: Marker::decode(&confirm.marker).map_or(grant.record.generation, |m| m.generation),
            ..grant.record.clone()
        };
        Some(Call::Write(vec![
            Op { slot: Slot::Worker(grant.worker), expect: Some(grant.value.clone()), value: record.encode() },
            Op { slot: Slot::Marker, expect: confirm.expect, value: confirm.marker },
        ]))
    }

    /// A renewal of the current grant, written at `sent`, is acknowledged.
    pub(super) fn renewed(&mut self, value: &str, sent: Now, now: Now) {
        let rules = self.s.rules;
        let Some(grant) = self.current.as_mut() else { return };
        let Some(record) = Record::decode(value) else { return };
        let late = sent.ns >= grant.valid_until_ns;
        grant.value = value.to_owned();
        grant.record = record;
        let (bound_ms, valid_until_ns) = rules.acknowledged(sent.ms, sent.ns);
        grant.bound_ms = grant.bound_ms.max(bound_ms);
        grant.valid_until_ns = grant.valid_until_ns.max(valid_until_ns);
        self.trouble = None;
        self.renewals += 1;
        if late {
            let worker = grant.worker;
            self.since_ms = now.ms;
            self.note(Note::RenewedLate { worker });
        }
    }

    /// The current grant's record, read before a renewal or after a write that conflicted, with the marker and clock.
    pub(super) fn checked(&mut self, now: Now, sent: &Sent, snapshot: &Snapshot) {
        let rules = self.s.rules;
        let Some(grant) = self.current.as_ref() else { return };
        let (worker, fence, token, value) =
            (grant.worker, grant.record.fence, grant.token.clone(), grant.value.clone());
        let (rev, expires_ms, bound_ms) = (grant.record.rev, grant.record.expires_ms, grant.bound_ms);
        let text = snapshot.record(worker);
        let marker = snapshot.marker.as_deref().and_then(Marker::decode);
        let holds = marker_holds(&rules, marker.as_ref(), &snapshot.incarnation);
        if text == Some(value.as_str()) {
            // Unchanged: renew, if the marker still vouches for the record.
            let vouched = marker.as_ref().is_some_and(|m| rules.vouches(m, worker, &grant.record));
            if holds && !vouched {
                // Someone fenced first (rule 5): stop, without a second fence.
                self.ambiguous.clear();
                return self.stop_rolled_back(now, worker, fence, false);
            }
            if let Some(error) = self.s.skew(sent, now, snapshot) {
                // A skewed clock reserves nothing, and tries again later.
                self.note(Note::RenewalFailed { worker, error: error.clone() });
                self.trouble_with(now, error);
                self.task = Task::Hold;
                self.vouched = None;
                return self.retry_later(now);
            }
            let same_incarnation = grant.incarnation.as_deref() == Some(snapshot.incarnation.as_str());
            // Renewed in place: under a marker of this incarnation, or where the marker alone was lost.
            let in_place = holds || (snapshot.marker.is_none() && same_incarnation);
            if !in_place && rules.loses_on_another_incarnation() {
                // Another incarnation: the record says nothing (rule 6), the lease is lost.
                self.ambiguous.clear();
                return self.lost(now, worker, fence, LostWhy::Incarnation);
            }
            self.vouched = match (holds, snapshot.marker.clone()) {
                (true, Some(text)) => {
                    // The grant is this incarnation's (also one resumed, which did not know).
                    if let Some(grant) = self.current.as_mut() {
                        grant.incarnation = Some(snapshot.incarnation.clone());
                    }
                    Some(Confirm { value, expect: Some(text.clone()), marker: text })
                }
                _ => {
                    // The marker alone was lost: nobody took the worker ID, so the renewal
                    // writes it afresh and moves its record under it (rule 4).
                    let store_ms = snapshot.now_ms.unwrap_or(now.ms);
                    let generation = self.rng.random();
                    let fresh =
                        fresh_marker(marker.as_ref(), Some(worker), store_ms, &snapshot.incarnation, generation, false);
                    Some(Confirm { value, expect: snapshot.marker.clone(), marker: fresh.encode() })
                }
            };
            self.task = Task::Hold;
            self.due_ns = now.ns;
            return;
        }
        if let Some(text) = text
            && let Some(attempt) = self.ambiguous.iter().find(|a| a.value == text).cloned()
        {
            // A renewal whose answer was lost was applied.
            self.renewed(&attempt.value, attempt.sent, now);
            self.ambiguous.clear();
            self.task = Task::Hold;
            self.due_ns = now.ns;
            return;
        }
        let found = text.and_then(Record::decode);
        let ours = found.as_ref().is_some_and(|r| r.is_token(&token));
        if ours && !rules.notices_rollback() {
            let value = text.unwrap_or_default().to_owned();
            self.renewed(&value, now, now);
            self.task = Task::Hold;
            self.due_ns = now.ns;
            return;
        }
        self.ambiguous.clear();
        if ours && self.resumed && found.as_ref().is_some_and(|r| r.rev > rev) {
            // Our own grant, written further than the state file says: the file is an older
            // copy (rule 11), so the grant is given up without a fence.
            return self.lost(now, worker, fence, LostWhy::FileOlder);
        }
        // Never assume the successor waited (rule 5). A record whose `rev` is 1 replaced
        // none: it is judged as a record gone is.
        let fresh = found.as_ref().is_some_and(|r| !r.is_token(&token) && r.rev == 1);
        let taken_early =
            found.as_ref().is_some_and(|r| !r.is_token(&token) && r.rev > 1 && (r.rev <= rev || now.ms <= expires_ms));
        let older = found.as_ref().is_some_and(|r| !r.is_token(&token) && r.fence <= fence);
        let gone_unguarded = (text.is_none() || fresh)
            && holds
            && marker.as_ref().is_some_and(|m| {
                let store_ms = snapshot.now_ms.unwrap_or(now.ms);
                floor_of(&rules, m, worker, None, store_ms).0 < bound_ms
            });
        if ours || older || taken_early || gone_unguarded {
            // The store went back.
            self.stop_rolled_back(now, worker, fence, true);
        } else {
            // A first record in our place before we expired: rule 6's exception.
            let early = fresh && now.ms <= expires_ms;
            let why = match text {
                None => LostWhy::Gone,
                Some(_) if early => LostWhy::TakenEarly,
                Some(_) => LostWhy::TakenOver,
            };
            self.lost(now, worker, fence, why);
        }
    }

    /// The lease is lost for `why`: it rides on what it reserved ([`LostWhy::rides`]) or stops, and acquires again.
    fn lost(&mut self, now: Now, worker: u64, fence: u64, why: LostWhy) {
        self.note(Note::Lost { worker, why });
        self.retiring = self.current.take().filter(|g| why.rides() && g.valid(now));
        if !why.rides() {
            self.stops += 1;
        }
        self.lose(now, worker, fence, false);
    }

    /// The store was rolled back under the grant: stop at once, and acquire again, writing
    /// the marker afresh first if `refresh` (else a fence already did).
    fn stop_rolled_back(&mut self, now: Now, worker: u64, fence: u64, refresh: bool) {
        self.current = None;
        self.retiring = None;
        self.rolled_back = true;
        if self.s.rules.rollback_stops_generators() {
            self.stops += 1;
        }
        self.note(Note::RolledBack { worker });
        self.lose(now, worker, fence, refresh);
    }

    /// Starts acquiring again after a loss: the same worker ID first, a fence above the last.
    pub(super) fn lose(&mut self, now: Now, worker: u64, fence: u64, refresh: bool) {
        self.last = Some((worker, fence));
        self.since_ms = now.ms;
        self.task = Task::Acquire(Box::new(Acquire::new(Some(worker), fence, refresh)));
        self.due_ns = now.ns;
        self.backoff_ns = 0;
    }
}
