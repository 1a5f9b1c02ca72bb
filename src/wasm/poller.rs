//! `JobPoller`: the JS class around one [`Driver`].

use alloc::string::String;

use alloc::rc::Rc;
use core::cell::RefCell;

use js_sys::{Function, Promise};
use wasm_bindgen::prelude::*;

use super::callbacks::Callbacks;
use super::driver::{now_ms, Driver, Step};
use super::errors::{config_error, poll_error};
use super::options::{budgets, common, webhook_event, Reader};
use super::payloads::{batch, summary};
use super::stop::StopSwitch;
use super::task::promise;
use crate::engine::{ErrorCode, PollError, Poller};

/// Polls one Captain Data run and hands new rows to `onBatch` as they appear.
///
/// See `index.d.ts` for every option and its default.
#[wasm_bindgen]
pub struct JobPoller {
    state: Rc<State>,
}

struct State {
    driver: Driver,
    callbacks: Callbacks,
    /// The async iterator's hand-off (set by js/extras.js).
    sink: RefCell<Option<Function>>,
    started: RefCell<Option<Promise>>,
}

#[wasm_bindgen]
impl JobPoller {
    /// Validates the options; throws a `TypeError` naming the first bad one.
    #[wasm_bindgen(constructor)]
    pub fn new(options: JsValue) -> Result<JobPoller, JsValue> {
        let options = Reader::new(&options, "options")?;
        let mut common = common(&options)?;
        let config = &mut common.config;
        config.interval_ms = options.timer_ms("intervalMs", config.interval_ms)?;
        if let Some(n) = options.integer("statusEvery", 1.0, u32::MAX.into())? {
            config.status_every = n as u32;
        }
        budgets(&options, "maxDurationMs", config)?;
        let callbacks = Callbacks::read(&options)?;
        let engine = Poller::new(common.config, common.cursor.as_deref(), now_ms())
            .map_err(|e| config_error(&e))?;
        let stop = StopSwitch::new(common.signal);
        let state = State {
            driver: Driver::new(engine, common.connection, stop),
            callbacks,
            sink: RefCell::new(None),
            started: RefCell::new(None),
        };
        Ok(JobPoller {
            state: Rc::new(state),
        })
    }

    /// Starts polling (once). Resolves with the summary, rejects with the terminal error.
    pub fn start(&self) -> Promise {
        if let Some(started) = self.state.started.borrow().as_ref() {
            return started.clone();
        }
        self.state.driver.stop.listen();
        let promise = promise(run(self.state.clone()));
        self.state.started.replace(Some(promise.clone()));
        promise
    }

    /// Stops polling: cancels the timer and the request in flight; `start()` rejects with
    /// `ABORTED`. Idempotent.
    pub fn stop(&self) {
        self.state.driver.stop.stop();
    }

    /// Resume token: the position after the last delivered batch. Holds no secret.
    #[wasm_bindgen(getter)]
    pub fn cursor(&self) -> String {
        self.state.driver.cursor()
    }

    /// A relayed Captain Data webhook: stop polling, read the results once more, complete.
    #[wasm_bindgen(js_name = webhookReceived)]
    pub fn webhook_received(&self, payload: JsValue) -> Result<(), JsValue> {
        let event = webhook_event(&payload, &self.state.driver.job_uid())?;
        self.state.driver.notify(event);
        Ok(())
    }

    /// Internal: the async iterator (js/extras.js) receives each batch here too.
    #[wasm_bindgen(js_name = _setBatchSink)]
    pub fn set_batch_sink(&self, sink: Function) {
        self.state.sink.replace(Some(sink));
    }
}

async fn run(state: Rc<State>) -> Result<JsValue, JsValue> {
    let driver = &state.driver;
    let outcome = loop {
        match driver.next().await {
            Step::Batch { rows, offset } => {
                let batch = batch(rows, offset, driver.cursor());
                let sink = state.sink.borrow().clone();
                if state
                    .callbacks
                    .deliver(&batch, sink.as_ref(), &driver.stop)
                    .await
                {
                    driver.batch_done();
                }
            }
            Step::Status(run) => state.callbacks.notify("onStatus", &run),
            Step::Complete(done) => break Ok(summary(&done, driver.cursor())),
            Step::Fail(error) => break Err(terminal_error(&error, &driver.stop)),
            Step::Yield => {} // only in cron mode (pollStep)
        }
    };
    driver.stop.unlisten();
    match &outcome {
        Ok(done) => state.callbacks.notify("onComplete", done),
        Err(error) => state.callbacks.notify("onError", error),
    }
    outcome
}

/// The JS error for a terminal failure; an abort by the signal carries `signal.reason`.
pub fn terminal_error(error: &PollError, stop: &StopSwitch) -> JsValue {
    let cause = match error.code {
        ErrorCode::Aborted => stop.abort_reason(),
        _ => None,
    };
    poll_error(error, cause)
}
