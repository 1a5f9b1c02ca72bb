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

use alloc::string::String;

use crate::api::{Outcome, RunInfo, Webhook};

mod backoff;
mod config;
mod cursor;
mod origin;
mod paging;
mod poller;
mod stream_cursor;

pub use crate::api::ErrorCode;
pub use config::{
    has_version_segment, not_found_text, validate_base_url, validate_interval,
    validate_path_segment, MIN_REMOTE_INTERVAL_MS,
};

/// Identifies one request so that a late answer to an abandoned request is ignored.
pub type RequestId = u32;

/// Retry policy for 429, 5xx, timeouts, network errors and malformed bodies.
///
/// # Default
/// `retries: 5`, `min_delay_ms: 1_000`, `max_delay_ms: 60_000`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RetryPolicy {
    /// Consecutive failed attempts of one request that are retried before giving up.
    pub retries: u32,
    /// Lower bound of every backoff delay and of a `Retry-After` hint.
    pub min_delay_ms: u32,
    /// Upper bound of every backoff delay and of a `Retry-After` hint.
    pub max_delay_ms: u32,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        RetryPolicy {
            retries: 5,
            min_delay_ms: 1_000,
            max_delay_ms: 60_000,
        }
    }
}

/// When the engine reads the results while the run is going.
///
/// # Default
/// [`ReadMode::StatusGuided`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ReadMode {
    /// Read the run's status (small, with `row_count`) at the cadence, and the results only
    /// when they can bring something: the count is past the rows delivered (which covers a
    /// count past the end of the current page: the read follows `paging.next`), the run gives
    /// no count, the run is over (the end-of-run drain), or after [`QUIET_TICKS`] ticks in a
    /// row whose count said nothing new (counts lag, or went down: read anyway). On a quiet
    /// tick that is one small request; a partly filled last page is not downloaded again.
    ///
    /// While rows come on every tick (two results reads in a row brought rows) of a run past
    /// its first page, reading the status first would only add a request: the results are
    /// read first on each tick, as in [`ReadMode::EveryTick`], until a read brings nothing. A
    /// run on its first page keeps reading the status first (a blind read there downloads the
    /// whole run again). In step mode every round reads the status first (one request when
    /// nothing changed).
    ///
    /// A count seen behind the rows (a read brought more rows than it said) is not waited
    /// for: the results are read when the next batch is due by the pace of the batches
    /// (`engine/poller/lag.rs`), until the count announces rows first again.
    #[default]
    StatusGuided,
    /// Read the results on every tick; the status once every [`Config::status_every`] reads
    /// and early after a read that brought no new rows, or fewer than the read before.
    EveryTick,
}

/// In [`ReadMode::StatusGuided`]: after this many ticks in a row whose status said nothing
/// new, the next tick reads the results anyway. A row that a stuck or lagging count hides is
/// so delivered at most `QUIET_TICKS + 1` intervals after it appeared (70 s at the default
/// 10 s); bursts a few intervals apart (Captain Data batch-processes) do not trigger it.
pub const QUIET_TICKS: u32 = 6;

/// Everything the engine needs to know up front. Build it with [`Config::new`],
/// which validates the base URL and the job uid, then set the public fields.
///
/// # Default
/// `interval_ms: 10_000`, `status_every: 5`, `max_duration_ms: Some(21_600_000)` (6 h),
/// `max_requests: None`, `timeout_ms: 30_000`, `retry: RetryPolicy::default()`,
/// `seed: 0`, `step_mode: false`, `dedupe: false`, `page_size: 1_000`, `webhook_reads: 10`,
/// `read_mode: ReadMode::StatusGuided`, `hidden_interval_ms: Some(60_000)`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Config {
    base_url: String,
    job_uid: String,
    /// Cadence of the reads while the run is going: the pause from a tick's last read to the
    /// next tick. Each pause is lengthened by up to 5 % (from `seed`), never shortened, so
    /// clients started together do not poll in step and none polls faster than it asked.
    pub interval_ms: u32,
    /// When results are read on every tick: read the run status once every N results polls
    /// (besides the early read after a poll that brought no new rows, or fewer than the poll
    /// before: the signs of a run ending).
    pub status_every: u32,
    /// Whether a tick reads the status first and the results only when they changed, or the
    /// results on every tick.
    pub read_mode: ReadMode,
    /// Hard stop: TIMEOUT once this much time has passed since start.
    pub max_duration_ms: Option<u64>,
    /// Hard stop: BUDGET_EXHAUSTED instead of sending request number `max_requests + 1`.
    pub max_requests: Option<u32>,
    /// Per-request timeout handed to the glue with each fetch.
    pub timeout_ms: u32,
    /// Backoff for transient failures.
    pub retry: RetryPolicy,
    /// Seed of the backoff jitter.
    pub seed: u64,
    /// Cron mode (`pollStep`): one round, then [`Action::Yield`]; budgets end the step
    /// with a cursor instead of an error.
    pub step_mode: bool,
    /// When set, rows carry keys (see [`crate::api::Page::keys`]) used to drop repeated rows.
    pub dedupe: bool,
    /// Rows in a full results page. Once the API's status says the run is over, the results
    /// are read until a page is not full: a tail page holding exactly this many rows is read
    /// again (up to `retry.retries` times, `retry.min_delay_ms` apart) in case the count
    /// lagged. Learned from the API when it pages: the largest page that had a next page
    /// wins over this value; a longer page than this value raises it.
    pub page_size: usize,
    /// After a Succeeded or Failed webhook (see [`Event::Webhook`]): how many times the status
    /// is read again, `retry.min_delay_ms` apart and each time with a drain of the results,
    /// while the API still says the run is going, before the normal `interval_ms` cadence
    /// resumes.
    pub webhook_reads: u32,
    /// The slowest cadence of results reads while the page is hidden ([`Event::Hidden`]);
    /// `None` pauses them until it is visible again (the deadline still ends the poll).
    pub hidden_interval_ms: Option<u32>,
}

/// An option failed validation; `option` is the JS option name (`jobUid`, `baseUrl`, …).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConfigError {
    /// The option at fault, as the JS user spells it.
    pub option: &'static str,
    /// What is wrong, for a `TypeError` message.
    pub message: String,
}

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

/// Reported once on success.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Summary {
    /// Final run status (`finished` or `warning`).
    pub status: String,
    /// Rows delivered over the poller's life, including those before a resume.
    pub total_results: u64,
    /// Requests this poller sent (not counting an earlier poller's).
    pub requests: u32,
    /// Retries this poller made.
    pub retries: u32,
    /// Time from start to completion.
    pub duration_ms: u64,
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
    /// or [`Event::BatchFailed`]. Until then [`Poller::cursor`] stays before them.
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
    /// Cron mode only: this round is over; persist [`Poller::cursor`] and continue later.
    Yield,
    /// Terminal success (returned once; later calls return [`Action::Idle`]).
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
    ///   API still says the run is going, this repeats `retry.min_delay_ms` apart, up to
    ///   [`Config::webhook_reads`] times, then the normal `interval_ms` cadence resumes. In
    ///   step mode the round reads the results and the status, then yields as usual. A run
    ///   that the API says is `shutdown`/`stopped` ends with JOB_FAILED, the webhook's `error`
    ///   in the message when the run gives none; one the API says is finished completes.
    /// - Created / Other: nothing changes (no early read).
    /// - A webhook of the kind already acted on, or after the end, changes nothing.
    Webhook(Webhook),
    /// The page became hidden (`true`) or visible again (`false`). While hidden, the steady
    /// cadence is no faster than [`Config::hidden_interval_ms`]; on becoming visible the
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

/// The poll state machine. See the module docs for the driving loop.
#[derive(Debug)]
pub struct Poller {
    config: Config,
    state: poller::State,
}

impl Config {
    /// Validates `base_url` (https, or http for localhost/127.0.0.1/`[::1]`; no userinfo,
    /// query or fragment; a trailing `/` is dropped) and `job_uid` (one path segment).
    pub fn new(base_url: &str, job_uid: &str) -> Result<Config, ConfigError> {
        validate_path_segment("jobUid", job_uid)?;
        Ok(Config {
            base_url: validate_base_url(base_url)?,
            job_uid: job_uid.into(),
            interval_ms: 10_000,
            status_every: 5,
            read_mode: ReadMode::default(),
            max_duration_ms: Some(21_600_000),
            max_requests: None,
            timeout_ms: 30_000,
            retry: RetryPolicy::default(),
            seed: 0,
            step_mode: false,
            dedupe: false,
            page_size: 1_000,
            webhook_reads: 10,
            hidden_interval_ms: Some(60_000),
        })
    }

    /// The validated base URL, without a trailing slash.
    pub fn base_url(&self) -> &str {
        &self.base_url
    }

    /// The validated job uid.
    pub fn job_uid(&self) -> &str {
        &self.job_uid
    }
}

impl Poller {
    /// A poller at the start of the run, or where `cursor` (from [`Poller::cursor`]) left off.
    /// A malformed cursor, or one for another job, is a [`ConfigError`] on option `cursor`.
    pub fn new(config: Config, cursor: Option<&str>, now_ms: u64) -> Result<Poller, ConfigError> {
        let state = poller::State::new(&config, cursor, now_ms)?;
        Ok(Poller { config, state })
    }

    /// Feed an event.
    pub fn handle(&mut self, event: Event, now_ms: u64) {
        self.on_event(event, now_ms)
    }

    /// What to do next.
    pub fn next_action(&mut self, now_ms: u64) -> Action {
        self.decide(now_ms)
    }

    /// Opaque, JSON-safe resume token: the position after the last row whose delivery was
    /// confirmed ([`Event::BatchDone`]). No secrets.
    pub fn cursor(&self) -> String {
        self.cursor_state().encode()
    }

    /// The resume token after the batch being delivered ([`Action::Emit`]), for a receiver
    /// that hands it on with the rows; [`Poller::cursor`] once no batch is pending.
    pub fn cursor_after_batch(&self) -> String {
        self.live_cursor().encode()
    }

    /// Rows delivered so far, including those before the cursor it started from: the
    /// position of the next row.
    pub fn delivered(&self) -> u64 {
        self.cursor_state().offset
    }

    /// Requests sent so far.
    pub fn requests(&self) -> u32 {
        self.state.requests()
    }

    /// True once Complete or Fail was returned.
    pub fn is_terminal(&self) -> bool {
        self.state.is_terminal()
    }

    /// The config in force.
    pub fn config(&self) -> &Config {
        &self.config
    }
}
