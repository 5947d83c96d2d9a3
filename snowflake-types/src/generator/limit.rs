//! The issuing limit, raised only here: a new high-water reservation, a lease's fence
//! checked, the end of the time field; and the moves that set where issuing resumes (after a
//! high-water mark, on a lease's new grant).

use std::sync::atomic::Ordering;

use super::Generator;
use super::high_water::raise_mark;
use super::state::{self, Packing};
use crate::error::GenerateError;
use crate::fence::{Fence, FenceReason, GrantView, Refusal};

impl Generator {
    /// Start after a persisted mark: the last issued state becomes the mark's tick with a
    /// full sequence, so the next ID lies in a later tick.
    ///
    /// That state lies beyond the issuing limit (nothing is reserved yet in this process),
    /// which is how `take` tells the resumed mark from a tick this generator issued: a
    /// clock behind it by at most the reservation is waited for, not a step back.
    pub(super) fn resume_after(&self, mark_ms: i64) -> Result<(), GenerateError> {
        if let Some(tick) = self.tick_of_mark(mark_ms)? {
            // The clock is not moved: it may be shared by every type of the process.
            self.hot.state.store(self.state_of(tick, self.worker(), self.max_seq), Ordering::Relaxed);
        }
        Ok(())
    }

    /// The tick of a mark to issue above (a high-water mark, a lease's floor): `None` before
    /// the epoch, where every tick lies above it; past the time field, the time is exhausted.
    pub(super) fn tick_of_mark(&self, mark_ms: i64) -> Result<Option<u64>, GenerateError> {
        if mark_ms < self.epoch_ms {
            return Ok(None);
        }
        self.layout.tick_of(mark_ms).map(Some).map_err(|_| self.time_exhausted())
    }

    /// Moves the generator to a lease's new grant: its worker ID, above what earlier holders
    /// of it may have issued and above this generator's own last ID (so its IDs keep
    /// increasing). One compare-and-swap installs it, so every ID is made under one grant or
    /// the other; the limit falls to 0, so the next ID asks the lease again.
    pub(super) fn switch_to(&self, view: GrantView) -> Result<(), GenerateError> {
        if view.worker > self.layout.max_worker() {
            let namespace = self.lease.as_ref().map_or_else(|| "".into(), |lease| lease.namespace().into());
            return self.fail(GenerateError::LeasedWorkerOutOfRange {
                type_name: self.name,
                namespace,
                worker: view.worker,
                max: self.layout.max_worker(),
            });
        }
        let floor_tick = match view.floor_ms.map(|ms| self.tick_of_mark(ms)).transpose() {
            Ok(tick) => tick.flatten().unwrap_or(0),
            Err(e) => return self.fail(e),
        };
        state::switch(&self.hot.state, &self.limit.0, floor_tick, view.worker, Packing::of(&self.layout));
        self.worker.store(view.worker, Ordering::Relaxed);
        self.lease_epoch.store(view.epoch, Ordering::Relaxed);
        Ok(())
    }

    /// The reservation in ticks (0 without a high-water file): how far a predecessor's mark
    /// can lie ahead of the clock after a restart in which the clock did not step back.
    pub(super) fn reserve_ticks(&self) -> u64 {
        let reserve = self.high_water.as_ref().map_or(0, |hw| hw.reserve_ticks);
        // A leased worker ID's previous holder recorded at most a lease step past its clock,
        // which agreed with ours within the lease's clock tolerance.
        let lease = self
            .lease
            .as_ref()
            .map_or(0, |lease| lease.resume_window_ms().unsigned_abs().div_ceil(self.unit_ms.unsigned_abs().max(1)));
        reserve.max(lease)
    }

    /// The last tick a high-water mark can name. The mark is Unix milliseconds in an `i64`;
    /// a time field that outlasts them (61 or more time bits counting seconds) has ticks
    /// beyond `i64::MAX`, and a mark saturated there would read back as an earlier tick
    /// than the one reserved: a restart would then repeat the IDs in between.
    pub(super) fn last_markable_tick(&self) -> u64 {
        self.layout.tick_of(i64::MAX).unwrap_or(self.layout.max_ticks())
    }

    /// Raises the issuing limit to cover `tick`, the tick about to be issued: writes a new
    /// high-water reservation, or fails at the end of the time field.
    ///
    /// The reservation runs `reserve` past `tick`, which is the clock's tick except while
    /// `Borrow` runs ahead after a step back; then too there is one write per reservation.
    /// A restarted generator waits for its clock to pass the mark instead of borrowing past
    /// it, so restarts quicker than `reserve` do not push the mark further ahead each time.
    pub(super) fn extend_limit(&self, tick: u64) -> Result<(), GenerateError> {
        if tick > self.layout.max_ticks() {
            return self.fail(self.time_exhausted());
        }
        if self.high_water.is_none() && self.lease.is_none() {
            // Nothing to reserve or check: the limit is the end of the time field.
            self.limit.0.store(self.layout.max_ticks(), Ordering::Release);
            return Ok(());
        }
        let _guard = self.extend_lock.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        if self.limit.0.load(Ordering::Relaxed) >= tick {
            return Ok(());
        }
        let mut new_limit = self.layout.max_ticks();
        if let Some(lease) = &self.lease {
            match self.lease_limit(lease.as_ref(), tick)? {
                Some(limit) => new_limit = limit,
                // Moved to a new grant: the caller takes its state and tries again.
                None => return Ok(()),
            }
        }
        if let Some(hw) = &self.high_water {
            let end = self.last_markable_tick();
            if tick > end {
                return self.fail(self.time_exhausted());
            }
            // Tick 0 is never issued under a reservation (see `build`), so 0 reserves nothing.
            if hw.reserved.load(Ordering::Relaxed) < tick {
                let reserved = tick.saturating_add(hw.reserve_ticks).min(end);
                // The last millisecond of the reserved tick; for the tick that holds
                // `i64::MAX`, `i64::MAX` itself. Either reads back as exactly `reserved`.
                let mark_ms = self.layout.tick_start_ms(reserved).saturating_add(self.unit_ms - 1);
                match raise_mark(&hw.path, mark_ms) {
                    Ok(true) => {
                        self.counters.high_water_writes.fetch_add(1, Ordering::Relaxed);
                        crate::events::high_water_written(self.name, self.worker(), &hw.path, mark_ms);
                    }
                    // The file already holds a mark at least this high: it covers the reservation.
                    Ok(false) => {}
                    Err(e) => return self.fail(e),
                }
                hw.reserved.store(reserved, Ordering::Relaxed);
            }
            new_limit = new_limit.min(hw.reserved.load(Ordering::Relaxed));
        }
        // Release: a thread that sees the new limit also sees that the mark is on disk and
        // that the lease recorded it.
        self.limit.0.store(new_limit, Ordering::Release);
        // A lease lost or released meanwhile dropped the limit to 0 before this store, or is
        // seen here: either way the limit ends at 0.
        if let Some(lease) = &self.lease
            && !lease.holds(self.lease_epoch.load(Ordering::Relaxed))
        {
            self.limit.0.store(0, Ordering::Release);
        }
        Ok(())
    }

    /// The last tick the lease lets this generator issue in, at least `tick`, or the fence;
    /// `None` when the generator moved to the lease's new grant instead.
    pub(super) fn lease_limit(&self, lease: &dyn Fence, tick: u64) -> Result<Option<u64>, GenerateError> {
        let fenced =
            |reason| GenerateError::Fenced { namespace: lease.namespace().into(), worker: self.worker(), reason };
        // From the later of the clock and the tick asked for: `Borrow` and a resumed floor
        // may ask for ticks ahead of the clock, within the fence deadline.
        let from_ms = self.clock.now_ms().max(self.layout.tick_start_ms(tick));
        let until = match lease.grant_until(from_ms, self.unit_ms, self.lease_epoch.load(Ordering::Relaxed)) {
            Ok(until) => until,
            Err(Refusal::Fenced(reason)) => return self.fail(fenced(reason)),
            Err(Refusal::Switch(view)) => return self.switch_to(view).map(|()| None),
        };
        // The last tick that ends at or before `until`.
        let last = match self.layout.tick_of(until) {
            Ok(t) if self.layout.tick_start_ms(t).saturating_add(self.unit_ms - 1) <= until => Some(t),
            Ok(t) => t.checked_sub(1),
            Err(_) => Some(self.layout.max_ticks()),
        };
        match last {
            Some(last) if last >= tick => Ok(Some(last)),
            _ => {
                self.fail(fenced(FenceReason::ClockAhead { now_ms: self.layout.tick_start_ms(tick), bound_ms: until }))
            }
        }
    }
}
