//! `scheduleWorkflow`: launch a run (`POST /workflows/{uid}/schedule`).
//!
//! Not retried: scheduling is not idempotent, and a retry after a lost answer could launch
//! the workflow twice.

use js_sys::Promise;
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::future_to_promise;

use super::body::{error_message, field};
use super::errors::{config_error, poll_error};
use super::fetch::{self, Answer, Connection};
use super::interrupt::{self, Cut};
use super::options::{base_url, connection, Options};
use super::payloads::{frozen, Scheduled};
use crate::api::{classify_schedule_failure, http_error_text, NO_RESPONSE_TEXT};
use crate::engine::{
    not_found_text, validate_base_url, validate_path_segment, Config, ErrorCode, PollError,
};

// Schedules `workflowUid` with `body` (JSON text); resolves with `{ jobUid, message, workflow }`.
// The connection and the body are checked by js/options.js. Documented in index.d.ts (see
// `JobPoller` for why not here).
#[allow(missing_docs)]
#[wasm_bindgen(js_name = scheduleWorkflow)]
pub fn schedule_workflow(connection: Options, workflow_uid: JsValue, body: String) -> Promise {
    future_to_promise(async move {
        let request = prepare(connection, &workflow_uid, body)?;
        send(request).await
    })
}

struct Request {
    connection: Connection,
    timeout_ms: u32,
    signal: Option<web_sys::AbortSignal>,
    base_url: String,
    url: String,
    body: String,
}

fn prepare(options: Options, workflow_uid: &JsValue, body: String) -> Result<Request, JsValue> {
    let uid = workflow_uid.as_string().unwrap_or_default();
    validate_path_segment("workflowUid", &uid).map_err(|e| config_error(&e))?;
    let base_url = validate_base_url(&base_url(&options)).map_err(|e| config_error(&e))?;
    let timeout_ms = options.uint("timeoutMs");
    Ok(Request {
        connection: connection(&options),
        timeout_ms: timeout_ms.unwrap_or(Config::DEFAULT_TIMEOUT_MS),
        signal: options.value("signal"),
        url: [&base_url, "/workflows/", &uid, "/schedule"].concat(),
        base_url,
        body,
    })
}

async fn send(request: Request) -> Result<JsValue, JsValue> {
    let (interrupter, mut interrupts) = interrupt::channel();
    let _listener = match &request.signal {
        Some(signal) if signal.aborted() => return Err(aborted(signal)),
        Some(signal) => Some(interrupter.on_abort(signal)),
        None => None,
    };
    let (conn, body) = (&request.connection, Some(request.body.as_str()));
    let sent = fetch::send(conn, "POST", &request.url, body, request.timeout_ms);
    match interrupts.until(Cut::Halt, Box::pin(sent)).await {
        Some(answer) => outcome(answer, &request),
        None => Err(request.signal.as_ref().map_or(JsValue::UNDEFINED, aborted)),
    }
}

fn aborted(signal: &web_sys::AbortSignal) -> JsValue {
    let error = PollError::aborted();
    poll_error(&error, Some(signal.reason()))
}

fn outcome(answer: Answer, request: &Request) -> Result<JsValue, JsValue> {
    let (status, body) = match answer {
        Answer::Http { status, body, .. } => (status, body.unwrap_or(JsValue::UNDEFINED)),
        Answer::Network(cause) | Answer::NotSent(cause) => {
            let text = [NO_RESPONSE_TEXT, "; scheduling is not retried"].concat();
            return Err(failure(ErrorCode::NetworkError, &text, None, Some(cause)));
        }
        Answer::Timeout => {
            let text = "no answer within timeoutMs; scheduling is not retried";
            return Err(failure(ErrorCode::Timeout, text, None, None));
        }
    };
    let message = error_message(&body);
    if (200..300).contains(&status) {
        if let Some(job_uid) = field(&body, "job_uid").as_string() {
            return Ok(scheduled(job_uid, &body));
        }
    }
    // Not retried, see the module docs: the code says what happened (a 429 is RATE_LIMITED).
    let code = classify_schedule_failure(Some(status), message.as_deref());
    let mut text = http_error_text(status, message.as_deref());
    if status == 404 {
        let (url, base) = (&request.url, &request.base_url);
        let origin = base
            .find("://")
            .and_then(|i| base[i + 3..].find('/').map(|j| i + 3 + j));
        let path = url.get(origin.unwrap_or(base.len())..).unwrap_or_default();
        text = not_found_text(&text, "POST", path, base);
    }
    Err(failure(code, &text, Some(status), None))
}

fn scheduled(job_uid: String, body: &JsValue) -> JsValue {
    frozen(&Scheduled {
        job_uid,
        message: field(body, "message"),
        workflow: field(body, "workflow"),
    })
}

fn failure(
    code: ErrorCode,
    message: &str,
    http_status: Option<u16>,
    cause: Option<JsValue>,
) -> JsValue {
    let error = PollError {
        code,
        message: message.into(),
        http_status,
        run_status: None,
    };
    poll_error(&error, cause)
}
