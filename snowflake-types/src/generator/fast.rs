//! The hot path: one relaxed load of the published millisecond and one compare-and-swap.

use std::sync::atomic::Ordering;

use super::{Generator, id_in};
use crate::error::GenerateError;
use crate::layout::Layout;

impl Generator {
    /// The next ID as a raw `i64`.
    #[inline]
    pub fn next_raw(&self) -> Result<i64, GenerateError> {
        match self.fast(&self.layout) {
            Some(raw) => Ok(raw),
            None => self.next_slow(),
        }
    }

    /// [`Generator::next_raw`] for a generator built with `layout`, passed as a constant
    /// (a derived type's `LAYOUT`) so that every shift, mask and the epoch fold into the
    /// caller's code.
    #[inline(always)]
    pub(crate) fn next_with(&self, layout: &Layout) -> Result<i64, GenerateError> {
        debug_assert_eq!(*layout, self.layout, "a generator serves only the layout it was built with");
        match self.fast(layout) {
            Some(raw) => Ok(raw),
            None => self.next_slow(),
        }
    }

    /// The hot path: one relaxed load of the published millisecond and one CAS. `None`
    /// sends every unusual case (no cached clock, a clock before the epoch or behind the
    /// last ID, a full sequence, a tick past the reservation, a random sequence start) to
    /// the slow path, which reads the clock precisely.
    #[inline(always)]
    pub(super) fn fast(&self, layout: &Layout) -> Option<i64> {
        let cached = self.cached?;
        let since = cached.load(Ordering::Relaxed) - layout.epoch_ms();
        if since < 0 {
            return None;
        }
        let unit = layout.unit().as_millis();
        let now = if unit == 1 { since } else { since / unit }.cast_unsigned();
        let seq_bits = layout.seq_bits();
        let tick_shift = layout.worker_bits() + seq_bits;
        let max_seq = layout.max_seq();
        let mut cur = self.hot.state.load(Ordering::Relaxed);
        loop {
            let last = cur >> tick_shift;
            let next = if now == last && cur & max_seq != max_seq {
                cur + 1
            } else if now > last && self.random_start == 0 && now <= self.limit.0.load(Ordering::Acquire) {
                // The worker comes from the state it follows: a switch to another grant is a
                // CAS on the state, so this CAS fails across one.
                (now << tick_shift) | (cur & (layout.max_worker() << seq_bits))
            } else {
                return None;
            };
            // Uniqueness and order need no more than Relaxed: they come from the single
            // modification order of this one atomic, in which every CAS reads the value
            // just before its own. Release is for the slow path (see `take`): a caller that
            // loads this state with Acquire also sees the clock reading this ID was stamped
            // with, so it does not take this ID's tick for a clock step back. On x86-64 it
            // is the same `lock cmpxchg` as Relaxed; on AArch64, `casl` instead of `cas`.
            match self.hot.state.compare_exchange_weak(cur, next, Ordering::Release, Ordering::Relaxed) {
                Ok(_) => return Some(id_in(next, layout)),
                Err(actual) => cur = actual,
            }
        }
    }
}
