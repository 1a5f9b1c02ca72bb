//! `Retry-After` header parsing (RFC 9110 §10.2.3): delay-seconds or an HTTP date.

use crate::{scan, text};

/// The delay a `Retry-After` value asks for, in ms from `now_ms` (ms since the Unix epoch).
/// Seconds may be fractional (`"1.5"`); a date in the past gives `0`. Huge values saturate
/// instead of overflowing. `None` for garbage. The caller clamps the result.
///
/// ```
/// use captaindata_poller::api::parse_retry_after;
/// assert_eq!(parse_retry_after("2", 0), Some(2_000));
/// assert_eq!(parse_retry_after("Thu, 01 Jan 1970 00:00:10 GMT", 4_000), Some(6_000));
/// assert_eq!(parse_retry_after("soon", 0), None);
/// ```
pub fn parse_retry_after(value: &str, now_ms: u64) -> Option<u64> {
    let value = value.trim();
    if value.starts_with(|c: char| c.is_ascii_digit()) {
        return parse_seconds(value);
    }
    Some(parse_http_date(value)?.saturating_sub(now_ms))
}

/// `"12"` or `"0.25"` → ms, saturating.
fn parse_seconds(value: &str) -> Option<u64> {
    let (whole, frac) = match scan::split_once(value, ".") {
        Some((w, f)) => (w, f),
        None => (value, ""),
    };
    if !frac.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let secs = digits(whole)?;
    // Only the first three fraction digits matter at ms resolution.
    let frac_ms = frac
        .bytes()
        .chain(core::iter::repeat(b'0'))
        .take(3)
        .fold(0, |ms, b| ms * 10 + u64::from(b - b'0'));
    Some(secs.saturating_mul(1_000).saturating_add(frac_ms))
}

/// A non-empty run of ASCII digits → its value, saturating (a huge hint means "a long time").
fn digits(text: &str) -> Option<u64> {
    if text.is_empty() || !text.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    // All digits: the shared parser fails only on overflow.
    Some(text::parse_u64(text).unwrap_or(u64::MAX))
}

const MONTHS: [&str; 12] = [
    "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
];
/// Day names from 1970-01-01, a Thursday.
const WEEKDAYS: [&str; 7] = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"];

/// An HTTP date (RFC 9110 §5.6.7) → ms since the Unix epoch, in the three formats a
/// recipient must accept: IMF-fixdate `Sun, 06 Nov 1994 08:49:37 GMT`, RFC 850
/// `Sunday, 06-Nov-94 08:49:37 GMT` and asctime `Sun Nov  6 08:49:37 1994`.
/// Hand-written: a date crate would bring `std::time` and its messages into the wasm.
fn parse_http_date(value: &str) -> Option<u64> {
    let (weekday, rest) = value.split_once([',', ' '])?;
    let mut words = rest.split([' ', '-']).filter(|w| !w.is_empty());
    let mut next = || words.next();
    let (day, month, year, time) = match (next()?, next()?, next()?, next()?, next()) {
        (day, month, year, time, Some("GMT")) => (day, month, year, time),
        (month, day, time, year, None) if scan::find(value, ",").is_none() => {
            (day, month, year, time)
        }
        _ => return None,
    };
    if next().is_some() {
        return None;
    }
    let month = MONTHS.iter().position(|m| *m == month)?;
    let day = digits(day).filter(|d| (1..=31).contains(d) && day.len() <= 2)?;
    let year = match (digits(year)?, year.len()) {
        (y, 2) if y < 70 => 2000 + y,
        (y, 2) => 1900 + y,
        (y, 4) if y >= 1970 => y,
        _ => return None,
    };
    let mut clock = scan::split(time, ":");
    let mut field = |max: u64| {
        let text = clock.next()?;
        digits(text).filter(|&n| n <= max && text.len() == 2)
    };
    let seconds = field(23)? * 3_600 + field(59)? * 60 + field(60)?;
    if clock.next().is_some() {
        return None;
    }
    let days = days_since_epoch(year, month as u64 + 1, day)?;
    let named = WEEKDAYS.get((days % 7) as usize)?;
    if !weekday.starts_with(named) {
        return None;
    }
    Some((days * 86_400 + seconds) * 1_000)
}

/// Days from 1970-01-01 to a date of the proleptic Gregorian calendar (year ≥ 1970);
/// `None` for a day the month does not have.
fn days_since_epoch(year: u64, month: u64, day: u64) -> Option<u64> {
    let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0);
    let mut lengths = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
    lengths[1] += u64::from(leap);
    let before_month: u64 = lengths.iter().take(month as usize - 1).sum();
    if day > *lengths.get(month as usize - 1)? {
        return None;
    }
    let y = year - 1;
    let leap_days = |y: u64| y / 4 - y / 100 + y / 400;
    let before_year = (year - 1970) * 365 + leap_days(y) - leap_days(1969);
    Some(before_year + before_month + day - 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seconds_whole_and_fractional() {
        assert_eq!(parse_retry_after("0", 0), Some(0));
        assert_eq!(parse_retry_after(" 7 ", 0), Some(7_000));
        assert_eq!(parse_retry_after("1.5", 0), Some(1_500));
        assert_eq!(parse_retry_after("0.0009", 0), Some(0));
    }

    #[test]
    fn huge_seconds_saturate_instead_of_overflowing() {
        assert_eq!(
            parse_retry_after("99999999999999999999999", 0),
            Some(u64::MAX)
        );
    }

    #[test]
    fn http_date_is_relative_to_now() {
        let now = 1_445_412_480_000; // Wed, 21 Oct 2015 07:28:00 GMT
        assert_eq!(
            parse_retry_after("Wed, 21 Oct 2015 07:28:30 GMT", now),
            Some(30_000)
        );
        assert_eq!(
            parse_retry_after("Wed, 21 Oct 2015 07:27:00 GMT", now),
            Some(0)
        );
    }

    #[test]
    fn the_obsolete_date_formats_are_accepted() {
        let at = Some(784_111_777_000); // Sun, 06 Nov 1994 08:49:37 GMT
        assert_eq!(parse_http_date("Sun, 06 Nov 1994 08:49:37 GMT"), at);
        assert_eq!(parse_http_date("Sunday, 06-Nov-94 08:49:37 GMT"), at);
        assert_eq!(parse_http_date("Sun Nov  6 08:49:37 1994"), at);
    }

    #[test]
    #[cfg(not(target_arch = "wasm32"))] // httpdate is a native dev-dependency
    fn dates_agree_with_a_reference_formatter() {
        use std::time::{Duration, UNIX_EPOCH};
        // Every ~4.6 days from 1970 to past 2100 (leap years, century rules, month ends).
        for secs in (0..4_200_000_000u64).step_by(400_009) {
            let text = httpdate::fmt_http_date(UNIX_EPOCH + Duration::from_secs(secs));
            assert_eq!(parse_http_date(&text), Some(secs * 1_000), "{text}");
        }
    }

    #[test]
    fn impossible_dates_are_garbage() {
        for v in [
            "Mon, 06 Nov 1994 08:49:37 GMT", // 6 Nov 1994 was a Sunday
            "Thu, 31 Apr 2026 08:49:37 GMT",
            "Sun, 06 Nov 1994 24:00:00 GMT",
            "Sun, 06 Nov 1994 08:49:37 UTC",
            "Sun, 06 Nov 1994 08:49 GMT",
            "Wed, 31 Dec 1969 23:59:59 GMT",
        ] {
            assert_eq!(parse_retry_after(v, 0), None, "{v}");
        }
    }

    #[test]
    fn garbage_is_ignored() {
        for v in ["", "soon", "-1", "1e3", "1.2.3", "12s", "."] {
            assert_eq!(parse_retry_after(v, 0), None, "{v}");
        }
    }
}
