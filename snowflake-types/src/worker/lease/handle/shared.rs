//! [`Shared`]: what the generators, the handle and the lease thread share.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock, Weak};
use std::time::{Duration, Instant, SystemTime};

use super::channel::{self, Receive, Reply};
use crate::clock::Clock;
use crate::fence::Limit;
use crate::worker::lease::protocol;
use crate::worker::lease::protocol::holder::{Machine, Now};
use crate::worker::lease::store::LeaseError;

/// What the generators and the lease thread share: the holder machine, under one lock (taken
/// by a generator once per issuing step), and what is counted and told about it.
#[derive(Debug)]
pub(super) struct Shared {
    pub(super) namespace: Arc<str>,
    /// The TTL, reservation, margin and tolerance the machine decides with.
    pub(super) rules: protocol::Rules,
    pub(super) store: String,
    pub(super) clock: Arc<dyn Clock>,
    /// The holder (`protocol/holder.rs`): every decision on the lease is taken there.
    pub(super) machine: Mutex<Machine>,
    /// The issuing limits of the generators on the lease ([`Shared::follow_stops`]).
    pub(super) limits: Mutex<Vec<Weak<Limit>>>,
    /// The longest tick of the generators on the lease, in ms (a release waits that long).
    pub(super) longest_tick_ms: AtomicU64,
    pub(super) late_renewals: AtomicU64,
    pub(super) failed_renewals: AtomicU64,
    pub(super) recoveries: AtomicU64,
    /// The machine's count of stops last followed ([`Shared::follow_stops`]).
    pub(super) stops_seen: AtomicU64,
    pub(super) first: Mutex<FirstAnswer>,
}

/// The first acquisition's outcome, and its callers.
#[derive(Default)]
pub(super) struct FirstAnswer {
    outcome: Option<Result<(), LeaseError>>,
    waiting: Vec<Reply<()>>,
}

impl std::fmt::Debug for FirstAnswer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FirstAnswer").field("outcome", &self.outcome).field("waiting", &self.waiting.len()).finish()
    }
}

/// Monotonic nanoseconds from the process's first reading.
pub(super) fn nanos_since_anchor(at: Instant) -> u64 {
    static ANCHOR: OnceLock<Instant> = OnceLock::new();
    u64::try_from(at.saturating_duration_since(*ANCHOR.get_or_init(Instant::now)).as_nanos()).unwrap_or(u64::MAX)
}

pub(super) enum Command {
    Release(Reply<()>),
    Abandon,
    Pause(Duration),
}

impl Shared {
    /// Answers everyone waiting for the first acquisition, and everyone who asks from now on.
    pub(super) fn first_answer(&self, outcome: Result<(), LeaseError>) {
        let mut first = self.first.lock().unwrap_or_else(|p| p.into_inner());
        if first.outcome.is_some() {
            return;
        }
        for reply in first.waiting.drain(..) {
            channel::answer(reply, outcome.clone());
        }
        first.outcome = Some(outcome);
    }

    /// Where the first acquisition's outcome comes.
    pub(super) fn wait_first(&self) -> Receive<()> {
        let (reply, receive) = channel::channel();
        let mut first = self.first.lock().unwrap_or_else(|p| p.into_inner());
        match &first.outcome {
            Some(outcome) => channel::answer(reply, outcome.clone()),
            None => first.waiting.push(reply),
        }
        receive
    }

    pub(super) fn lock(&self) -> MutexGuard<'_, Machine> {
        self.machine.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The two clocks the machine reads, now.
    pub(super) fn now(&self) -> Now {
        Now { ns: nanos_since_anchor(Instant::now()), ms: self.clock.now_ms() }
    }

    /// A reading of the lease's clock (Unix ms) as a `SystemTime`.
    pub(super) fn system_time(&self, ms: i64) -> SystemTime {
        let ago_ms = self.clock.now_ms().saturating_sub(ms).max(0).unsigned_abs();
        SystemTime::now().checked_sub(Duration::from_millis(ago_ms)).unwrap_or(SystemTime::UNIX_EPOCH)
    }

    /// Runs `command` on the machine, then follows the stops it made.
    pub(super) fn command(&self, command: impl FnOnce(&mut Machine)) {
        let stops = {
            let mut machine = self.lock();
            command(&mut machine);
            machine.stops()
        };
        self.follow_stops(stops);
    }
    /// Drops every generator's issuing limit if the machine stopped them since the last call ([`Machine::stops`]).
    pub(super) fn follow_stops(&self, stops: u64) {
        if self.stops_seen.swap(stops, Ordering::AcqRel) != stops {
            self.stop_limits();
        }
    }

    /// Drops every generator's issuing limit to 0: they stop at their next tick.
    fn stop_limits(&self) {
        for limit in self.limits.lock().unwrap_or_else(|p| p.into_inner()).iter().filter_map(Weak::upgrade) {
            limit.0.store(0, Ordering::Release);
        }
    }
}
