//! `Retry-After` header parsing (RFC 9110 §10.2.3): delay-seconds or an HTTP date.

use std::time::{Duration, UNIX_EPOCH};

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
    let at = httpdate::parse_http_date(value).ok()?;
    let at_ms = at
        .duration_since(UNIX_EPOCH)
        .unwrap_or(Duration::ZERO)
        .as_millis();
    let at_ms = u64::try_from(at_ms).unwrap_or(u64::MAX);
    Some(at_ms.saturating_sub(now_ms))
}

/// `"12"` or `"0.25"` → ms, saturating.
fn parse_seconds(value: &str) -> Option<u64> {
    let (whole, frac) = match value.split_once('.') {
        Some((w, f)) => (w, f),
        None => (value, ""),
    };
    let digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    if whole.is_empty() || !digits(whole) || !digits(frac) {
        return None;
    }
    let secs = whole.bytes().fold(0u64, |acc, b| {
        acc.saturating_mul(10).saturating_add(u64::from(b - b'0'))
    });
    // Only the first three fraction digits matter at ms resolution.
    let mut frac_ms = 0u64;
    for (i, b) in frac
        .bytes()
        .chain(std::iter::repeat(b'0'))
        .take(3)
        .enumerate()
    {
        frac_ms += u64::from(b - b'0') * [100, 10, 1][i];
    }
    Some(secs.saturating_mul(1_000).saturating_add(frac_ms))
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
    fn garbage_is_ignored() {
        for v in ["", "soon", "-1", "1e3", "1.2.3", "12s", "."] {
            assert_eq!(parse_retry_after(v, 0), None, "{v}");
        }
    }
}
