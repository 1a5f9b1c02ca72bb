//! `scheduleWorkflow`: launch a run (`POST /workflows/{uid}/schedule`).
//!
//! Not retried: scheduling is not idempotent, and a retry after a lost answer could
//! launch the workflow twice.

use alloc::rc::Rc;
use alloc::string::String;

use core::cell::RefCell;

use js_sys::{Promise, JSON};
use wasm_bindgen::prelude::*;

use super::bindings::get as field;
use super::body::error_message;
use super::errors::{config_error, invalid_option, poll_error};
use super::fetch::{Answer, Exchange};
use super::options::{connection, signal, Connection, Reader, DEFAULT_BASE_URL};
use super::payloads::frozen;
use super::stop::Signal;
use super::wake::{Settle, Waiter, Waker, Woken};
use crate::api::{classify_http, http_error_text, Disposition};
use crate::engine::{validate_base_url, validate_path_segment, ErrorCode, PollError};

// Schedules `workflowUid` with `body`; resolves with `{ jobUid, message, workflow }`.
// Documented in index.d.ts (see `JobPoller` for why not here).
#[allow(missing_docs)]
#[wasm_bindgen(js_name = scheduleWorkflow, skip_jsdoc)]
pub fn schedule_workflow(connection: JsValue, workflow_uid: JsValue, body: JsValue) -> Promise {
    let (promise, settle) = Settle::new();
    match prepare(&connection, &workflow_uid, &body) {
        Ok(request) => send(request, settle),
        Err(error) => settle.settle(Err(error)),
    }
    promise
}

struct Request {
    connection: Connection,
    signal: Signal,
    url: String,
    body: String,
}

/// The request in flight and the promise `scheduleWorkflow` returned.
struct Scheduling {
    exchange: RefCell<Option<Exchange>>,
    signal: Signal,
    settle: Settle,
}

fn prepare(options: &JsValue, workflow_uid: &JsValue, body: &JsValue) -> Result<Request, JsValue> {
    let options = Reader::new(options, "connection")?;
    let uid = workflow_uid.as_string().unwrap_or_default();
    validate_path_segment("workflowUid", &uid).map_err(|e| config_error(&e))?;
    let base_url = options.string("baseUrl")?;
    let base_url = validate_base_url(base_url.as_deref().unwrap_or(DEFAULT_BASE_URL))
        .map_err(|e| config_error(&e))?;
    let timeout_ms = options.timer_ms("timeoutMs", 30_000)?;
    let text = JSON::stringify(body).ok().and_then(|t| t.as_string());
    let Some(body) = text.filter(|_| body.is_object()) else {
        return Err(invalid_option("body", "a JSON-serialisable object", body));
    };
    Ok(Request {
        connection: connection(&options, timeout_ms)?,
        signal: Signal::new(signal(&options)?),
        url: base_url + "/workflows/" + &uid + "/schedule",
        body,
    })
}

fn send(request: Request, settle: Settle) {
    let Request {
        connection,
        signal,
        url,
        body,
    } = request;
    let scheduling = Rc::new(Scheduling {
        exchange: RefCell::new(None),
        signal,
        settle,
    });
    let waker = Waker::new(scheduling.clone(), 0);
    // An aborted signal sends nothing.
    if !scheduling.signal.listen(&waker) {
        return scheduling.finish(Err(stopped(&scheduling.signal)));
    }
    let timeout_ms = connection.timeout_ms;
    match Exchange::send(&connection, "POST", &url, Some(&body), timeout_ms, &waker) {
        Ok(exchange) => drop(scheduling.exchange.replace(Some(exchange))),
        Err(answer) => scheduling.finish(outcome(answer)),
    }
}

impl Scheduling {
    fn finish(&self, outcome: Result<JsValue, JsValue>) {
        self.signal.unlisten();
        self.settle.settle(outcome);
    }
}

impl Waiter for Scheduling {
    fn wake(self: Rc<Self>, wait: u32, woken: Woken, value: JsValue) {
        let mut slot = self.exchange.borrow_mut();
        let Some(exchange) = slot.as_mut() else {
            return; // over
        };
        let answer = match woken {
            Woken::Abort => None,
            _ => match exchange.advance(woken, value, &Waker::new(self.clone(), wait)) {
                Some(answer) => Some(answer),
                None => return, // the body is being read
            },
        };
        // Dropping the exchange aborts the request (if still going) and clears its timeout.
        drop(slot.take());
        drop(slot);
        match answer {
            Some(answer) => self.finish(outcome(answer)),
            None => self.finish(Err(stopped(&self.signal))),
        }
    }
}

fn stopped(signal: &Signal) -> JsValue {
    let error = error(ErrorCode::Aborted, "stopped by the signal", None);
    poll_error(&error, signal.reason())
}

fn outcome(answer: Answer) -> Result<JsValue, JsValue> {
    let (status, body) = match answer {
        Answer::Http { status, body, .. } => (status, body.unwrap_or(JsValue::UNDEFINED)),
        Answer::Network => {
            return Err(failure(
                ErrorCode::RetriesExhausted,
                "network error (scheduling is not retried)",
                None,
            ))
        }
        Answer::Timeout => {
            return Err(failure(
                ErrorCode::Timeout,
                "no answer within timeoutMs",
                None,
            ))
        }
    };
    let message = error_message(&body);
    let code = match classify_http(status, message.as_deref()) {
        Disposition::Success => match field(&body, "job_uid").as_string() {
            Some(job_uid) => return Ok(scheduled(job_uid, &body)),
            None => ErrorCode::BadResponse,
        },
        // Not retried, see the module docs.
        Disposition::Retry => ErrorCode::RetriesExhausted,
        Disposition::Fail(code) => code,
    };
    let text = http_error_text(status, message.as_deref());
    Err(failure(code, &text, Some(status)))
}

fn scheduled(job_uid: String, body: &JsValue) -> JsValue {
    frozen(&[
        ("jobUid", job_uid.into()),
        ("message", field(body, "message")),
        ("workflow", field(body, "workflow")),
    ])
}

fn error(code: ErrorCode, message: &str, http_status: Option<u16>) -> PollError {
    PollError {
        code,
        message: message.into(),
        http_status,
        run_status: None,
    }
}

fn failure(code: ErrorCode, message: &str, http_status: Option<u16>) -> JsValue {
    poll_error(&error(code, message, http_status), None)
}
