//! The cold path: everything the hot path sends here (no cached clock, a spent sequence, a
//! clock behind the last ID, a tick past the issuing limit, a random sequence start), read
//! against a precise clock reading. Each attempt ([`Generator::take_step`]) issues, fails, or
//! says how to wait; the blocking caller ([`Generator::take`]) and the async one
//! (`take_async`, in `asynchronous.rs`) wait their own way.

use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use super::Generator;
use crate::clock::StepBack;
use crate::error::GenerateError;

impl Generator {
    #[inline(always)]
    pub(super) fn start_seq(&self) -> u64 {
        if self.random_start == 0 { 0 } else { random_below(self.random_start + 1) }
    }

    /// The current tick, from a precise clock reading.
    pub(super) fn precise_tick(&self) -> Result<u64, GenerateError> {
        let now_ms = self.clock.now_ms();
        if now_ms < self.epoch_ms {
            return Err(GenerateError::ClockBeforeEpoch { now_ms, epoch_ms: self.epoch_ms });
        }
        match self.layout.tick_of(now_ms) {
            Ok(tick) => Ok(tick),
            Err(_) => Err(self.time_exhausted()),
        }
    }

    /// Whether the clock reads a time this generator can issue at: not before the epoch,
    /// not past the end of the time field. Issues nothing and counts nothing.
    pub(crate) fn check_clock(&self) -> Result<(), GenerateError> {
        self.precise_tick().map(drop)
    }

    /// Takes up to `want` consecutive sequence numbers in one CAS; returns the first state
    /// taken and how many. Handles every case the hot path does not, blocking the thread
    /// while it waits.
    #[cold]
    #[inline(never)]
    pub(super) fn take(&self, want: u64) -> Result<(u64, u64), GenerateError> {
        let mut waiting = Waiting::default();
        loop {
            match self.take_step(want, &mut waiting)? {
                Step::Taken(first, count) => return Ok((first, count)),
                Step::NextTick => backoff(&mut waiting.spins),
                Step::Sleep(pause) => std::thread::sleep(pause),
            }
        }
    }

    /// One attempt of the slow path: issues, fails, or says how to wait before the next
    /// attempt (the caller blocks or awaits). `waiting` carries what a call has counted and
    /// since when it waits across attempts.
    pub(super) fn take_step(&self, want: u64, waiting: &mut Waiting) -> Result<Step, GenerateError> {
        loop {
            let mut behind = false;
            // The state first, then the clock. Read the other way round, a thread that read
            // the clock just before another thread issued in a newer tick would take that
            // tick for a clock step back: a false `ClockBackwards` under `StepBack::Error`, a
            // needless wait under `Wait`.
            //
            // Why a clock read after this load is not behind `cur`: whoever issued `cur` read
            // its clock (the published millisecond on the fast path, `Clock::now_ms` here)
            // before its CAS, and that CAS is Release on both paths. This Acquire load reads
            // it, or a later CAS of the state (a read-modify-write, so still in its release
            // sequence), so the issuer's clock read happens-before the one below. A clock
            // whose reading is one atomic that only grows then cannot read earlier here, by
            // read-read coherence: `MonotonicClock` (its precise reading is at least the
            // published millisecond it also loads), `ManualClock` moved only forward. A
            // clock that reads elsewhere (the OS wall clock) has only its own monotonicity;
            // when it breaks, the clock really stepped back. Uniqueness never depends on any
            // of this: a clock misread as behind costs a wait, an error under
            // `StepBack::Error`, or a borrowed tick, never a repeated ID.
            // `tests/fast/generate_concurrency.rs` stresses this with many threads on a clock
            // that never steps back and `StepBack::Error`: a misread is an error there.
            let cur = self.hot.state.load(Ordering::Acquire);
            // The limit before the clock too: a limit raised past a resumed mark was raised
            // by a thread whose clock had passed the mark, so a clock read after it has too.
            let limit = self.limit.0.load(Ordering::Acquire);
            let now = match self.precise_tick() {
                Ok(now) => now,
                Err(e) => return self.fail(e),
            };
            let last = self.tick_in(cur);
            let seq = cur & self.max_seq;
            let (first, count) = if now > last {
                if now > limit {
                    self.extend_limit(now)?;
                    continue;
                }
                let start = self.start_seq();
                (self.state_of(now, 0, start) | self.worker_in(cur), want.min(self.max_seq - start + 1))
            } else if now == last {
                if seq < self.max_seq {
                    (cur + 1, want.min(self.max_seq - seq))
                } else {
                    // The sequence ran out within this tick: wait for the clock, re-reading
                    // it each time (never reuse, never wrap).
                    if !waiting.counted {
                        waiting.counted = true;
                        self.counters.exhausted_waits.fetch_add(1, Ordering::Relaxed);
                        crate::events::sequence_exhausted(self.name, self.worker());
                    }
                    return Ok(Step::NextTick);
                }
            } else if last > limit && last - now <= self.reserve_ticks() {
                // Resumed from a high-water mark (every tick this generator issued lies within
                // its limit), with the clock behind the mark by no more than a reservation: a
                // quick restart, not a step back. Wait for the clock as for a full tick; never
                // borrow ahead of it, which would run away under load.
                if last >= self.last_markable_tick() {
                    // No tick after the mark can be reserved: the wait would never end.
                    return self.fail(self.time_exhausted());
                }
                if !waiting.counted {
                    waiting.counted = true;
                    self.counters.exhausted_waits.fetch_add(1, Ordering::Relaxed);
                    crate::events::sequence_exhausted(self.name, self.worker());
                }
                return Ok(Step::NextTick);
            } else {
                // The clock reads earlier than the last issued tick (or, after a restart,
                // further behind the mark than a reservation: it was set back in between).
                behind = true;
                let behind_ms = i64::try_from(last - now).unwrap_or(i64::MAX).saturating_mul(self.unit_ms);
                match self.policy {
                    StepBack::Borrow { max_ahead } => {
                        if seq < self.max_seq {
                            (cur + 1, want.min(self.max_seq - seq))
                        } else {
                            let ahead_ms = behind_ms.saturating_add(self.unit_ms);
                            if u128::try_from(ahead_ms).unwrap_or(u128::MAX) > max_ahead.as_millis() {
                                self.step_back_seen(cur, cur, behind_ms);
                                return self.fail(GenerateError::ClockBackwards { behind_ms });
                            }
                            let next = last + 1;
                            if next > limit {
                                self.extend_limit(next)?;
                                continue;
                            }
                            let start = self.start_seq();
                            (self.state_of(next, 0, start) | self.worker_in(cur), want.min(self.max_seq - start + 1))
                        }
                    }
                    StepBack::Wait { max } => {
                        self.step_back_seen(cur, cur, behind_ms);
                        let started = *waiting.since.get_or_insert_with(Instant::now);
                        if u128::try_from(behind_ms).unwrap_or(u128::MAX) > max.as_millis() || started.elapsed() >= max
                        {
                            return self.fail(GenerateError::ClockBackwards { behind_ms });
                        }
                        let left = max.saturating_sub(started.elapsed());
                        return Ok(Step::Sleep(left.min(Duration::from_micros(200))));
                    }
                    StepBack::Error => {
                        self.step_back_seen(cur, cur, behind_ms);
                        return self.fail(GenerateError::ClockBackwards { behind_ms });
                    }
                }
            };
            let last_taken = first + (count - 1);
            if behind {
                // Before the CAS: a thread that sees the state it installs then sees the
                // mark too (the CAS is Release, the state load Acquire).
                let behind_ms = i64::try_from(last - now).unwrap_or(i64::MAX).saturating_mul(self.unit_ms);
                self.step_back_seen(cur, last_taken, behind_ms);
            }
            if self.hot.state.compare_exchange(cur, last_taken, Ordering::Release, Ordering::Relaxed).is_ok() {
                return Ok(Step::Taken(first, count));
            }
        }
    }

    /// Counts a clock step-back episode: the clock was seen behind the last issued tick at
    /// state `cur`, and this call leaves (or is about to try to leave) the state at `after`.
    /// A state above every such `after` was reached by IDs issued on time since, so the
    /// step back is a new episode; otherwise it is the episode already counted.
    pub(super) fn step_back_seen(&self, cur: u64, after: u64, behind_ms: i64) {
        let mark = self.counters.step_back_mark.fetch_max(after, Ordering::Relaxed);
        if cur > mark {
            self.counters.clock_step_backs.fetch_add(1, Ordering::Relaxed);
            crate::events::clock_step_back(self.name, self.worker(), behind_ms);
        }
    }

    #[cold]
    #[inline(never)]
    pub(super) fn next_slow(&self) -> Result<i64, GenerateError> {
        self.take(1).map(|(first, _)| self.raw_of(first))
    }
}

/// What a slow-path attempt leads to.
pub(super) enum Step {
    /// Issued: the first state taken, and how many.
    Taken(u64, u64),
    /// The tick's sequence is spent (or, after a restart, the clock has not passed the
    /// mark): wait a moment for the next tick, then try again.
    NextTick,
    /// The clock is behind and the `Wait` policy waits for it: pause at most this long.
    Sleep(Duration),
}

/// What one call of the slow path carries across its attempts.
#[derive(Default)]
pub(super) struct Waiting {
    /// When a `Wait` policy started waiting.
    pub(super) since: Option<Instant>,
    /// Whether this call's wait for the next tick was counted.
    pub(super) counted: bool,
    /// Attempts that found the tick spent, for the back-off.
    pub(super) spins: u32,
}

/// The wait for the next tick: spin (re-reading the clock each time) through about one
/// millisecond, so a full tick hands over to the next one without losing it, then yield,
/// then sleep in 50 µs steps (coarse units, or a clock that does not move).
fn backoff(spins: &mut u32) {
    *spins = spins.saturating_add(1);
    if *spins < 4096 {
        std::hint::spin_loop();
    } else if *spins < 4096 + 64 {
        std::thread::yield_now();
    } else {
        std::thread::sleep(Duration::from_micros(50));
    }
}

/// A small, fast, thread-local xorshift: enough to hide per-tick volume, not a secret.
fn random_below(bound: u64) -> u64 {
    use std::cell::Cell;
    thread_local! {
        static STATE: Cell<u64> = Cell::new({
            let seed = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0x9E37_79B9_7F4A_7C15, |d| u64::try_from(d.as_nanos() & u128::from(u64::MAX)).unwrap_or(1));
            let addr = &seed as *const u64 as usize as u64;
            (seed ^ addr.rotate_left(32)) | 1
        });
    }
    STATE.with(|s| {
        let mut x = s.get();
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        s.set(x);
        x % bound
    })
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::time::Duration;

    use super::{Step, Waiting};
    use crate::clock::{ManualClock, StepBack};
    use crate::error::GenerateError;
    use crate::generator::Generator;
    use crate::layout::Layout;

    const EPOCH: i64 = 1_600_000_000_000;
    const NOW: i64 = 1_700_000_000_000;

    /// A generator of 2 sequence bits (4 IDs a tick) on a manual clock with `policy`: every
    /// call goes through the slow path (a manual clock publishes no cached millisecond).
    fn generator(policy: StepBack) -> (Generator, Arc<ManualClock>) {
        let layout = Layout::new(41, 10, 2, EPOCH).expect("a valid layout");
        let clock = Arc::new(ManualClock::new(NOW).with_policy(policy));
        let generator = Generator::builder(layout).worker(5).shared_clock(clock.clone()).build().expect("a generator");
        (generator, clock)
    }

    /// One attempt for one ID, with a fresh call's waiting state.
    fn step(generator: &Generator) -> Result<Step, GenerateError> {
        generator.take_step(1, &mut Waiting::default())
    }

    /// Fills the current tick's sequence.
    fn spend_tick(generator: &Generator) {
        for _ in 0..=generator.max_seq {
            generator.next_raw().expect("an ID");
        }
    }

    fn taken(step: Result<Step, GenerateError>) -> (u64, u64) {
        match step {
            Ok(Step::Taken(first, count)) => (first, count),
            Ok(Step::NextTick) => panic!("expected an ID, got NextTick"),
            Ok(Step::Sleep(pause)) => panic!("expected an ID, got Sleep({pause:?})"),
            Err(e) => panic!("expected an ID, got {e}"),
        }
    }

    #[test]
    fn a_spent_sequence_waits_for_the_next_tick_and_counts_once() {
        let (generator, clock) = generator(StepBack::Error);
        spend_tick(&generator);
        let mut waiting = Waiting::default();
        assert!(matches!(generator.take_step(1, &mut waiting), Ok(Step::NextTick)));
        assert!(matches!(generator.take_step(1, &mut waiting), Ok(Step::NextTick)));
        assert_eq!(generator.stats().exhausted_waits, 1, "one call, one wait");
        clock.advance(1);
        let (first, count) = taken(generator.take_step(1, &mut waiting));
        assert_eq!((generator.tick_in(first), count), (generator.layout.tick_of(NOW + 1).expect("a tick"), 1));
        assert_eq!(generator.stats().errors, 0);
    }

    #[test]
    fn a_batch_takes_what_is_left_of_the_tick_in_one_step() {
        let (generator, _clock) = generator(StepBack::Error);
        generator.next_raw().expect("an ID");
        let (first, count) = taken(generator.take_step(10, &mut Waiting::default()));
        assert_eq!((first & generator.max_seq, count), (1, 3), "sequence numbers 1 to 3 of the tick");
    }

    #[test]
    fn error_policy_refuses_a_clock_behind_and_counts_one_episode() {
        let (generator, clock) = generator(StepBack::Error);
        generator.next_raw().expect("an ID");
        clock.step_back(5);
        assert_eq!(step(&generator).err(), Some(GenerateError::ClockBackwards { behind_ms: 5 }));
        assert_eq!(step(&generator).err(), Some(GenerateError::ClockBackwards { behind_ms: 5 }));
        let stats = generator.stats();
        assert_eq!((stats.clock_step_backs, stats.errors), (1, 2), "{stats:?}");
        clock.advance(5);
        taken(step(&generator));
    }

    #[test]
    fn wait_policy_pauses_briefly_within_its_bound_and_refuses_beyond() {
        let (generator, clock) = generator(StepBack::Wait { max: Duration::from_secs(1) });
        generator.next_raw().expect("an ID");
        clock.step_back(5);
        match step(&generator) {
            Ok(Step::Sleep(pause)) => assert!(pause <= Duration::from_micros(200), "{pause:?}"),
            other => panic!("expected a pause, got {:?}", other.map(|_| ())),
        }
        clock.step_back(5_000);
        assert_eq!(step(&generator).err(), Some(GenerateError::ClockBackwards { behind_ms: 5_005 }));
    }

    #[test]
    fn borrow_policy_runs_ahead_of_a_clock_behind_within_its_bound() {
        let (generator, clock) = generator(StepBack::Borrow { max_ahead: Duration::from_millis(3) });
        let last = generator.tick_in(generator.next_raw().expect("an ID").cast_unsigned());
        clock.step_back(1);
        // The rest of the last tick first, then the ticks after it, ahead of the clock.
        for _ in 0..generator.max_seq {
            assert_eq!(generator.tick_in(taken(step(&generator)).0), last);
        }
        assert_eq!(generator.tick_in(taken(step(&generator)).0), last + 1);
        // On until the next tick would end more than 3 ms ahead of the clock.
        let mut furthest = last + 1;
        let error = loop {
            match step(&generator) {
                Ok(Step::Taken(first, _)) => furthest = generator.tick_in(first),
                Ok(_) => panic!("Borrow never waits"),
                Err(e) => break e,
            }
        };
        assert_eq!((furthest, error), (last + 2, GenerateError::ClockBackwards { behind_ms: 3 }));
        assert_eq!(generator.stats().clock_step_backs, 1, "one episode");
    }

    #[test]
    fn a_clock_before_the_epoch_is_an_error() {
        let (generator, clock) = generator(StepBack::Error);
        clock.set(EPOCH - 1);
        assert_eq!(
            step(&generator).err(),
            Some(GenerateError::ClockBeforeEpoch { now_ms: EPOCH - 1, epoch_ms: EPOCH })
        );
        assert_eq!(
            generator.check_clock(),
            Err(GenerateError::ClockBeforeEpoch { now_ms: EPOCH - 1, epoch_ms: EPOCH })
        );
    }

    #[test]
    fn the_end_of_the_time_field_is_an_error() {
        let (generator, clock) = generator(StepBack::Error);
        clock.set(generator.layout.max_timestamp_ms() + 1);
        assert!(matches!(step(&generator), Err(GenerateError::TimeExhausted { .. })));
    }

    #[test]
    fn random_starts_stay_within_their_bound() {
        for bound in [1, 2, 7, 1000] {
            assert!((0..200).all(|_| super::random_below(bound) < bound), "{bound}");
        }
    }
}
