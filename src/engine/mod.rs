//! The poll state machine: pure, deterministic, sans-IO.
//!
//! The glue feeds [`Event`]s (with the current time in ms since the Unix epoch)
//! and performs the [`Action`]s that [`Poller::next_action`] returns. Time and
//! randomness are inputs (`now_ms`, [`Config::seed`]), so every decision can be
//! replayed natively in tests.
//!
//! ```text
//! loop {
//!     match poller.next_action(now) {
//!         Action::Fetch(req)   => { let outcome = perform(req); poller.handle(Event::Response { id: req.id, outcome }, now) }
//!         Action::Sleep { ms, .. } => { sleep(ms); poller.handle(Event::TimerFired, now) }
//!             // or, when a webhook comes during the sleep: cancel it, then
//!             // poller.handle(Event::Webhook(classify_webhook(message, error, event)), now)
//!         Action::Emit(batch)  => { call onBatch(rows[batch.start..batch.end]); await it;
//!                                   poller.handle(Event::BatchDone, now) (or Event::BatchFailed if it threw) }
//!         Action::Status { run, paused_for_ms } => call onStatus(run),
//!         Action::Yield        => return the step (cron mode only),
//!         Action::Complete(s)  => { onComplete(s); break }
//!         Action::Stopped(s)   => break, // stop(): not an error
//!         Action::Fail(e)      => { onError(e); break }
//!         Action::Idle         => wait for an event,
//!     }
//! }
//! ```
//!
//! # Where each rule lives
//!
//! [`Poller`] (`engine/poller.rs`) only routes events between parts that each own their
//! state and rules, and are tested alone:
//!
//! | question | file |
//! | --- | --- |
//! | the pause between polls (interval, jitter, hidden page, offline, what a tick reads first) | `engine/poller/cadence.rs` |
//! | what a 429 does (and a 5xx, a timeout, a network error: backoff, `Retry-After`, giving up) | `engine/poller/retries.rs` |
//! | when a run is over (the API's status, the drain, re-reads of the tail, JOB_FAILED) | `engine/poller/ending.rs` |
//! | where the reading is (page, rows delivered, repeats, `paging.next`) | `engine/poller/position.rs` |
//! | a count that lags the rows (the pace of batches) | `engine/poller/lag.rs` |
//! | webhooks (hints to read now) | `engine/poller/hints.rs` |
//! | the deadline and the request budget | `engine/poller/budget.rs` |
//! | the run as last read (`onStatus`, how long paused) | `engine/poller/run.rs` |
//! | the backoff's delays | `engine/backoff.rs` |
//! | events in, actions out (the vocabulary shared with the glue) | `engine/protocol.rs` |
//! | the resume token | `engine/cursor.rs` |
//! | every setting and its default | `engine/config.rs` |
//! | validation of the options that end up in a URL | `engine/validation.rs` |
//! | URL helpers (origins, `paging.next`, a 404's hint) | `engine/url.rs` |

mod backoff;
mod config;
mod cursor;
mod paging;
mod poller;
mod protocol;
mod stream_cursor;
mod url;
mod validation;

pub use crate::api::ErrorCode;
pub use config::{validate_retry, Config, EndPolicy, ReadMode, RetryPolicy};
pub use poller::{Poller, INCOMPLETE, QUIET_TICKS};
pub use protocol::{
    Action, Batch, Event, FetchRequest, PollError, RequestId, RequestKind, SleepReason, Summary,
    ABORTED_TEXT,
};
pub use url::{has_version_segment, not_found_text};
pub use validation::{
    validate_base_url, validate_interval, validate_path_segment, ConfigError,
    MIN_REMOTE_INTERVAL_MS,
};
