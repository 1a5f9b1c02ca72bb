//! `JobPoller`: the JS class around one [`Session`], delivering to the user's callbacks.

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use futures_util::future::LocalBoxFuture;
use js_sys::{Array, Function, Promise};
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::future_to_promise;

use super::callbacks::Callbacks;
use super::driver::{now_ms, Delivery, End, Session};
use super::errors::{config_error, poll_error};
use super::options::{budgets, common, hidden_interval, object, status_every, timer_ms, Options};
use super::page;
use super::payloads::{frozen, Batch, Completion, RunStatus};
use super::webhook::webhook_event;
use crate::api::RunInfo;
use crate::engine::{ErrorCode, Event, PollError, Poller};

// Polls one Captain Data run and hands new rows to `onBatch` as they appear.
//
// The exported items are documented in index.d.ts, the JS API's reference, and use plain
// comments here: wasm-bindgen would copy doc comments into the generated JS that every user
// downloads.
#[allow(missing_docs)]
#[wasm_bindgen]
pub struct JobPoller {
    session: Rc<Session>,
    receivers: Rc<Receivers>,
    started: RefCell<Option<Promise>>,
    /// The tab layer tells the visibility (`_pace`): the page's own is not watched.
    paced: Cell<bool>,
}

/// Where a `JobPoller`'s batches and statuses go.
struct Receivers {
    callbacks: Callbacks,
    /// The async iterator's hand-off (set by js/extras.js).
    sink: RefCell<Option<Function>>,
}

impl Delivery for Receivers {
    fn batch(
        &self,
        rows: Array,
        offset: u64,
        cursor: &dyn Fn() -> String,
    ) -> LocalBoxFuture<'_, ()> {
        Box::pin(self.hand_over(rows, offset, cursor()))
    }

    fn status(&self, run: &RunInfo, paused_for_ms: Option<u64>, body: &JsValue) {
        let status = frozen(&RunStatus::new(run, paused_for_ms, body));
        let on_status = self.callbacks.on_status.as_ref();
        self.callbacks.notify(on_status, "onStatus", &status);
    }
}

impl Receivers {
    async fn hand_over(&self, rows: Array, offset: u64, cursor: String) {
        let batch = frozen(&Batch {
            results: rows.into(),
            offset: offset as f64,
            cursor,
        });
        let callbacks = &self.callbacks;
        let on_batch = callbacks.on_batch.as_ref();
        callbacks.call_and_wait(on_batch, "onBatch", &batch).await;
        let sink = self.sink.borrow().clone();
        callbacks
            .call_and_wait(sink.as_ref(), "iterator", &batch)
            .await;
    }
}

#[allow(missing_docs)]
#[wasm_bindgen]
impl JobPoller {
    // Validates the options; throws a `TypeError` naming the first bad one.
    #[wasm_bindgen(constructor)]
    pub fn new(options: JsValue) -> Result<JobPoller, JsValue> {
        let options: Options = object(options, "options")?;
        let mut common = common(&options)?;
        let config = &mut common.config;
        config.interval_ms =
            timer_ms("intervalMs", options.get("intervalMs")?, config.interval_ms)?;
        config.status_every = status_every(&options, config.status_every)?;
        let hidden = options.get("hiddenIntervalMs")?;
        config.hidden_interval_ms = hidden_interval(hidden, config.hidden_interval_ms)?;
        budgets(&options, "maxDurationMs", config)?;
        let callbacks = Callbacks::read(&options)?;
        let engine = Poller::new(common.config, common.cursor.as_deref(), now_ms())
            .map_err(|e| config_error(&e))?;
        let session = Session::new(engine, common.connection, common.signal);
        Ok(JobPoller {
            session: Rc::new(session),
            receivers: Rc::new(Receivers {
                callbacks,
                sink: RefCell::new(None),
            }),
            started: RefCell::new(None),
            paced: Cell::new(false),
        })
    }

    // Starts polling (once). Resolves with the summary, rejects with the terminal error.
    pub fn start(&self) -> Promise {
        let mut started = self.started.borrow_mut();
        let (session, receivers) = (self.session.clone(), self.receivers.clone());
        let visibility = !self.paced.get();
        started
            .get_or_insert_with(|| {
                future_to_promise(async move {
                    let _page = page::watch(&session, visibility);
                    let end = session.run(&*receivers).await;
                    finish(&session, &receivers.callbacks, end)
                })
            })
            .clone()
    }

    // Stops polling: cancels the timer and the request in flight; `start()` rejects with
    // `ABORTED`. Idempotent.
    pub fn stop(&self) {
        self.session.stop();
    }

    // Resume token: the position after the last delivered batch. Holds no secret.
    #[wasm_bindgen(getter)]
    pub fn cursor(&self) -> String {
        self.session.cursor()
    }

    // A relayed Captain Data webhook: a hint to read now; the API's own status decides the end.
    #[wasm_bindgen(js_name = webhookReceived)]
    pub fn webhook_received(&self, payload: JsValue) -> Result<(), JsValue> {
        let event = webhook_event(&payload, &self.session.job_uid(), "payload")?;
        self.session.event(event);
        Ok(())
    }

    // Internal: rows delivered so far, including before the cursor it started from (the tab
    // layer, js/tabs.js, takes shared rows from there on).
    #[wasm_bindgen(getter, js_name = _offset)]
    pub fn offset(&self) -> f64 {
        self.session.delivered() as f64
    }

    // Internal (js/tabs.js): hidden only when every tab sharing this poller is hidden; once
    // told, before start(), the poller no longer watches its own page's visibility.
    #[wasm_bindgen(js_name = _pace)]
    pub fn pace(&self, hidden: bool) {
        self.paced.set(true);
        self.session.event(Event::Hidden(hidden));
    }

    // Internal: the async iterator (js/extras.js) receives each batch here too.
    #[wasm_bindgen(js_name = _setBatchSink)]
    pub fn set_batch_sink(&self, sink: Function) {
        self.receivers.sink.replace(Some(sink));
    }
}

/// The end of a poller's run: `onComplete` or `onError`, then `start()`'s outcome.
fn finish(session: &Session, callbacks: &Callbacks, end: End) -> Result<JsValue, JsValue> {
    match end {
        End::Complete(summary) => {
            let done = frozen(&Completion::new(summary, session.cursor()));
            callbacks.notify(callbacks.on_complete.as_ref(), "onComplete", &done);
            Ok(done)
        }
        End::Fail(error) => {
            let error = terminal_error(&error, session);
            callbacks.notify(callbacks.on_error.as_ref(), "onError", &error);
            Err(error)
        }
        End::Yield => Ok(JsValue::UNDEFINED), // only in cron mode (pollStep)
    }
}

/// The JS error for a terminal failure; an abort by the signal carries `signal.reason`.
pub fn terminal_error(error: &PollError, session: &Session) -> JsValue {
    let cause = match error.code {
        ErrorCode::Aborted => session.abort_reason(),
        _ => None,
    };
    poll_error(error, cause)
}
