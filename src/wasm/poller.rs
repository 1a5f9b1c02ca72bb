//! `JobPoller`: the JS class around one [`Driver`].

use alloc::rc::Rc;
use alloc::string::String;

use core::cell::RefCell;

use js_sys::{Function, Promise};
use wasm_bindgen::prelude::*;

use super::callbacks::Callbacks;
use super::driver::{now_ms, Driver, End, Mode};
use super::errors::{config_error, poll_error};
use super::options::{budgets, common, webhook_event, Reader};
use super::payloads::summary;
use super::stop::Signal;
use super::wake::Settle;
use crate::engine::{ErrorCode, PollError, Poller};

// Polls one Captain Data run and hands new rows to `onBatch` as they appear.
//
// The exported items are documented in index.d.ts, the JS API's reference, and use plain
// comments here: wasm-bindgen would copy doc comments (and JSDoc tags, hence `skip_jsdoc`)
// into the generated JS that every user downloads.
#[allow(missing_docs)]
#[wasm_bindgen]
pub struct JobPoller {
    driver: Rc<Driver>,
    started: RefCell<Option<Promise>>,
}

#[allow(missing_docs)]
#[wasm_bindgen]
impl JobPoller {
    // Validates the options; throws a `TypeError` naming the first bad one.
    #[wasm_bindgen(constructor, skip_jsdoc)]
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
        let mode = Mode::Poller {
            callbacks,
            sink: RefCell::new(None),
        };
        let signal = Signal::new(common.signal);
        Ok(JobPoller {
            driver: Rc::new(Driver::new(engine, common.connection, signal, mode)),
            started: RefCell::new(None),
        })
    }

    // Starts polling (once). Resolves with the summary, rejects with the terminal error.
    #[wasm_bindgen(skip_jsdoc)]
    pub fn start(&self) -> Promise {
        if let Some(started) = self.started.borrow().as_ref() {
            return started.clone();
        }
        let (promise, settle) = Settle::new();
        self.started.replace(Some(promise.clone()));
        self.driver.start(settle);
        promise
    }

    // Stops polling: cancels the timer and the request in flight; `start()` rejects with
    // `ABORTED`. Idempotent.
    #[wasm_bindgen(skip_jsdoc)]
    pub fn stop(&self) {
        self.driver.stop();
    }

    // Resume token: the position after the last delivered batch. Holds no secret.
    #[wasm_bindgen(getter, skip_jsdoc)]
    pub fn cursor(&self) -> String {
        self.driver.cursor()
    }

    // A relayed Captain Data webhook: stop polling, read the results once more, complete.
    #[wasm_bindgen(js_name = webhookReceived, skip_jsdoc)]
    pub fn webhook_received(&self, payload: JsValue) -> Result<(), JsValue> {
        let event = webhook_event(&payload, &self.driver.job_uid())?;
        self.driver.notify(event);
        Ok(())
    }

    // Internal: the async iterator (js/extras.js) receives each batch here too.
    #[wasm_bindgen(js_name = _setBatchSink, skip_jsdoc)]
    pub fn set_batch_sink(&self, sink: Function) {
        self.driver.set_sink(sink);
    }
}

/// The end of a poller's run: `onComplete` or `onError`, then `start()`'s outcome.
pub fn finish(driver: &Driver, callbacks: &Callbacks, end: End) -> Result<JsValue, JsValue> {
    match end {
        End::Complete(done) => {
            let done = summary(&done, driver.cursor());
            callbacks.notify("onComplete", &done);
            Ok(done)
        }
        End::Fail(error) => {
            let error = terminal_error(&error, driver);
            callbacks.notify("onError", &error);
            Err(error)
        }
        End::Yield => Ok(JsValue::UNDEFINED), // only in cron mode (pollStep)
    }
}

/// The JS error for a terminal failure; an abort by the signal carries `signal.reason`.
pub fn terminal_error(error: &PollError, driver: &Driver) -> JsValue {
    let cause = match error.code {
        ErrorCode::Aborted => driver.signal.reason(),
        _ => None,
    };
    poll_error(error, cause)
}
