//! The poll state machine behind [`Poller`]: position, cadence, retries, budgets, endings.

use alloc::string::String;
use alloc::vec::Vec;

use alloc::collections::VecDeque;

mod ending;
mod hints;
mod lag;
mod next_page;
mod pace;

use super::backoff::{Backoff, SplitMix64};
use super::config::not_found_text;
use super::cursor::CursorState;
use super::origin::origin_prefix;
use super::{
    Action, Batch, Config, ConfigError, ErrorCode, Event, FetchRequest, PollError, Poller,
    ReadMode, RequestId, RequestKind, SleepReason, ABORTED_TEXT, QUIET_TICKS,
};
use crate::api::{
    classify_http, classify_status, decimal, http_error_text, is_all_inputs_failed, Disposition,
    Outcome, Page, RetryHint, RunClass, RunInfo, WebhookKind, NO_RESPONSE_TEXT,
};
use pace::JITTER_STREAM;

/// Why a poller whose `fetch` threw ended at once.
const NOT_SENT_TEXT: &str = "fetch threw instead of sending (a programming error: not retried)";

/// `setTimeout` takes at most 2^31−1 ms; more wraps to an immediate (busy) timer.
const MAX_TIMER_MS: u64 = 2_147_483_647;

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

/// Why polling is winding down: the API's own status said the run is over (never a
/// webhook alone), and the final drain of the results decides the rest.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Ending {
    Succeeded(String),
    Failed {
        status: String,
        message: Option<String>,
    },
}

/// Everything that changes while polling.
#[derive(Debug)]
pub(super) struct State {
    /// Page being read (path + query relative to the origin); `None` = first page.
    page: Option<String>,
    /// `paging.next` of `page`, being fetched; becomes `page` once it answers.
    pending_next: Option<String>,
    /// Rows of `page` already consumed (delivered or dropped as repeats).
    skip: usize,
    /// Rows delivered in total (across resumes).
    offset: u64,
    /// Results polls done (across resumes), for `status_every`.
    polls: u32,
    prev_keys: Vec<String>,
    cur_keys: Vec<String>,
    /// Rows the current poll has delivered so far.
    poll_rows: u64,
    /// Rows the previous poll delivered: growth slowing down hints that the run is ending.
    prev_poll_rows: u64,
    /// Status-guided: ticks in a row whose status said nothing new since the last results read.
    quiet: u32,
    /// `/results` 404s after the run's end, over every round (see `no_results_ever`).
    missing: u32,
    /// Results polls in a row that brought rows: from 2 on, rows come on every tick and a
    /// status-guided poller reads the results first.
    growing: u32,
    /// The results were read since the last interval sleep (one results read per tick).
    tick_read: bool,
    /// This tick's results read was made although the count said nothing new (`lag.rs`).
    blind_read: bool,
    /// When this tick's status was read.
    tick_ms: u64,
    /// When the previous tick's status was read.
    prev_tick_ms: u64,
    /// When the last results read that brought rows was made (its tick).
    batch_ms: Option<u64>,
    /// The pace of those reads: their gaps, recent ones weighing more (0: not known yet).
    period_ms: u64,
    /// When a results read last found nothing new.
    absent_ms: u64,
    /// Results reads in a row that found nothing, since the last batch.
    misses: u32,
    /// Gaps between batches the pace was learned from.
    gaps: u32,
    /// The last batch came after this (the read before it that found nothing, or an
    /// interval before the read that found it).
    batch_after_ms: u64,
    /// A read brought more rows than the count said: reads do not wait for it (`lag.rs`).
    count_behind: bool,
    /// Reads before a batch is due (probes) left before the count is seen behind.
    probes_left: u32,
    status_seen: bool,
    last_run: Option<RunInfo>,
    ending: Option<Ending>,
    /// Re-reads of the tail left before completing (a lagging count or a full tail page).
    rechecks_left: u32,
    /// At the end, status reads left to wait for a count that trails the rows (`ending.rs`).
    count_waits_left: u32,
    /// The status is being read again at the end because the count trailed the rows.
    awaiting_count: bool,
    /// When this poller first saw the run `paused` (cleared when it is not).
    paused_since: Option<u64>,
    /// Fast status reads left after a Succeeded/Failed webhook (see `Config::webhook_reads`).
    hint_reads: u32,
    /// The webhook kind last acted on: a duplicate changes nothing.
    hinted: Option<WebhookKind>,
    /// A failed webhook's `error`, for the JOB_FAILED message when the run gives none.
    hint_error: Option<String>,
    /// When the timer of the current `Sleep` is due, and why it was armed (to re-arm what is
    /// left of it after the glue cancelled it for a webhook).
    sleep_until: u64,
    sleep_reason: SleepReason,
    /// The page is hidden ([`Event::Hidden`]): the steady cadence slows down.
    hidden: bool,
    /// The runtime is offline ([`Event::Online`]): nothing is sent, no retry is spent.
    offline: bool,
    /// Jitter of the steady cadence.
    jitter: SplitMix64,
    /// The number of the first page, learned from its `paging.next` ("1" → 0, "2" → 1).
    page_base: Option<u64>,
    /// Largest length of a page that had a next page: the API's page size.
    paged_len: usize,
    /// Largest length of any page read.
    largest_len: usize,
    /// Length of the last page read: a full tail is read again at the end.
    last_len: usize,
    next: Next,
    wait: Wait,
    outbox: VecDeque<Action>,
    /// The position before the batch being delivered: the cursor until its delivery is
    /// confirmed ([`Event::BatchDone`]), and for good if it never is.
    unconfirmed: Option<CursorState>,
    halt: Option<Halt>,
    done: bool,
    next_id: RequestId,
    requests: u32,
    retries: u32,
    backoff: Backoff,
    started_ms: u64,
    deadline_ms: Option<u64>,
}

impl State {
    pub fn new(config: &Config, cursor: Option<&str>, now_ms: u64) -> Result<State, ConfigError> {
        let saved = match cursor {
            Some(c) => CursorState::decode(c, config.job_uid())?,
            None => CursorState::default(),
        };
        let ending = saved.terminal.map(|(succeeded, status)| match succeeded {
            true => Ending::Succeeded(status),
            false => Ending::Failed {
                status,
                message: None,
            },
        });
        let status_first = config.read_mode == ReadMode::StatusGuided && ending.is_none();
        let first = match status_first {
            true => RequestKind::Run,
            false => RequestKind::Results,
        };
        Ok(State {
            page: saved.page,
            pending_next: None,
            skip: saved.skip,
            offset: saved.offset,
            polls: saved.polls,
            prev_keys: Vec::new(),
            cur_keys: Vec::new(),
            poll_rows: 0,
            prev_poll_rows: 0,
            quiet: saved.quiet,
            missing: saved.missing,
            growing: 0,
            tick_read: false,
            blind_read: false,
            tick_ms: now_ms,
            prev_tick_ms: now_ms,
            batch_ms: None,
            period_ms: 0,
            absent_ms: 0,
            misses: 0,
            gaps: 0,
            batch_after_ms: 0,
            count_behind: false,
            probes_left: lag::PROBES,
            status_seen: false,
            last_run: None,
            // A cursor saved during the end's drain: the tail may still lag, so a full one is
            // read once more (once: cron rounds on such a cursor must not re-read for ever).
            rechecks_left: match ending {
                Some(_) => config.retry.retries.min(1),
                None => 0,
            },
            ending,
            count_waits_left: config.retry.retries,
            awaiting_count: false,
            paused_since: None,
            hint_reads: 0,
            hinted: None,
            hint_error: None,
            sleep_until: now_ms,
            sleep_reason: SleepReason::Interval,
            hidden: false,
            offline: false,
            // Another stream than the backoff's, from the same seed.
            jitter: SplitMix64::new(config.seed ^ JITTER_STREAM),
            page_base: None,
            paged_len: 0,
            largest_len: 0,
            last_len: 0,
            next: Next::Fetch(first),
            wait: Wait::Nothing,
            outbox: VecDeque::new(),
            unconfirmed: None,
            halt: None,
            done: false,
            next_id: 1,
            requests: 0,
            retries: 0,
            backoff: Backoff::new(config.retry, config.seed),
            started_ms: now_ms,
            deadline_ms: config.max_duration_ms.map(|d| now_ms.saturating_add(d)),
        })
    }

    pub fn requests(&self) -> u32 {
        self.requests
    }

    pub fn is_terminal(&self) -> bool {
        self.done
    }
}

impl Poller {
    pub(super) fn on_event(&mut self, event: Event, now_ms: u64) {
        let s = &mut self.state;
        if s.done || s.wait == Wait::Over {
            return;
        }
        match event {
            Event::Stop => _ = s.halt.get_or_insert(Halt::Stop),
            Event::Abort => _ = s.halt.get_or_insert(Halt::Abort),
            Event::BatchFailed if s.wait == Wait::Batch => {
                _ = s.halt.get_or_insert(Halt::BatchFailed);
            }
            Event::Response { id, outcome } => {
                if s.halt.is_some()
                    || s.wait != Wait::Request(id, RequestKind::Results)
                        && s.wait != Wait::Request(id, RequestKind::Run)
                {
                    return;
                }
                let Wait::Request(_, kind) = s.wait else {
                    return;
                };
                s.wait = Wait::Nothing;
                self.on_outcome(kind, outcome, now_ms);
            }
            Event::TimerFired if s.wait == Wait::Timer => s.wait = Wait::Nothing,
            Event::BatchDone if s.wait == Wait::Batch && s.halt.is_none() => {
                s.wait = Wait::Nothing;
                s.unconfirmed = None;
            }
            Event::Webhook(hook) => self.on_webhook(hook, now_ms),
            Event::Hidden(hidden) => self.on_hidden(hidden, now_ms),
            Event::Online(online) => self.on_online(online, now_ms),
            Event::TimerFired | Event::BatchDone | Event::BatchFailed => {}
        }
    }

    pub(super) fn decide(&mut self, now_ms: u64) -> Action {
        let s = &mut self.state;
        if s.done || s.wait == Wait::Over {
            return Action::Idle;
        }
        if let Some(halt) = s.halt {
            return self.halted(halt, now_ms);
        }
        if let Some(action) = s.outbox.pop_front() {
            if s.outbox.is_empty() {
                // Its buffer (room for a few actions) would otherwise stay allocated for the
                // whole life of the poller, most of it asleep: give it back (fleet memory).
                s.outbox = VecDeque::new();
            }
            if matches!(action, Action::Emit(_)) {
                s.wait = Wait::Batch;
            }
            return action;
        }
        if s.wait != Wait::Nothing {
            return Action::Idle;
        }
        match s.next.clone() {
            Next::Fetch(kind) => self.fetch(kind, now_ms),
            Next::Sleep { ms, reason, then } => self.sleep(ms, reason, then, now_ms),
            Next::Yield => {
                s.wait = Wait::Over;
                Action::Yield
            }
            Next::Finish => self.finish(now_ms),
            Next::Fail(error) => self.terminate(Action::Fail(error)),
        }
    }

    /// The position after the last confirmed batch.
    pub(super) fn cursor_state(&self) -> CursorState {
        match &self.state.unconfirmed {
            Some(before) => before.clone(),
            None => self.live_cursor(),
        }
    }

    /// The position after the rows handed out so far.
    pub(super) fn live_cursor(&self) -> CursorState {
        let s = &self.state;
        let terminal = s.ending.as_ref().map(|ending| match ending {
            Ending::Succeeded(status) => (true, status.clone()),
            Ending::Failed { status, .. } => (false, status.clone()),
        });
        CursorState {
            job_uid: self.config.job_uid().into(),
            offset: s.offset,
            skip: s.skip,
            polls: s.polls,
            quiet: s.quiet,
            missing: s.missing,
            terminal,
            page: s.page.clone(),
        }
    }

    fn fetch(&mut self, kind: RequestKind, now_ms: u64) -> Action {
        if let Some(action) = self.timed_out(now_ms).or_else(|| self.requests_spent()) {
            return action;
        }
        if self.state.offline {
            return self.wait_for_event(now_ms);
        }
        let s = &mut self.state;
        let id = s.next_id;
        s.next_id = s.next_id.wrapping_add(1);
        s.requests = s.requests.saturating_add(1);
        s.wait = Wait::Request(id, kind);
        let left = s.deadline_ms.map_or(u64::MAX, |d| d - now_ms);
        let timeout_ms = u64::from(self.config.timeout_ms).min(left).max(1);
        Action::Fetch(FetchRequest {
            id,
            kind,
            url: self.url(kind),
            timeout_ms: u32::try_from(timeout_ms).unwrap_or(u32::MAX),
        })
    }

    /// The deadline ends the poll (or, in cron mode, the step).
    fn timed_out(&mut self, now_ms: u64) -> Option<Action> {
        if !self.state.deadline_ms.is_some_and(|d| now_ms >= d) {
            return None;
        }
        let max = self.config.max_duration_ms.unwrap_or_default();
        let message = ["gave up after maxDurationMs (", &decimal(max), " ms)"].concat();
        Some(self.budget_spent(ErrorCode::Timeout, message))
    }

    /// The request budget ends the poll (or, in cron mode, the step).
    fn requests_spent(&mut self) -> Option<Action> {
        let max = self
            .config
            .max_requests
            .filter(|&max| self.state.requests >= max)?;
        let message = ["sent maxRequests (", &decimal(max.into()), ") requests"].concat();
        Some(self.budget_spent(ErrorCode::BudgetExhausted, message))
    }

    fn budget_spent(&mut self, code: ErrorCode, message: String) -> Action {
        if self.config.step_mode {
            self.state.wait = Wait::Over;
            return Action::Yield;
        }
        let error = self.error(code, message, None);
        self.terminate(Action::Fail(error))
    }

    fn sleep(&mut self, ms: u64, reason: SleepReason, then: RequestKind, now_ms: u64) -> Action {
        if let Some(action) = self.timed_out(now_ms) {
            return action;
        }
        let Some(ms) = self.paced(ms, reason) else {
            return self.wait_for_event(now_ms); // hidden, with hidden polling paused
        };
        let s = &mut self.state;
        // Not `Ord::clamp`: its `min <= max` assertion carries a formatted panic message.
        #[allow(clippy::manual_clamp)]
        let mut ms = ms.max(1).min(MAX_TIMER_MS);
        if let Some(deadline) = s.deadline_ms {
            let left = deadline - now_ms;
            if self.config.step_mode && ms > left {
                s.wait = Wait::Over;
                return Action::Yield;
            }
            ms = ms.min(left);
        }
        if reason == SleepReason::Interval {
            s.tick_read = false;
        }
        s.next = Next::Fetch(then);
        s.wait = Wait::Timer;
        s.sleep_until = now_ms + ms;
        s.sleep_reason = reason;
        Action::Sleep {
            ms: u32::try_from(ms).unwrap_or(u32::MAX),
            reason,
        }
    }

    /// The glue cancels the pending sleep before handing in an outside event (a webhook, the
    /// page hidden or shown, the network gone or back): poll at once (`now`: a steady sleep is
    /// over), or ask again for what is left of the sleep (re-paced by [`Poller::sleep`]).
    pub(super) fn sleep_cancelled(&mut self, now: bool, now_ms: u64) {
        let s = &mut self.state;
        let cancelled = s.wait == Wait::Timer;
        if cancelled {
            s.wait = Wait::Nothing;
        }
        match s.next {
            Next::Sleep {
                reason: SleepReason::Interval,
                then,
                ..
            } if now => {
                s.next = Next::Fetch(then);
            }
            Next::Fetch(then) if cancelled && !now => {
                s.next = Next::Sleep {
                    ms: s.sleep_until.saturating_sub(now_ms),
                    reason: s.sleep_reason,
                    then,
                };
            }
            _ => {}
        }
    }

    fn halted(&mut self, halt: Halt, now_ms: u64) -> Action {
        let action = match halt {
            Halt::Stop => Action::Stopped(self.summary("stopped".into(), now_ms)),
            Halt::Abort => Action::Fail(self.error(ErrorCode::Aborted, ABORTED_TEXT.into(), None)),
            Halt::BatchFailed => {
                let from = self.delivered();
                let to = self.state.offset;
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

    fn terminate(&mut self, action: Action) -> Action {
        self.state.done = true;
        self.state.outbox.clear();
        action
    }

    fn url(&self, kind: RequestKind) -> String {
        let base = self.config.base_url();
        let uid = self.config.job_uid();
        let s = &self.state;
        match (kind, s.pending_next.as_ref().or(s.page.as_ref())) {
            (RequestKind::Run, _) => [base, "/jobs/", uid].concat(),
            (RequestKind::Results, None) => [base, "/jobs/", uid, "/results"].concat(),
            (RequestKind::Results, Some(page)) => [origin_prefix(base), page].concat(),
        }
    }

    fn on_outcome(&mut self, kind: RequestKind, outcome: Outcome, now_ms: u64) {
        match (kind, outcome) {
            (RequestKind::Results, Outcome::Results(page)) => {
                self.state.backoff.reset();
                self.on_page(page);
            }
            (RequestKind::Run, Outcome::Run(run)) => {
                self.state.backoff.reset();
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
            (_, Outcome::Network) if self.state.offline => self.state.next = Next::Fetch(kind),
            (_, Outcome::Network) => {
                self.on_transient(kind, NO_RESPONSE_TEXT.into(), None, false, None, now_ms)
            }
            // A programming error, not a network condition: retrying cannot help.
            (_, Outcome::NotSent) => self.fail(ErrorCode::NetworkError, NOT_SENT_TEXT.into(), None),
            (_, Outcome::Timeout) => {
                self.on_transient(kind, "request timeout".into(), None, false, None, now_ms)
            }
            (_, Outcome::BadBody(why)) => self.on_transient(
                kind,
                ["malformed response (", &why, ")"].concat(),
                None,
                true,
                None,
                now_ms,
            ),
            (_, _) => {
                let why = "malformed response (a body of the other endpoint)".into();
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
                let hint = retry.map(|hint| match hint {
                    RetryHint::DelayMs(ms) => ms,
                    RetryHint::AtMs(at) => at.saturating_sub(now_ms),
                });
                self.on_transient(kind, label, hint, false, Some(status), now_ms);
            }
            // The results of a run that exists may 404 before it has any: the run decides.
            Disposition::Fail(ErrorCode::NotFound) if kind == RequestKind::Results => {
                match self.state.ending.is_some() {
                    false => self.on_results_missing(),
                    true => {
                        self.state.missing = self.state.missing.saturating_add(1);
                        match self.no_results_ever() {
                            true => self.after_poll(),
                            // A cron round resumed past the retries, without the run's count
                            // yet: read the run, which decides.
                            false if self.retries_spent() && self.state.last_run.is_none() => {
                                self.on_results_missing()
                            }
                            false => {
                                self.on_transient(kind, label, None, false, Some(status), now_ms)
                            }
                        }
                    }
                }
            }
            Disposition::Success => {
                self.on_transient(kind, label, None, true, Some(status), now_ms)
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
        label: String,
        hint: Option<u64>,
        bad_body: bool,
        http_status: Option<u16>,
        now_ms: u64,
    ) {
        let s = &mut self.state;
        if s.deadline_ms.is_some_and(|d| now_ms >= d) {
            // Out of time, not out of retries (the request's timeout was cut to the deadline).
            s.next = Next::Fetch(kind);
            return;
        }
        let Some(delay) = s.backoff.next() else {
            let code = match bad_body {
                true => ErrorCode::BadResponse,
                false => ErrorCode::RetriesExhausted,
            };
            let retries = self.config.retry.retries;
            let message = [&label, " after ", &decimal(retries.into()), " retries"].concat();
            return self.fail(code, message, http_status);
        };
        let ms = hint.map_or(delay, |h| s.backoff.clamp(h));
        s.retries = s.retries.saturating_add(1);
        s.next = Next::Sleep {
            ms,
            reason: SleepReason::Backoff,
            then: kind,
        };
    }

    fn on_page(&mut self, page: Page) {
        let s = &mut self.state;
        if let Some(next) = s.pending_next.take() {
            s.prev_keys = core::mem::take(&mut s.cur_keys);
            s.page = Some(next);
            s.skip = 0;
        }
        s.last_len = page.len;
        s.largest_len = s.largest_len.max(page.len);
        let keys = page.keys.filter(|_| self.config.dedupe).unwrap_or_default();
        let repeated = keys
            .iter()
            .take(page.len)
            .take_while(|k| s.prev_keys.contains(k))
            .count();
        let start = s.skip.max(repeated);
        if page.len > start {
            s.skip = start;
            let before = self.live_cursor();
            let s = &mut self.state;
            s.unconfirmed = Some(before);
            let batch = Batch {
                start,
                end: page.len,
                offset: s.offset,
            };
            s.outbox.push_back(Action::Emit(batch));
            s.offset += (page.len - start) as u64;
            s.poll_rows += (page.len - start) as u64;
        }
        let s = &mut self.state;
        s.skip = start.max(page.len);
        if repeated < page.len {
            // The run of repeated rows is over: the previous page's keys cannot matter again.
            s.prev_keys = Vec::new();
        }
        s.cur_keys = keys;
        match (page.has_next_page, page.next) {
            (false, _) => self.after_poll(),
            (true, Some(next)) => self.follow(&next, page.len),
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
        let s = &self.state;
        let counted_none = s.last_run.as_ref().is_some_and(|r| r.row_count == Some(0));
        let retries_left = s.backoff.clone().next().is_some() && !self.retries_spent();
        s.offset == 0 && s.page.is_none() && counted_none && !retries_left
    }

    /// A cron round starts a new backoff: the 404s after the end of earlier rounds count too.
    fn retries_spent(&self) -> bool {
        self.state.missing > self.config.retry.retries
    }

    /// A 404 on `/results`: no results yet, or no run at all. Reading the run tells which
    /// (a 404 there is NOT_FOUND).
    fn on_results_missing(&mut self) {
        // The status read that follows must not send the results read straight back.
        self.state.tick_read = true;
        let min = u64::from(self.config.retry.min_delay_ms);
        self.state.next = match self.hint_active() {
            // Paced: the fast webhook cadence must not turn into a hot loop.
            true => Next::Sleep {
                ms: min,
                reason: SleepReason::Interval,
                then: RequestKind::Run,
            },
            false => Next::Fetch(RequestKind::Run),
        };
    }

    /// The tail was reached: finish, re-read the tail, read the status, or wait.
    fn after_poll(&mut self) {
        if self.state.ending.is_some() && self.count_awaited() {
            return self.await_count();
        }
        if self.state.ending.is_some() {
            self.state.next = match self.recheck_due() {
                true => {
                    self.state.rechecks_left -= 1;
                    let ms = u64::from(self.config.retry.min_delay_ms);
                    Next::Sleep {
                        ms,
                        reason: SleepReason::Backoff,
                        then: RequestKind::Results,
                    }
                }
                false => Next::Finish,
            };
            return;
        }
        // The mode this poll was made in: results first (every tick, or rows flowing), or
        // status first (the status of this tick was read just before).
        let results_first = !self.status_first();
        if !results_first {
            let blind = core::mem::take(&mut self.state.blind_read);
            self.note_read(blind);
        }
        let s = &mut self.state;
        s.polls = s.polls.saturating_add(1);
        s.growing = match s.poll_rows {
            0 => 0,
            _ => s.growing.saturating_add(1),
        };
        s.quiet = 0;
        s.tick_read = true;
        let interval = self.interval();
        let hinted = self.hint_active();
        let s = &mut self.state;
        let every = self.config.status_every;
        let due = every > 0 && s.polls % every == 0;
        // Growth that stopped or slowed down is the sign of a run ending: read the status now,
        // so completion is noticed within about one interval instead of two.
        let slowed = s.poll_rows == 0 || s.poll_rows < s.prev_poll_rows;
        let read_status = match results_first {
            true => self.config.step_mode || slowed || due || !s.status_seen,
            false => !s.status_seen,
        };
        s.prev_poll_rows = core::mem::take(&mut s.poll_rows);
        s.next = match (hinted, read_status) {
            (true, _) => {
                s.hint_reads -= 1;
                Next::Sleep {
                    ms: u64::from(self.config.retry.min_delay_ms),
                    reason: SleepReason::Interval,
                    then: RequestKind::Run,
                }
            }
            (false, true) => Next::Fetch(RequestKind::Run),
            (false, false) => interval,
        };
    }

    fn interval(&mut self) -> Next {
        let then = match self.status_first() {
            true => RequestKind::Run,
            false => RequestKind::Results,
        };
        match self.config.step_mode {
            true => Next::Yield,
            false => Next::Sleep {
                ms: self.jittered_interval(),
                reason: SleepReason::Interval,
                then,
            },
        }
    }

    /// Status-guided, and rows are not coming on every tick of a run past its first page
    /// (always in step mode): a tick starts with the status.
    ///
    /// On the first page every results read downloads every row so far: read blind, it saves
    /// one status request a tick but downloads the whole run again on the tick after the last
    /// rows, before the status says the run ended (and a drain downloads it once more). Past
    /// the first page, a blind read re-downloads at most the tail page of a longer run.
    fn status_first(&self) -> bool {
        let guided = self.config.read_mode == ReadMode::StatusGuided;
        let s = &self.state;
        guided && (self.config.step_mode || s.growing < 2 || s.page.is_none())
    }

    /// At a status-guided tick: whether the results can bring anything (see
    /// [`ReadMode::StatusGuided`]). A count is only a hint: none, or one that did not move
    /// for [`QUIET_TICKS`] ticks, reads the results anyway.
    /// A count seen behind the rows, or a batch due by the pace of the last two, reads them
    /// too (`lag.rs`).
    fn results_due(&mut self, run: &RunInfo, now_ms: u64) -> bool {
        let s = &self.state;
        // A webhook relayed to this step hints that the end is near.
        let hinted = self.config.step_mode && s.hinted.is_some();
        let counted_more = !matches!(run.row_count, Some(n) if n <= s.offset);
        if counted_more {
            self.count_caught_up();
            return true;
        }
        let blind = self.batch_due(now_ms);
        self.state.blind_read = blind;
        blind || self.state.quiet >= QUIET_TICKS || hinted
    }

    fn on_run(&mut self, run: RunInfo, now_ms: u64) {
        let class = classify_status(&run.status);
        self.report(&run, class, now_ms);
        if let Some(message) = run
            .error_message
            .as_ref()
            .filter(|m| is_all_inputs_failed(m))
        {
            let text = ["the run reports: ", message].concat();
            return self.fail(ErrorCode::AllInputsFailed, text, None);
        }
        let interval = self.interval();
        let hinted = self.hint_active();
        let guided_tick = self.status_first() && !self.state.tick_read;
        if guided_tick {
            self.state.prev_tick_ms = core::mem::replace(&mut self.state.tick_ms, now_ms);
            if run.status.eq_ignore_ascii_case("running") {
                self.note_running();
            }
        }
        let results_due = guided_tick && self.results_due(&run, now_ms);
        let s = &mut self.state;
        let status = run.status;
        s.next = Next::Fetch(RequestKind::Results);
        match class {
            RunClass::Succeeded => {
                s.ending = Some(Ending::Succeeded(status));
                s.rechecks_left = self.config.retry.retries;
            }
            RunClass::Failed => {
                let message = run.error_message.or_else(|| s.hint_error.clone());
                s.ending = Some(Ending::Failed { status, message });
                s.rechecks_left = self.config.retry.retries;
            }
            RunClass::Active | RunClass::Paused if s.ending.is_some() => {}
            // After a webhook: drain now, then read the status again soon (after_poll).
            RunClass::Active | RunClass::Paused if hinted => {}
            // The tick's first read: the results only when they can bring something.
            RunClass::Active | RunClass::Paused if guided_tick && results_due => {}
            RunClass::Active | RunClass::Paused if guided_tick => {
                s.quiet = s.quiet.saturating_add(1);
                s.growing = 0;
                s.next = interval;
            }
            RunClass::Active | RunClass::Paused => s.next = interval,
        }
        if self.state.awaiting_count && self.state.ending.is_some() {
            self.count_read();
        }
    }

    /// Queues `onStatus` when the run changed, and on every read while it is paused.
    fn report(&mut self, run: &RunInfo, class: RunClass, now_ms: u64) {
        let s = &mut self.state;
        s.status_seen = true;
        let paused_for_ms = match class {
            RunClass::Paused => Some(now_ms.saturating_sub(*s.paused_since.get_or_insert(now_ms))),
            _ => {
                s.paused_since = None;
                None
            }
        };
        if s.last_run.as_ref() != Some(run) || paused_for_ms.is_some() {
            let run = run.clone();
            s.last_run = Some(run.clone());
            s.outbox.push_back(Action::Status { run, paused_for_ms });
        }
    }

    fn fail(&mut self, code: ErrorCode, message: String, http_status: Option<u16>) {
        let error = self.error(code, message, http_status);
        self.state.next = Next::Fail(error);
    }

    fn error(&self, code: ErrorCode, message: String, http_status: Option<u16>) -> PollError {
        let s = &self.state;
        let run_status = match &s.ending {
            Some(Ending::Succeeded(status) | Ending::Failed { status, .. }) => Some(status.clone()),
            _ => s.last_run.as_ref().map(|r| r.status.clone()),
        };
        PollError {
            code,
            message,
            http_status,
            run_status,
        }
    }
}
