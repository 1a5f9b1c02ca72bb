//! The engine's protocol with the glue: the [`Event`]s it is fed, the [`Action`]s it returns,
//! and what they carry (requests, batches, the summary, a terminal error).

use alloc::string::String;

use crate::api::{ErrorCode, MissingRows, Outcome, RunInfo, Webhook};

/// Identifies one request so that a late answer to an abandoned request is ignored.
pub type RequestId = u32;

/// A terminal error. Never contains a secret.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PollError {
    /// Stable kind.
    pub code: ErrorCode,
    /// Human-readable explanation naming what happened.
    pub message: String,
    /// The HTTP status that caused it, if any.
    pub http_status: Option<u16>,
    /// The last run status seen, if any.
    pub run_status: Option<String>,
}

/// The message of every ABORTED error: the poller, a step and `scheduleWorkflow` alike (and
/// js/errors.js, for an abort while the module loads; tests/error_codes.rs checks the copy).
pub const ABORTED_TEXT: &str = "aborted by the AbortSignal";

impl PollError {
    /// ABORTED, with no HTTP or run status.
    pub fn aborted() -> PollError {
        PollError {
            code: ErrorCode::Aborted,
            message: ABORTED_TEXT.into(),
            http_status: None,
            run_status: None,
        }
    }
}

/// Which endpoint a request reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RequestKind {
    /// `GET /jobs/{uid}/results` or a `paging.next` URL.
    Results,
    /// `GET /jobs/{uid}`.
    Run,
}

/// A request for the glue to send (GET, with the auth headers the glue holds).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FetchRequest {
    /// Echo it back in [`Event::Response`].
    pub id: RequestId,
    /// Which endpoint.
    pub kind: RequestKind,
    /// Absolute URL, always on the base URL's origin.
    pub url: String,
    /// Abort the request after this long and report [`Outcome::Timeout`].
    pub timeout_ms: u32,
}

/// Why the engine wants to sleep.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SleepReason {
    /// The regular poll interval.
    Interval,
    /// Backoff after a transient failure (or a `Retry-After` hint).
    Backoff,
}

/// New rows to deliver: `results[start..end]` of the latest results response,
/// which are rows `offset..offset + (end - start)` of the whole run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Batch {
    /// First index in the latest `results` array.
    pub start: usize,
    /// One past the last index in the latest `results` array.
    pub end: usize,
    /// Position of `results[start]` in the run's whole result list.
    pub offset: u64,
}

/// Reported once on success, or on an end with rows known missing (`"incomplete"`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Summary {
    /// Final run status (`finished` or `warning`), `"incomplete"` (see `missing`) or
    /// `"stopped"`.
    pub status: String,
    /// Rows delivered over the poller's life, including those before a resume.
    pub total_results: u64,
    /// Requests this poller sent (not counting an earlier poller's).
    pub requests: u32,
    /// Retries this poller made.
    pub retries: u32,
    /// Time from start to completion.
    pub duration_ms: u64,
    /// With `status` `"incomplete"`: the rows the run lacks (every row stored was delivered).
    pub missing: Option<MissingRows>,
}

/// What the glue must do next.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Action {
    /// Send this request, then report [`Event::Response`].
    Fetch(FetchRequest),
    /// Arm a timer, then report [`Event::TimerFired`]. `ms` ≤ 2^31−1.
    Sleep {
        /// How long.
        ms: u32,
        /// Why (for progress reporting).
        reason: SleepReason,
    },
    /// Deliver these rows, then report [`Event::BatchDone`] (after an async callback settles)
    /// or [`Event::BatchFailed`]. Until then
    /// [`Poller::cursor`][crate::engine::Poller::cursor] stays before them.
    Emit(Batch),
    /// The run's status or counts changed, or a status read found the run still paused:
    /// tell `onStatus`.
    Status {
        /// The run as last read.
        run: RunInfo,
        /// While the run is `paused`: how long it has been, by the engine's clock, since this
        /// poller first saw it paused. `None` when it is not paused.
        paused_for_ms: Option<u64>,
    },
    /// Cron mode only: this round is over; persist
    /// [`Poller::cursor`][crate::engine::Poller::cursor] and continue later.
    Yield,
    /// Terminal success, or an end with rows known missing (`summary.missing`): not a failure,
    /// the rows stored were all delivered first (returned once; later calls return
    /// [`Action::Idle`]).
    Complete(Summary),
    /// Terminal failure (returned once; later calls return [`Action::Idle`]).
    Fail(PollError),
    /// The user stopped the poller ([`Event::Stop`]): not an error. The summary's status is
    /// `"stopped"` and it counts only the rows whose delivery was confirmed (returned once).
    Stopped(Summary),
    /// Nothing to do until an event arrives (request in flight, batch pending, or terminal).
    Idle,
}

/// What happened, as reported by the glue.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Event {
    /// A request ended.
    Response {
        /// The id from [`FetchRequest::id`].
        id: RequestId,
        /// How it ended.
        outcome: Outcome,
    },
    /// The timer from the last [`Action::Sleep`] fired.
    TimerFired,
    /// The last [`Action::Emit`] was delivered (its callback returned or its promise fulfilled):
    /// the cursor moves past it.
    BatchDone,
    /// The consumer of the last [`Action::Emit`] failed (a callback threw or its promise
    /// rejected): the poller fails with CALLBACK_FAILED and the cursor stays before that
    /// batch, so a poller resumed from it delivers the batch again.
    BatchFailed,
    /// A webhook for this run arrived (build it with [`crate::api::classify_webhook`]). A hint
    /// to read now, never the proof of the end: only the API's own status ends the run.
    ///
    /// The glue cancels a pending sleep before handing a webhook in; the engine then either
    /// acts on the hint or asks again for what was left of the sleep (a backoff is never cut
    /// short: the server asked for it).
    ///
    /// - Succeeded / Failed: the status is read at once, then the results drained. While the
    ///   API still says the run is going, this repeats
    ///   [`Config::webhook_delay_ms`][crate::engine::Config::webhook_delay_ms] apart, up to
    ///   [`Config::webhook_reads`][crate::engine::Config::webhook_reads] times, then the
    ///   normal `interval_ms` cadence resumes. In
    ///   step mode the round reads the results and the status, then yields as usual. A run
    ///   that the API says is `shutdown`/`stopped` ends with JOB_FAILED, the webhook's `error`
    ///   in the message when the run gives none; one the API says is finished completes.
    /// - Created / Other: nothing changes (no early read).
    /// - A webhook of the kind already acted on, or after the end, changes nothing.
    Webhook(Webhook),
    /// The page became hidden (`true`) or visible again (`false`). While hidden, the steady
    /// cadence is no faster than
    /// [`Config::hidden_interval_ms`][crate::engine::Config::hidden_interval_ms]; on becoming
    /// visible the
    /// poller polls at once, then at `interval_ms`. The glue cancels a pending sleep before
    /// handing this in, as for a webhook; a backoff is re-armed for what was left of it.
    Hidden(bool),
    /// The runtime went offline (`false`) or back online (`true`), as `navigator.onLine`
    /// says. Offline, no request is sent and no retry is spent (a network error then does
    /// not count toward `retry.retries`); back online, the poller polls at once. The glue
    /// cancels a pending sleep before handing this in.
    Online(bool),
    /// The user stopped the poller (`stop()`); the next action is [`Action::Stopped`] and
    /// nothing is sent after it. A batch still being delivered is not confirmed (the cursor
    /// stays before it): the glue lets its consumer finish and reports [`Event::BatchDone`]
    /// first when it took the batch.
    Stop,
    /// The user's `AbortSignal` aborted; the next action is `Fail(ABORTED)` and nothing is
    /// sent after it. The cursor stays where it was, as for [`Event::Stop`].
    Abort,
}
