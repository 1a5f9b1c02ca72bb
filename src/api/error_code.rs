//! The stable error kinds of the crate: one list, shared by the engine and the glue.

/// Stable error kinds; [`ErrorCode::as_str`] is the JS `error.code`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ErrorCode {
    /// "All Inputs Failed": no retry can help.
    AllInputsFailed,
    /// The run ended as `shutdown` or `stopped`.
    JobFailed,
    /// 401 or 403.
    Unauthorized,
    /// 404: no such job.
    NotFound,
    /// `max_duration_ms` passed.
    Timeout,
    /// `max_requests` reached.
    BudgetExhausted,
    /// A transient failure persisted past `retry.retries`.
    RetriesExhausted,
    /// The server answered something unusable (bad shape, 400/405, foreign or missing
    /// `paging.next`).
    BadResponse,
    /// The user's `AbortSignal` aborted (`stop()` is not an error: it ends with a summary).
    Aborted,
    /// `scheduleWorkflow` only (never retried): 429, the API asked to wait.
    RateLimited,
    /// `scheduleWorkflow` only (never retried): 5xx or 408.
    ServerError,
    /// No response at all, never retried: a `scheduleWorkflow` request that failed (network,
    /// CORS), or an injected `fetch` that threw instead of returning a promise.
    NetworkError,
    /// The WebAssembly module could not be fetched or instantiated (about this poller, not the
    /// run: another tab or a later start may succeed).
    LoadFailed,
    /// `onBatch` (or the iterator's consumer) threw or rejected; the cursor stays before that
    /// batch, so resuming delivers it again.
    CallbackFailed,
    /// The worker's stream of the run holds its maximum of viewers (`MAX_STREAM_VIEWERS`);
    /// about this viewer, not the run (`transport: "auto"` polls the worker instead).
    TooManyViewers,
    /// Not an error: the run ended with rows that were never recovered (lost callbacks whose
    /// replays were lost too); the summary of such an end says `"incomplete"` with this code.
    RowsMissing,
    /// Not an error: the worker kept the rows up to its cap (`MAX_ROWS_PER_RUN`) and no more;
    /// the summary says `"incomplete"` with this code.
    RowsCapReached,
}

impl ErrorCode {
    /// Every code, in a stable order: the single source of truth for lists of codes.
    pub const ALL: [ErrorCode; 17] = [
        ErrorCode::AllInputsFailed,
        ErrorCode::JobFailed,
        ErrorCode::Unauthorized,
        ErrorCode::NotFound,
        ErrorCode::Timeout,
        ErrorCode::BudgetExhausted,
        ErrorCode::RetriesExhausted,
        ErrorCode::BadResponse,
        ErrorCode::Aborted,
        ErrorCode::RateLimited,
        ErrorCode::ServerError,
        ErrorCode::NetworkError,
        ErrorCode::LoadFailed,
        ErrorCode::CallbackFailed,
        ErrorCode::TooManyViewers,
        ErrorCode::RowsMissing,
        ErrorCode::RowsCapReached,
    ];

    /// The stable JS code, e.g. `"ALL_INPUTS_FAILED"`.
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorCode::AllInputsFailed => "ALL_INPUTS_FAILED",
            ErrorCode::JobFailed => "JOB_FAILED",
            ErrorCode::Unauthorized => "UNAUTHORIZED",
            ErrorCode::NotFound => "NOT_FOUND",
            ErrorCode::Timeout => "TIMEOUT",
            ErrorCode::BudgetExhausted => "BUDGET_EXHAUSTED",
            ErrorCode::RetriesExhausted => "RETRIES_EXHAUSTED",
            ErrorCode::BadResponse => "BAD_RESPONSE",
            ErrorCode::Aborted => "ABORTED",
            ErrorCode::RateLimited => "RATE_LIMITED",
            ErrorCode::ServerError => "SERVER_ERROR",
            ErrorCode::NetworkError => "NETWORK_ERROR",
            ErrorCode::LoadFailed => "LOAD_FAILED",
            ErrorCode::CallbackFailed => "CALLBACK_FAILED",
            ErrorCode::TooManyViewers => "TOO_MANY_VIEWERS",
            ErrorCode::RowsMissing => "ROWS_MISSING",
            ErrorCode::RowsCapReached => "ROWS_CAP_REACHED",
        }
    }

    /// The code named by a run body's `error_code` when its `rows_missing` is set.
    pub fn missing_rows(text: &str) -> Option<ErrorCode> {
        match text {
            "ROWS_MISSING" => Some(ErrorCode::RowsMissing),
            "ROWS_CAP_REACHED" => Some(ErrorCode::RowsCapReached),
            _ => None,
        }
    }

    /// True when polling again with the same options cannot change the answer:
    /// `ALL_INPUTS_FAILED`, `JOB_FAILED`, `UNAUTHORIZED` and `NOT_FOUND`. Every other code
    /// (a budget, a timeout, a transient failure, a stop) may end differently next time, so a
    /// cron round keeps its cursor and tries again.
    ///
    /// ```
    /// use captaindata_poller::api::ErrorCode;
    /// assert!(ErrorCode::JobFailed.is_final());
    /// assert!(!ErrorCode::Timeout.is_final());
    /// ```
    pub fn is_final(self) -> bool {
        matches!(
            self,
            ErrorCode::AllInputsFailed
                | ErrorCode::JobFailed
                | ErrorCode::Unauthorized
                | ErrorCode::NotFound
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_are_distinct_screaming_snake_case() {
        let names: alloc::vec::Vec<&str> = ErrorCode::ALL.iter().map(|c| c.as_str()).collect();
        for (i, name) in names.iter().enumerate() {
            assert!(name.chars().all(|c| c.is_ascii_uppercase() || c == '_'));
            assert!(!names[..i].contains(name), "{name} twice");
        }
    }

    #[test]
    fn only_answers_polling_cannot_change_are_final() {
        let finals: alloc::vec::Vec<&str> = ErrorCode::ALL
            .iter()
            .filter(|c| c.is_final())
            .map(|c| c.as_str())
            .collect();
        assert_eq!(
            finals,
            [
                "ALL_INPUTS_FAILED",
                "JOB_FAILED",
                "UNAUTHORIZED",
                "NOT_FOUND"
            ]
        );
    }
}
