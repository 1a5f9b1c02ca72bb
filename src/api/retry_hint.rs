//! A server's wait-before-retrying hint: `Retry-After` (RFC 9110 §10.2.3) or
//! `X-RateLimit-Reset`.

/// A server's wait-before-retrying hint, as read from the response headers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RetryHint {
    /// Wait this many ms from now.
    DelayMs(u64),
    /// Wait until this time, in ms since the Unix epoch.
    AtMs(u64),
}

/// `X-RateLimit-Reset` values from here up are epoch seconds (2001-09-09 onwards), smaller
/// ones a delay: no sane delay is 31 years long.
const EPOCH_SECONDS_FROM: u64 = 1_000_000_000;

/// Reads the hint from the raw header values. `Retry-After` wins: delay-seconds (fractional
/// allowed, `"0"` allowed, huge values saturate) or an HTTP date, which `parse_date` turns
/// into ms since the Unix epoch (the glue passes JS `Date.parse`). When it is absent or
/// garbage, `X-RateLimit-Reset` is read: seconds, epoch seconds when ≥ 1 000 000 000, a
/// delay otherwise. Garbage gives `None`. The engine clamps whatever comes out.
///
/// ```
/// use captaindata_poller::api::{retry_hint, RetryHint};
/// let no_dates = |_: &str| None;
/// assert_eq!(retry_hint(Some("1.5"), None, no_dates), Some(RetryHint::DelayMs(1_500)));
/// assert_eq!(retry_hint(Some("soon"), Some("30"), no_dates), Some(RetryHint::DelayMs(30_000)));
/// assert_eq!(retry_hint(None, Some("1700000000"), no_dates), Some(RetryHint::AtMs(1_700_000_000_000)));
/// ```
pub fn retry_hint(
    retry_after: Option<&str>,
    rate_limit_reset: Option<&str>,
    parse_date: impl Fn(&str) -> Option<u64>,
) -> Option<RetryHint> {
    // HTTP's optional whitespace is spaces and tabs (RFC 9110 §5.6.3): `trim_ascii`, not
    // `trim`, whose Unicode whitespace table every page would download.
    let from_retry_after = retry_after.and_then(|value| {
        let value = value.trim_ascii();
        match value.starts_with(|c: char| c.is_ascii_digit()) {
            true => seconds_ms(value).map(RetryHint::DelayMs),
            false => parse_date(value).map(RetryHint::AtMs),
        }
    });
    from_retry_after.or_else(|| {
        let ms = seconds_ms(rate_limit_reset?.trim_ascii())?;
        match ms >= EPOCH_SECONDS_FROM.saturating_mul(1_000) {
            true => Some(RetryHint::AtMs(ms)),
            false => Some(RetryHint::DelayMs(ms)),
        }
    })
}

/// `"12"` or `"0.25"` → ms, saturating (a huge hint means "a long time").
fn seconds_ms(value: &str) -> Option<u64> {
    let (whole, frac) = value.split_once('.').unwrap_or((value, ""));
    let digits = |t: &str| t.bytes().all(|b| b.is_ascii_digit());
    if whole.is_empty() || !digits(whole) || !digits(frac) {
        return None;
    }
    // All digits: parsing fails only on overflow.
    let secs = whole.parse::<u64>().unwrap_or(u64::MAX);
    // Only the first three fraction digits matter at ms resolution.
    let frac_ms = frac
        .bytes()
        .chain(core::iter::repeat(b'0'))
        .take(3)
        .fold(0, |ms, b| ms * 10 + u64::from(b - b'0'));
    Some(secs.saturating_mul(1_000).saturating_add(frac_ms))
}

#[cfg(test)]
mod tests {
    use super::*;
    use RetryHint::{AtMs, DelayMs};

    fn no_dates(_: &str) -> Option<u64> {
        None
    }

    fn ra(value: &str) -> Option<RetryHint> {
        retry_hint(Some(value), None, no_dates)
    }

    #[test]
    fn seconds_whole_and_fractional() {
        assert_eq!(ra("0"), Some(DelayMs(0)));
        assert_eq!(ra(" 7 "), Some(DelayMs(7_000)));
        assert_eq!(ra("1.5"), Some(DelayMs(1_500)));
        assert_eq!(ra("0.0009"), Some(DelayMs(0)));
    }

    #[test]
    fn huge_seconds_saturate_instead_of_overflowing() {
        assert_eq!(ra("99999999999999999999999"), Some(DelayMs(u64::MAX)));
    }

    #[test]
    fn garbage_is_ignored() {
        for v in ["", "soon", "-1", "1e3", "1.2.3", "12s", ".", "+5"] {
            assert_eq!(ra(v), None, "{v}");
        }
    }

    #[test]
    #[cfg(not(target_arch = "wasm32"))] // httpdate is a native dev-dependency
    fn dates_in_the_three_rfc_9110_formats_go_through_the_given_parser() {
        let parse = |v: &str| {
            let at = httpdate::parse_http_date(v).ok()?;
            let ms = at.duration_since(std::time::UNIX_EPOCH).ok()?.as_millis();
            u64::try_from(ms).ok()
        };
        let at = Some(AtMs(784_111_777_000)); // Sun, 06 Nov 1994 08:49:37 GMT
        for v in [
            "Sun, 06 Nov 1994 08:49:37 GMT",
            "Sunday, 06-Nov-94 08:49:37 GMT",
            "Sun Nov  6 08:49:37 1994",
        ] {
            assert_eq!(retry_hint(Some(v), None, parse), at, "{v}");
        }
        assert_eq!(retry_hint(Some("Sun, 32 Nov 1994"), None, parse), None);
    }

    #[test]
    fn rate_limit_reset_is_a_delay_or_epoch_seconds() {
        let rl = |v: &str| retry_hint(None, Some(v), no_dates);
        assert_eq!(rl("30"), Some(DelayMs(30_000)));
        assert_eq!(rl("999999999"), Some(DelayMs(999_999_999_000)));
        assert_eq!(rl("1000000000"), Some(AtMs(1_000_000_000_000)));
        assert_eq!(rl("1764524400.5"), Some(AtMs(1_764_524_400_500)));
        assert_eq!(rl("later"), None);
    }

    #[test]
    fn retry_after_wins_unless_it_is_garbage() {
        assert_eq!(
            retry_hint(Some("2"), Some("30"), no_dates),
            Some(DelayMs(2_000))
        );
        assert_eq!(
            retry_hint(Some("soon"), Some("30"), no_dates),
            Some(DelayMs(30_000))
        );
        assert_eq!(retry_hint(None, None, no_dates), None);
    }
}
