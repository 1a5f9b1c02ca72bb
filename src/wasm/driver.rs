//! The loop that drives the engine: it performs fetches and sleeps itself and surfaces
//! what a caller must hand to JS (batches, status, the end) as [`Step`]s.
//!
//! The engine is only borrowed for pure Rust calls, never across an `await` or a JS call,
//! so `webhookReceived()` or `cursor` from inside a callback cannot collide with it.

use alloc::string::String;

use core::cell::{Cell, RefCell};

use js_sys::{Array, Date, Function, Promise};
use wasm_bindgen::JsValue;

use super::fetch::{get, Fetched};
use super::options::Connection;
use super::payloads::run_status;
use super::stop::{deferred, Settled, StopSwitch};
use super::timer::resolve_after;
use crate::api::Outcome;
use crate::engine::{Action, ErrorCode, Event, FetchRequest, PollError, Poller, Summary};

/// What the caller must deal with next.
pub enum Step {
    /// Deliver these rows (then call [`Driver::batch_done`]).
    Batch {
        /// A slice of the latest `results` array.
        rows: Array,
        /// Position of the first row in the run's results.
        offset: u64,
    },
    /// A frozen `onStatus` object.
    Status(JsValue),
    /// Cron mode: the round is over.
    Yield,
    /// Terminal success.
    Complete(Summary),
    /// Terminal failure.
    Fail(PollError),
}

/// One engine and the I/O state around it.
pub struct Driver {
    engine: RefCell<Poller>,
    connection: Connection,
    /// Flipped by `stop()` or the user's signal.
    pub stop: StopSwitch,
    stop_sent: Cell<bool>,
    /// Resolved to cut a sleep short when an event (webhook) arrives.
    nudge: RefCell<(Promise, Function)>,
    rows: RefCell<Array>,
    run_body: RefCell<JsValue>,
}

/// Milliseconds since the Unix epoch, the engine's clock.
pub fn now_ms() -> u64 {
    Date::now() as u64
}

impl Driver {
    /// Wraps a ready engine.
    pub fn new(engine: Poller, connection: Connection, stop: StopSwitch) -> Driver {
        Driver {
            engine: RefCell::new(engine),
            connection,
            stop,
            stop_sent: Cell::new(false),
            nudge: RefCell::new(deferred()),
            rows: RefCell::new(Array::new()),
            run_body: RefCell::new(JsValue::UNDEFINED),
        }
    }

    /// Performs fetches and sleeps until something needs the caller.
    pub async fn next(&self) -> Step {
        loop {
            if self.stop.is_stopped() && !self.stop_sent.replace(true) {
                self.handle(Event::Stop);
            }
            let action = self.engine.borrow_mut().next_action(now_ms());
            match action {
                Action::Fetch(request) => self.fetch(request).await,
                Action::Sleep { ms, .. } => self.sleep(ms).await,
                Action::Emit(batch) => {
                    let rows = self
                        .rows
                        .borrow()
                        .slice(batch.start as u32, batch.end as u32);
                    return Step::Batch {
                        rows,
                        offset: batch.offset,
                    };
                }
                Action::Status(info) => {
                    return Step::Status(run_status(&info, &self.run_body.borrow()));
                }
                Action::Yield => return Step::Yield,
                Action::Complete(summary) => return Step::Complete(summary),
                Action::Fail(error) => return Step::Fail(error),
                Action::Idle if self.stop_sent.get() => return Step::Fail(aborted()),
                Action::Idle => self.idle().await,
            }
        }
    }

    /// The rows of the last [`Step::Batch`] were delivered.
    pub fn batch_done(&self) {
        self.handle(Event::BatchDone);
    }

    /// Feeds an outside event (a webhook) and wakes a sleeping loop so the engine can act.
    pub fn notify(&self, event: Event) {
        self.handle(event);
        let (_, wake) = self.nudge.replace(deferred());
        let _ = wake.call0(&JsValue::UNDEFINED);
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
        super::body::field(&self.run_body.borrow(), "status").as_string()
    }

    fn handle(&self, event: Event) {
        self.engine.borrow_mut().handle(event, now_ms());
    }

    async fn fetch(&self, request: FetchRequest) {
        let Some(Fetched {
            outcome,
            rows,
            body,
        }) = get(&self.connection, &request, &self.stop).await
        else {
            return; // stopped: the next turn tells the engine
        };
        if let Some(rows) = rows {
            self.rows.replace(rows);
        }
        if let Outcome::Run(_) = outcome {
            self.run_body.replace(body);
        }
        self.handle(Event::Response {
            id: request.id,
            outcome,
        });
    }

    async fn sleep(&self, ms: u32) {
        let (timer, _guard) = resolve_after(ms, &JsValue::TRUE);
        let nudge = self.nudge.borrow().0.clone();
        if let Settled::Value(v) = self.stop.race(&[&timer, &nudge]).await {
            if v == JsValue::TRUE {
                self.handle(Event::TimerFired);
            }
        }
    }

    async fn idle(&self) {
        let nudge = self.nudge.borrow().0.clone();
        let _ = self.stop.race(&[&nudge]).await;
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
