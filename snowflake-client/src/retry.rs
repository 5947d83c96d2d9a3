//! When a refused call is sent again: `UNAVAILABLE` only, after the server's `retry-after`.

use std::time::Duration;

/// How often, and for how long, a call refused with `UNAVAILABLE` is sent again.
///
/// The server says `UNAVAILABLE` while it has no worker ID (its lease is being acquired), while
/// its lease is fenced, while its clock cannot issue and once it is shutting down, with the
/// seconds to wait in the trailing metadata `retry-after`; the client's own transport says it
/// when the server cannot be reached (then without `retry-after`), and a call whose connection
/// closed under it (a server that stopped) is sent again too. A call is sent again after
/// `retry-after`, or after the backoff (doubling from [`RetryPolicy::with_backoff`], at most
/// 1 s) when there is none, as long as the attempts and the total wait allow; a
/// `retry-after` longer than the wait left ends the retries at once, with the refusal.
///
/// ```
/// use std::time::Duration;
/// use snowflake_client::RetryPolicy;
///
/// let policy = RetryPolicy::default().with_max_attempts(3).with_max_wait(Duration::from_secs(2));
/// assert_eq!(policy.max_attempts(), 3);
/// assert_eq!(RetryPolicy::none().max_attempts(), 1);
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RetryPolicy {
    max_attempts: u32,
    max_wait: Duration,
    backoff: Duration,
}

/// The longest wait between two attempts when the server gives no `retry-after`.
const MAX_BACKOFF: Duration = Duration::from_secs(1);

impl Default for RetryPolicy {
    /// Up to 5 attempts, 10 s of waiting in all, a backoff from 50 ms: a server's restart or
    /// lease acquisition is ridden through, a server that is gone is reported within seconds.
    ///
    /// ```
    /// use std::time::Duration;
    /// use snowflake_client::RetryPolicy;
    ///
    /// let policy = RetryPolicy::default();
    /// assert_eq!((policy.max_attempts(), policy.max_wait()), (5, Duration::from_secs(10)));
    /// ```
    fn default() -> RetryPolicy {
        RetryPolicy { max_attempts: 5, max_wait: Duration::from_secs(10), backoff: Duration::from_millis(50) }
    }
}

impl RetryPolicy {
    /// No retries: every refusal is returned at once (with its `retry-after`, see
    /// [`crate::Error::retry_after`]).
    ///
    /// ```
    /// assert_eq!(snowflake_client::RetryPolicy::none().max_attempts(), 1);
    /// ```
    pub fn none() -> RetryPolicy {
        RetryPolicy { max_attempts: 1, ..RetryPolicy::default() }
    }

    /// At most `attempts` sends of a call, the first included (at least 1).
    ///
    /// ```
    /// assert_eq!(snowflake_client::RetryPolicy::default().with_max_attempts(0).max_attempts(), 1);
    /// ```
    #[must_use]
    pub fn with_max_attempts(mut self, attempts: u32) -> RetryPolicy {
        self.max_attempts = attempts.max(1);
        self
    }

    /// At most `wait` spent waiting between the attempts of one call, in all.
    ///
    /// ```
    /// use std::time::Duration;
    ///
    /// let policy = snowflake_client::RetryPolicy::default().with_max_wait(Duration::from_secs(3));
    /// assert_eq!(policy.max_wait(), Duration::from_secs(3));
    /// ```
    #[must_use]
    pub fn with_max_wait(mut self, wait: Duration) -> RetryPolicy {
        self.max_wait = wait;
        self
    }

    /// The first wait when the server gives no `retry-after` (a server that cannot be
    /// reached); it doubles at each attempt, up to 1 s.
    ///
    /// ```
    /// use std::time::Duration;
    ///
    /// let policy = snowflake_client::RetryPolicy::default().with_backoff(Duration::from_millis(20));
    /// assert_eq!(policy.backoff(), Duration::from_millis(20));
    /// ```
    #[must_use]
    pub fn with_backoff(mut self, backoff: Duration) -> RetryPolicy {
        self.backoff = backoff;
        self
    }

    /// The most sends of one call.
    ///
    /// ```
    /// assert_eq!(snowflake_client::RetryPolicy::default().max_attempts(), 5);
    /// ```
    pub fn max_attempts(&self) -> u32 {
        self.max_attempts
    }

    /// The most time spent waiting between the attempts of one call.
    ///
    /// ```
    /// use std::time::Duration;
    ///
    /// assert_eq!(snowflake_client::RetryPolicy::default().max_wait(), Duration::from_secs(10));
    /// ```
    pub fn max_wait(&self) -> Duration {
        self.max_wait
    }

    /// The first wait without a `retry-after`.
    ///
    /// ```
    /// use std::time::Duration;
    ///
    /// assert_eq!(snowflake_client::RetryPolicy::default().backoff(), Duration::from_millis(50));
    /// ```
    pub fn backoff(&self) -> Duration {
        self.backoff
    }

    /// The wait before attempt `attempt + 1` after `status` ended attempt `attempt` (from 1),
    /// `waited` having been spent waiting already; `None`: no more attempts.
    pub(crate) fn delay(&self, status: &tonic::Status, attempt: u32, waited: Duration) -> Option<Duration> {
        if !retryable(status) || attempt >= self.max_attempts {
            return None;
        }
        let wait = retry_after(status).unwrap_or_else(|| {
            let doubled = self.backoff.saturating_mul(1 << (attempt - 1).min(16));
            doubled.min(MAX_BACKOFF)
        });
        (waited + wait <= self.max_wait).then_some(wait)
    }
}

/// `UNAVAILABLE`, and a connection closed under the call (tonic's `CANCELLED` with a transport
/// error as its source: a server that stopped; gRPC's own libraries say `UNAVAILABLE` there).
/// A timeout is `CANCELLED` too, without a transport error: not retried.
fn retryable(status: &tonic::Status) -> bool {
    match status.code() {
        tonic::Code::Unavailable => true,
        tonic::Code::Cancelled => std::error::Error::source(status)
            .is_some_and(|source| source.downcast_ref::<tonic::transport::Error>().is_some()),
        _ => false,
    }
}

/// The server's `retry-after` (whole seconds, as `snowflake serve` writes it; fractions read).
pub(crate) fn retry_after(status: &tonic::Status) -> Option<Duration> {
    let text = status.metadata().get("retry-after")?.to_str().ok()?;
    let seconds: f64 = text.trim().parse().ok()?;
    Duration::try_from_secs_f64(seconds).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unavailable(retry_after: Option<&str>) -> tonic::Status {
        let mut status = tonic::Status::unavailable("no worker ID yet");
        if let Some(seconds) = retry_after {
            status.metadata_mut().insert("retry-after", seconds.parse().unwrap());
        }
        status
    }

    #[test]
    fn unavailable_is_retried_after_the_servers_retry_after() {
        let policy = RetryPolicy::default();
        assert_eq!(policy.delay(&unavailable(Some("1")), 1, Duration::ZERO), Some(Duration::from_secs(1)));
        assert_eq!(policy.delay(&unavailable(Some("0.25")), 1, Duration::ZERO), Some(Duration::from_millis(250)));
        // Past the wait left: returned at once.
        assert_eq!(policy.delay(&unavailable(Some("3")), 2, Duration::from_secs(8)), None);
        assert_eq!(policy.delay(&unavailable(Some("1")), 5, Duration::ZERO), None, "the attempts are spent");
    }

    #[test]
    fn without_retry_after_the_backoff_doubles_up_to_a_second() {
        let policy = RetryPolicy::default();
        let waits: Vec<_> = (1..5).map(|n| policy.delay(&unavailable(None), n, Duration::ZERO).unwrap()).collect();
        assert_eq!(waits, [50, 100, 200, 400].map(Duration::from_millis));
        let long = RetryPolicy::default().with_max_attempts(40);
        assert_eq!(long.delay(&unavailable(None), 30, Duration::ZERO), Some(MAX_BACKOFF));
    }

    #[test]
    fn other_refusals_are_not_retried() {
        let policy = RetryPolicy::default();
        for status in [tonic::Status::not_found("no ID type"), tonic::Status::invalid_argument("count=0")] {
            assert_eq!(policy.delay(&status, 1, Duration::ZERO), None, "{status:?}");
        }
        assert_eq!(RetryPolicy::none().delay(&unavailable(Some("1")), 1, Duration::ZERO), None);
    }
}
