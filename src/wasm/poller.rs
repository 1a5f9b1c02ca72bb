//! `JobPoller`: the wasm class around one [`Session`], handing rows and statuses to a JS
//! receiver (js/delivery.js), which calls the user's callbacks. The public `JobPoller` of
//! the package is the JS class of js/poller.js around this one.

use std::cell::RefCell;
use std::rc::Rc;

use futures_util::future::LocalBoxFuture;
use js_sys::{Array, Promise};
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::{future_to_promise, JsFuture};

use super::driver::{now_ms, Delivery, End, Session};
use super::errors::{config_error, poll_error};
use super::options::{budgets, common, Options};
use super::payloads::{frozen, run_status, Batch, Completion};
use super::webhook::webhook_event;
use crate::api::RunInfo;
use crate::engine::{validate_interval, Event, PollError, Poller};

#[wasm_bindgen]
extern "C" {
    /// Where a poller's batches and statuses go: a `Delivery` of js/delivery.js.
    pub type Receiver;
    /// Hands a batch over; returns `undefined` or a promise; throws what a consumer threw.
    #[wasm_bindgen(method, catch, js_name = batch)]
    fn take_batch(this: &Receiver, batch: &JsValue) -> Result<JsValue, JsValue>;
    /// The run's status or counts changed.
    #[wasm_bindgen(method, js_name = status)]
    fn take_status(this: &Receiver, run: &JsValue);
}

// Polls one Captain Data run and hands new rows to the receiver as they appear.
//
// The exported items are documented in index.d.ts, the JS API's reference, and use plain
// comments here: wasm-bindgen would copy doc comments into the generated JS that every user
// downloads.
#[allow(missing_docs)]
#[wasm_bindgen]
pub struct JobPoller {
    session: Rc<Session>,
    receiver: Rc<Receiver>,
    started: RefCell<Option<Promise>>,
}

impl Delivery for Receiver {
    fn batch(
        &self,
        rows: Array,
        offset: u64,
        cursor: &dyn Fn() -> String,
    ) -> LocalBoxFuture<'_, Result<(), JsValue>> {
        let batch = frozen(&Batch {
            results: rows.into(),
            offset: offset as f64,
            cursor: cursor(),
        });
        let taken = self.take_batch(&batch);
        Box::pin(async move {
            match taken? {
                pending if pending.is_undefined() => Ok(()),
                pending => JsFuture::from(Promise::from(pending)).await.map(drop),
            }
        })
    }

    fn status(&self, run: &RunInfo, paused_for_ms: Option<u64>, body: &JsValue) {
        self.take_status(&run_status(run, paused_for_ms, body));
    }

    fn retrying(&self, retrying: &JsValue) {
        self.take_status(retrying);
    }
}

#[allow(missing_docs)]
#[wasm_bindgen]
impl JobPoller {
    // Takes the options as js/options.js checked them; throws the `TypeError` of what the
    // engine refuses (`jobUid`, `baseUrl`, the interval, `cursor`). The callbacks are the
    // receiver's (js/delivery.js checks them).
    #[wasm_bindgen(constructor)]
    pub fn new(options: Options, receiver: Receiver) -> Result<JobPoller, JsValue> {
        let mut common = common(&options)?;
        let config = &mut common.config;
        config.interval_ms = options.uint("intervalMs").unwrap_or(config.interval_ms);
        validate_interval(config.interval_ms, config.base_url()).map_err(|e| config_error(&e))?;
        config.status_every = options.uint("statusEvery").unwrap_or(config.status_every);
        // `Infinity` pauses polling while the page is hidden.
        if let Some(hidden) = options.number("hiddenIntervalMs") {
            config.hidden_interval_ms = hidden.is_finite().then_some(hidden as u32);
        }
        budgets(&options, "maxDurationMs", config);
        let engine = Poller::new(common.config, common.cursor.as_deref(), now_ms())
            .map_err(|e| config_error(&e))?;
        let session = Session::new(engine, common.connection, common.signal);
        Ok(JobPoller {
            session: Rc::new(session),
            receiver: Rc::new(receiver),
            started: RefCell::new(None),
        })
    }

    // Starts polling (once). Resolves with the summary (`status: "stopped"` after stop()),
    // rejects with the terminal error.
    pub fn start(&self) -> Promise {
        let mut started = self.started.borrow_mut();
        let (session, receiver) = (self.session.clone(), self.receiver.clone());
        started
            .get_or_insert_with(|| {
                future_to_promise(async move {
                    let end = session.run(&*receiver).await;
                    finish(&session, end)
                })
            })
            .clone()
    }

    // Stops polling: cancels the timer and the request in flight; `start()` resolves with a
    // "stopped" summary. Idempotent.
    pub fn stop(&self) {
        self.session.stop();
    }

    // Resume token: the position after the last confirmed batch. Holds no secret.
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

    // Internal (js/page.js, js/tabs-shared.js): the page is hidden (for a poller shared by tabs:
    // every sharing tab is), or visible again. The engine decides what that changes (its pace).
    #[wasm_bindgen(js_name = _hidden)]
    pub fn page_hidden(&self, hidden: bool) {
        self.session.event(Event::Hidden(hidden));
    }

    // Internal (js/page.js): the runtime went offline, or online again.
    #[wasm_bindgen(js_name = _online)]
    pub fn online(&self, online: bool) {
        self.session.event(Event::Online(online));
    }

    // Internal: rows delivered so far, including before the cursor it started from (the tab
    // layer, js/tabs.js, takes shared rows from there on).
    #[wasm_bindgen(getter, js_name = _offset)]
    pub fn offset(&self) -> f64 {
        self.session.delivered() as f64
    }
}

/// The end of a poller's run: `start()`'s outcome.
fn finish(session: &Session, end: End) -> Result<JsValue, JsValue> {
    match end {
        End::Complete(summary) | End::Stopped(summary) => {
            Ok(frozen(&Completion::new(summary, session.cursor())))
        }
        End::Fail(error) => Err(terminal_error(&error, session)),
        End::Yield => Ok(JsValue::UNDEFINED), // only in cron mode (pollStep)
    }
}

/// The JS error for a terminal failure, with its `cause` (see [`Session::cause`]).
pub fn terminal_error(error: &PollError, session: &Session) -> JsValue {
    poll_error(error, session.cause(error.code))
}
