//! The lease protocol: the rules a holder of a worker ID follows (stated for readers in `docs/lease-rules.md`),
//! written once, and the holder as one state machine without I/O ([`holder::Machine`]).

pub(crate) mod holder;
pub(crate) mod record;
pub(crate) mod saved;

use std::time::Duration;

use self::record::{Marker, Record};
use super::store::support::ttl_ms;
use super::store::{LeaseError, MAX_TTL};

/// The default lease TTL: 10 s, how soon a crashed holder's worker ID frees.
pub const DEFAULT_TTL: Duration = Duration::from_secs(10);

/// The default fencing margin: 2 s, or a fifth of the TTL where that is shorter.
pub const DEFAULT_MARGIN: Duration = Duration::from_secs(2);

/// The default reservation `W`: 60 s, or the TTL where that is longer. See
/// [`WorkerLeaseBuilder::reservation`](super::WorkerLeaseBuilder::reservation).
///
/// ```
/// use std::time::Duration;
/// use typed_snowflake::worker::lease::DEFAULT_RESERVATION;
///
/// assert_eq!(DEFAULT_RESERVATION, Duration::from_secs(60));
/// ```
pub const DEFAULT_RESERVATION: Duration = Duration::from_secs(60);

/// The timing settings a lease was asked for, `None` where it takes the default.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Asked {
    pub(crate) ttl: Duration,
    pub(crate) reservation: Option<Duration>,
    pub(crate) margin: Option<Duration>,
    pub(crate) renew_every: Option<Duration>,
    pub(crate) tolerance: Duration,
}

/// How far past the clock a generator on a lease issues before it asks again.
pub(crate) const STEP_MS: i64 = 100;

/// Whether a test planted bug `$bug` in `$rules` (`model::Planted`); never outside tests.
macro_rules! planted {
    ($rules:expr, $bug:ident) => {{
        #[cfg(test)]
        let planted = $rules.planted.$bug;
        #[cfg(not(test))]
        let planted = {
            let _ = &$rules;
            false
        };
        planted
    }};
}

/// The settings the protocol's decisions depend on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) struct Rules {
    pub(crate) ttl: Duration,
    /// `W`.
    pub(crate) reservation: Duration,
    pub(crate) margin: Duration,
    /// `ε`.
    pub(crate) tolerance: Duration,
    pub(crate) renew_every: Duration,
    /// [`STEP_MS`].
    pub(crate) step_ms: i64,
    /// Bugs a test plants to show that the model check and the simulation find them.
    #[cfg(test)]
    pub(crate) planted: model::Planted,
}

impl Rules {
    /// The rules every lease decides with: the defaults applied and settings under which the
    /// rules cannot hold refused (`docs/lease-rules.md`, "The defaults").
    pub(crate) fn new(asked: Asked) -> Result<Self, LeaseError> {
        let Asked { ttl, reservation, margin, renew_every, tolerance } = asked;
        ttl_ms(ttl)?;
        let bad = |reason: String| Err(LeaseError::BadSettings { reason });
        let reservation = match reservation {
            Some(w) if w < ttl || w > MAX_TTL => {
                return bad(format!("the reservation ({w:?}) must lie between the TTL ({ttl:?}) and {MAX_TTL:?}"));
            }
            Some(w) => w,
            None => DEFAULT_RESERVATION.max(ttl),
        };
        let margin = margin.unwrap_or(DEFAULT_MARGIN.min(ttl / 5));
        if margin >= ttl {
            return bad(format!("the margin ({margin:?}) must be shorter than the TTL ({ttl:?})"));
        }
        let renew_every = renew_every.unwrap_or(ttl / 3);
        if renew_every.is_zero() || renew_every >= ttl - margin {
            return bad(format!(
                "renewals every {renew_every:?} must be more frequent than TTL - margin ({:?}), and not 0",
                ttl - margin
            ));
        }
        Ok(Rules {
            ttl,
            reservation,
            margin,
            tolerance,
            renew_every,
            step_ms: STEP_MS,
            #[cfg(test)]
            planted: model::Planted::default(),
        })
    }

    pub(crate) fn ttl_ms(&self) -> i64 {
        millis(self.ttl)
    }

    /// `W`, or the TTL where a test planted that bug.
    pub(crate) fn reservation_ms(&self) -> i64 {
        if planted!(self, reservation_not_recorded) { self.ttl_ms() } else { millis(self.reservation) }
    }

    pub(crate) fn tolerance_ms(&self) -> i64 {
        millis(self.tolerance)
    }

    /// The high water a write sent at `at_ms` records, never below `floor_ms` (rule 1).
    pub(crate) fn reserve(&self, at_ms: i64, floor_ms: i64) -> i64 {
        at_ms.saturating_add(self.reservation_ms()).max(floor_ms)
    }

    /// How far and until when an acknowledged write sent at `at_ms`/`at_ns` lets it issue: `W`, `W - margin` (rule 2).
    pub(crate) fn acknowledged(&self, at_ms: i64, at_ns: u64) -> (i64, u64) {
        let valid_ns = u64::try_from(self.reservation.saturating_sub(self.margin).as_nanos()).unwrap_or(u64::MAX);
        (at_ms.saturating_add(millis(self.reservation)), at_ns.saturating_add(valid_ns))
    }

    /// How often a held lease renews, in ns.
    pub(crate) fn renew_every_ns(&self) -> u64 {
        u64::try_from(self.renew_every.as_nanos()).unwrap_or(u64::MAX)
    }

    /// How far a new holder may find the previous holder's record ahead of its own clock.
    pub(crate) fn resume_window_ms(&self) -> i64 {
        self.step_ms.saturating_add(self.tolerance_ms())
    }

    /// Whether `marker` vouches for `record` of `worker` ([`Marker::vouches`]).
    pub(crate) fn vouches(&self, marker: &Marker, worker: u64, record: &Record) -> bool {
        planted!(self, any_generation) || marker.vouches(worker, record)
    }

    /// Whether a grant of a worker ID at or above the marker's `next` raises it (always).
    pub(crate) fn raises_next(&self) -> bool {
        !planted!(self, next_not_raised)
    }

    /// Whether its own record read back with a value it did not write is a rollback (always).
    pub(crate) fn notices_rollback(&self) -> bool {
        !planted!(self, rollback_unnoticed)
    }

    /// Whether a rollback noticed drops the generators' cached limits (always).
    pub(crate) fn rollback_stops_generators(&self) -> bool {
        !planted!(self, rollback_keeps_limits)
    }

    /// Whether a renewal under another incarnation than its grant's loses the lease (always).
    pub(crate) fn loses_on_another_incarnation(&self) -> bool {
        !planted!(self, renews_across_incarnations)
    }

    /// Whether a granted worker ID whose record is gone counts as granted (always).
    fn counts_gone_as_granted(&self) -> bool {
        !planted!(self, gone_is_never_used)
    }

    /// The floor of a grant the store cannot vouch for: `W` + `ε` past the store's clock.
    pub(crate) fn unvouched_floor(&self, now_ms: i64) -> i64 {
        if planted!(self, floor_ignores_reservation) {
            return now_ms.saturating_add(self.ttl_ms()).saturating_add(self.tolerance_ms());
        }
        if planted!(self, floor_ignores_tolerance) {
            return now_ms.saturating_add(millis(self.reservation));
        }
        now_ms.saturating_add(millis(self.reservation)).saturating_add(self.tolerance_ms())
    }
}

pub(crate) fn millis(d: Duration) -> i64 {
    i64::try_from(d.as_millis()).unwrap_or(i64::MAX)
}

/// Whether the store's clock, read between two readings of the local clock, lies within
/// `tolerance` of that interval (a slow round trip is no skew); `Err` has the local reading.
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

/// Why a grant starts where it does.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Basis {
    /// Above the high water of a record the store vouches for.
    Record,
    /// Never granted under the marker: above what holders from before it may issue.
    NeverGranted,
    /// Never granted in a namespace declared new: at once.
    Declared,
    /// The store cannot vouch for the record (gone, or written under another marker).
    Unvouched,
}

/// The one rule for trusting a record (docs/lease-rules.md rule 3): the floor of a grant of
/// `worker`, read with `marker` (of this incarnation) at `now_ms` on the store's clock.
pub(crate) fn floor_of(
    rules: &Rules,
    marker: &Marker,
    worker: u64,
    record: Option<&Record>,
    now_ms: i64,
) -> (i64, Basis) {
    let granted = worker < marker.next;
    match record {
        Some(record) if rules.vouches(marker, worker, record) => (record.high_water_ms, Basis::Record),
        Some(_) => (rules.unvouched_floor(now_ms), Basis::Unvouched),
        None if granted && rules.counts_gone_as_granted() => (rules.unvouched_floor(now_ms), Basis::Unvouched),
        None if marker.declared => (i64::MIN, Basis::Declared),
        None => (rules.unvouched_floor(marker.since_ms.min(now_ms)), Basis::NeverGranted),
    }
}

/// A marker written afresh (rule 4): a new generation since `now_ms`, its `next` above what
/// `old` may have granted and the highest record.
pub(crate) fn fresh_marker(
    old: Option<&Marker>,
    highest: Option<u64>,
    now_ms: i64,
    incarnation: &str,
    generation: u64,
    declared: bool,
) -> Marker {
    Marker {
        rev: old.map_or(1, |m| m.rev + 1),
        generation,
        since_ms: now_ms,
        next: old.map_or(0, |m| m.next).max(highest.map_or(0, |h| h.saturating_add(1))),
        declared,
        incarnation: incarnation.to_owned(),
    }
}

/// Whether `marker` was written in this `incarnation` of the store (rule 4).
pub(crate) fn marker_holds(rules: &Rules, marker: Option<&Marker>, incarnation: &str) -> bool {
    if planted!(rules, any_incarnation) {
        return marker.is_some();
    }
    marker.is_some_and(|m| m.incarnation == incarnation)
}

#[cfg(test)]
mod model;

#[cfg(test)]
mod tests {
    use super::record::Holder;
    use super::*;

    fn rules() -> Rules {
        Rules::of(
            Duration::from_millis(400),
            Duration::from_secs(2),
            Duration::from_millis(100),
            Duration::from_millis(50),
        )
    }

    fn marker() -> Marker {
        Marker { rev: 1, generation: 9, since_ms: 1_000, next: 4, declared: false, incarnation: "i".into() }
    }

    fn record(generation: u64) -> Record {
        Record {
            rev: 3,
            fence: 5,
            expires_ms: 0,
            high_water_ms: 7_000,
            generation,
            holder: Some(Holder { token: "0".repeat(32), name: "h:1".into() }),
        }
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
    fn a_record_is_trusted_only_under_its_marker() {
        let (rules, marker) = (rules(), marker());
        let now = 10_000;
        // Vouched: its high water.
        assert_eq!(floor_of(&rules, &marker, 2, Some(&record(9)), now), (7_000, Basis::Record));
        // Another generation, or a worker ID beyond `next`: W past now, plus the tolerance.
        assert_eq!(floor_of(&rules, &marker, 2, Some(&record(8)), now), (12_050, Basis::Unvouched));
        assert_eq!(floor_of(&rules, &marker, 4, Some(&record(9)), now), (12_050, Basis::Unvouched));
        // Gone, though granted: the same.
        assert_eq!(floor_of(&rules, &marker, 3, None, now), (12_050, Basis::Unvouched));
        // Never granted: W past since; never after now; at once when declared new.
        assert_eq!(floor_of(&rules, &marker, 4, None, now), (3_050, Basis::NeverGranted));
        assert_eq!(floor_of(&rules, &marker, 4, None, 500), (2_550, Basis::NeverGranted));
        let declared = Marker { declared: true, ..marker.clone() };
        assert_eq!(floor_of(&rules, &declared, 4, None, now), (i64::MIN, Basis::Declared));
        assert_eq!(
            floor_of(&rules, &declared, 3, None, now),
            (12_050, Basis::Unvouched),
            "declared says nothing of a gone record"
        );
    }

    #[test]
    fn a_marker_belongs_to_one_incarnation() {
        let rules = rules();
        assert!(marker_holds(&rules, Some(&marker()), "i"));
        assert!(!marker_holds(&rules, Some(&marker()), "j"));
        assert!(!marker_holds(&rules, None, "i"));
    }
}
