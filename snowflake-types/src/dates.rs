//! Dates: an ID's instant out, and instants in as time-range bounds.
//!
//! Out: `id.timestamp()` is a [`SystemTime`]; with the features `chrono`, `time` and `jiff`,
//! `id.to_chrono()`, `id.to_offset_date_time()` and `id.to_jiff()` give the same instant in
//! those crates' types. Each is the start of the ID's tick. A date type that cannot hold
//! the instant (`time` and `jiff` end with the year 9999 (jiff at 9999-12-30T22:00Z), chrono near the year 262 143; only
//! a layout whose time field reaches that far can have such IDs, and no generator issues
//! them before then) gives its own last instant: it saturates.
//!
//! In: `T::first_at(at)` and `T::last_at(at)` take any [`IntoUnixMs`]: Unix milliseconds as
//! an `i64`, a `SystemTime`, and those crates' instants. An instant between two
//! milliseconds counts as the earlier one (the millisecond that holds it); one before the
//! epoch or past the layout's end saturates at the first or last tick, as bounds of a
//! range should.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// An instant that picks a tick: what [`SnowflakeId::first_at`](crate::SnowflakeId::first_at)
/// and [`SnowflakeId::last_at`](crate::SnowflakeId::last_at) take.
///
/// Implemented for Unix milliseconds (`i64`), [`SystemTime`], and, with the features of
/// the same names, `chrono::DateTime<Tz>`, `time::OffsetDateTime`, `jiff::Timestamp` and
/// `jiff::Zoned`; and for a reference to any of them that is `Copy`.
///
/// ```
/// use std::time::{Duration, UNIX_EPOCH};
/// use typed_snowflake::IntoUnixMs;
///
/// assert_eq!(1_700_000_000_000i64.into_unix_ms(), 1_700_000_000_000);
/// assert_eq!((UNIX_EPOCH + Duration::from_micros(1_500)).into_unix_ms(), 1);
/// assert_eq!((UNIX_EPOCH - Duration::from_micros(1_500)).into_unix_ms(), -2); // rounded down
/// Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub trait IntoUnixMs {
    /// Unix milliseconds: the millisecond that holds the instant (rounded towards the
    /// past), saturated at `i64::MIN` and `i64::MAX`.
    fn into_unix_ms(self) -> i64;
}

impl IntoUnixMs for i64 {
    #[inline]
    fn into_unix_ms(self) -> i64 {
        self
    }
}

impl IntoUnixMs for SystemTime {
    fn into_unix_ms(self) -> i64 {
        match self.duration_since(UNIX_EPOCH) {
            Ok(after) => i64::try_from(after.as_millis()).unwrap_or(i64::MAX),
            Err(before) => {
                // Before 1970: round the distance up, so the instant rounds down.
                let before = before.duration();
                let ms = before.as_millis() + u128::from(before.subsec_nanos() % 1_000_000 != 0);
                i64::try_from(ms).map_or(i64::MIN, |ms| -ms)
            }
        }
    }
}

impl<T: IntoUnixMs + Copy> IntoUnixMs for &T {
    #[inline]
    fn into_unix_ms(self) -> i64 {
        (*self).into_unix_ms()
    }
}

/// The `SystemTime` of Unix milliseconds, saturated at the farthest instant the platform's
/// `SystemTime` holds (which no valid ID reaches on Unix, where it spans ±292 billion years).
pub fn system_time_of(unix_ms: i64) -> SystemTime {
    let forward = unix_ms >= 0;
    let shift = move |by: Duration| if forward { UNIX_EPOCH.checked_add(by) } else { UNIX_EPOCH.checked_sub(by) };
    let by = Duration::from_millis(unix_ms.unsigned_abs());
    shift(by).unwrap_or_else(|| {
        // The largest whole number of seconds the platform holds, by bisection.
        let (mut fits, mut too_far) = (0u64, by.as_secs());
        while too_far - fits > 1 {
            let mid = fits + (too_far - fits) / 2;
            if shift(Duration::from_secs(mid)).is_some() { fits = mid } else { too_far = mid }
        }
        shift(Duration::from_secs(fits)).unwrap_or(UNIX_EPOCH)
    })
}

#[cfg(feature = "chrono")]
mod chrono_impls {
    use chrono::{DateTime, TimeZone, Utc};

    use super::IntoUnixMs;

    impl<Tz: TimeZone> IntoUnixMs for DateTime<Tz> {
        #[inline]
        fn into_unix_ms(self) -> i64 {
            // Whole seconds rounded down, plus the non-negative milliseconds of the second.
            self.timestamp_millis()
        }
    }

    /// The instant of Unix milliseconds, saturated at chrono's first and last instant.
    pub fn chrono_of(unix_ms: i64) -> DateTime<Utc> {
        DateTime::from_timestamp_millis(unix_ms).unwrap_or(if unix_ms < 0 {
            DateTime::<Utc>::MIN_UTC
        } else {
            DateTime::<Utc>::MAX_UTC
        })
    }
}
#[cfg(feature = "chrono")]
pub use chrono_impls::chrono_of;

#[cfg(feature = "time")]
mod time_impls {
    use time::{OffsetDateTime, PrimitiveDateTime};

    use super::IntoUnixMs;

    impl IntoUnixMs for OffsetDateTime {
        fn into_unix_ms(self) -> i64 {
            let ms = self.unix_timestamp_nanos().div_euclid(1_000_000);
            i64::try_from(ms).unwrap_or(if ms < 0 { i64::MIN } else { i64::MAX })
        }
    }

    /// The instant of Unix milliseconds in UTC, saturated at the first and last instant
    /// `time` holds (the years -9999 and 9999 without its `large-dates` feature).
    pub fn offset_date_time_of(unix_ms: i64) -> OffsetDateTime {
        OffsetDateTime::from_unix_timestamp_nanos(i128::from(unix_ms) * 1_000_000).unwrap_or_else(|_| {
            if unix_ms < 0 { PrimitiveDateTime::MIN.assume_utc() } else { PrimitiveDateTime::MAX.assume_utc() }
        })
    }
}
#[cfg(feature = "time")]
pub use time_impls::offset_date_time_of;

#[cfg(feature = "jiff")]
mod jiff_impls {
    use jiff::{Timestamp, Zoned};

    use super::IntoUnixMs;

    impl IntoUnixMs for Timestamp {
        fn into_unix_ms(self) -> i64 {
            // `as_millisecond` truncates towards zero; before 1970 that is one too late.
            let ms = self.as_millisecond();
            if self.subsec_nanosecond() < 0 && self.subsec_nanosecond() % 1_000_000 != 0 { ms - 1 } else { ms }
        }
    }

    impl IntoUnixMs for Zoned {
        fn into_unix_ms(self) -> i64 {
            self.timestamp().into_unix_ms()
        }
    }

    /// The instant of Unix milliseconds, saturated at jiff's first and last instant (the
    /// years -9999 and 9999).
    pub fn jiff_of(unix_ms: i64) -> Timestamp {
        Timestamp::from_millisecond(unix_ms).unwrap_or(if unix_ms < 0 { Timestamp::MIN } else { Timestamp::MAX })
    }
}
#[cfg(feature = "jiff")]
pub use jiff_impls::jiff_of;

#[cfg(test)]
mod tests {
    use std::time::{Duration, SystemTime, UNIX_EPOCH};

    use super::{IntoUnixMs, system_time_of};

    #[test]
    fn system_time_both_ways() {
        for ms in [0, 1, 999, 1_000, 1_700_000_000_123, i64::MAX / 1_000_000, -1, -1_000, -1_700_000_000_123] {
            assert_eq!(system_time_of(ms).into_unix_ms(), ms, "{ms}");
        }
        assert_eq!(system_time_of(1_500), UNIX_EPOCH + Duration::from_millis(1_500));
        assert_eq!(system_time_of(-1_500), UNIX_EPOCH - Duration::from_millis(1_500));
        // Whatever the platform holds, the extremes give an instant and never panic.
        assert!(system_time_of(i64::MAX) > UNIX_EPOCH);
        assert!(system_time_of(i64::MIN) < UNIX_EPOCH);
        assert!(system_time_of(i64::MAX).into_unix_ms() > 0);
    }

    #[test]
    fn instants_between_milliseconds_round_to_the_past() {
        assert_eq!((UNIX_EPOCH + Duration::from_nanos(1)).into_unix_ms(), 0);
        assert_eq!((UNIX_EPOCH + Duration::from_nanos(999_999)).into_unix_ms(), 0);
        assert_eq!((UNIX_EPOCH - Duration::from_nanos(1)).into_unix_ms(), -1);
        assert_eq!((UNIX_EPOCH - Duration::from_nanos(1_000_000)).into_unix_ms(), -1);
        assert_eq!((UNIX_EPOCH - Duration::from_nanos(1_000_001)).into_unix_ms(), -2);
        let t: SystemTime = UNIX_EPOCH + Duration::from_millis(42);
        assert_eq!((&t).into_unix_ms(), 42);
        assert_eq!((&-7i64).into_unix_ms(), -7);
    }

    #[test]
    fn far_instants_saturate() {
        if let Some(far) = UNIX_EPOCH.checked_add(Duration::from_secs(u64::MAX / 2)) {
            assert_eq!(far.into_unix_ms(), i64::MAX);
        }
        if let Some(far) = UNIX_EPOCH.checked_sub(Duration::from_secs(u64::MAX / 2)) {
            assert_eq!(far.into_unix_ms(), i64::MIN);
        }
    }
}
