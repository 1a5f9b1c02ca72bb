//! Captain Data v3 wire types and their classification (and v4 run statuses: [`classify_v4_status`]).
//!
//! Pure: no I/O, no wasm. Only the small metadata is modelled here (run status,
//! paging, error bodies); result rows never become Rust values. The wasm glue
//! fills these structs from parsed JS values, native tests build them directly.

use alloc::string::String;
use alloc::vec::Vec;

mod error_code;
mod errors;
mod retry_hint;
mod status;
mod text;
mod v4_status;
mod webhook;

pub use error_code::ErrorCode;
pub use errors::{
    classify_http, classify_schedule_failure, first_chars, http_error_text, Disposition,
    NO_RESPONSE_TEXT,
};
pub use retry_hint::{retry_hint, RetryHint};
pub use status::{classify_status, is_all_inputs_failed, RunClass, ALL_INPUTS_FAILED_TEXT};
pub use text::decimal;
pub use v4_status::{classify_v4_status, V4Status};
pub use webhook::{
    classify_webhook, Webhook, WebhookError, WebhookKind, WebhookPayload, MAX_ERROR_CHARS,
    OTHER_RUN_TEXT,
};

/// What the glue read from a `GET /jobs/{uid}` body.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RunInfo {
    /// `status` as the server spelled it (`running`, `finished`, or something new).
    pub status: String,
    /// `row_count`, when present and numeric.
    pub row_count: Option<u64>,
    /// `total_row_count`, when present and numeric.
    pub total_row_count: Option<u64>,
    /// `number_inputs`, when present and numeric.
    pub number_inputs: Option<u64>,
    /// `error_message`, when a non-empty string.
    pub error_message: Option<String>,
    /// The rows a run that ended is known to lack (the worker's `rows_missing`, with its
    /// `error_code`): such an end is incomplete, neither a success nor JOB_FAILED.
    pub missing: Option<MissingRows>,
}

/// What a run that ended with rows known missing lacks (the worker's `rows_missing`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MissingRows {
    /// [`ErrorCode::RowsMissing`] (rows never recovered) or [`ErrorCode::RowsCapReached`]
    /// (the worker's own row cap).
    pub code: ErrorCode,
    /// The batches missing, as the server names them (it may name only the first ones).
    pub batches: Vec<String>,
    /// How many batches are missing.
    pub batch_count: u64,
    /// How many rows are missing, when known.
    pub count: Option<u64>,
}

/// What the glue read from a `GET /jobs/{uid}/results` (or `paging.next`) body.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Page {
    /// Length of the `results` array.
    pub len: usize,
    /// `paging.have_next_page`.
    pub has_next_page: bool,
    /// `paging.next` as given: an absolute URL (same origin only), a path (`/v3/…`), a query
    /// string (`?page=2`) or a page number (`"2"`; the glue turns a JSON number into its
    /// decimal string).
    pub next: Option<String>,
    /// One key per row (`String(row[rowKey])`) when the user set `rowKey`; used to drop
    /// rows a server repeats at the start of the next page.
    pub keys: Option<Vec<String>>,
}

/// How a request ended, as reported by the glue.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// 2xx results body with the expected shape.
    Results(Page),
    /// 2xx run body with the expected shape.
    Run(RunInfo),
    /// Non-2xx answer. `message` is the body's `message`/`error` text when the body was JSON.
    Http {
        /// HTTP status code.
        status: u16,
        /// The server's hint from `Retry-After` / `X-RateLimit-Reset` (see [`retry_hint`]).
        retry: Option<RetryHint>,
        /// Error text from the body, if any.
        message: Option<String>,
    },
    /// No response at all: the connection failed or was dropped (fetch rejected; in a browser
    /// often a CORS refusal).
    Network,
    /// The request exceeded its timeout and was aborted by the glue.
    Timeout,
    /// The request was never sent: calling `fetch` threw synchronously (a programming error
    /// in an injected `fetch`, not a network condition). Not retried.
    NotSent,
    /// 2xx but the body was not JSON or not the expected shape; says what was wrong.
    BadBody(String),
}
