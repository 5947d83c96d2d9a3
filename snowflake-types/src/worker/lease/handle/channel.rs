//! Answers from the lease thread to the one caller waiting for each, blocking or async. An
//! answer nobody waits for any more is dropped at once.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use crate::worker::lease::store::LeaseError;

/// Where the lease thread answers a caller.
pub(super) type Reply<T> = oneshot::Sender<Result<T, LeaseError>>;

/// Where a caller waits for the lease thread's answer: [`Receive::wait`] blocks, `.await` not.
pub(super) struct Receive<T>(oneshot::Receiver<Result<T, LeaseError>>);

/// A reply and the receiver of its answer.
pub(super) fn channel<T>() -> (Reply<T>, Receive<T>) {
    let (reply, receive) = oneshot::channel();
    (reply, Receive(receive))
}

/// Sends `answer`; one nobody waits for any more is dropped here.
pub(super) fn answer<T>(reply: Reply<T>, answer: Result<T, LeaseError>) {
    drop(reply.send(answer));
}

/// The error of a reply dropped unanswered (only a panic on the lease thread does it).
fn unanswered(_: oneshot::RecvError) -> LeaseError {
    LeaseError::Thread { source: Arc::new(std::io::Error::other("the lease thread ended without answering")) }
}

impl<T> Receive<T> {
    /// Blocks until the answer comes.
    pub(super) fn wait(self) -> Result<T, LeaseError> {
        self.0.recv().unwrap_or_else(|e| Err(unanswered(e)))
    }
}

impl<T> Future for Receive<T> {
    type Output = Result<T, LeaseError>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        Pin::new(&mut self.0).poll(cx).map(|answer| answer.unwrap_or_else(|e| Err(unanswered(e))))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_answer_reaches_a_blocking_caller() {
        let (reply, receive) = channel::<u64>();
        let thread = std::thread::spawn(move || answer(reply, Ok(7)));
        assert_eq!(receive.wait(), Ok(7));
        thread.join().expect("the answering thread");
    }

    #[cfg(feature = "tokio")]
    #[test]
    fn an_answer_reaches_an_async_caller() {
        let (reply, receive) = channel::<u64>();
        let thread = std::thread::spawn(move || {
            std::thread::sleep(std::time::Duration::from_millis(20));
            answer(reply, Err(LeaseError::Lost { namespace: "ns".into(), worker: 3 }));
        });
        let runtime = tokio::runtime::Builder::new_current_thread().build().expect("a runtime");
        assert_eq!(runtime.block_on(receive), Err(LeaseError::Lost { namespace: "ns".into(), worker: 3 }));
        thread.join().expect("the answering thread");
    }

    #[test]
    fn an_answer_nobody_waits_for_is_dropped() {
        let alive = Arc::new(());
        let (reply, receive) = channel::<Arc<()>>();
        drop(receive);
        answer(reply, Ok(Arc::clone(&alive)));
        assert_eq!(Arc::strong_count(&alive), 1, "the answer was kept alive");
    }

    #[test]
    fn a_reply_dropped_unanswered_is_an_error_not_a_hang() {
        let (reply, receive) = channel::<u64>();
        drop(reply);
        let Err(LeaseError::Thread { source }) = receive.wait() else { panic!("expected LeaseError::Thread") };
        assert!(source.to_string().contains("ended without answering"), "{source}");
    }
}
