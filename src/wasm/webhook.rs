//! A relayed Captain Data webhook → the engine's event.

use wasm_bindgen::JsValue;

use super::body::field;
use super::errors::{invalid_option, type_error};
use crate::engine::Event;

struct Payload {
    job_uid: Option<String>,
    message: Option<String>,
    error: JsValue,
}

/// `payload` as an engine event; a payload for another job is a `TypeError`.
pub fn webhook_event(payload: &JsValue, job_uid: &str) -> Result<Event, JsValue> {
    if !payload.is_object() || payload.is_function() {
        return Err(invalid_option("payload", "an object", payload));
    }
    let payload = Payload { job_uid: field(payload, "job_uid").as_string(), message: field(payload, "message").as_string(), error: field(payload, "error") };
    if payload.job_uid.as_deref().is_some_and(|uid| uid != job_uid) {
        return Err(type_error(
            "The webhook payload's `job_uid` is not this poller's `jobUid`",
        ));
    }
    let message = payload.message.unwrap_or_default();
    let failed = message
        .trim()
        .to_ascii_lowercase()
        .starts_with("job failed")
        || payload.error.as_bool() == Some(true);
    Ok(Event::Webhook { failed })
}
