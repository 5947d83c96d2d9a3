//! The compare-and-swap steps on the packed state that the threads of a generator race on:
//! the hot path's issue and the move to a lease's new grant. They are written over
//! [`Atomic64`] so that the model check below runs the very code the generator runs, on
//! `loom`'s atomics, which explore the interleavings of a few threads (every one within a
//! bound of preemptions) and the values each load may read under the memory orderings; the
//! generator runs them on std's `AtomicU64`, monomorphized and inlined, the same
//! instructions as before.

use std::sync::atomic::{AtomicU64, Ordering};

use crate::layout::Layout;

/// The operations on a 64-bit atomic that the steps use.
pub(super) trait Atomic64 {
    fn load(&self, order: Ordering) -> u64;
    fn store(&self, value: u64, order: Ordering);
    fn compare_exchange(&self, current: u64, new: u64, success: Ordering, failure: Ordering) -> Result<u64, u64>;
    fn compare_exchange_weak(&self, current: u64, new: u64, success: Ordering, failure: Ordering) -> Result<u64, u64>;
}

impl Atomic64 for AtomicU64 {
    #[inline(always)]
    fn load(&self, order: Ordering) -> u64 {
        AtomicU64::load(self, order)
    }

    #[inline(always)]
    fn store(&self, value: u64, order: Ordering) {
        AtomicU64::store(self, value, order);
    }

    #[inline(always)]
    fn compare_exchange(&self, current: u64, new: u64, success: Ordering, failure: Ordering) -> Result<u64, u64> {
        AtomicU64::compare_exchange(self, current, new, success, failure)
    }

    #[inline(always)]
    fn compare_exchange_weak(&self, current: u64, new: u64, success: Ordering, failure: Ordering) -> Result<u64, u64> {
        AtomicU64::compare_exchange_weak(self, current, new, success, failure)
    }
}

/// Where the fields lie in a packed state: `tick << tick_shift | worker << seq_bits | seq`.
#[derive(Clone, Copy, Debug)]
pub(super) struct Packing {
    pub(super) tick_shift: u32,
    pub(super) seq_bits: u32,
    pub(super) max_seq: u64,
    pub(super) max_worker: u64,
}

impl Packing {
    /// The packing of `layout`'s states (constants, where `layout` is one).
    #[inline(always)]
    pub(super) fn of(layout: &Layout) -> Packing {
        let seq_bits = layout.seq_bits();
        Packing {
            tick_shift: layout.worker_bits() + seq_bits,
            seq_bits,
            max_seq: layout.max_seq(),
            max_worker: layout.max_worker(),
        }
    }
}

/// The hot path's step: issues the state after the last one, in the tick `now`, with one
/// compare-and-swap. In the last state's tick while its sequence lasts; in a later tick when
/// `fresh_ticks` (no random sequence start) and the limit covers `now`. `None` for every other
/// case (a spent sequence, a clock behind, a tick past the limit), which the slow path takes.
#[inline(always)]
pub(super) fn issue<A: Atomic64>(state: &A, limit: &A, now: u64, packing: Packing, fresh_ticks: bool) -> Option<u64> {
    let Packing { tick_shift, seq_bits, max_seq, max_worker } = packing;
    let mut cur = state.load(Ordering::Relaxed);
    loop {
        let last = cur >> tick_shift;
        let next = if now == last && cur & max_seq != max_seq {
            cur + 1
        } else if now > last && fresh_ticks && now <= limit.load(Ordering::Acquire) {
            // The worker comes from the state it follows: a switch to another grant is a
            // CAS on the state, so this CAS fails across one.
            (now << tick_shift) | (cur & (max_worker << seq_bits))
        } else {
            return None;
        };
        // Uniqueness and order need no more than Relaxed: they come from the single
        // modification order of this one atomic, in which every CAS reads the value
        // just before its own. Release is for the slow path (see `take`): a caller that
        // loads this state with Acquire also sees the clock reading this ID was stamped
        // with, so it does not take this ID's tick for a clock step back. On x86-64 it
        // is the same `lock cmpxchg` as Relaxed; on AArch64, `casl` instead of `cas`.
        match state.compare_exchange_weak(cur, next, Ordering::Release, Ordering::Relaxed) {
            Ok(_) => return Some(next),
            Err(actual) => cur = actual,
        }
    }
}

/// Moves the state to `worker`, in a tick at or after both the last state's and
/// `floor_tick`, with its sequence spent: the next state issued lies in a later tick, above
/// every state before. The limit falls to 0 first, so that no later tick is issued before
/// the new grant is checked. One compare-and-swap installs it, so every state issued is the
/// old grant's or the new one's, in that order.
#[inline]
pub(super) fn switch<A: Atomic64>(state: &A, limit: &A, floor_tick: u64, worker: u64, packing: Packing) {
    let Packing { tick_shift, seq_bits, max_seq, .. } = packing;
    limit.store(0, Ordering::Release);
    let mut cur = state.load(Ordering::Acquire);
    loop {
        let tick = (cur >> tick_shift).max(floor_tick);
        let next = (tick << tick_shift) | (worker << seq_bits) | max_seq;
        match state.compare_exchange(cur, next, Ordering::AcqRel, Ordering::Acquire) {
            Ok(_) => return,
            Err(actual) => cur = actual,
        }
    }
}

/// The steps under `loom`: the interleavings (up to 2 preemptions) of two threads issuing on
/// the hot path while a third moves the generator to a new grant (its lease lost, the new
/// worker ID checked), with fixed clock readings per call. What must hold in each: no state
/// issued twice, each thread's states increasing, the generator left on the new worker ID,
/// and every state of the new worker ID above every state of the old one and above the new
/// grant's floor. A load and a store in place of either compare-and-swap fails it at once
/// (a state issued twice, or the move lost). About 4 s in a debug build.
#[cfg(test)]
mod model {
    use std::sync::Arc;
    use std::sync::atomic::Ordering;

    // std's `Arc`, not loom's: its counts are no part of what is checked, and every atomic
    // loom tracks multiplies the interleavings it explores.
    use loom::sync::atomic::AtomicU64;

    use super::{Atomic64, Packing, issue, switch};

    impl Atomic64 for AtomicU64 {
        fn load(&self, order: Ordering) -> u64 {
            AtomicU64::load(self, order)
        }

        fn store(&self, value: u64, order: Ordering) {
            AtomicU64::store(self, value, order);
        }

        fn compare_exchange(&self, current: u64, new: u64, success: Ordering, failure: Ordering) -> Result<u64, u64> {
            AtomicU64::compare_exchange(self, current, new, success, failure)
        }

        fn compare_exchange_weak(
            &self,
            current: u64,
            new: u64,
            success: Ordering,
            failure: Ordering,
        ) -> Result<u64, u64> {
            AtomicU64::compare_exchange_weak(self, current, new, success, failure)
        }
    }

    /// 1 worker bit, 1 sequence bit: two states a tick, so sequences run out and ticks turn
    /// over within a few calls.
    const PACKING: Packing = Packing { tick_shift: 2, seq_bits: 1, max_seq: 1, max_worker: 1 };
    /// The old grant's limit, the new grant's floor and limit, in ticks.
    const OLD_LIMIT: u64 = 20;
    const FLOOR: u64 = 11;
    const NEW_LIMIT: u64 = 30;

    fn tick(state: u64) -> u64 {
        state >> PACKING.tick_shift
    }

    fn worker(state: u64) -> u64 {
        (state >> PACKING.seq_bits) & PACKING.max_worker
    }

    /// Two issuing threads (the clock readings of their calls given) and the switch, every
    /// interleaving up to `preemptions` preemptions; checks what each one issued.
    fn check(preemptions: usize, clocks: [&'static [u64]; 2]) {
        let mut builder = loom::model::Builder::new();
        builder.preemption_bound = Some(preemptions);
        builder.check(move || {
            // The last state issued: tick 10, worker 0, sequence 0.
            let state = Arc::new(AtomicU64::new(10 << PACKING.tick_shift));
            let limit = Arc::new(AtomicU64::new(OLD_LIMIT));
            let issuers: Vec<_> = clocks
                .iter()
                .map(|&nows| {
                    let (state, limit) = (Arc::clone(&state), Arc::clone(&limit));
                    loom::thread::spawn(move || {
                        nows.iter().filter_map(|&now| issue(&*state, &*limit, now, PACKING, true)).collect::<Vec<u64>>()
                    })
                })
                .collect();
            let lease = {
                let (state, limit) = (Arc::clone(&state), Arc::clone(&limit));
                loom::thread::spawn(move || {
                    // The lease was lost and granted again: the generator moves to the new
                    // grant (the limit falls to 0), then raises the limit once the lease
                    // vouches for it.
                    switch(&*state, &*limit, FLOOR, 1, PACKING);
                    limit.store(NEW_LIMIT, Ordering::Release);
                })
            };
            let issued: Vec<Vec<u64>> = issuers.into_iter().map(|t| t.join().expect("an issuing thread")).collect();
            lease.join().expect("the switch");
            let last = state.load(Ordering::Relaxed);
            assert_eq!(worker(last), 1, "the generator ended on the old worker ID, at {last:#x}: {issued:?}");
            for states in &issued {
                assert!(states.windows(2).all(|w| w[0] < w[1]), "a thread's states went back: {states:?}");
            }
            let mut all: Vec<u64> = issued.concat();
            all.push(10 << PACKING.tick_shift);
            all.sort_unstable();
            let count = all.len();
            all.dedup();
            assert_eq!(all.len(), count, "a state was issued twice: {issued:?}");
            let old_last = all.iter().filter(|&&s| worker(s) == 0).max().copied().unwrap_or(0);
            for &s in all.iter().filter(|&&s| worker(s) == 1) {
                assert!(s > old_last, "{s:#x} of the new worker ID at or below {old_last:#x} of the old: {issued:?}");
                assert!(tick(s) > FLOOR, "{s:#x} of the new worker ID in a tick at or below its floor: {issued:?}");
                assert!(tick(s) <= NEW_LIMIT);
            }
            for &s in all.iter().filter(|&&s| worker(s) == 0) {
                assert!(tick(s) <= OLD_LIMIT);
            }
        });
    }

    #[test]
    fn issues_race_a_move_to_a_new_grant_without_a_duplicate() {
        // The last state's tick, then ticks on both sides of the new grant's floor: the one
        // after the floor issues on the old worker ID before the move, or on the new one after.
        check(2, [&[10, 12], &[11, 13]]);
    }

    #[test]
    fn issues_in_one_tick_race_without_a_duplicate() {
        // Both threads in the last state's tick and the next: the sequence runs out.
        check(2, [&[10, 10, 11], &[10, 11, 11]]);
    }
}
