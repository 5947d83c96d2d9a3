//! The renewal of a grant: its read of the record, the marker and the store's clock, its write
//! (the record's reservation moved ahead, the marker confirmed or written afresh in the same
//! atomic write), what an acknowledgement records, and what a record found otherwise means:
//! a renewal whose answer was lost but was applied, a lease lost lawfully (the generators
//! issue on what it reserved), or a store rolled back under it (they stop at once).

use super::{Acquire, Call, Confirm, LostWhy, Machine, Note, Now, Op, Sent, Task};
use crate::worker::lease::protocol::record::{Holder, Marker, Record};
use crate::worker::lease::protocol::{check_skew, floor_of, fresh_marker, marker_holds};
use crate::worker::lease::store::{LeaseError, Query, Slot, Snapshot};

impl Machine {
    /// The renewal's next call, at `now`: its write, once a read found the marker vouching for
    /// the record; else that read (the task turns to checking the record).
    pub(super) fn renewal_call(&mut self, now: Now) -> Option<Call> {
        let grant = self.current.as_ref()?;
        // Every renewal first reads its record, the marker and the store's clock, and writes
        // only where the marker still vouches for the record (a fence or a new incarnation since
        // means the store may have been rolled back under it) and the clocks agree; its write
        // confirms the marker unchanged in the same atomic write, so a fence that lands between
        // the read and the write stops it too.
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

    /// The current grant's record, read before a renewal or back after a write that
    /// conflicted, with the marker and the store's clock.
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
            // Unchanged: renew, if the marker still vouches for the record (a fence or a new
            // incarnation since means the store may have been rolled back under it).
            let vouched = marker.as_ref().is_some_and(|m| rules.vouches(m, worker, &grant.record));
            if holds && !vouched {
                // The marker of this incarnation was written afresh: a fence (by the operator
                // or another holder) came first. Nothing more is issued on the grant, and no
                // second fence is owed.
                self.ambiguous.clear();
                return self.stop_rolled_back(now, worker, fence, false);
            }
            if let Some(store_ms) = snapshot.now_ms
                && let Err(local_ms) = check_skew(sent.at.ms, store_ms, now.ms, rules.tolerance)
            {
                // A clock that left the store's by more than the tolerance reserves nothing
                // more: the grant issues on what was acknowledged, and tries again later.
                let error = LeaseError::ClockSkew {
                    store: self.s.store.clone(),
                    local_ms,
                    store_ms,
                    tolerance: rules.tolerance,
                };
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
                // Another incarnation (a failover, a restart, a restore it tells): the record
                // came back as this holder last wrote it, but the writes the store lost may
                // have handed the worker ID to another holder, who issues on what it reserved
                // there. The lease is lost (rule 6): the generators issue on what it reserved
                // while a worker ID is acquired again, which writes the marker afresh and
                // waits out `W` on every record from before.
                self.ambiguous.clear();
                return self.lost(now, worker, fence, LostWhy::Incarnation);
            }
            self.vouched = match (holds, snapshot.marker.clone()) {
                (true, Some(text)) => {
                    // A marker of this incarnation vouches for the record: the grant is this
                    // incarnation's (also one resumed from a state file, which did not know).
                    if let Some(grant) = self.current.as_mut() {
                        grant.incarnation = Some(snapshot.incarnation.clone());
                    }
                    Some(Confirm { value, expect: Some(text.clone()), marker: text })
                }
                _ => {
                    // The marker was deleted alone, the store the incarnation that granted the
                    // record, which is unchanged: nobody took the worker ID, so the renewal
                    // writes the marker afresh (as an acquisition would: every other record
                    // loses the store's voucher) and moves its own record under it.
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
            // copy (a disk snapshot put back), not a store that went back. What this process
            // issued before may lie above the file's limit: the grant is given up (without
            // issuing on it) and a worker ID acquired again, the namespace left as it is.
            return self.lost(now, worker, fence, LostWhy::FileOlder);
        }
        // Never assume the successor waited. Another holder's record replaced ours lawfully
        // only after our lease expired (its clock and ours agree within the tolerance) and
        // over our last write (so its `rev` is above ours); a record gone is harmless only
        // where anyone acquiring the worker ID now starts above what we may still issue.
        // A record whose `rev` is 1 replaced none: it was written where ours was gone (deleted
        // alone), and judged as a record gone is.
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
            // Our own record with a value we did not write, an older holder's, one that took
            // the worker ID before it was free, or a marker that lets a newcomer start below
            // our reservation: the store went back.
            self.stop_rolled_back(now, worker, fence, true);
        } else {
            // A first record where ours was, written before our lease expired: its writer
            // found ours gone, deleted alone (it then waited out `W`: the marker said the
            // worker ID was granted) or forgotten by a restore with the marker (it did not
            // wait), and the marker it raised no longer tells which.
            let early = fresh && now.ms <= expires_ms;
            let why = match text {
                None => LostWhy::Gone,
                Some(_) if early => LostWhy::TakenEarly,
                Some(_) => LostWhy::TakenOver,
            };
            self.lost(now, worker, fence, why);
        }
    }

    /// The lease is lost for `why`: what it reserved is still its own where every successor
    /// starts above it ([`LostWhy::rides`]), else the generators stop at once; a worker ID is
    /// acquired again, the namespace left as it is.
    fn lost(&mut self, now: Now, worker: u64, fence: u64, why: LostWhy) {
        self.note(Note::Lost { worker, why });
        self.retiring = self.current.take().filter(|g| why.rides() && g.valid(now));
        if !why.rides() {
            self.stops += 1;
        }
        self.lose(now, worker, fence, false);
    }

    /// The store was rolled back under the grant: stop at once, and have the namespace's
    /// marker written afresh before anything is granted again.
    /// `refresh`: the marker is to be written afresh (else a fence already did).
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
