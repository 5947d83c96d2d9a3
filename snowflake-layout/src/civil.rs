//! Dates and instants as text: `"YYYY-MM-DD"` (UTC midnight) or an RFC 3339 instant, to Unix
//! milliseconds and back, without a date crate (the derive and the CLI need nothing more).

use alloc::borrow::ToOwned;
use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec::Vec;

/// Days from 1970-01-01 to the given civil date (proleptic Gregorian).
fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (month + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

fn is_leap(year: i64) -> bool {
    (year % 4 == 0 && year % 100 != 0) || year % 400 == 0
}

fn days_in_month(year: i64, month: i64) -> i64 {
    match month {
        2 if is_leap(year) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// Parses exactly `n` ASCII digits.
fn digits(text: &str, what: &str) -> Result<i64, String> {
    if text.is_empty() || !text.bytes().all(|b| b.is_ascii_digit()) {
        return Err(format!("{what} {text:?} is not a number"));
    }
    text.parse().map_err(|_| format!("{what} {text:?} is out of range"))
}

fn date(text: &str) -> Result<i64, String> {
    let bytes = text.as_bytes();
    if bytes.len() != 10 || bytes[4] != b'-' || bytes[7] != b'-' {
        return Err(format!("{text:?} is not a date in the form YYYY-MM-DD"));
    }
    let year = digits(&text[0..4], "year")?;
    let month = digits(&text[5..7], "month")?;
    let day = digits(&text[8..10], "day")?;
    if !(1..=12).contains(&month) {
        return Err(format!("{text:?} is not a date: month {month} does not exist"));
    }
    if day < 1 || day > days_in_month(year, month) {
        return Err(format!("{text:?} is not a date: {year:04}-{month:02} has no day {day}"));
    }
    Ok(days_from_civil(year, month, day))
}

fn time_of_day(text: &str) -> Result<i64, String> {
    // HH:MM:SS[.fraction]
    let (hms, fraction) = match text.split_once('.') {
        Some((hms, fraction)) => (hms, Some(fraction)),
        None => (text, None),
    };
    let parts: Vec<&str> = hms.split(':').collect();
    let [h, m, s] = parts.as_slice() else {
        return Err(format!("{text:?} is not a time of day in the form HH:MM:SS"));
    };
    if h.len() != 2 || m.len() != 2 || s.len() != 2 {
        return Err(format!("{text:?} is not a time of day in the form HH:MM:SS"));
    }
    let (h, m, s) = (digits(h, "hour")?, digits(m, "minute")?, digits(s, "second")?);
    if h > 23 || m > 59 || s > 59 {
        return Err(format!("{text:?} is not a time of day"));
    }
    let mut ms = ((h * 60 + m) * 60 + s) * 1000;
    if let Some(fraction) = fraction {
        if fraction.is_empty() || fraction.len() > 9 || !fraction.bytes().all(|b| b.is_ascii_digit()) {
            return Err(format!("fraction .{fraction} is not 1 to 9 digits"));
        }
        let (millis, rest) = fraction.split_at(fraction.len().min(3));
        if rest.bytes().any(|b| b != b'0') {
            return Err(format!("fraction .{fraction} is finer than a millisecond, the unit of an epoch"));
        }
        ms += digits(&format!("{millis:0<3}"), "fraction")?;
    }
    Ok(ms)
}

fn offset_minutes(text: &str) -> Result<i64, String> {
    if text == "Z" || text == "z" {
        return Ok(0);
    }
    let (sign, rest) = match text.as_bytes().first() {
        Some(b'+') => (1, &text[1..]),
        Some(b'-') => (-1, &text[1..]),
        _ => return Err(format!("{text:?} is not a UTC offset (Z, +HH:MM or -HH:MM)")),
    };
    let Some((h, m)) = rest.split_once(':').filter(|(h, m)| h.len() == 2 && m.len() == 2) else {
        return Err(format!("{text:?} is not a UTC offset (Z, +HH:MM or -HH:MM)"));
    };
    let (h, m) = (digits(h, "offset hour")?, digits(m, "offset minute")?);
    if h > 23 || m > 59 {
        return Err(format!("{text:?} is not a UTC offset"));
    }
    Ok(sign * (h * 60 + m))
}

/// Parses `"YYYY-MM-DD"` (UTC midnight) or an RFC 3339 instant to Unix milliseconds,
/// proleptic Gregorian; the error says why not. Dates before 1970 give negative values (an
/// epoch refuses them: see [`parse_epoch`](crate::parse_epoch)).
///
/// ```
/// use snowflake_layout::parse_date_or_instant;
///
/// assert_eq!(parse_date_or_instant("2021-05-05"), Ok(1_620_172_800_000));
/// assert_eq!(parse_date_or_instant("2010-11-04T02:42:54.657+01:00"), Ok(1_288_834_974_657));
/// assert!(parse_date_or_instant("2021-02-29").is_err());
/// ```
pub fn parse_date_or_instant(text: &str) -> Result<i64, String> {
    if text.is_empty() {
        return Err("the epoch is empty".to_owned());
    }
    if !text.is_ascii() {
        return Err(format!("{text:?} is not a date"));
    }
    if text.len() == 10 {
        return Ok(date(text)? * 86_400_000);
    }
    let Some((day, rest)) = text.split_at_checked(10).filter(|(_, rest)| rest.starts_with(['T', 't', ' '])) else {
        return Err(format!("{text:?} is not a date (YYYY-MM-DD) or an RFC 3339 instant (YYYY-MM-DDTHH:MM:SSZ)"));
    };
    let days = date(day)?;
    let rest = &rest[1..];
    let split = rest
        .find(['Z', 'z', '+', '-'])
        .ok_or_else(|| format!("{text:?} has no UTC offset: end it with Z (UTC) or +HH:MM, as RFC 3339 requires"))?;
    let (time, offset) = rest.split_at(split);
    let ms = time_of_day(time)?;
    let offset = offset_minutes(offset)?;
    Ok(days * 86_400_000 + ms - offset * 60_000)
}

/// The civil date of a day counted from 1970-01-01 (proleptic Gregorian).
fn civil_from_days(days: i64) -> (i64, i64, i64) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

/// Unix milliseconds as an RFC 3339 instant in UTC with milliseconds:
/// `2016-04-30T11:18:25.796Z`. Years beyond 9999 are written with more digits.
///
/// ```
/// assert_eq!(snowflake_layout::format_rfc3339(1_462_015_105_796), "2016-04-30T11:18:25.796Z");
/// ```
pub fn format_rfc3339(unix_ms: i64) -> String {
    let days = unix_ms.div_euclid(86_400_000);
    let ms_of_day = unix_ms.rem_euclid(86_400_000);
    let (year, month, day) = civil_from_days(days);
    let (secs, ms) = (ms_of_day / 1000, ms_of_day % 1000);
    let (h, m, s) = (secs / 3600, secs / 60 % 60, secs % 60);
    format!("{year:04}-{month:02}-{day:02}T{h:02}:{m:02}:{s:02}.{ms:03}Z")
}

/// The first millisecond of the year 10000, which no four-digit date reaches.
const YEAR_10000_MS: i64 = 253_402_300_800_000;

/// An epoch as the text form writes it: `YYYY-MM-DD` at UTC midnight, else RFC 3339; Unix
/// milliseconds from the year 10000 on (or before 1970), which dates cannot spell in four
/// digits.
///
/// ```
/// use snowflake_layout::format_epoch;
///
/// assert_eq!(format_epoch(1_620_172_800_000), "2021-05-05");
/// assert_eq!(format_epoch(1_288_834_974_657), "2010-11-04T01:42:54.657Z");
/// ```
pub fn format_epoch(unix_ms: i64) -> String {
    if !(0..YEAR_10000_MS).contains(&unix_ms) {
        unix_ms.to_string()
    } else if unix_ms.rem_euclid(86_400_000) == 0 {
        let (year, month, day) = civil_from_days(unix_ms.div_euclid(86_400_000));
        format!("{year:04}-{month:02}-{day:02}")
    } else {
        format_rfc3339(unix_ms)
    }
}

#[cfg(test)]
mod tests {
    use alloc::string::ToString;

    use super::{format_epoch, format_rfc3339, parse_date_or_instant as parse};

    #[test]
    fn dates_and_instants() {
        assert_eq!(parse("1970-01-01"), Ok(0));
        assert_eq!(parse("2021-05-05"), Ok(1_620_172_800_000));
        assert_eq!(parse("2010-11-04T01:42:54.657Z"), Ok(1_288_834_974_657));
        assert_eq!(parse("2010-11-04T02:42:54.657+01:00"), Ok(1_288_834_974_657));
        assert_eq!(parse("2024-02-29"), Ok(1_709_164_800_000));
        assert_eq!(parse("1969-12-31"), Ok(-86_400_000));
    }

    #[test]
    fn leap_years_follow_the_gregorian_rules() {
        // Divisible by 100 but not by 400: no 29 February.
        assert!(parse("1900-02-29").is_err());
        assert!(parse("2100-02-29").is_err());
        // Divisible by 400: a leap year.
        assert_eq!(parse("2000-02-29"), Ok(951_782_400_000));
        assert_eq!(parse("2000-03-01"), Ok(951_868_800_000));
        assert_eq!(parse("2400-02-29"), Ok(13_574_563_200_000));
        assert_eq!(parse("1972-02-29"), Ok(68_169_600_000));
        assert!(parse("2023-02-29").is_err());
        // Day 366 of a leap year and the day after.
        assert_eq!(parse("2000-12-31"), Ok(978_220_800_000));
        assert_eq!(parse("2001-01-01"), Ok(978_307_200_000));
    }

    #[test]
    fn far_dates_do_not_overflow() {
        assert_eq!(parse("9999-12-31"), Ok(253_402_214_400_000));
        assert_eq!(parse("9999-12-31T23:59:59.999Z"), Ok(253_402_300_799_999));
        assert_eq!(parse("2262-04-11"), Ok(9_223_286_400_000));
        // Before 1970 the value is negative; the caller refuses it with its own message.
        assert_eq!(parse("1900-01-01"), Ok(-2_208_988_800_000));
        assert_eq!(parse("0000-01-01"), Ok(-62_167_219_200_000));
        assert_eq!(parse("0000-02-29"), Ok(-62_162_121_600_000), "year 0 is a leap year");
    }

    #[test]
    fn offsets_move_the_instant() {
        let utc = parse("2021-05-05T00:00:00Z").unwrap();
        assert_eq!(utc, 1_620_172_800_000);
        assert_eq!(parse("2021-05-05T00:00:00+00:00"), Ok(utc));
        assert_eq!(parse("2021-05-05T00:00:00-00:00"), Ok(utc));
        assert_eq!(parse("2021-05-05t00:00:00z"), Ok(utc));
        assert_eq!(parse("2021-05-05 00:00:00Z"), Ok(utc));
        assert_eq!(parse("2021-05-05T14:00:00+14:00"), Ok(utc));
        assert_eq!(parse("2021-05-04T12:00:00-12:00"), Ok(utc));
        assert_eq!(parse("2021-05-05T05:30:00+05:30"), Ok(utc));
        assert_eq!(parse("2021-05-04T23:59:00-00:01"), Ok(utc));
        assert_eq!(parse("2021-05-05T23:59:00+23:59"), Ok(utc));
        // An offset can carry an instant across the Unix epoch.
        assert_eq!(parse("1970-01-01T00:00:00+00:01"), Ok(-60_000));
        assert_eq!(parse("1969-12-31T23:00:00-01:00"), Ok(0));
        // Across a year and a leap day.
        assert_eq!(parse("2021-01-01T00:30:00+01:00"), parse("2020-12-31T23:30:00Z"));
        assert_eq!(parse("2024-02-28T23:00:00-02:00"), parse("2024-02-29T01:00:00Z"));
    }

    #[test]
    fn fractions_are_milliseconds() {
        let base = parse("2021-05-05T00:00:00Z").unwrap();
        assert_eq!(parse("2021-05-05T00:00:00.5Z"), Ok(base + 500));
        assert_eq!(parse("2021-05-05T00:00:00.05Z"), Ok(base + 50));
        assert_eq!(parse("2021-05-05T00:00:00.005Z"), Ok(base + 5));
        assert_eq!(parse("2021-05-05T00:00:00.999000000Z"), Ok(base + 999));
        assert_eq!(parse("2021-05-05T23:59:59.999Z"), Ok(base + 86_399_999));
    }

    #[test]
    fn formatting_inverts_parsing() {
        assert_eq!(format_rfc3339(1_462_015_105_796), "2016-04-30T11:18:25.796Z");
        assert_eq!(format_rfc3339(0), "1970-01-01T00:00:00.000Z");
        assert_eq!(format_rfc3339(-1), "1969-12-31T23:59:59.999Z");
        assert_eq!(format_rfc3339(253_402_300_799_999), "9999-12-31T23:59:59.999Z");
        assert_eq!(format_epoch(1_620_172_800_000), "2021-05-05");
        assert_eq!(format_epoch(1_288_834_974_657), "2010-11-04T01:42:54.657Z");
        // Every day across four centuries (leap rules included) and a few instants each.
        for days in -1_000..150_000_i64 {
            for ms in [0, 1, 43_200_000, 86_399_999] {
                let unix_ms = days * 86_400_000 + ms;
                if unix_ms >= 0 {
                    assert_eq!(parse(&format_rfc3339(unix_ms)), Ok(unix_ms), "{unix_ms}");
                }
            }
            if days >= 0 {
                assert_eq!(parse(&format_epoch(days * 86_400_000)), Ok(days * 86_400_000));
            }
        }
        // Epochs past the year 9999 are written as Unix milliseconds, which parse back
        // (found by the parse_layout fuzz target).
        assert_eq!(format_epoch(253_402_300_799_999), "9999-12-31T23:59:59.999Z");
        assert_eq!(format_epoch(253_402_300_800_000), "253402300800000");
        assert_eq!(format_epoch(171_759_247_218_954_375), "171759247218954375");
        assert_eq!(format_epoch(i64::MAX), i64::MAX.to_string());
        // Extremes do not panic.
        assert!(format_rfc3339(i64::MAX).starts_with("292278994-"));
        assert!(format_rfc3339(i64::MIN).starts_with('-'));
    }

    #[test]
    fn refusals() {
        for bad in [
            "",
            "2021-02-29",
            "2021-13-01",
            "2021-00-10",
            "2021-04-31",
            "yesterday",
            "2021-5-5",
            "2021-05-05T25:00:00Z",
            "2021-05-05T10:00:00",
            "2021-05-05T10:00:00.0001Z",
            "2021-05-05T10:00:00+1:00",
            "2021/05/05",
            "２０２１-05-05",
            "2021-05-05T24:00:00Z",
            "2021-05-05T23:60:00Z",
            "2021-05-05T23:59:60Z",
            "2021-05-05T10:00Z",
            "2021-05-05T1:00:00Z",
            "2021-05-05T",
            "2021-05-05TZ",
            "2021-05-05Z",
            "2021-05-05X10:00:00Z",
            "2021-05-05T10:00:00.Z",
            "2021-05-05T10:00:00.1234567890Z",
            "2021-05-05T10:00:00.12aZ",
            "2021-05-05T10:00:00+24:00",
            "2021-05-05T10:00:00+05:60",
            "2021-05-05T10:00:00+05",
            "2021-05-05T10:00:00+0500",
            "2021-05-05T10:00:00Z+01:00",
            "2021-05-05T10:00:00Zjunk",
            "2021-05-05T10:00:00+-1:00",
            "2021-05-05T10:00:00 Z",
            " 2021-05-05",
            "2021-05-05 ",
            "+2021-05-05",
            "-2021-05-05",
            "20210505",
            "2021-05-5 ",
            "2021-05-0é",
            "99999-01-01",
        ] {
            assert!(parse(bad).is_err(), "{bad:?} must be refused");
        }
    }
}
