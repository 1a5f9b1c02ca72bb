//! The loop that drives the engine, one turn at a time.
//!
//! A turn asks the engine for actions and performs them until one has to wait for JS: a
//! response, a timer, a batch receiver's promise. The wait's callbacks re-enter through
//! [`Driver::wake`], which finishes the wait and takes the next turn. Each wait has a
//! number; `stop()`, the signal and a webhook cut a wait short by dropping it (which
//! clears its timer and aborts its request) and moving to the next number, so the
//! callbacks of the dropped wait are ignored when they come.
//!
//! The engine is only borrowed for pure Rust calls, never across a JS call, so
//! `webhookReceived()`, `stop()` or `cursor` from inside a callback cannot collide with it.

use alloc::rc::Rc;
use alloc::string::String;

use core::cell::{Cell, RefCell};

use js_sys::{Array, Date, Function, Reflect};
use wasm_bindgen::JsValue;

use super::bindings::{call, get};
use super::callbacks::{report, Callbacks};
use super::fetch::{fetched, Answer, Exchange};
use super::options::Connection;
use super::payloads::{batch, run_status};
use super::stop::Signal;
use super::timer::Timeout;
use super::wake::{Settle, Waiter, Waker, Woken};
use super::{poller, step};
use crate::api::Outcome;
use crate::engine::{Action, ErrorCode, Event, FetchRequest, PollError, Poller, Summary};

/// Who the loop works for.
pub enum Mode {
    /// A `JobPoller`: batches go to `onBatch` and the async iterator's sink, status to `onStatus`.
    Poller {
        /// The user's callbacks.
        callbacks: Callbacks,
        /// The async iterator's hand-off (set by js/extras.js).
        sink: RefCell<Option<Function>>,
    },
    /// `pollStep`: the round's batches of rows (an array of arrays), returned when it ends.
    Step(Array),
}

/// How the loop ended.
pub enum End {
    /// Cron mode: the round is over.
    Yield,
    /// Terminal success.
    Complete(Summary),
    /// Terminal failure.
    Fail(PollError),
}

/// What the loop is waiting for.
enum Wait {
    /// Nothing: a turn is running, or the loop has not started or is over.
    Nothing,
    /// The next turn, on the next microtask.
    Turn,
    /// The engine's request.
    Fetch(Exchange, FetchRequest),
    /// The engine's timer (dropping the guard clears it).
    Sleep { _timer: Timeout },
    /// A batch receiver's promise; `next` is the receiver after it.
    Deliver { batch: JsValue, next: usize },
    /// An event (a webhook); the engine has nothing to do until then.
    Idle,
}

/// One engine and the I/O state around it.
pub struct Driver {
    engine: RefCell<Poller>,
    connection: Connection,
    mode: Mode,
    /// The user's signal.
    pub signal: Signal,
    wait: RefCell<Wait>,
    /// Number of the current wait; callbacks of earlier ones are ignored.
    serial: Cell<u32>,
    /// `stop()` was called or the signal aborted.
    stopped: Cell<bool>,
    /// The engine was told.
    stop_sent: Cell<bool>,
    settle: RefCell<Option<Settle>>,
    rows: RefCell<JsValue>,
    run_body: RefCell<JsValue>,
}

/// Milliseconds since the Unix epoch, the engine's clock.
pub fn now_ms() -> u64 {
    Date::now() as u64
}

impl Driver {
    /// Wraps a ready engine.
    pub fn new(engine: Poller, connection: Connection, signal: Signal, mode: Mode) -> Driver {
        Driver {
            engine: RefCell::new(engine),
            connection,
            mode,
            signal,
            wait: RefCell::new(Wait::Nothing),
            serial: Cell::new(0),
            stopped: Cell::new(false),
            stop_sent: Cell::new(false),
            settle: RefCell::new(None),
            rows: RefCell::new(JsValue::UNDEFINED),
            run_body: RefCell::new(JsValue::UNDEFINED),
        }
    }

    /// Starts the loop (on the next microtask); `settle` gets its outcome.
    pub fn start(self: &Rc<Self>, settle: Settle) {
        self.settle.replace(Some(settle));
        let waker = self.waker();
        if !self.signal.listen(&waker) {
            self.stopped.set(true);
        }
        waker.on_settle(&JsValue::UNDEFINED);
        self.wait.replace(Wait::Turn);
    }

    /// Stops the loop: the current wait is dropped (its timer cleared, its request
    /// aborted) and the next turn ends with ABORTED. Idempotent.
    pub fn stop(self: &Rc<Self>) {
        if !self.stopped.replace(true) {
            self.interrupt();
        }
    }

    /// Feeds an outside event (a webhook); a sleep or idle wait is cut short so the
    /// engine can act on it.
    pub fn notify(self: &Rc<Self>, event: Event) {
        self.handle(event);
        if matches!(*self.wait.borrow(), Wait::Sleep { .. } | Wait::Idle) {
            self.interrupt();
        }
    }

    /// The async iterator's batch hand-off.
    pub fn set_sink(&self, sink: Function) {
        if let Mode::Poller { sink: slot, .. } = &self.mode {
            slot.replace(Some(sink));
        }
    }

    /// The resume token after the last delivered row.
    pub fn cursor(&self) -> String {
        self.engine.borrow().cursor()
    }

    /// Requests sent so far.
    pub fn requests(&self) -> u32 {
        self.engine.borrow().requests()
    }

    /// The job this driver polls.
    pub fn job_uid(&self) -> String {
        self.engine.borrow().config().job_uid().into()
    }

    /// `status` of the last run body read, if any.
    pub fn last_status(&self) -> Option<String> {
        get(&self.run_body.borrow(), "status").as_string()
    }

    fn handle(&self, event: Event) {
        self.engine.borrow_mut().handle(event, now_ms());
    }

    /// Callbacks for a new wait (the earlier waits' callbacks go stale).
    fn waker(self: &Rc<Self>) -> Waker {
        self.serial.set(self.serial.get().wrapping_add(1));
        Waker::new(self.clone(), self.serial.get())
    }

    /// Drops the current wait, if any, and takes a turn on the next microtask.
    fn interrupt(self: &Rc<Self>) {
        if matches!(*self.wait.borrow(), Wait::Nothing | Wait::Turn) {
            return; // a turn is running or due (it will see the change), or the loop is over
        }
        self.waker().on_settle(&JsValue::UNDEFINED);
        drop(self.wait.replace(Wait::Turn));
    }

    /// Performs actions until one has to wait.
    fn turn(self: &Rc<Self>) {
        loop {
            if self.stopped.get() && !self.stop_sent.replace(true) {
                self.handle(Event::Stop);
            }
            let action = self.engine.borrow_mut().next_action(now_ms());
            let wait = match action {
                Action::Fetch(request) => self.fetch(request),
                Action::Sleep { ms, .. } => {
                    self.release_bodies();
                    Some(Wait::Sleep {
                        _timer: self.waker().after(ms),
                    })
                }
                Action::Emit(batch) => self.emit(batch.start, batch.end, batch.offset),
                Action::Status(info) => {
                    if let Mode::Poller { callbacks, .. } = &self.mode {
                        callbacks.notify("onStatus", &run_status(&info, &self.run_body.borrow()));
                    }
                    None
                }
                Action::Yield if matches!(self.mode, Mode::Poller { .. }) => None,
                Action::Yield => return self.end(End::Yield),
                Action::Complete(summary) => return self.end(End::Complete(summary)),
                Action::Fail(error) => return self.end(End::Fail(error)),
                Action::Idle if self.stop_sent.get() => return self.end(End::Fail(aborted())),
                Action::Idle => Some(Wait::Idle),
            };
            if let Some(wait) = wait {
                // A stop from inside this turn (a callback, the user's fetch) drops the wait.
                if !self.stopped.get() {
                    self.wait.replace(wait);
                    return;
                }
            }
        }
    }

    /// Before a sleep: the engine has acted on the last response (its batches were handed
    /// over, its status reported), so its rows and run body are let go rather than kept
    /// alive for the whole interval; the next response brings new ones. `pollStep` keeps
    /// the run body: its result reports the last status read.
    fn release_bodies(&self) {
        self.rows.replace(JsValue::UNDEFINED);
        if let Mode::Poller { .. } = self.mode {
            self.run_body.replace(JsValue::UNDEFINED);
        }
    }

    /// Sends the engine's request; a request that cannot be sent is answered at once.
    fn fetch(self: &Rc<Self>, request: FetchRequest) -> Option<Wait> {
        let conn = &self.connection;
        let sent = Exchange::send(
            conn,
            "GET",
            &request.url,
            None,
            request.timeout_ms,
            &self.waker(),
        );
        match sent {
            Ok(exchange) => Some(Wait::Fetch(exchange, request)),
            Err(answer) => {
                self.respond(&request, answer);
                None
            }
        }
    }

    fn respond(&self, request: &FetchRequest, answer: Answer) {
        let fetched = fetched(&self.connection, request, answer);
        if let Some(rows) = fetched.rows {
            self.rows.replace(rows);
        }
        if let Outcome::Run(_) = fetched.outcome {
            self.run_body.replace(fetched.body);
        }
        self.handle(Event::Response {
            id: request.id,
            outcome: fetched.outcome,
        });
    }

    /// Hands `results[start..end]` of the latest results to the receivers.
    fn emit(self: &Rc<Self>, start: usize, end: usize, offset: u64) -> Option<Wait> {
        let (start, end) = ((start as f64).into(), (end as f64).into());
        let rows = call(&self.rows.borrow(), "slice", &start, &end).unwrap_or_default();
        match &self.mode {
            Mode::Poller { .. } => self.deliver(batch(rows, offset, self.cursor()), 0),
            Mode::Step(batches) => {
                let _ = Reflect::set(batches, &get(batches, "length"), &rows);
                self.handle(Event::BatchDone);
                None
            }
        }
    }

    /// Calls the batch receivers from `next` on (`onBatch`, then the iterator's sink),
    /// waiting for each one that returns a promise; then tells the engine, unless stopped.
    fn deliver(self: &Rc<Self>, batch: JsValue, next: usize) -> Option<Wait> {
        let Mode::Poller { callbacks, sink } = &self.mode else {
            return None;
        };
        for index in next..2 {
            let (receiver, name) = match index {
                0 => (callbacks.on_batch.clone(), "onBatch"),
                _ => (sink.borrow().clone(), "iterator"),
            };
            if let Some(pending) = callbacks.call(receiver.as_ref(), name, &batch) {
                self.waker().on_settle(&pending);
                let next = index + 1;
                return Some(Wait::Deliver { batch, next });
            }
        }
        if !self.stopped.get() {
            self.handle(Event::BatchDone);
        }
        None
    }

    /// The loop is over: the signal is let go, then the caller hears of it.
    fn end(&self, end: End) {
        self.signal.unlisten();
        let outcome = match &self.mode {
            Mode::Poller { callbacks, .. } => poller::finish(self, callbacks, end),
            Mode::Step(batches) => step::finish(self, batches, end),
        };
        if let Some(settle) = self.settle.take() {
            settle.settle(outcome);
        }
    }
}

impl Waiter for Driver {
    fn wake(self: Rc<Self>, wait: u32, woken: Woken, value: JsValue) {
        if woken == Woken::Abort {
            return self.stop();
        }
        if wait != self.serial.get() {
            return; // a callback of a wait cut short
        }
        let next = match self.wait.replace(Wait::Nothing) {
            Wait::Fetch(mut exchange, request) => {
                let waker = Waker::new(self.clone(), wait);
                let Some(answer) = exchange.advance(woken, value, &waker) else {
                    self.wait.replace(Wait::Fetch(exchange, request));
                    return;
                };
                drop(exchange);
                self.respond(&request, answer);
                None
            }
            Wait::Sleep { .. } => {
                self.handle(Event::TimerFired);
                None
            }
            Wait::Deliver { batch, next } => {
                if let (Woken::Rejected, Mode::Poller { callbacks, .. }) = (woken, &self.mode) {
                    let name = if next == 1 { "onBatch" } else { "iterator" };
                    report(callbacks.on_callback_error.as_ref(), &value, name);
                }
                self.deliver(batch, next)
            }
            Wait::Turn => None,
            // Late callbacks of a wait that ended without taking a new number (a request
            // that timed out, then rejected when aborted).
            other @ (Wait::Nothing | Wait::Idle) => {
                self.wait.replace(other);
                return;
            }
        };
        match next {
            Some(wait) if !self.stopped.get() => {
                self.wait.replace(wait);
            }
            _ => self.turn(),
        }
    }
}

/// The glue's own ABORTED, only if the engine went idle after being told to stop.
fn aborted() -> PollError {
    PollError {
        code: ErrorCode::Aborted,
        message: "The poller was stopped".into(),
        http_status: None,
        run_status: None,
    }
}
