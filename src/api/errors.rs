//! What a non-2xx answer (or a failed request) means: retry or give up, and why.

use alloc::string::String;

use super::error_code::ErrorCode;
use super::status::is_all_inputs_failed;
use super::text::decimal;

/// What a failed request with no response at all means, for error messages (no URL, so
/// no credentials). In a browser the usual cause is a CORS refusal: the browser entry adds
/// that advice (js/browser.js), since a server or a CLI that reads it would be misled.
pub const NO_RESPONSE_TEXT: &str = "no response at all (network error)";

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
/// use captaindata_poller::api::ErrorCode;
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
    match message {
        Some(message) => [
            "HTTP ",
            &decimal(status.into()),
            ": ",
            first_chars(message, 300),
        ]
        .concat(),
        None => ["HTTP ", &decimal(status.into())].concat(),
    }
}

/// Why `scheduleWorkflow` failed, from the HTTP status of its answer (`None`: no response at
/// all). A launch is never retried (a retry could launch the workflow twice), so the
/// transient kinds get codes of their own: 429 → `RATE_LIMITED`, 5xx/408 → `SERVER_ERROR`,
/// no response → `NETWORK_ERROR`; the rest as [`classify_http`] says (a 2xx that could not
/// be used → `BAD_RESPONSE`).
///
/// ```
/// use captaindata_poller::api::{classify_schedule_failure, ErrorCode};
/// assert_eq!(classify_schedule_failure(None, None), ErrorCode::NetworkError);
/// assert_eq!(classify_schedule_failure(Some(429), None), ErrorCode::RateLimited);
/// assert_eq!(classify_schedule_failure(Some(401), None), ErrorCode::Unauthorized);
/// ```
pub fn classify_schedule_failure(status: Option<u16>, message: Option<&str>) -> ErrorCode {
    let Some(status) = status else {
        return ErrorCode::NetworkError;
    };
    match classify_http(status, message) {
        Disposition::Fail(code) => code,
        Disposition::Success => ErrorCode::BadResponse,
        Disposition::Retry if status == 429 => ErrorCode::RateLimited,
        Disposition::Retry => ErrorCode::ServerError,
    }
}

/// The first `n` characters of `text` (all of it when shorter): long values are cut
/// short in messages.
///
/// ```
/// assert_eq!(captaindata_poller::api::first_chars("héllo", 2), "hé");
/// ```
pub fn first_chars(text: &str, n: usize) -> &str {
    let end = text.char_indices().nth(n).map_or(text.len(), |(i, _)| i);
    text.get(..end).unwrap_or(text)
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
    fn schedule_failures_are_never_retried_but_named() {
        let c = classify_schedule_failure;
        assert_eq!(c(None, None), ErrorCode::NetworkError);
        assert_eq!(c(Some(429), None), ErrorCode::RateLimited);
        for s in [408, 500, 503] {
            assert_eq!(c(Some(s), None), ErrorCode::ServerError, "{s}");
        }
        assert_eq!(c(Some(403), None), ErrorCode::Unauthorized);
        assert_eq!(c(Some(404), None), ErrorCode::NotFound);
        assert_eq!(c(Some(400), None), ErrorCode::BadResponse);
        assert_eq!(c(Some(200), None), ErrorCode::BadResponse);
        let aif = Some("All inputs failed");
        assert_eq!(c(Some(500), aif), ErrorCode::AllInputsFailed);
    }

    #[test]
    fn messages_are_cut_at_a_character_count() {
        assert_eq!(first_chars("héllo", 2), "hé");
        assert_eq!(first_chars("héllo", 5), "héllo");
        assert_eq!(first_chars("hé", 80), "hé");
        let long = "é".repeat(400);
        assert_eq!(http_error_text(500, Some(&long)).chars().count(), 310);
    }

    #[test]
    fn the_no_response_text_names_no_url_and_no_browser() {
        assert!(
            !NO_RESPONSE_TEXT.contains("CORS"),
            "said by the browser entry only"
        );
        assert!(!NO_RESPONSE_TEXT.contains("://") && !NO_RESPONSE_TEXT.contains('@'));
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
