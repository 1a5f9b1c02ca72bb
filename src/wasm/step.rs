//! `pollStep`: one bounded round for a cron tick (Cloudflare Workers and the like), its
//! rows returned in the result.

use std::cell::RefCell;

use futures_util::future::{ready, LocalBoxFuture};
use js_sys::{Array, Promise};
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::future_to_promise;

use super::driver::{now_ms, Delivery, End, Session};
use super::errors::config_error;
use super::options::{budgets, common, Options};
use super::payloads::{frozen, missing, StepResult};
use super::poller::terminal_error;
use super::webhook::webhook_event;
use crate::api::RunInfo;
use crate::engine::Poller;

// One bounded round: resolves with `{ results, cursor, status, done, error?, requests }`.
// A failure is in `error` (a `CaptainDataError`); only invalid options reject. `done` means the
// run is over for good: completed, or a final error (`isFinalError`); after any other error the
// next step goes on from `cursor`. Documented in index.d.ts (see `JobPoller` for why not here).
#[allow(missing_docs)]
#[wasm_bindgen(js_name = pollStep)]
pub fn poll_step(options: Options) -> Promise {
    let session = match prepare(options) {
        Ok(session) => session,
        Err(error) => return Promise::reject(&error),
    };
    future_to_promise(async move {
        let round = Round::default();
        let end = session.run(&round).await;
        Ok(result(&session, round, end))
    })
}

/// The session of a round from the options js/options.js checked.
fn prepare(options: Options) -> Result<Session, JsValue> {
    let mut common = common(&options)?;
    let config = &mut common.config;
    config.set_step();
    budgets(&options, "deadlineMs", config);
    let webhook = match options.value::<JsValue>("webhook") {
        Some(payload) => Some(webhook_event(&payload, config.job_uid(), "webhook")?),
        None => None,
    };
    let engine = Poller::new(common.config, common.cursor.as_deref(), now_ms())
        .map_err(|e| config_error(&e))?;
    let session = Session::new(engine, common.connection, common.signal);
    if let Some(event) = webhook {
        session.event(event);
    }
    Ok(session)
}

/// What a round collects: its rows (an array per batch) and the last status read.
#[derive(Default)]
struct Round {
    batches: Array,
    status: RefCell<Option<String>>,
}

impl Round {
    /// Every row of the round, in order, in a fresh array: no batch is the (fresh, empty)
    /// array of batches, and a lone batch is one already (the usual round, which
    /// `Array.prototype.flat` would copy for nothing).
    fn results(self) -> Array {
        match self.batches.length() {
            0 => self.batches,
            1 => self.batches.get(0).unchecked_into(),
            _ => self.batches.flat(1),
        }
    }
}

impl Delivery for Round {
    fn batch(
        &self,
        rows: Array,
        _: u64,
        _: &dyn Fn() -> String,
    ) -> LocalBoxFuture<'_, Result<(), JsValue>> {
        self.batches.push(&rows);
        Box::pin(ready(Ok(())))
    }

    fn status(&self, run: &RunInfo, _paused_for_ms: Option<u64>, _body: &JsValue) {
        self.status.replace(Some(run.status.clone()));
    }
}

/// The end of a round: `{ results, cursor, status, done, error?, requests }`.
fn result(session: &Session, round: Round, end: End) -> JsValue {
    let last_status = round.status.take();
    let rows = round.results();
    let mut lacking = JsValue::UNDEFINED;
    let (done, status, error) = match end {
        // A step has no stop(): only its signal ends it early (ABORTED).
        End::Yield | End::Stopped(_) => (false, last_status, JsValue::UNDEFINED),
        // "incomplete" with `missing` too: the run is over, not failed.
        End::Complete(summary) => {
            lacking = missing(summary.missing);
            (true, Some(summary.status), JsValue::UNDEFINED)
        }
        // Only a final error ends the run for good; after a retryable one (retries or time ran
        // out, an unusable answer, …) a cron worker keeps its cursor and steps again later.
        End::Fail(e) => {
            let error = terminal_error(&e, session);
            (e.code.is_final(), e.run_status.or(last_status), error)
        }
    };
    frozen(&StepResult {
        results: rows.into(),
        cursor: session.cursor(),
        status: status.unwrap_or_else(|| "unknown".into()),
        done,
        error,
        requests: session.requests(),
        missing: lacking,
    })
}
