//! The epoch literal: `"YYYY-MM-DD"` (UTC midnight) or an RFC 3339 instant, to Unix ms.

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

/// Parses `"YYYY-MM-DD"` or an RFC 3339 instant to Unix milliseconds.
pub fn parse(text: &str) -> Result<i64, String> {
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

#[cfg(test)]
mod tests {
    use super::parse;

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
        ] {
            assert!(parse(bad).is_err(), "{bad:?} must be refused");
        }
    }
}
