//! Test helpers of the lease stores.

use std::error::Error as StdError;

use super::store::LeaseError;

/// Checks that `error`, a store's failure to reach a server that refused the connection,
/// names the system's cause once: in its own message, in the chain `generate()` panics with,
/// and in the start-up check's report.
#[cfg(all(test, any(feature = "lease-redis", feature = "lease-postgres", feature = "lease-mysql")))]
pub(crate) fn assert_refusal_named_once(error: &LeaseError) {
    use crate::check::Problem;
    use crate::error::{Chain, GenerateError, WorkerError};

    assert!(matches!(error, LeaseError::Store { .. }), "{error:?}");
    // The system's own words, at the end of the chain: "Connection refused (os error 111)".
    let mut deepest: &(dyn StdError + 'static) = error;
    while let Some(cause) = deepest.source() {
        deepest = cause;
    }
    // (Redis wraps it in an `Arc`, so it is told by its words, not by its type.)
    let cause = deepest.to_string();
    assert!(cause.contains("refused"), "the last cause is the system's refusal: {cause}");
    let once = |text: &str| assert_eq!(text.matches(&cause).count(), 1, "{cause:?} once in: {text}");
    let message = error.to_string();
    assert!(message.ends_with(&cause), "the message names its cause: {message}");
    assert!(message.contains(" failed: "), "{message}");
    once(&message);
    assert!(error.source().is_some(), "the cause is still the source");
    once(&Chain(error).to_string());
    let generate = GenerateError::Worker(WorkerError::Lease(error.clone()));
    once(&generate.to_string());
    once(&Chain(&generate).to_string());
    once(&Problem { type_name: None, error: generate.clone() }.to_string());
    let failing = std::panic::AssertUnwindSafe(|| crate::id::generate_failed("OrderId", &generate));
    let panic = std::panic::catch_unwind(failing).unwrap_err();
    let panic = panic.downcast_ref::<String>().expect("a formatted panic message");
    assert!(panic.starts_with("OrderId::generate() failed: lease store "), "{panic}");
    once(panic);
}
