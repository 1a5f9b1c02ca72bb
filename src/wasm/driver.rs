//! The loop that drives the engine: it asks for the next action, performs it (a fetch, a
//! sleep, a delivery), reports back, and ends on the engine's terminal action.
//!
//! A [`Session`] is one engine, shared by the JS object (`cursor`, webhooks, `stop()`) and its
//! running loop ([`Session::run`]). The engine is borrowed only for pure Rust calls, never
//! across an `await` or a JS call, so a callback may call `stop()`, `webhookReceived()` or
//! read `cursor` at any time.

use std::cell::RefCell;

use futures_util::future::LocalBoxFuture;
use gloo_timers::future::TimeoutFuture;
use js_sys::{Array, Date};
use wasm_bindgen::JsValue;
use web_sys::AbortSignal;

use super::body;
use super::fetch::{self, Connection};
use super::interrupt::{self, Cut, Interrupt, Interrupter, Interrupts};
use super::retries::Retries;
use crate::api::RunInfo;
use crate::engine::{Action, ErrorCode, Event, FetchRequest, PollError, Poller, Summary};

/// Where the loop's rows and statuses go: the callbacks of a `JobPoller`, or the rows of a
/// `pollStep` round.
pub trait Delivery {
    /// Hands over new rows (a fresh JS array); the loop waits for the returned future, so a
    /// slow consumer slows the poller down (backpressure). `Err` = what the consumer threw:
    /// the poll ends with CALLBACK_FAILED, the cursor before these rows.
    /// `cursor` gives the resume token after these rows, for a receiver that hands it on
    /// (encoding it is left to those that do).
    fn batch(
        &self,
        rows: Array,
        offset: u64,
        cursor: &dyn Fn() -> String,
    ) -> LocalBoxFuture<'_, Result<(), JsValue>>;
    /// The run's status or counts changed; `body` is the run body it was read from.
    fn status(&self, run: &RunInfo, paused_for_ms: Option<u64>, body: &JsValue);
    /// A retry was scheduled (`run.retrying`), or an answer came after retries (`null`); see
    /// [`super::retries`]. A receiver that shows no progress ignores it.
    fn retrying(&self, _retrying: &JsValue) {}
}

/// How the loop ended.
pub enum End {
    /// Cron mode: the round is over; continue from the cursor later.
    Yield,
    /// Terminal success.
    Complete(Summary),
    /// `stop()`: not an error.
    Stopped(Summary),
    /// Terminal failure.
    Fail(PollError),
}

/// One engine and what its loop needs.
pub struct Session {
    engine: RefCell<Poller>,
    connection: Connection,
    signal: Option<AbortSignal>,
    interrupter: Interrupter,
    /// Taken by the loop when it starts.
    interrupts: RefCell<Option<Interrupts>>,
    /// The JS value behind the last failure: what a consumer threw, or what `fetch` threw or
    /// rejected with on the last request (none once a response came).
    cause: RefCell<Option<JsValue>>,
}

/// Milliseconds since the Unix epoch: the engine's clock.
pub fn now_ms() -> u64 {
    Date::now() as u64
}

impl Session {
    /// A session around a ready engine.
    pub fn new(engine: Poller, connection: Connection, signal: Option<AbortSignal>) -> Session {
        let (interrupter, interrupts) = interrupt::channel();
        Session {
            engine: RefCell::new(engine),
            connection,
            signal,
            interrupter,
            interrupts: RefCell::new(Some(interrupts)),
            cause: RefCell::new(None),
        }
    }

    /// The resume token after the last delivered row.
    pub fn cursor(&self) -> String {
        self.engine.borrow().cursor()
    }

    /// Rows delivered so far, including those before the cursor it started from.
    pub fn delivered(&self) -> u64 {
        self.engine.borrow().delivered()
    }

    /// Requests sent so far (`pollStep`'s result).
    #[cfg(feature = "step-and-schedule")]
    pub fn requests(&self) -> u32 {
        self.engine.borrow().requests()
    }

    /// The job this session polls.
    pub fn job_uid(&self) -> String {
        self.engine.borrow().config().job_uid().into()
    }

    /// The `cause` of a terminal error with `code`: the signal's `reason` for ABORTED, else
    /// the JS value behind the last failure (see [`Session::cause`]).
    pub fn cause(&self, code: ErrorCode) -> Option<JsValue> {
        match (code, &self.signal) {
            (ErrorCode::Aborted, Some(signal)) => signal.aborted().then(|| signal.reason()),
            (ErrorCode::Aborted, None) => None,
            _ => self.cause.borrow().clone(),
        }
    }

    /// Ends the loop at once (the request in flight is aborted, the timer cleared); the
    /// engine then ends with a "stopped" summary. Idempotent; before the start it makes the
    /// start end.
    pub fn stop(&self) {
        self.interrupter.send(Interrupt::Stop);
    }

    /// An outside event (a webhook, the page hidden or shown, the network gone or back):
    /// the engine takes it now, and a sleep is cut short so it can act on it.
    pub fn event(&self, event: Event) {
        self.handle(event);
        self.interrupter.send(Interrupt::Wake);
    }

    fn handle(&self, event: Event) {
        self.engine.borrow_mut().handle(event, now_ms());
    }

    fn next_action(&self) -> Action {
        self.engine.borrow_mut().next_action(now_ms())
    }

    /// Runs the engine until it ends (or, in cron mode, yields). Runs once per session.
    pub async fn run(&self, delivery: &dyn Delivery) -> End {
        let Some(mut interrupts) = self.interrupts.take() else {
            return End::Yield; // not reached: `start()` runs the loop once, `pollStep` too
        };
        let _listener = match &self.signal {
            Some(signal) if signal.aborted() => {
                self.interrupter.send(Interrupt::Abort);
                None
            }
            Some(signal) => Some(self.interrupter.on_abort(signal)),
            None => None,
        };
        let mut io = Io::default();
        let mut retries = Retries::new(self.engine.borrow().config().retry.retries);
        loop {
            match interrupts.halt() {
                Some(Interrupt::Abort) => self.handle(Event::Abort),
                Some(_) => self.handle(Event::Stop),
                None => {}
            }
            match self.next_action() {
                Action::Fetch(request) => {
                    let fetched = self.fetch(request, &mut interrupts, &mut io, &mut retries);
                    if fetched.await {
                        delivery.retrying(&JsValue::NULL);
                    }
                }
                Action::Sleep { ms, reason } => {
                    // The engine has acted on the last response: its rows and body are let
                    // go rather than kept alive for the whole interval.
                    io = Io::default();
                    if let Some(retrying) = retries.sleeping(reason, ms) {
                        delivery.retrying(&retrying);
                    }
                    self.sleep(ms, &mut interrupts).await;
                }
                Action::Emit(batch) => {
                    let rows = io.rows(batch.start, batch.end);
                    let after = || self.engine.borrow().cursor_after_batch();
                    let handed = delivery.batch(rows, batch.offset, &after);
                    // stop() lets the consumer finish the batch in hand (nothing is sent
                    // meanwhile): it counts if taken; refused then, it stays before the cursor,
                    // quietly. An abort ends the wait at once, the batch unconfirmed.
                    match interrupts.until(Cut::Abort, handed).await {
                        Some(Ok(())) => self.handle(Event::BatchDone),
                        Some(Err(thrown)) if interrupts.halt().is_none() => {
                            self.cause.replace(Some(thrown));
                            self.handle(Event::BatchFailed);
                        }
                        _ => {}
                    }
                }
                Action::Status { run, paused_for_ms } => {
                    delivery.status(&run, paused_for_ms, &io.run)
                }
                Action::Yield => return End::Yield,
                Action::Complete(summary) => return End::Complete(summary),
                Action::Stopped(summary) => return End::Stopped(summary),
                Action::Fail(error) => return End::Fail(error),
                Action::Idle => interrupts.next().await,
            }
        }
    }

    /// Sends the engine's GET and tells it the outcome; a stop drops (aborts) the request.
    /// True when it answered well after retries.
    async fn fetch(
        &self,
        request: FetchRequest,
        interrupts: &mut Interrupts,
        io: &mut Io,
        retries: &mut Retries,
    ) -> bool {
        let (url, timeout_ms) = (&request.url, request.timeout_ms);
        let sent = fetch::send(&self.connection, "GET", url, None, timeout_ms);
        let Some(answer) = interrupts.until(Cut::Halt, Box::pin(sent)).await else {
            return false;
        };
        let row_key = self.connection.row_key.as_deref();
        let read = body::read(answer, request.kind, row_key);
        self.cause.replace(read.failure.clone());
        let outcome = io.keep(read);
        let recovered = retries.answered(&outcome);
        let id = request.id;
        self.handle(Event::Response { id, outcome });
        recovered
    }

    /// The engine's timer; cut short by an event, the engine decides what is left of it.
    async fn sleep(&self, ms: u32, interrupts: &mut Interrupts) {
        interrupts.forget_wakes();
        let timer = Box::pin(TimeoutFuture::new(ms));
        if interrupts.until(Cut::HaltOrWake, timer).await.is_some() {
            self.handle(Event::TimerFired);
        }
    }
}

/// The JS values of the last response that the engine's next actions refer to.
struct Io {
    rows: Option<Array>,
    run: JsValue,
}

impl Default for Io {
    fn default() -> Self {
        Io {
            rows: None,
            run: JsValue::UNDEFINED,
        }
    }
}

impl Io {
    /// Keeps the rows or run body of `read`; returns its outcome for the engine.
    fn keep(&mut self, read: body::Read) -> crate::api::Outcome {
        if let Some(rows) = read.rows {
            self.rows = Some(rows);
        }
        if let Some(run) = read.run {
            self.run = run;
        }
        read.outcome
    }

    /// `results[start..end]` of the latest results, a fresh array.
    fn rows(&self, start: usize, end: usize) -> Array {
        match &self.rows {
            Some(rows) => rows.slice(start as u32, end as u32),
            None => Array::new(),
        }
    }
}
