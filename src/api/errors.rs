//! What a non-2xx answer (or a failed request) means: retry or give up, and why.

use alloc::string::String;

use super::status::is_all_inputs_failed;
use crate::engine::ErrorCode;
use crate::text::{first_chars, push_decimal};

/// What to do with an HTTP answer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Disposition {
    /// 2xx: read the body.
    Success,
    /// Transient (408, 429, 5xx): retry with backoff.
    Retry,
    /// Permanent: stop with this error code.
    Fail(ErrorCode),
}

/// Classifies an HTTP status and the error text of its body (DESIGN §1).
/// "All Inputs Failed" in the message wins over the status: no retry can help.
///
/// ```
/// use captaindata_poller::api::{classify_http, Disposition};
/// use captaindata_poller::engine::ErrorCode;
/// assert_eq!(classify_http(503, None), Disposition::Retry);
/// assert_eq!(classify_http(404, None), Disposition::Fail(ErrorCode::NotFound));
/// assert_eq!(
///     classify_http(400, Some("All Inputs Failed")),
///     Disposition::Fail(ErrorCode::AllInputsFailed)
/// );
/// ```
pub fn classify_http(status: u16, message: Option<&str>) -> Disposition {
    if (200..300).contains(&status) {
        return Disposition::Success;
    }
    if message.is_some_and(is_all_inputs_failed) {
        return Disposition::Fail(ErrorCode::AllInputsFailed);
    }
    match status {
        401 | 403 => Disposition::Fail(ErrorCode::Unauthorized),
        404 => Disposition::Fail(ErrorCode::NotFound),
        408 | 429 | 500..=599 => Disposition::Retry,
        _ => Disposition::Fail(ErrorCode::BadResponse),
    }
}

/// How an HTTP failure reads in an error message: `HTTP 404`, or `HTTP 404: <the body's
/// message>` (cut at 300 characters).
///
/// ```
/// use captaindata_poller::api::http_error_text;
/// assert_eq!(http_error_text(503, None), "HTTP 503");
/// assert_eq!(http_error_text(404, Some("no such job")), "HTTP 404: no such job");
/// ```
pub fn http_error_text(status: u16, message: Option<&str>) -> String {
    let mut text = String::from("HTTP ");
    push_decimal(&mut text, status.into());
    if let Some(message) = message {
        text.push_str(": ");
        text.push_str(first_chars(message, 300));
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn permanent_errors_are_not_retried() {
        assert_eq!(
            classify_http(401, None),
            Disposition::Fail(ErrorCode::Unauthorized)
        );
        assert_eq!(
            classify_http(403, Some("no")),
            Disposition::Fail(ErrorCode::Unauthorized)
        );
        assert_eq!(
            classify_http(404, None),
            Disposition::Fail(ErrorCode::NotFound)
        );
        for s in [400, 405, 410, 422, 302, 100] {
            assert_eq!(
                classify_http(s, None),
                Disposition::Fail(ErrorCode::BadResponse),
                "{s}"
            );
        }
    }

    #[test]
    fn transient_errors_are_retried() {
        for s in [408, 429, 500, 502, 503, 504, 599] {
            assert_eq!(classify_http(s, None), Disposition::Retry, "{s}");
        }
    }

    #[test]
    fn all_inputs_failed_wins_whatever_the_status() {
        for s in [400, 422, 500] {
            assert_eq!(
                classify_http(s, Some("Error: all inputs failed")),
                Disposition::Fail(ErrorCode::AllInputsFailed)
            );
        }
        assert_eq!(
            classify_http(200, Some("all inputs failed")),
            Disposition::Success
        );
    }
}
