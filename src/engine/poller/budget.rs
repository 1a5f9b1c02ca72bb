//! The hard stops: `max_duration_ms` (TIMEOUT) and `max_requests` (BUDGET_EXHAUSTED); in
//! step mode each ends the round with a cursor instead. The deadline also cuts every sleep
//! and every request's timeout short.

use alloc::string::String;

use crate::api::{decimal, ErrorCode};
use crate::engine::config::Config;

/// Time and requests spent against their limits (`Config::max_duration_ms`,
/// `Config::max_requests`).
#[derive(Debug)]
pub(super) struct Budget {
    started_ms: u64,
    deadline_ms: Option<u64>,
    /// Requests sent so far.
    requests: u32,
}

impl Budget {
    /// The budgets of `config`, counted from `now_ms`.
    pub fn new(config: &Config, now_ms: u64) -> Budget {
        Budget {
            started_ms: now_ms,
            deadline_ms: config.max_duration_ms.map(|d| now_ms.saturating_add(d)),
            requests: 0,
        }
    }

    /// Requests sent so far.
    pub fn requests(&self) -> u32 {
        self.requests
    }

    /// Time since the start.
    pub fn elapsed(&self, now_ms: u64) -> u64 {
        now_ms.saturating_sub(self.started_ms)
    }

    /// When the deadline falls, if there is one.
    pub fn deadline(&self) -> Option<u64> {
        self.deadline_ms
    }

    /// The deadline has passed.
    pub fn out_of_time(&self, now_ms: u64) -> bool {
        self.deadline_ms.is_some_and(|d| now_ms >= d)
    }

    /// Time left before the deadline (`None`: no deadline). Only asked before it.
    pub fn left(&self, now_ms: u64) -> Option<u64> {
        self.deadline_ms.map(|d| d - now_ms)
    }

    /// TIMEOUT and its message once the deadline has passed.
    pub fn timed_out(&self, config: &Config, now_ms: u64) -> Option<(ErrorCode, String)> {
        if !self.out_of_time(now_ms) {
            return None;
        }
        let max = config.max_duration_ms.unwrap_or_default();
        let message = ["gave up after maxDurationMs (", &decimal(max), " ms)"].concat();
        Some((ErrorCode::Timeout, message))
    }

    /// BUDGET_EXHAUSTED and its message once `max_requests` were sent.
    pub fn requests_spent(&self, config: &Config) -> Option<(ErrorCode, String)> {
        let max = config.max_requests.filter(|&max| self.requests >= max)?;
        let message = ["sent maxRequests (", &decimal(max.into()), ") requests"].concat();
        Some((ErrorCode::BudgetExhausted, message))
    }

    /// A request is sent at `now_ms` with the configured `timeout_ms`: its timeout, cut to
    /// the deadline (at least 1 ms).
    pub fn send(&mut self, timeout_ms: u32, now_ms: u64) -> u32 {
        self.requests = self.requests.saturating_add(1);
        let left = self.left(now_ms).unwrap_or(u64::MAX);
        let timeout_ms = u64::from(timeout_ms).min(left).max(1);
        u32::try_from(timeout_ms).unwrap_or(u32::MAX)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn budget(max_duration_ms: Option<u64>, max_requests: Option<u32>) -> (Budget, Config) {
        let mut config = Config::new("https://api.captaindata.co/v3", "j").unwrap();
        config.max_duration_ms = max_duration_ms;
        config.max_requests = max_requests;
        (Budget::new(&config, 1_000), config)
    }

    #[test]
    fn the_deadline_ends_the_poll_and_cuts_request_timeouts() {
        let (mut b, config) = budget(Some(5_000), None);
        assert_eq!(b.timed_out(&config, 5_999), None);
        assert_eq!(b.send(30_000, 4_000), 2_000);
        assert_eq!(b.send(30_000, 5_999), 1);
        let (code, message) = b.timed_out(&config, 6_000).unwrap();
        assert_eq!(code, ErrorCode::Timeout);
        assert_eq!(message, "gave up after maxDurationMs (5000 ms)");
        assert_eq!(b.elapsed(6_000), 5_000);
    }

    #[test]
    fn the_request_budget_is_spent_after_max_requests() {
        let (mut b, config) = budget(None, Some(2));
        assert_eq!(b.send(30_000, 1_000), 30_000);
        assert_eq!(b.requests_spent(&config), None);
        b.send(30_000, 1_000);
        let spent = Some((
            ErrorCode::BudgetExhausted,
            "sent maxRequests (2) requests".into(),
        ));
        assert_eq!(b.requests_spent(&config), spent);
        assert_eq!((b.requests(), b.left(1_000)), (2, None));
    }
}
