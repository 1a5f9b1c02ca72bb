//! Retries made visible: `onStatus` is told when the engine schedules a retry of a failing
//! request (`run.retrying`), and again at the next good answer (`retrying: null`).
//!
//! Derived from what the engine already returns: a backoff sleep right after a failed answer
//! is a retry of it; the engine's backoff restarts at a good answer, and so does the count
//! here. The glue decides nothing: it only names what the engine did.
//!
//! The receiver is handed the retry alone, as an array, in place of a status read, and `null`
//! once an answer came: js/delivery.js tells it as the last status with its `retrying` object
//! (docs/size.md: building the objects here cost every page more).

use wasm_bindgen::JsValue;

use super::payloads::array;
use crate::api::{http_error_text, Outcome, NO_RESPONSE_TEXT};
use crate::engine::{ErrorCode, SleepReason};

/// A retryable failure: its code, and the HTTP status when there was one.
type Failure = (ErrorCode, Option<u16>);

/// What `run.retrying` is derived from, kept by the loop.
pub struct Retries {
    /// `retry.retries`.
    retries: u32,
    /// Retries scheduled since the last good answer.
    attempt: u32,
    /// The failure of the last answer, until a backoff sleep takes it.
    failure: Option<Failure>,
}

impl Retries {
    /// For a poller that retries a request up to `retries` times.
    pub fn new(retries: u32) -> Retries {
        Retries {
            retries,
            attempt: 0,
            failure: None,
        }
    }

    /// Notes how a request ended; true when it answered well after retries.
    #[inline(never)] // out of the loop's future, which is large already
    pub fn answered(&mut self, outcome: &Outcome) -> bool {
        self.failure = failure(outcome);
        self.failure.is_none() && core::mem::take(&mut self.attempt) > 0
    }

    /// The engine sleeps `ms`: right after a failure, a backoff is the retry of it. Gives
    /// `[attempt, retries, delayMs, code, message, HTTP status or null]`.
    #[inline(never)]
    pub fn sleeping(&mut self, reason: SleepReason, ms: u32) -> Option<JsValue> {
        if reason != SleepReason::Backoff {
            return None;
        }
        let (code, status) = self.failure.take()?;
        self.attempt += 1;
        // The engine's words for each failure, never a header, a body or a URL: no secret.
        let message: JsValue = match (code, status) {
            (_, Some(status)) => http_error_text(status, None).into(),
            (ErrorCode::NetworkError, _) => NO_RESPONSE_TEXT.into(),
            (ErrorCode::Timeout, _) => "request timeout".into(),
            _ => "malformed response".into(),
        };
        Some(array(&[
            self.attempt.into(),
            self.retries.into(),
            ms.into(),
            code.as_str().into(),
            message,
            status.map_or(JsValue::NULL, JsValue::from),
        ]))
    }
}

/// What failed in an answer that was not good (`None` for a good one).
fn failure(outcome: &Outcome) -> Option<Failure> {
    Some(match outcome {
        Outcome::Results(_) | Outcome::Run(_) => return None,
        Outcome::Http { status, .. } => {
            let code = match status {
                429 => ErrorCode::RateLimited,
                404 => ErrorCode::NotFound, // results still missing after the run's end
                200..=299 => ErrorCode::BadResponse,
                _ => ErrorCode::ServerError,
            };
            (code, Some(*status))
        }
        Outcome::Network | Outcome::NotSent => (ErrorCode::NetworkError, None),
        Outcome::Timeout => (ErrorCode::Timeout, None),
        Outcome::BadBody(_) => (ErrorCode::BadResponse, None),
    })
}
