//! What a 429 does, and every other transient failure.
//!
//! A 429, a 408 or a 5xx ([`crate::api::classify_http`] says `Retry`), a request timeout, a
//! network error, a malformed body, or a 2xx body that cannot be used: the same request is
//! sent again after a backoff. The delays are [`crate::engine::RetryPolicy`]'s exponential
//! backoff with full jitter (`engine/backoff.rs`); a server hint (`Retry-After` in seconds
//! or as an HTTP date, `X-RateLimit-Reset`) replaces the delay, clamped into
//! `[min_delay_ms, max_delay_ms]` so `0` is no hot loop and a huge value no broken timer.
//! After `retries` failures in a row of one request the poll fails with RETRIES_EXHAUSTED
//! (BAD_RESPONSE when the bodies were malformed); any answer that is used starts the count
//! again. Past the deadline no retry is waited for (the coordinator asks the budget first);
//! offline, a network error spends no retry (the request waits to be back online).

use alloc::string::String;

use crate::api::{decimal, ErrorCode, RetryHint};
use crate::engine::backoff::Backoff;
use crate::engine::config::RetryPolicy;

/// The retries of the request being sent, and all those made.
#[derive(Debug)]
pub(super) struct Retries {
    backoff: Backoff,
    /// Retries this poller made.
    made: u32,
}

/// What a transient failure leads to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum Retry {
    /// Send the request again after this long.
    After(u64),
    /// Out of retries: fail with this code and message.
    GiveUp(ErrorCode, String),
}

impl Retries {
    /// Retries by `policy`, the jitter seeded with `seed`.
    pub fn new(policy: RetryPolicy, seed: u64) -> Retries {
        Retries {
            backoff: Backoff::new(policy, seed),
            made: 0,
        }
    }

    /// Retries made so far, for the summary.
    pub fn made(&self) -> u32 {
        self.made
    }

    /// An answer was used: a new run of failures starts from the shortest delay.
    pub fn answered(&mut self) {
        self.backoff.reset();
    }

    /// A retry is left for the request being sent.
    pub fn left(&self) -> bool {
        self.backoff.clone().next().is_some()
    }

    /// A server hint as a delay from `now_ms` (not clamped yet).
    pub fn hint_ms(hint: RetryHint, now_ms: u64) -> u64 {
        match hint {
            RetryHint::DelayMs(ms) => ms,
            RetryHint::AtMs(at) => at.saturating_sub(now_ms),
        }
    }

    /// A transient failure (`label` names it, `hint` is the server's delay, `bad_body`: a
    /// malformed answer): wait and retry, or give up.
    pub fn failed(&mut self, label: &str, hint: Option<u64>, bad_body: bool) -> Retry {
        let Some(delay) = self.backoff.next() else {
            let code = match bad_body {
                true => ErrorCode::BadResponse,
                false => ErrorCode::RetriesExhausted,
            };
            let message = [
                label,
                " after ",
                &decimal(self.backoff.retries().into()),
                " retries",
            ]
            .concat();
            return Retry::GiveUp(code, message);
        };
        self.made = self.made.saturating_add(1);
        Retry::After(hint.map_or(delay, |h| self.backoff.clamp(h)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const POLICY: RetryPolicy = RetryPolicy {
        retries: 2,
        min_delay_ms: 100,
        max_delay_ms: 5_000,
    };

    #[test]
    fn a_429_waits_as_the_server_asks_within_the_bounds() {
        let mut r = Retries::new(POLICY, 0);
        assert_eq!(
            r.failed("HTTP 429", Some(2_000), false),
            Retry::After(2_000)
        );
        assert_eq!(r.failed("HTTP 429", Some(0), false), Retry::After(100));
        r.answered();
        assert_eq!(
            r.failed("HTTP 429", Some(u64::MAX), false),
            Retry::After(5_000)
        );
        assert_eq!(Retries::hint_ms(RetryHint::AtMs(10_500), 10_000), 500);
        assert_eq!(r.made(), 3);
    }

    #[test]
    fn failures_in_a_row_give_up_after_the_retries() {
        let mut r = Retries::new(POLICY, 7);
        for _ in 0..2 {
            assert!(matches!(
                r.failed("HTTP 503", None, false),
                Retry::After(100..=200)
            ));
        }
        assert!(!r.left());
        let given_up = Retry::GiveUp(
            ErrorCode::RetriesExhausted,
            "HTTP 503 after 2 retries".into(),
        );
        assert_eq!(r.failed("HTTP 503", None, false), given_up);
        let mut bad = Retries::new(
            RetryPolicy {
                retries: 0,
                ..POLICY
            },
            0,
        );
        let text = "malformed response (x) after 0 retries";
        assert_eq!(
            bad.failed("malformed response (x)", None, true),
            Retry::GiveUp(ErrorCode::BadResponse, text.into())
        );
        r.answered();
        assert!(r.left());
    }
}
