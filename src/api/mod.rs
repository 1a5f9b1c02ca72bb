//! Captain Data v3 wire types and their classification.
//!
//! Pure: no I/O, no wasm. Only the small metadata is modelled here (run status,
//! paging, error bodies); result rows never become Rust values. The wasm glue
//! fills these structs from parsed JS values, native tests build them directly.

use alloc::string::String;
use alloc::vec::Vec;

mod errors;
mod retry_after;
mod status;

pub use errors::{classify_http, http_error_text, Disposition};
pub use retry_after::parse_retry_after;
pub use status::{classify_status, is_all_inputs_failed, RunClass};

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
}

/// What the glue read from a `GET /jobs/{uid}/results` (or `paging.next`) body.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Page {
    /// Length of the `results` array.
    pub len: usize,
    /// `paging.have_next_page`.
    pub has_next_page: bool,
    /// `paging.next` exactly as given (absolute or origin-relative URL), if a string.
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
        /// The raw `Retry-After` header, if any.
        retry_after: Option<String>,
        /// Error text from the body, if any.
        message: Option<String>,
    },
    /// The connection failed or was dropped (fetch rejected).
    Network,
    /// The request exceeded its timeout and was aborted by the glue.
    Timeout,
    /// 2xx but the body was not JSON or not the expected shape; says what was wrong.
    BadBody(String),
}
