//! [`Poller`]: the coordinator. It owns no rule of its own: it routes each event to the parts
//! that own the state it changes, and turns their answers into the next [`Action`].
//!
//! | part | owns | file |
//! | --- | --- | --- |
//! | [`Position`] | the page being read, rows consumed and delivered, repeats, `paging.next` | `position.rs` |
//! | [`Cadence`] | the pause between polls, what a tick reads first, hidden and offline | `cadence.rs` |
//! | [`Lag`] | a count that trails the rows: the pace of batches, blind reads | `lag.rs` |
//! | [`Ending`] | when a run is over: the drain, re-reads of the tail, JOB_FAILED | `ending.rs` |
//! | [`Hints`] | webhooks: the fast reads they start | `hints.rs` |
//! | [`Retries`] | what a 429 (or any transient failure) does: backoff, hints, giving up | `retries.rs` |
//! | [`Budget`] | the deadline and the request budget | `budget.rs` |
//! | [`LastRun`] | the run as last read, for `onStatus` and the pause length | `run.rs` |
//!
//! The coordinator's own fields say what it waits for (a response, a timer, a batch), what
//! comes next, and what is queued for the glue.

use alloc::string::String;

mod budget;
mod cadence;
mod ending;
mod hints;
mod lag;
mod position;
mod retries;
mod run;

use super::config::{Config, ReadMode};
use super::cursor::CursorState;
use super::protocol::{
    Action, Event, FetchRequest, PollError, RequestId, RequestKind, SleepReason, Summary,
    ABORTED_TEXT,
};
use super::url::{not_found_text, origin_prefix};
use super::validation::ConfigError;
use crate::api::{
    classify_http, classify_status, decimal, http_error_text, is_all_inputs_failed, Disposition,
    ErrorCode, Outcome, Page, RetryHint, RunClass, RunInfo, Webhook, NO_RESPONSE_TEXT,
};
use budget::Budget;
use cadence::{Cadence, Pause};
use ending::{Drain, Ending, Outcome as EndOutcome, Tail};
use hints::Hints;
use lag::{Lag, Read};
use position::{Follow, Position};
use retries::{Retries, Retry};
use run::LastRun;

pub use cadence::QUIET_TICKS;

/// `Summary::status` of a run that ended with rows known missing.
pub const INCOMPLETE: &str = "incomplete";

/// Why a poller whose `fetch` threw ended at once.
const NOT_SENT_TEXT: &str = "fetch threw instead of sending (a programming error: not retried)";

/// What the engine is waiting for before it decides again.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Wait {
    Nothing,
    Request(RequestId, RequestKind),
    Timer,
    Batch,
    /// The step yielded or the poller ended: nothing more, ever.
    Over,
}

/// The next step once nothing is pending.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Next {
    Fetch(RequestKind),
    Sleep {
        ms: u64,
        reason: SleepReason,
        then: RequestKind,
    },
    Yield,
    Finish,
    Fail(PollError),
}

impl From<Pause> for Next {
    fn from(pause: Pause) -> Next {
        match pause {
            Pause::Sleep { ms, then } => Next::Sleep {
                ms,
                reason: SleepReason::Interval,
                then,
            },
            Pause::Yield => Next::Yield,
        }
    }
}

/// What ended the polling from outside the API, before anything else is done.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Halt {
    /// `stop()`: a summary, not an error.
    Stop,
    /// The `AbortSignal`: ABORTED.
    Abort,
    /// The consumer of a batch failed: CALLBACK_FAILED.
    BatchFailed,
}

/// The counters of the cursor before a batch. The rest of it (page, end, 404s) cannot change
/// until the batch is confirmed: no request is answered before.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Before {
    offset: u64,
    skip: usize,
    polls: u32,
    quiet: u32,
}

/// The poll state machine. See the module docs of [`crate::engine`] for the driving loop.
#[derive(Debug)]
pub struct Poller {
    config: Config,
    position: Position,
    cadence: Cadence,
    lag: Lag,
    ending: Ending,
    hints: Hints,
    retries: Retries,
    budget: Budget,
    last_run: LastRun,
    next: Next,
    wait: Wait,
    /// An action for the glue before anything else: a status report or a batch. One at most:
    /// each answer queues one, and no request is sent (so none answered) before it is taken.
    outbox: Option<Action>,
    /// Where the cursor stood before the batch being delivered: the cursor until its delivery
    /// is confirmed ([`Event::BatchDone`]), and for good if it never is.
    unconfirmed: Option<Before>,
    halt: Option<Halt>,
    /// The run is read again at the finish of a drain resumed from a cursor, for what is
    /// missing (a cursor keeps no list): its answer finishes the poll.
    rereading_missing: bool,
    done: bool,
    next_id: RequestId,
    /// When the timer of the current `Sleep` is due, and why it was armed (to re-arm what is
    /// left of it after the glue cancelled it for an outside event).
    sleep_until: u64,
    sleep_reason: SleepReason,
}

impl Poller {
    /// A poller at the start of the run, or where `cursor` (from [`Poller::cursor`]) left off.
    /// A malformed cursor, or one for another job, is a [`ConfigError`] on option `cursor`.
    pub fn new(config: Config, cursor: Option<&str>, now_ms: u64) -> Result<Poller, ConfigError> {
        let saved = match cursor {
            Some(c) => CursorState::decode(c, config.job_uid())?,
            None => CursorState::default(),
        };
        let ending = Ending::new(config.end_policy(), saved.terminal, saved.missing);
        let status_first = config.read_mode == ReadMode::StatusGuided && !ending.over();
        let first = match status_first {
            true => RequestKind::Run,
            false => RequestKind::Results,
        };
        Ok(Poller {
            position: Position::resumed(saved.page, saved.skip, saved.offset),
            cadence: Cadence::new(config.seed, saved.polls, saved.quiet, saved.quiet_misses),
            lag: Lag::new(now_ms),
            ending,
            hints: Hints::default(),
            retries: Retries::new(config.retry, config.seed),
            budget: Budget::new(&config, now_ms),
            last_run: LastRun::default(),
            next: Next::Fetch(first),
            wait: Wait::Nothing,
            outbox: None,
            unconfirmed: None,
            halt: None,
            rereading_missing: false,
            done: false,
            next_id: 1,
            sleep_until: now_ms,
            sleep_reason: SleepReason::Interval,
            config,
        })
    }

    /// Opaque, JSON-safe resume token: the position after the last row whose delivery was
    /// confirmed ([`Event::BatchDone`]). No secrets.
    pub fn cursor(&self) -> String {
        let mut cursor = self.live_cursor();
        if let Some(before) = self.unconfirmed {
            cursor.offset = before.offset;
            cursor.skip = before.skip;
            cursor.polls = before.polls;
            cursor.quiet = before.quiet;
        }
        cursor.encode()
    }

    /// The resume token after the batch being delivered ([`Action::Emit`]), for a receiver
    /// that hands it on with the rows; [`Poller::cursor`] once no batch is pending.
    pub fn cursor_after_batch(&self) -> String {
        self.live_cursor().encode()
    }

    /// Rows delivered so far, including those before the cursor it started from: the
    /// position of the next row.
    pub fn delivered(&self) -> u64 {
        match &self.unconfirmed {
            Some(before) => before.offset,
            None => self.position.offset(),
        }
    }

    /// Requests sent so far.
    pub fn requests(&self) -> u32 {
        self.budget.requests()
    }

    /// True once Complete or Fail was returned.
    pub fn is_terminal(&self) -> bool {
        self.done
    }

    /// The config in force.
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// Feed an event.
    pub fn handle(&mut self, event: Event, now_ms: u64) {
        if self.done || self.wait == Wait::Over {
            return;
        }
        match event {
            Event::Stop => _ = self.halt.get_or_insert(Halt::Stop),
            Event::Abort => _ = self.halt.get_or_insert(Halt::Abort),
            Event::BatchFailed if self.wait == Wait::Batch => {
                _ = self.halt.get_or_insert(Halt::BatchFailed);
            }
            Event::Response { id, outcome } => {
                let Wait::Request(awaited, kind) = self.wait else {
                    return;
                };
                if self.halt.is_some() || awaited != id {
                    return;
                }
                self.wait = Wait::Nothing;
                self.on_outcome(kind, outcome, now_ms);
            }
            Event::TimerFired if self.wait == Wait::Timer => self.wait = Wait::Nothing,
            Event::BatchDone if self.wait == Wait::Batch && self.halt.is_none() => {
                self.wait = Wait::Nothing;
                self.unconfirmed = None;
            }
            Event::Webhook(hook) => self.on_webhook(hook, now_ms),
            Event::Hidden(hidden) => {
                let poll_now = self.cadence.set_hidden(hidden);
                self.sleep_cancelled(poll_now, now_ms);
            }
            Event::Online(online) => {
                let poll_now = self.cadence.set_online(online);
                self.sleep_cancelled(poll_now, now_ms);
            }
            Event::TimerFired | Event::BatchDone | Event::BatchFailed => {}
        }
    }

    /// What to do next.
    pub fn next_action(&mut self, now_ms: u64) -> Action {
        if self.done || self.wait == Wait::Over {
            return Action::Idle;
        }
        if let Some(halt) = self.halt {
            return self.halted(halt, now_ms);
        }
        if let Some(action) = self.outbox.take() {
            if matches!(action, Action::Emit(_)) {
                self.wait = Wait::Batch;
            }
            return action;
        }
        if self.wait != Wait::Nothing {
            return Action::Idle;
        }
        match self.next.clone() {
            Next::Fetch(kind) => self.fetch(kind, now_ms),
            Next::Sleep { ms, reason, then } => self.sleep(ms, reason, then, now_ms),
            Next::Yield => {
                self.wait = Wait::Over;
                Action::Yield
            }
            Next::Finish => self.finish(now_ms),
            Next::Fail(error) => self.terminate(Action::Fail(error)),
        }
    }

    /// The position after the rows handed out so far.
    fn live_cursor(&self) -> CursorState<&str> {
        CursorState {
            job_uid: self.config.job_uid(),
            offset: self.position.offset(),
            skip: self.position.skip(),
            polls: self.cadence.polls(),
            quiet: self.cadence.quiet(),
            quiet_misses: self.cadence.quiet_misses(),
            missing: self.ending.missing(),
            terminal: self.ending.saved(),
            page: self.position.page().map(String::as_str),
        }
    }

    fn fetch(&mut self, kind: RequestKind, now_ms: u64) -> Action {
        let spent = self.budget.timed_out(&self.config, now_ms);
        if let Some((code, message)) = spent.or_else(|| self.budget.requests_spent(&self.config)) {
            return self.budget_spent(code, message);
        }
        if self.cadence.offline() {
            return self.wait_for_event(now_ms);
        }
        let id = self.next_id;
        self.next_id = self.next_id.wrapping_add(1);
        self.wait = Wait::Request(id, kind);
        let timeout_ms = self.budget.send(self.config.timeout_ms, now_ms);
        Action::Fetch(FetchRequest {
            id,
            kind,
            url: self.url(kind),
            timeout_ms,
        })
    }

    /// A budget ends the poll (or, in cron mode, the step).
    fn budget_spent(&mut self, code: ErrorCode, message: String) -> Action {
        if self.config.step_mode {
            self.wait = Wait::Over;
            return Action::Yield;
        }
        let error = self.error(code, message, None);
        self.terminate(Action::Fail(error))
    }

    fn sleep(&mut self, ms: u64, reason: SleepReason, then: RequestKind, now_ms: u64) -> Action {
        if let Some((code, message)) = self.budget.timed_out(&self.config, now_ms) {
            return self.budget_spent(code, message);
        }
        let Some(mut ms) = self.cadence.pause(&self.config, ms, reason) else {
            return self.wait_for_event(now_ms); // hidden, with hidden polling paused
        };
        if let Some(left) = self.budget.left(now_ms) {
            if self.config.step_mode && ms > left {
                self.wait = Wait::Over;
                return Action::Yield;
            }
            ms = ms.min(left);
        }
        self.cadence.slept(reason);
        self.next = Next::Fetch(then);
        self.arm(ms, reason, now_ms)
    }

    /// Nothing to send until an event (visible again, back online): sleep until the deadline,
    /// which still ends the poll, or wait with no timer when there is none.
    fn wait_for_event(&mut self, now_ms: u64) -> Action {
        match self.budget.deadline() {
            // The timer only brings the deadline; what was due is done once it fires.
            Some(deadline) => {
                let ms = deadline.saturating_sub(now_ms).max(1);
                self.arm(ms, SleepReason::Interval, now_ms)
            }
            None => Action::Idle,
        }
    }

    fn arm(&mut self, ms: u64, reason: SleepReason, now_ms: u64) -> Action {
        self.wait = Wait::Timer;
        self.sleep_until = now_ms + ms;
        self.sleep_reason = reason;
        Action::Sleep {
            ms: u32::try_from(ms).unwrap_or(u32::MAX),
            reason,
        }
    }

    /// The glue cancels the pending sleep before handing in an outside event (a webhook, the
    /// page hidden or shown, the network gone or back): poll at once (`now`: a steady sleep is
    /// over), or ask again for what is left of the sleep (re-paced by [`Poller::sleep`]).
    fn sleep_cancelled(&mut self, now: bool, now_ms: u64) {
        let cancelled = self.wait == Wait::Timer;
        if cancelled {
            self.wait = Wait::Nothing;
        }
        match self.next {
            Next::Sleep {
                reason: SleepReason::Interval,
                then,
                ..
            } if now => {
                self.next = Next::Fetch(then);
            }
            Next::Fetch(then) if cancelled && !now => {
                self.next = Next::Sleep {
                    ms: self.sleep_until.saturating_sub(now_ms),
                    reason: self.sleep_reason,
                    then,
                };
            }
            _ => {}
        }
    }

    /// A webhook is a hint to read now; only the API's status ends the run (see
    /// [`Event::Webhook`]).
    fn on_webhook(&mut self, hook: Webhook, now_ms: u64) {
        let acted = self.hints.received(&self.config, hook, self.ending.over());
        // The glue cancels a pending timer on every webhook: re-arm what is left of it.
        self.sleep_cancelled(false, now_ms);
        // Cut an interval short (a backoff is not: the server asked for it).
        if let (
            true,
            Next::Sleep {
                reason: SleepReason::Interval,
                ..
            },
        ) = (acted, &self.next)
        {
            self.next = Next::Fetch(RequestKind::Run);
        }
    }

    fn halted(&mut self, halt: Halt, now_ms: u64) -> Action {
        let action = match halt {
            Halt::Stop => Action::Stopped(self.summary("stopped".into(), now_ms)),
            Halt::Abort => Action::Fail(self.error(ErrorCode::Aborted, ABORTED_TEXT.into(), None)),
            Halt::BatchFailed => {
                let from = self.delivered();
                let to = self.position.offset();
                let rows = [&decimal(from), "..", &decimal(to)].concat();
                let text = [
                    "onBatch (or the iterator) failed on rows ",
                    &rows,
                    "; the cursor stays before them",
                ]
                .concat();
                Action::Fail(self.error(ErrorCode::CallbackFailed, text, None))
            }
        };
        self.terminate(action)
    }

    fn queue(&mut self, action: Action) {
        debug_assert!(
            self.outbox.is_none(),
            "an action queued before the last was taken"
        );
        self.outbox = Some(action);
    }

    fn terminate(&mut self, action: Action) -> Action {
        self.done = true;
        self.outbox = None;
        action
    }

    /// The run is over and read: complete (incomplete when rows are known missing), or
    /// JOB_FAILED.
    fn finish(&mut self, now_ms: u64) -> Action {
        match self.ending.outcome() {
            None => Action::Idle,
            Some(EndOutcome::Complete(status)) => {
                let summary = self.summary(status, now_ms);
                self.terminate(Action::Complete(summary))
            }
            Some(EndOutcome::Incomplete(missing)) => {
                let mut summary = self.summary(INCOMPLETE.into(), now_ms);
                summary.missing = Some(missing);
                self.terminate(Action::Complete(summary))
            }
            // A cursor keeps no list of what is missing: the run says it again.
            Some(EndOutcome::ReadRun) => {
                self.rereading_missing = true;
                self.fetch(RequestKind::Run, now_ms)
            }
            Some(EndOutcome::Failed(text)) => {
                let error = self.error(ErrorCode::JobFailed, text, None);
                self.terminate(Action::Fail(error))
            }
        }
    }

    /// The summary of this poller's work so far, the run's rows counted up to the cursor.
    fn summary(&self, status: String, now_ms: u64) -> Summary {
        Summary {
            status,
            total_results: self.delivered(),
            requests: self.budget.requests(),
            retries: self.retries.made(),
            duration_ms: self.budget.elapsed(now_ms),
            missing: None,
        }
    }

    fn url(&self, kind: RequestKind) -> String {
        let base = self.config.base_url();
        let uid = self.config.job_uid();
        match kind {
            RequestKind::Run => [base, "/jobs/", uid].concat(),
            RequestKind::Results => self.position.url(base, uid),
        }
    }

    fn on_outcome(&mut self, kind: RequestKind, outcome: Outcome, now_ms: u64) {
        match (kind, outcome) {
            (RequestKind::Results, Outcome::Results(page)) => {
                self.retries.answered();
                self.on_page(page);
            }
            (RequestKind::Run, Outcome::Run(run)) => {
                self.retries.answered();
                self.on_run(run, now_ms);
            }
            (
                _,
                Outcome::Http {
                    status,
                    retry,
                    message,
                },
            ) => self.on_http(kind, status, retry, message, now_ms),
            // Offline, no response is no news: the request is sent again once online, and no
            // retry is spent on a network that is not there.
            (_, Outcome::Network) if self.cadence.offline() => self.next = Next::Fetch(kind),
            (_, Outcome::Network) => {
                self.on_transient(kind, NO_RESPONSE_TEXT, None, false, None, now_ms)
            }
            // A programming error, not a network condition: retrying cannot help.
            (_, Outcome::NotSent) => self.fail(ErrorCode::NetworkError, NOT_SENT_TEXT.into(), None),
            (_, Outcome::Timeout) => {
                self.on_transient(kind, "request timeout", None, false, None, now_ms)
            }
            (_, Outcome::BadBody(why)) => {
                let label = ["malformed response (", &why, ")"].concat();
                self.on_transient(kind, &label, None, true, None, now_ms)
            }
            (_, _) => {
                let why = "malformed response (a body of the other endpoint)";
                self.on_transient(kind, why, None, true, None, now_ms)
            }
        }
    }

    fn on_http(
        &mut self,
        kind: RequestKind,
        status: u16,
        retry: Option<RetryHint>,
        message: Option<String>,
        now_ms: u64,
    ) {
        let label = http_error_text(status, None);
        match classify_http(status, message.as_deref()) {
            Disposition::Retry => {
                let hint = retry.map(|hint| Retries::hint_ms(hint, now_ms));
                self.on_transient(kind, &label, hint, false, Some(status), now_ms);
            }
            // The results of a run that exists may 404 before it has any: the run decides.
            Disposition::Fail(ErrorCode::NotFound) if kind == RequestKind::Results => {
                if !self.ending.over() {
                    return self.on_results_missing();
                }
                self.ending.results_missing();
                if self.no_results_ever() {
                    return self.after_poll();
                }
                // A cron round resumed past the retries, without the run's count yet: read
                // the run, which decides.
                if self.ending.missing_spent() && !self.last_run.known() {
                    return self.on_results_missing();
                }
                self.on_transient(kind, &label, None, false, Some(status), now_ms)
            }
            Disposition::Success => {
                self.on_transient(kind, &label, None, true, Some(status), now_ms)
            }
            Disposition::Fail(code) => {
                let mut text = http_error_text(status, message.as_deref());
                if status == 404 {
                    text = self.not_found_text(kind, &text);
                }
                self.fail(code, text, Some(status));
            }
        }
    }

    /// A 404 names the path it came from and, when `baseUrl` has no version segment (the
    /// usual mistake), says so.
    fn not_found_text(&self, kind: RequestKind, text: &str) -> String {
        let url = self.url(kind);
        let path = url
            .get(origin_prefix(self.config.base_url()).len()..)
            .unwrap_or("");
        not_found_text(text, "GET", path, self.config.base_url())
    }

    /// A retryable failure: back off and re-send the same request, or give up.
    fn on_transient(
        &mut self,
        kind: RequestKind,
        label: &str,
        hint: Option<u64>,
        bad_body: bool,
        http_status: Option<u16>,
        now_ms: u64,
    ) {
        if self.budget.out_of_time(now_ms) {
            // Out of time, not out of retries (the request's timeout was cut to the deadline).
            self.next = Next::Fetch(kind);
            return;
        }
        self.next = match self.retries.failed(label, hint, bad_body) {
            Retry::After(ms) => Next::Sleep {
                ms,
                reason: SleepReason::Backoff,
                then: kind,
            },
            Retry::GiveUp(code, message) => return self.fail(code, message, http_status),
        };
    }

    fn on_page(&mut self, page: Page) {
        let keys = page.keys.filter(|_| self.config.dedupe);
        if let Some(batch) = self.position.take(page.len, keys) {
            // The cursor before the batch: where it was read from.
            self.unconfirmed = Some(Before {
                offset: batch.offset,
                skip: batch.start,
                polls: self.cadence.polls(),
                quiet: self.cadence.quiet(),
            });
            self.queue(Action::Emit(batch));
            self.cadence.delivered((batch.end - batch.start) as u64);
        }
        match (page.has_next_page, page.next) {
            (false, _) => self.after_poll(),
            (true, Some(next)) => {
                let (base, uid) = (self.config.base_url(), self.config.job_uid());
                match self.position.follow(&next, page.len, base, uid) {
                    Follow::Tail => self.after_poll(),
                    Follow::Next => self.next = Next::Fetch(RequestKind::Results),
                    Follow::Refused(why) => self.fail(ErrorCode::BadResponse, why.into(), None),
                }
            }
            // Completing here would be a success with rows missing.
            (true, None) => {
                let why = "paging.have_next_page is true but paging.next is missing";
                self.fail(ErrorCode::BadResponse, why.into(), None)
            }
        }
    }

    /// The run is over, nothing was ever delivered, the API counts no rows, and `/results`
    /// still says 404 after every retry: the run had no results (a 404 alone, or a count
    /// alone, is not enough: counts lag).
    fn no_results_ever(&self) -> bool {
        let counted_none = self.last_run.count() == Some(0);
        let retries_left = self.retries.left() && !self.ending.missing_spent();
        let nothing = self.position.offset() == 0 && self.position.on_first_page();
        nothing && counted_none && !retries_left
    }

    /// A 404 on `/results`: no results yet, or no run at all. Reading the run tells which
    /// (a 404 there is NOT_FOUND).
    fn on_results_missing(&mut self) {
        self.cadence.results_read();
        self.next = match self.hints.active(&self.config) {
            // Paced: the fast webhook cadence must not turn into a hot loop.
            true => Next::Sleep {
                ms: self.config.webhook_delay().into(),
                reason: SleepReason::Interval,
                then: RequestKind::Run,
            },
            false => Next::Fetch(RequestKind::Run),
        };
    }

    /// The tail as the end of a run reads it.
    fn tail(&self) -> Tail {
        Tail {
            count: self.last_run.count(),
            offset: self.position.offset(),
            len: self.position.skip(),
            page_size: self.position.page_size(self.config.page_size),
            count_behind: self.lag.count_behind(),
        }
    }

    /// A wait for a count that trails the rows: the status is read again an interval later,
    /// no sooner than `min_ms`.
    fn await_count(&mut self, min_ms: u64) {
        let ms = self.cadence.jittered(&self.config).max(min_ms);
        self.next = match self.config.step_mode {
            true => Next::Yield,
            false => Next::Sleep {
                ms,
                reason: SleepReason::Interval,
                then: RequestKind::Run,
            },
        };
    }

    /// What the end's drain says next: finish, re-read the tail after a pause, or read the
    /// status again for a count that trails.
    fn follow(&mut self, drain: Drain) {
        self.next = match drain {
            Drain::AwaitCount { min_ms } => return self.await_count(min_ms),
            Drain::Reread { ms } => Next::Sleep {
                ms,
                reason: SleepReason::Backoff,
                then: RequestKind::Results,
            },
            Drain::Finish => Next::Finish,
        };
    }

    /// The tail was reached: finish, re-read the tail, read the status, or wait.
    fn after_poll(&mut self) {
        if self.ending.over() {
            let drain = self.ending.drained(self.tail());
            return self.follow(drain);
        }
        // The mode this poll was made in: results first (every tick, or rows flowing), or
        // status first (the status of this tick was read just before).
        let first_page = self.position.on_first_page();
        let results_first = !self.cadence.status_first(&self.config, first_page);
        if !results_first {
            self.lag.read(
                self.config.interval_ms,
                Read {
                    rows: self.cadence.poll_rows(),
                    offset: self.position.offset(),
                    counted: self.last_run.count(),
                },
            );
        }
        let tick = self.cadence.polled(
            &self.config,
            first_page,
            results_first,
            self.last_run.seen(),
        );
        self.next = match (self.hints.active(&self.config), tick.read_status) {
            (true, _) => {
                self.hints.spend();
                Next::Sleep {
                    ms: self.config.webhook_delay().into(),
                    reason: SleepReason::Interval,
                    then: RequestKind::Run,
                }
            }
            (false, true) => Next::Fetch(RequestKind::Run),
            // Rows the tick's count did not announce: did they come while it was read? (A
            // step's lag starts afresh each round: the read would teach nothing that lasts.)
            (false, false) if self.lag.unconfirmed() && !self.config.step_mode => {
                Next::Fetch(RequestKind::Run)
            }
            (false, false) => tick.pause.into(),
        };
    }

    /// At a status-guided tick: whether the results can bring anything (see
    /// [`ReadMode::StatusGuided`]). A count is only a hint: none, or one that did not move
    /// for [`QUIET_TICKS`] ticks, reads the results anyway. A count seen behind the rows, or
    /// a batch due by the pace of the last two, reads them too (`lag.rs`); so does a webhook
    /// relayed to a step (the end is near).
    fn results_due(&mut self, run: &RunInfo, now_ms: u64) -> bool {
        let offset = self.position.offset();
        let counted_more = !matches!(run.row_count, Some(n) if n <= offset);
        if counted_more {
            self.lag.count_caught_up();
            return true;
        }
        let blind = self.lag.read_blind(self.config.interval_ms, now_ms, offset);
        blind || self.cadence.quiet_long() || self.config.step_mode && self.hints.hinted()
    }

    fn on_run(&mut self, run: RunInfo, now_ms: u64) {
        let class = classify_status(&run.status);
        if let Some(paused_for_ms) = self.last_run.read(&run, class, now_ms) {
            let run = run.clone();
            self.queue(Action::Status { run, paused_for_ms });
        }
        if let Some(message) = run
            .error_message
            .as_ref()
            .filter(|m| is_all_inputs_failed(m))
        {
            let text = ["the run reports: ", message].concat();
            return self.fail(ErrorCode::AllInputsFailed, text, None);
        }
        let first_page = self.position.on_first_page();
        let pause = self.cadence.next_tick(&self.config, first_page);
        let guided_tick =
            self.cadence.status_first(&self.config, first_page) && !self.cadence.tick_read();
        if guided_tick {
            let running = run.status.eq_ignore_ascii_case("running");
            self.lag.tick(self.config.interval_ms, now_ms, running);
        } else {
            self.lag.confirm(run.row_count, self.position.offset());
        }
        let results_due = guided_tick && self.results_due(&run, now_ms);
        self.next = Next::Fetch(RequestKind::Results);
        match class {
            RunClass::Succeeded => self.ending.succeeded(run.status),
            RunClass::Failed => match run.missing {
                // Rows known missing: neither a success nor a failure (the stored rows still come).
                Some(missing) => {
                    self.ending.incomplete(run.status, missing);
                    // The rows were drained before this read: finish now (a re-read here
                    // would be followed by this read again, round after round).
                    if self.rereading_missing {
                        self.next = Next::Finish;
                        return;
                    }
                }
                None => {
                    let message = run.error_message.or_else(|| self.hints.error());
                    self.ending.failed(run.status, message);
                }
            },
            RunClass::Active | RunClass::Paused if self.ending.over() => {}
            // After a webhook: drain now, then read the status again soon (after_poll).
            RunClass::Active | RunClass::Paused if self.hints.active(&self.config) => {}
            // The tick's first read: the results only when they can bring something.
            RunClass::Active | RunClass::Paused if guided_tick && results_due => {}
            RunClass::Active | RunClass::Paused if guided_tick => {
                self.cadence.quiet_tick();
                self.next = pause.into();
            }
            RunClass::Active | RunClass::Paused => self.next = pause.into(),
        }
        if let Some(drain) = self.ending.status_read(self.tail()) {
            self.follow(drain);
        }
    }

    fn fail(&mut self, code: ErrorCode, message: String, http_status: Option<u16>) {
        let error = self.error(code, message, http_status);
        self.next = Next::Fail(error);
    }

    fn error(&self, code: ErrorCode, message: String, http_status: Option<u16>) -> PollError {
        let run_status = self.ending.status().or(self.last_run.status()).cloned();
        PollError {
            code,
            message,
            http_status,
            run_status,
        }
    }
}
