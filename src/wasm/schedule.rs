//! `scheduleWorkflow`: launch a run (`POST /workflows/{uid}/schedule`).
//!
//! Not retried: scheduling is not idempotent, and a retry after a lost answer could
//! launch the workflow twice.

use alloc::string::String;

use js_sys::{Promise, JSON};
use wasm_bindgen::prelude::*;

use super::body::{error_message, field};
use super::errors::{config_error, invalid_option, poll_error};
use super::fetch::{exchange, Exchange};
use super::options::{connection, signal, Connection, Reader, DEFAULT_BASE_URL};
use super::payloads::frozen;
use super::stop::StopSwitch;
use super::task::promise;
use crate::api::{classify_http, Disposition};
use crate::engine::{validate_base_url, validate_path_segment, ErrorCode, PollError};
use crate::text::{first_chars, push_decimal};

/// Schedules `workflowUid` with `body`; resolves with `{ jobUid, message, workflow }`.
#[wasm_bindgen(js_name = scheduleWorkflow)]
pub fn schedule_workflow(connection: JsValue, workflow_uid: JsValue, body: JsValue) -> Promise {
    match prepare(&connection, &workflow_uid, &body) {
        Ok(request) => promise(send(request)),
        Err(error) => Promise::reject(&error),
    }
}

struct Request {
    connection: Connection,
    stop: StopSwitch,
    url: String,
    body: String,
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
        stop: StopSwitch::new(signal(&options)?),
        url: base_url + "/workflows/" + &uid + "/schedule",
        body,
    })
}

async fn send(request: Request) -> Result<JsValue, JsValue> {
    let Request {
        connection,
        stop,
        url,
        body,
    } = request;
    stop.listen();
    let timeout_ms = connection.timeout_ms;
    let sent = exchange(&connection, "POST", &url, Some(&body), timeout_ms, &stop).await;
    stop.unlisten();
    let (status, body) = match sent {
        Exchange::Answer { status, body, .. } => (status, body.unwrap_or(JsValue::UNDEFINED)),
        Exchange::Network => {
            return Err(failure(
                ErrorCode::RetriesExhausted,
                "network error (scheduling is not retried)",
                None,
            ))
        }
        Exchange::Timeout => {
            return Err(failure(
                ErrorCode::Timeout,
                "no answer within timeoutMs",
                None,
            ))
        }
        Exchange::Stopped => {
            let error = error(ErrorCode::Aborted, "stopped by the signal", None);
            return Err(poll_error(&error, stop.abort_reason()));
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
    let mut text = String::from("HTTP ");
    push_decimal(&mut text, status.into());
    if let Some(message) = message {
        text.push_str(": ");
        text.push_str(first_chars(&message, 300));
    }
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
