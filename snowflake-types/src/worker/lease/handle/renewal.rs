//! The lease thread (`snowflake-lease`): drives the holder machine (`protocol/holder.rs`) with real clocks and a
//! real store, and turns its notes into answers, logs and counters; it decides nothing about the lease.

use std::sync::atomic::Ordering;
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, Instant};

use super::channel::{Reply, answer};
use super::shared::{Command, Shared};
use super::state_file::StateFile;
use crate::worker::lease::protocol::Basis;
use crate::worker::lease::protocol::holder::{Call, Machine, Note, Now, Reply as Answer, Standing};
use crate::worker::lease::store::{Cas, LeaseError, LeaseStore};
use crate::worker::lease::url::StoreUrl;

/// What an acquisition's log lines say the lease is doing.
const ACQUIRING: &str = "acquiring a worker ID";

/// Makes one call of the machine's on the store.
fn make(store: &dyn LeaseStore, namespace: &str, call: &Call) -> Answer {
    let result = match call {
        Call::Read(query) => store.read(namespace, query).map(Answer::Read),
        Call::Write(ops) => {
            let cas: Vec<Cas<'_>> = ops.iter().map(|op| op.cas()).collect();
            store.write(namespace, &cas).map(Answer::Written)
        }
    };
    result.unwrap_or_else(Answer::Failed)
}

/// Starts the lease thread (and, with a state file, the file thread) on the machine in `shared`, with the store or
/// its URL (opened at the first call), until a command from `inbox` or the last handle's drop ends it.
pub(super) fn spawn(
    shared: Arc<Shared>,
    url: Option<StoreUrl>,
    store: Option<Arc<dyn LeaseStore>>,
    file: Option<StateFile>,
    wait_for_store: Duration,
    inbox: mpsc::Receiver<Command>,
) -> Result<(), LeaseError> {
    let thread = |e: std::io::Error| LeaseError::Thread { source: Arc::new(e) };
    let file = file.map(|file| Arc::new(Mutex::new(file)));
    if let Some(file) = &file {
        // Off the store's path, so that a store call that hangs does not hold it back.
        let (shared, file) = (Arc::downgrade(&shared), Arc::clone(file));
        std::thread::Builder::new()
            .name("snowflake-lease-file".into())
            .spawn(move || keep_filing(&shared, &file))
            .map_err(thread)?;
    }
    let driver =
        Driver { shared, url, store, file, wait_for_store, answered: false, release: None, outage: None, grants: 0 };
    std::thread::Builder::new().name("snowflake-lease".into()).spawn(move || driver.run(&inbox)).map_err(thread)?;
    Ok(())
}

/// Writes the state file the machine asks for, under the file's lock (a later file never carries an earlier
/// answer). Whether one was; one that fails stops nothing more than the last file's limit does.
fn save(shared: &Shared, file: &Mutex<StateFile>, now: Now) -> bool {
    let file = file.lock().unwrap_or_else(|p| p.into_inner());
    let Some(saved) = shared.lock().save_due(now) else { return false };
    match file.write(&saved) {
        Ok(()) => {
            shared.lock().saved_at(now, &saved);
            true
        }
        Err(e) => {
            crate::events::lease_state_file_failed(&shared.namespace, &e);
            false
        }
    }
}

/// The file thread (`snowflake-lease-file`): writes the state file whenever one is due.
fn keep_filing(shared: &Weak<Shared>, file: &Mutex<StateFile>) {
    loop {
        let Some(shared) = shared.upgrade() else { return };
        let now = shared.now();
        let written = save(&shared, file, now);
        let (done, wake) = {
            let machine = shared.lock();
            (machine.is_done(), machine.save_wake(now))
        };
        if done {
            return;
        }
        drop(shared);
        if written {
            continue;
        }
        // At least every 20 ms: a due file that could not be written is tried again soon.
        let sleep = wake.map_or(Duration::from_millis(20), |at| Duration::from_nanos(at.saturating_sub(now.ns)));
        std::thread::sleep(sleep.min(Duration::from_millis(20)));
    }
}

/// The lease thread's own state: who waits for an answer, and what it told.
struct Driver {
    shared: Arc<Shared>,
    /// The URL of a store not opened yet.
    url: Option<StoreUrl>,
    store: Option<Arc<dyn LeaseStore>>,
    /// The lease state file, when one is kept (written by this thread and the file thread).
    file: Option<Arc<Mutex<StateFile>>>,
    /// How long the first acquisition waits for a store that does not answer (for its logs).
    wait_for_store: Duration,
    /// Whether the first acquisition was answered ([`WorkerLease::ready`](super::WorkerLease::ready)).
    answered: bool,
    /// A release's caller, answered when it ends.
    release: Option<Reply<()>>,
    /// Since when the generators may not issue for want of the store (told once).
    outage: Option<Instant>,
    grants: u64,
}

/// What one step under the machine's lock ([`Driver::step`]) gives the lease thread.
struct Step {
    call: Option<Call>,
    done: bool,
    /// The machine's count of stops ([`Shared::follow_stops`]).
    stops: u64,
    notes: Vec<Note>,
    wake: Option<u64>,
    worker: u64,
    /// How much longer the generators may issue without another renewal.
    left: Duration,
    error: Option<LeaseError>,
}

impl Driver {
    /// The store, opened now if it was not yet (its warnings said once).
    fn open(&mut self) -> Result<Arc<dyn LeaseStore>, LeaseError> {
        if let Some(store) = &self.store {
            return Ok(Arc::clone(store));
        }
        let url = self.url.as_ref().expect("a store or its URL");
        let store = url.open()?;
        if let Ok(warnings) = store.warnings() {
            for warning in warnings {
                crate::events::lease_store_warning(&self.shared.namespace, &store.describe(), &warning);
            }
        }
        self.store = Some(Arc::clone(&store));
        Ok(store)
    }

    fn run(mut self, inbox: &mpsc::Receiver<Command>) {
        self.drive(inbox);
        // Ended (abandoned) before its first grant issued: whoever waits is told.
        let ended = std::io::Error::other("the lease ended before its first worker ID issued");
        self.shared.first_answer(Err(LeaseError::Thread { source: Arc::new(ended) }));
    }

    /// One step of the machine under its lock: the last answer handed back, the timers run, the next call asked.
    fn step(&self, now: Now, reply: Option<Answer>) -> Step {
        let mut machine = self.shared.lock();
        if let Some(reply) = reply {
            machine.handle_reply(now, reply);
        }
        machine.handle_timeout(now);
        let call = machine.poll_call(now);
        let notes: Vec<Note> = std::iter::from_fn(|| machine.poll_note()).collect();
        let left = match machine.standing(now) {
            Standing::Issuing { issuing_for_ns, .. } => Duration::from_nanos(issuing_for_ns),
            _ => Duration::ZERO,
        };
        Step {
            call,
            done: machine.is_done(),
            stops: machine.stops(),
            notes,
            wake: machine.poll_timeout(now),
            worker: machine.worker_and_fence().0,
            left,
            error: machine.error().cloned(),
        }
    }

    fn drive(&mut self, inbox: &mpsc::Receiver<Command>) {
        let mut orphaned = false;
        let mut reply = None;
        loop {
            let now = self.shared.now();
            let step = self.step(now, reply.take());
            self.shared.follow_stops(step.stops);
            for note in step.notes {
                self.note(note, step.worker, step.error.as_ref());
            }
            if step.done {
                return;
            }
            if let Some(call) = step.call {
                reply = Some(match self.open() {
                    Ok(store) => make(&*store, &self.shared.namespace, &call),
                    Err(error) => Answer::Failed(error),
                });
                continue;
            }
            if self.file.as_ref().is_some_and(|file| save(&self.shared, file, now)) {
                continue;
            }
            crate::events::lease_gauges(&self.shared.namespace, step.worker, step.left, step.error.is_none());
            let sleep = step.wake.map_or(Duration::from_secs(1), |at| Duration::from_nanos(at.saturating_sub(now.ns)));
            // Wake at least every second, for the gauges and the outage's log lines.
            let sleep = sleep.min(Duration::from_secs(1));
            if orphaned {
                std::thread::sleep(sleep);
                continue;
            }
            let command = match inbox.recv_timeout(sleep) {
                Ok(command) => Some(command),
                Err(RecvTimeoutError::Timeout) => None,
                // Every handle is gone: release, without anyone to tell.
                Err(RecvTimeoutError::Disconnected) => {
                    orphaned = true;
                    self.release_now();
                    None
                }
            };
            match command {
                Some(Command::Release(reply)) => {
                    self.release = Some(reply);
                    self.release_now();
                }
                Some(Command::Abandon) => return self.shared.command(Machine::abandon),
                Some(Command::Pause(pause)) => std::thread::sleep(pause),
                None => {}
            }
        }
    }

    /// Stops the generators and asks the machine to release once a tick has passed (one under way may finish).
    fn release_now(&mut self) {
        let tick_ms = self.shared.longest_tick_ms.load(Ordering::Relaxed) + 1;
        let now = self.shared.now();
        self.shared.command(|machine| machine.release(now, tick_ms.saturating_mul(1_000_000)));
    }

    /// [`Note::Changed`]: an outage of the grant held is told when it begins and ends (the rest have notes).
    fn changed(&mut self, worker: u64, refusal: Option<crate::FenceReason>, error: Option<&LeaseError>) {
        use crate::FenceReason as R;
        let ns = &*self.shared.namespace;
        match refusal {
            None => {
                if let Some(began) = self.outage.take() {
                    crate::events::lease_resumed(ns, worker, began.elapsed());
                }
            }
            Some(reason @ (R::NotRenewed { .. } | R::StateFileBehind | R::ClockAhead { .. }))
                if self.answered && self.outage.is_none() =>
            {
                self.outage = Some(Instant::now());
                crate::events::lease_fenced(ns, worker, &reason, error.map(|e| e as &dyn std::error::Error));
            }
            Some(_) => {}
        }
    }

    /// Tells one of the machine's notes; `current` and `error` are the machine's as of the step that gave it.
    fn note(&mut self, note: Note, current: u64, error: Option<&LeaseError>) {
        let ns = &*self.shared.namespace;
        match note {
            Note::Acquired { worker, fence, basis, floor_ms, ready_ms } => {
                self.grants += 1;
                if self.grants > 1 {
                    self.shared.recoveries.fetch_add(1, Ordering::Relaxed);
                }
                crate::events::lease_acquired(ns, worker, fence, &self.shared.store);
                let wait_ms = ready_ms.saturating_sub(self.shared.clock.now_ms());
                if wait_ms > 0 {
                    let why = match basis {
                        Basis::NeverGranted => crate::events::WaitingOut::NamespaceYoung,
                        Basis::Record => crate::events::WaitingOut::RecordAhead,
                        _ => crate::events::WaitingOut::Unvouched,
                    };
                    let wait = Duration::from_millis(wait_ms.unsigned_abs());
                    crate::events::lease_waiting_out(ns, worker, floor_ms, wait, why);
                }
            }
            Note::Ready => {
                self.answered = true;
                self.shared.first_answer(Ok(()));
            }
            Note::GaveUp(error) => {
                self.answered = true;
                self.shared.first_answer(Err(error));
            }
            Note::Marked { declared, fenced } => crate::events::lease_marked(ns, declared, fenced),
            Note::RenewalFailed { worker, error } => {
                self.shared.failed_renewals.fetch_add(1, Ordering::Relaxed);
                crate::events::lease_renewal_failed(ns, worker, &error);
            }
            Note::RenewedLate { worker } => {
                self.shared.late_renewals.fetch_add(1, Ordering::Relaxed);
                crate::events::lease_renewed_late(ns, worker);
            }
            Note::Lost { worker, why } => crate::events::lease_lost(ns, worker, why.cause(), why.rides()),
            Note::RolledBack { worker } => crate::events::lease_rolled_back(ns, worker),
            Note::Trouble { error, waited_ns } => {
                let waited = Duration::from_nanos(waited_ns);
                if !self.answered {
                    crate::events::lease_waiting_for_store(ns, ACQUIRING, &error, waited, self.wait_for_store);
                } else {
                    crate::events::lease_recovering(ns, current, &error);
                }
            }
            Note::Back { waited_ns } => crate::events::lease_store_back(ns, ACQUIRING, Duration::from_nanos(waited_ns)),
            Note::Changed { worker, refusal } => self.changed(worker, refusal, error),
            Note::Released { worker, result } => {
                // The state file goes once the release is acknowledged, and only then.
                if result.is_ok()
                    && let Some(file) = &self.file
                    && let Err(e) = file.lock().unwrap_or_else(|p| p.into_inner()).remove()
                {
                    crate::events::lease_state_file_failed(ns, &e);
                }
                if let Some(worker) = worker {
                    crate::events::lease_released(ns, worker, result.is_ok());
                }
                if let Some(reply) = self.release.take() {
                    answer(reply, result);
                }
            }
        }
    }
}
