//! The lease protocol as one state machine without I/O: what a holder of a worker ID knows,
//! and every decision it takes on it, with time and the store's replies given as inputs.
//!
//! The lease thread (`handle/renewal.rs`) drives it in production: it reads the clocks, makes
//! the store calls this machine asks for (acquire, renew with the record it computes, release
//! with its high water), and feeds back the answers; the generators ask it, through the fence
//! in `handle.rs`, how far they may issue. The model check and the seeded simulation
//! (`protocol/model.rs`, tests only) drive the same code with simulated clocks against
//! in-memory stores that fail in every way a store's fault model allows, so what they prove
//! is about this code, not about a copy of it.
//!
//! # The rules
//!
//! - **Skew.** A grant is taken only while the local clock and the store's agree within the
//!   tolerance ([`check_skew`]).
//! - **Two durations.** The TTL says how soon the store frees the worker ID of a holder that
//!   stopped renewing; the reservation `W` (at least the TTL) says how far ahead of its clock a
//!   holder reserves timestamps in the store, and so how long it issues without the store.
//! - **Floor.** A grant that carries a high water starts above it. One without (the store
//!   cannot vouch for the worker ID's history) starts above `since + W + tolerance`, where
//!   `since` is when the store began to know the namespace (its clock at this acquisition
//!   when it cannot say): above anything an earlier holder, who reserved at most `W` ahead of
//!   a store that has since forgotten it, may still issue ([`floor_of`]).
//! - **Record before issuing.** Every renewal records `max(local clock + W, high water)`
//!   before the fence may rise to it ([`Lease::renewal`], [`Lease::renewed`]).
//! - **Fence.** Generators issue only while `W - margin` has not passed on the monotonic
//!   clock since the start of the last acknowledged renewal, never above the acknowledged
//!   deadline, never before the floor ([`Lease::grant_until`]): a store that does not answer
//!   costs nothing for that long.
//! - **Its own worker ID again.** A grant after a loss, on the worker ID held before, without
//!   a record, less than `TTL - margin` after the last acknowledged renewal began, starts
//!   above this holder's own high water: the store still kept the lease when it forgot it,
//!   so no one else was granted the worker ID since ([`Lease::regrant`]). A store that kept
//!   the record also renews a lease that expired while no one took its worker ID (the stores
//!   check the token, not the expiry).
//! - **Release.** The final record is the highest timestamp any generator may have issued
//!   ([`Lease::high_water`]).
//! - **Fences never go backwards.** A grant after a loss asks for a fencing number above the
//!   last one held ([`Lease::last_fence`]).

use std::time::Duration;

use super::store::Grant;
use crate::fence::{FenceReason, GrantView, Refusal};

/// How far past the clock a generator on a lease issues before it asks the lease again: the
/// released lease records at most this much beyond the last issued tick, so the next holder
/// of the worker ID starts that close to its own clock.
pub(crate) const STEP_MS: i64 = 100;

/// The settings the protocol's decisions depend on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) struct Rules {
    /// How long the store keeps a lease without a renewal.
    pub(crate) ttl: Duration,
    /// How far ahead of its clock a holder reserves timestamps in the store (`W`, at least the
    /// TTL): how long it issues without hearing from the store.
    pub(crate) reservation: Duration,
    /// How long before the TTL runs out, counted from the start of the last acknowledged
    /// renewal, the holder stops issuing.
    pub(crate) margin: Duration,
    /// The largest difference allowed between the local clock and the store's.
    pub(crate) tolerance: Duration,
    /// How far past the clock a generator issues before asking again.
    pub(crate) step_ms: i64,
    /// Bugs a test plants to show that the model check and the simulation find them.
    #[cfg(test)]
    pub(crate) planted: Planted,
}

/// Bugs of the protocol that a test may plant (tests only).
#[cfg(test)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub(crate) struct Planted {
    /// A grant without a record starts at the store's clock instead of waiting out the TTL:
    /// the bug of a store that lost its data being trusted.
    pub(crate) trust_a_store_that_forgot: bool,
    /// A grant without a record waits out the TTL, not the reservation: the holder that
    /// issues on its reservation through an outage is forgotten.
    pub(crate) floor_ignores_reservation: bool,
    /// Renewals record `local clock + TTL` while the holder issues up to `W` ahead.
    pub(crate) reservation_not_recorded: bool,
    /// A grant after a loss on the worker ID held before starts above the holder's own high
    /// water however long ago its last renewal was acknowledged.
    pub(crate) own_worker_any_time: bool,
}

impl Rules {
    pub(crate) fn new(ttl: Duration, margin: Duration, tolerance: Duration) -> Self {
        Rules {
            ttl,
            reservation: ttl,
            margin,
            tolerance,
            step_ms: STEP_MS,
            #[cfg(test)]
            planted: Planted::default(),
        }
    }

    /// The same rules with the reservation `W` (never shorter than the TTL).
    pub(crate) fn with_reservation(mut self, reservation: Duration) -> Self {
        self.reservation = reservation.max(self.ttl);
        self
    }

    #[cfg(test)]
    fn ttl_ms(&self) -> i64 {
        millis(self.ttl)
    }

    fn reservation_ms(&self) -> i64 {
        millis(self.reservation)
    }

    fn tolerance_ms(&self) -> i64 {
        millis(self.tolerance)
    }

    /// How long after a renewal began its holder may issue: `W - margin`.
    pub(crate) fn validity_ns(&self) -> u64 {
        u64::try_from(self.reservation.saturating_sub(self.margin).as_nanos()).unwrap_or(u64::MAX)
    }

    /// How long after a renewal began the store surely still keeps the lease: `TTL - margin`.
    fn kept_ns(&self) -> u64 {
        u64::try_from(self.ttl.saturating_sub(self.margin).as_nanos()).unwrap_or(u64::MAX)
    }

    /// How far a new holder may find the previous holder's record ahead of its own clock.
    pub(crate) fn resume_window_ms(&self) -> i64 {
        self.step_ms.saturating_add(self.tolerance_ms())
    }
}

pub(crate) fn millis(d: Duration) -> i64 {
    i64::try_from(d.as_millis()).unwrap_or(i64::MAX)
}

/// Whether the store's clock, read somewhere between two readings of the local clock, agrees
/// with it within `tolerance`: the distance from the store's reading to that interval, so a
/// slow round trip is not taken for a skew. `Err` carries the local reading it was compared
/// with.
pub(crate) fn check_skew(local_before: i64, store_ms: i64, local_after: i64, tolerance: Duration) -> Result<(), i64> {
    let tolerance = millis(tolerance);
    if store_ms < local_before.saturating_sub(tolerance) {
        return Err(local_before);
    }
    if store_ms > local_after.saturating_add(tolerance) {
        return Err(local_after);
    }
    Ok(())
}

/// What a grant lets its generators issue above (its floor), and from when (`ready_ms`, on
/// the local clock): a grant with a record starts above it; one without waits out every
/// earlier holder, who may not know yet that its record vanished: everything it can still
/// issue lies at or below its last reservation, made before the store began to know the
/// namespace afresh (`since`, at the latest the store's clock now) plus `W`, plus the
/// tolerance between clocks. A namespace the store has known for longer than that starts
/// its never-used worker IDs at once.
pub(crate) fn floor_of(rules: &Rules, grant: &Grant) -> (Option<i64>, i64) {
    match grant.previous_high_water_ms {
        Some(recorded) => (Some(recorded), recorded.saturating_sub(rules.resume_window_ms())),
        #[cfg(test)]
        None if rules.planted.trust_a_store_that_forgot => (Some(grant.store_now_ms), grant.store_now_ms),
        // The wait is long: the lease becomes valid only past the floor, so that the first ID
        // does not wait for the clock itself.
        None => {
            let since = grant.namespace_since_ms.map_or(grant.store_now_ms, |since| since.min(grant.store_now_ms));
            #[cfg(test)]
            let window = if rules.planted.floor_ignores_reservation { rules.ttl_ms() } else { rules.reservation_ms() };
            #[cfg(not(test))]
            let window = rules.reservation_ms();
            let floor = since.saturating_add(window).saturating_add(rules.tolerance_ms());
            (Some(floor), floor.saturating_add(1))
        }
    }
}

/// Where a lease stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Phase {
    /// A grant is held (generators issue while it is valid and past its floor).
    Holding,
    /// The grant was lost; a new one is being acquired.
    Recovering,
    /// Released or abandoned: nothing is issued any more.
    Released,
}

/// What a holder knows of its lease: the state the generators read and the lease thread
/// changes, under one lock.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) struct Lease {
    pub(crate) phase: Phase,
    /// The grant held (or, while recovering, the last one).
    pub(crate) grant: Grant,
    /// Counts grants: a generator that saw another one switches to this one.
    pub(crate) epoch: u64,
    /// Everything earlier holders of the worker ID may have issued: their record, or the
    /// floor a grant without a record gets.
    pub(crate) floor_ms: Option<i64>,
    /// Generators issue once the local clock reaches this (Unix ms).
    pub(crate) ready_ms: i64,
    /// Monotonic nanoseconds (from the driver's anchor) until which this holder may issue.
    pub(crate) valid_until_ns: u64,
    /// When the last acknowledged renewal began (monotonic nanoseconds; `None` before the
    /// first).
    pub(crate) renewed_ns: Option<u64>,
    /// The fence deadline the store acknowledged: no timestamp above it is ever issued.
    pub(crate) bound_ms: i64,
    /// The highest timestamp any generator may have issued under the grant.
    pub(crate) issued_ms: i64,
}

/// A renewal to send: the grant, and the record to write with it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Renewal {
    pub(crate) grant: Grant,
    /// What the store records: the new fence deadline, never below the high water.
    pub(crate) record_ms: i64,
    /// The fence deadline it asks for (the local clock plus the TTL).
    deadline_ms: i64,
    epoch: u64,
}

/// What an acknowledged renewal did to the lease.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Renewed {
    /// The lease holds another grant, or none, since the renewal was sent: nothing changed.
    Stale,
    /// The grant's first renewal: it makes the grant valid.
    First,
    /// The validity was extended before it ran out.
    OnTime,
    /// The validity had run out; the generators resume.
    Late,
}

impl Lease {
    /// The lease of a first grant: holding, not valid until its first renewal is acknowledged.
    pub(crate) fn granted(grant: Grant, rules: &Rules) -> Lease {
        let (floor_ms, ready_ms) = floor_of(rules, &grant);
        Lease {
            phase: Phase::Holding,
            grant,
            epoch: 1,
            floor_ms,
            ready_ms,
            valid_until_ns: 0,
            renewed_ns: None,
            bound_ms: i64::MIN,
            issued_ms: i64::MIN,
        }
    }

    /// Installs a grant taken after a loss, at `now_ns` on the monotonic clock. Generators
    /// switch to it; those that stay on the same worker ID never go below their own last ID.
    ///
    /// A grant of the worker ID held before, without a record, taken less than `TTL - margin`
    /// after the last acknowledged renewal began, starts above this holder's own high water
    /// instead of waiting out `W`: the store kept the lease until it forgot it, so it granted
    /// the worker ID to no one else in between, and any holder granted it after the store
    /// forgot starts above `W` past that; a store that forgot, then granted it to that holder
    /// and forgot again, would have to hand it to us while that holder still had it.
    pub(crate) fn regrant(&mut self, grant: Grant, rules: &Rules, now_ns: u64) {
        let epoch = self.epoch + 1;
        #[cfg(test)]
        let recent = rules.planted.own_worker_any_time
            || self.renewed_ns.is_some_and(|at| now_ns < at.saturating_add(rules.kept_ns()));
        #[cfg(not(test))]
        let recent = self.renewed_ns.is_some_and(|at| now_ns < at.saturating_add(rules.kept_ns()));
        let own = recent
            && self.phase != Phase::Released
            && grant.worker == self.grant.worker
            && grant.previous_high_water_ms.is_none();
        let high_water = self.high_water();
        *self = Lease { epoch, ..Lease::granted(grant, rules) };
        if own {
            self.floor_ms = Some(high_water);
            self.ready_ms = high_water.saturating_sub(rules.resume_window_ms());
        }
    }

    /// The fencing number a grant after a loss must exceed, and the worker ID to ask for first.
    pub(crate) fn last_fence(&self) -> (u64, u64) {
        (self.grant.worker, self.grant.fence)
    }

    /// The renewal to send now, with the local clock at `now_ms`: it reserves `W` ahead.
    pub(crate) fn renewal(&self, now_ms: i64, rules: &Rules) -> Renewal {
        #[cfg(test)]
        if rules.planted.reservation_not_recorded {
            let deadline_ms = now_ms.saturating_add(millis(rules.reservation));
            let record_ms = now_ms.saturating_add(rules.ttl_ms()).max(self.high_water());
            return Renewal { grant: self.grant.clone(), record_ms, deadline_ms, epoch: self.epoch };
        }
        let deadline_ms = now_ms.saturating_add(rules.reservation_ms());
        Renewal {
            grant: self.grant.clone(),
            record_ms: deadline_ms.max(self.high_water()),
            deadline_ms,
            epoch: self.epoch,
        }
    }

    /// The store acknowledged `renewal`, which was sent at `started_ns` on the monotonic
    /// clock: the validity runs `W - margin` from then, the deadline rises.
    pub(crate) fn renewed(&mut self, renewal: &Renewal, started_ns: u64, rules: &Rules) -> Renewed {
        if self.phase != Phase::Holding || self.epoch != renewal.epoch {
            return Renewed::Stale;
        }
        let was_valid = started_ns < self.valid_until_ns;
        let first = self.bound_ms == i64::MIN;
        self.bound_ms = self.bound_ms.max(renewal.deadline_ms);
        self.valid_until_ns = started_ns.saturating_add(rules.validity_ns());
        self.renewed_ns = Some(self.renewed_ns.map_or(started_ns, |at| at.max(started_ns)));
        match (first, was_valid) {
            (true, _) => Renewed::First,
            (false, true) => Renewed::OnTime,
            (false, false) => Renewed::Late,
        }
    }

    /// Leaves the holding phase for `phase`; the generators stop at their next tick. Whether
    /// the phase changed (a released lease stays released).
    pub(crate) fn stop(&mut self, phase: Phase) -> bool {
        if self.phase == Phase::Released {
            return false;
        }
        self.valid_until_ns = 0;
        let changed = self.phase != phase;
        self.phase = phase;
        changed
    }

    /// Whether generators may issue now.
    pub(crate) fn issuing(&self, now_ns: u64, now_ms: i64) -> bool {
        self.phase == Phase::Holding && now_ns < self.valid_until_ns && now_ms >= self.ready_ms
    }

    /// Whether generators may not issue now for want of the store: a renewal overdue, or the
    /// lease lost.
    pub(crate) fn fenced(&self, now_ns: u64) -> bool {
        match self.phase {
            Phase::Recovering => true,
            Phase::Released => false,
            Phase::Holding => now_ns >= self.valid_until_ns,
        }
    }

    /// The highest timestamp a generator that issues under grant `epoch` may issue now,
    /// recorded as issued: the smaller of the acknowledged fence deadline and `from_ms` plus
    /// a short step (at least `min_step_ms`) within the validity. Refused while the lease may
    /// not issue, and when it holds another grant than `epoch`.
    pub(crate) fn grant_until(
        &mut self,
        now_ns: u64,
        now_ms: i64,
        from_ms: i64,
        min_step_ms: i64,
        epoch: u64,
        rules: &Rules,
    ) -> Result<i64, Refusal> {
        match self.phase {
            Phase::Recovering => return Err(Refusal::Fenced(FenceReason::Lost)),
            Phase::Released => return Err(Refusal::Fenced(FenceReason::Released)),
            Phase::Holding => {}
        }
        if now_ns >= self.valid_until_ns {
            return Err(Refusal::Fenced(FenceReason::NotRenewed {
                reservation: rules.reservation,
                margin: rules.margin,
            }));
        }
        if now_ms < self.ready_ms {
            return Err(Refusal::Fenced(FenceReason::WaitingOut { until_ms: self.floor_ms.unwrap_or(self.ready_ms) }));
        }
        if self.epoch != epoch {
            return Err(Refusal::Switch(self.view()));
        }
        let left_ms = i64::try_from((self.valid_until_ns - now_ns) / 1_000_000).unwrap_or(i64::MAX);
        let until = from_ms.saturating_add(left_ms.min(rules.step_ms.max(min_step_ms))).min(self.bound_ms);
        if until < from_ms {
            return Err(Refusal::Fenced(FenceReason::ClockAhead { now_ms: from_ms, bound_ms: self.bound_ms }));
        }
        self.issued_ms = self.issued_ms.max(until);
        Ok(until)
    }

    /// The grant as a generator sees it.
    pub(crate) fn view(&self) -> GrantView {
        GrantView { epoch: self.epoch, worker: self.grant.worker, floor_ms: self.floor_ms }
    }

    /// What the store must keep for the next holder of the worker ID: the last timestamp
    /// any generator under the grant may have issued, and never less than what earlier holders
    /// may have (0, the Unix epoch, when nothing was ever issued).
    pub(crate) fn high_water(&self) -> i64 {
        self.issued_ms.max(self.floor_ms.unwrap_or(0)).max(0)
    }
}

#[cfg(test)]
mod model;

#[cfg(test)]
mod tests {
    use super::*;

    fn grant(previous_high_water_ms: Option<i64>) -> Grant {
        Grant {
            worker: 3,
            token: "t".into(),
            fence: 9,
            previous_high_water_ms,
            store_now_ms: 1_000,
            namespace_since_ms: None,
        }
    }

    fn rules() -> Rules {
        Rules::new(Duration::from_millis(400), Duration::from_millis(100), Duration::from_millis(50))
    }

    #[test]
    fn skew_is_the_distance_to_the_round_trip() {
        let tolerance = Duration::from_millis(10);
        assert_eq!(check_skew(100, 95, 200, tolerance), Ok(()));
        assert_eq!(check_skew(100, 205, 200, tolerance), Ok(()));
        assert_eq!(check_skew(100, 89, 200, tolerance), Err(100));
        assert_eq!(check_skew(100, 211, 200, tolerance), Err(200));
        assert_eq!(check_skew(i64::MIN, i64::MAX, i64::MAX, tolerance), Ok(()));
    }

    #[test]
    fn a_grant_without_a_record_waits_out_the_ttl_and_the_tolerance() {
        let rules = rules();
        assert_eq!(floor_of(&rules, &grant(Some(5_000))), (Some(5_000), 5_000 - 150));
        assert_eq!(floor_of(&rules, &grant(None)), (Some(1_450), 1_451));
    }

    #[test]
    fn a_reservation_is_recorded_ahead_and_rides_through_an_outage() {
        // TTL 400 ms, reservation 2 s, margin 100 ms.
        let rules = rules().with_reservation(Duration::from_secs(2));
        assert_eq!(rules.with_reservation(Duration::from_millis(1)).reservation, rules.ttl, "never below the TTL");
        let mut lease = Lease::granted(grant(Some(500)), &rules);
        let renewal = lease.renewal(1_000, &rules);
        assert_eq!(renewal.record_ms, 3_000, "the store records W ahead before the fence rises");
        lease.renewed(&renewal, 0, &rules);
        // No renewal for 1.8 s (W - margin): still issuing, up to the recorded reservation.
        assert_eq!(lease.grant_until(1_799_000_000, 2_799, 2_799, 1, 1, &rules).ok(), Some(2_899));
        let fenced = lease.grant_until(1_900_000_000, 2_900, 2_900, 1, 1, &rules);
        assert!(matches!(fenced, Err(Refusal::Fenced(FenceReason::NotRenewed { .. }))), "{fenced:?}");
        // A grant without a record waits out the reservation from when the store began to
        // know the namespace: at once in a namespace known for longer.
        let forgot = |since| Grant { namespace_since_ms: since, ..grant(None) };
        assert_eq!(floor_of(&rules, &forgot(None)), (Some(3_050), 3_051));
        assert_eq!(floor_of(&rules, &forgot(Some(500))), (Some(2_550), 2_551));
        assert_eq!(floor_of(&rules, &forgot(Some(-5_000))), (Some(-2_950), -2_949));
        assert_eq!(floor_of(&rules, &forgot(Some(9_000))), (Some(3_050), 3_051), "never after the store's clock");
    }

    #[test]
    fn its_own_worker_id_again_soon_after_a_renewal_starts_above_its_own_high_water() {
        let rules = rules().with_reservation(Duration::from_secs(2));
        let holding = || {
            let mut lease = Lease::granted(grant(Some(500)), &rules);
            let renewal = lease.renewal(1_000, &rules);
            lease.renewed(&renewal, 1_000_000_000, &rules);
            assert_eq!(lease.grant_until(1_000_000_000, 1_000, 1_000, 1, 1, &rules).ok(), Some(1_100));
            lease
        };
        // The store forgot it within TTL - margin (300 ms) of the renewal: no one else could
        // have had the worker ID, so the grant starts above this holder's own IDs.
        let mut soon = holding();
        soon.regrant(Grant { fence: 10, ..grant(None) }, &rules, 1_299_000_000);
        assert_eq!((soon.floor_ms, soon.ready_ms), (Some(1_100), 1_100 - 150), "above what it issued");
        // Later, another holder may have had it since: the grant waits out the reservation.
        let mut late = holding();
        late.regrant(Grant { fence: 10, ..grant(None) }, &rules, 1_300_000_000);
        assert_eq!(late.floor_ms, Some(3_050));
        // Another worker ID, or one with a record, follows the record or waits.
        let mut other = holding();
        other.regrant(Grant { worker: 4, ..grant(None) }, &rules, 1_000_000_001);
        assert_eq!(other.floor_ms, Some(3_050));
        let mut recorded = holding();
        recorded.regrant(grant(Some(2_500)), &rules, 1_000_000_001);
        assert_eq!(recorded.floor_ms, Some(2_500));
    }

    #[test]
    fn the_fence_rises_only_with_an_acknowledged_renewal() {
        let rules = rules();
        let mut lease = Lease::granted(grant(Some(500)), &rules);
        assert!(matches!(lease.grant_until(0, 1_000, 1_000, 1, 1, &rules), Err(Refusal::Fenced(_))));
        let renewal = lease.renewal(1_000, &rules);
        assert_eq!(renewal.record_ms, 1_400);
        assert_eq!(lease.renewed(&renewal, 1_000_000, &rules), Renewed::First);
        // Valid for TTL - margin = 300 ms from the renewal's start; never above the deadline.
        assert_eq!(lease.grant_until(2_000_000, 1_001, 1_001, 1, 1, &rules).ok(), Some(1_101));
        assert_eq!(lease.grant_until(250_000_000, 1_350, 1_350, 1, 1, &rules).ok(), Some(1_400));
        assert!(lease.grant_until(301_000_000, 1_400, 1_400, 1, 1, &rules).is_err());
        assert_eq!(lease.high_water(), 1_400);
        // A renewal acknowledged after the validity ran out is late; one for an older grant
        // changes nothing.
        let late = lease.renewal(1_500, &rules);
        assert_eq!(lease.renewed(&late, 500_000_000, &rules), Renewed::Late);
        lease.regrant(grant(None), &rules, 600_000_000);
        assert_eq!(lease.epoch, 2);
        assert_eq!(lease.renewed(&late, 600_000_000, &rules), Renewed::Stale);
        assert_eq!(lease.valid_until_ns, 0);
        assert!(lease.stop(Phase::Recovering));
        assert!(lease.fenced(0));
        assert!(lease.stop(Phase::Released));
        assert!(!lease.stop(Phase::Holding), "a released lease stays released");
    }
}
