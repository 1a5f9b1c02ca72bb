//! `pollStep`: one bounded round for a cron tick (Cloudflare Workers and the like).

use alloc::rc::Rc;

use js_sys::{Array, Promise};
use wasm_bindgen::prelude::*;

use super::bindings::call;
use super::driver::{now_ms, Driver, End, Mode};
use super::errors::config_error;
use super::options::{budgets, common, webhook_event, Reader};
use super::payloads::frozen;
use super::poller::terminal_error;
use super::stop::Signal;
use super::wake::Settle;
use crate::engine::Poller;

/// Default `maxRequests` of a step: the free Workers plan allows 50 subrequests.
const STEP_MAX_REQUESTS: u32 = 50;
/// Default `deadlineMs`: well inside a Worker's 30 s wall-clock limit.
const STEP_DEADLINE_MS: u64 = 25_000;

// One bounded round: resolves with `{ results, cursor, status, done, error?, requests }`.
// A terminal failure is in `error` (a `CaptainDataError`); only invalid options reject.
// Documented in index.d.ts (see `JobPoller` for why not here).
#[allow(missing_docs)]
#[wasm_bindgen(js_name = pollStep, skip_jsdoc)]
pub fn poll_step(options: JsValue) -> Promise {
    let (promise, settle) = Settle::new();
    match prepare(&options) {
        Ok(driver) => driver.start(settle),
        Err(error) => settle.settle(Err(error)),
    }
    promise
}

fn prepare(options: &JsValue) -> Result<Rc<Driver>, JsValue> {
    let options = Reader::new(options, "options")?;
    let mut common = common(&options)?;
    let config = &mut common.config;
    config.step_mode = true;
    config.max_requests = Some(STEP_MAX_REQUESTS);
    config.max_duration_ms = Some(STEP_DEADLINE_MS);
    budgets(&options, "deadlineMs", config)?;
    let webhook = options.get("webhook");
    let webhook = match webhook.is_undefined() || webhook.is_null() {
        true => None,
        false => Some(webhook_event(&webhook, config.job_uid())?),
    };
    let engine = Poller::new(common.config, common.cursor.as_deref(), now_ms())
        .map_err(|e| config_error(&e))?;
    let mode = Mode::Step(Array::new());
    let signal = Signal::new(common.signal);
    let driver = Rc::new(Driver::new(engine, common.connection, signal, mode));
    if let Some(event) = webhook {
        driver.notify(event);
    }
    Ok(driver)
}

/// The end of a round: `{ results, cursor, status, done, error?, requests }`.
pub fn finish(driver: &Driver, batches: &Array, end: End) -> Result<JsValue, JsValue> {
    let (done, status, error) = match end {
        End::Yield => (false, driver.last_status(), JsValue::UNDEFINED),
        End::Complete(summary) => (true, Some(summary.status), JsValue::UNDEFINED),
        End::Fail(e) => {
            let error = terminal_error(&e, driver);
            (true, e.run_status.or_else(|| driver.last_status()), error)
        }
    };
    Ok(frozen(&[
        (
            "results",
            call(batches, "flat", &JsValue::UNDEFINED, &JsValue::UNDEFINED).unwrap_or_default(),
        ),
        ("cursor", driver.cursor().into()),
        ("status", status.as_deref().unwrap_or("unknown").into()),
        ("done", done.into()),
        ("error", error),
        ("requests", driver.requests().into()),
    ]))
}
