//! The hot path: one relaxed load of the published millisecond and one compare-and-swap.

use std::sync::atomic::Ordering;

use super::state::{self, Packing};
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
        state::issue(&self.hot.state, &self.limit.0, now, Packing::of(layout), self.random_start == 0)
            .map(|next| id_in(next, layout))
    }
}
