//! A relayed Captain Data webhook → the engine's event. The payload is JSON metadata, read
//! by key like the API's bodies (why not serde: docs/size.md).

use wasm_bindgen::JsValue;

use super::body::field;
use super::errors::{invalid_option, type_error};
use crate::api::classify_webhook;
use crate::engine::Event;

/// `payload` as an engine event; a payload for another job is a `TypeError`. `name` is how
/// the error refers to the payload (`payload`, or pollStep's option `webhook`).
pub fn webhook_event(payload: &JsValue, job_uid: &str, name: &str) -> Result<Event, JsValue> {
    if !payload.is_object() || payload.is_function() {
        return Err(invalid_option(name, "an object", payload));
    }
    let text = |key: &str| field(payload, key).as_string();
    let uid = field(payload, "job_uid");
    if !uid.is_undefined() && !uid.is_null() && uid.as_string().as_deref() != Some(job_uid) {
        return Err(type_error(
            "The webhook payload's `job_uid` is not this poller's `jobUid`",
        ));
    }
    let event = text("event").or_else(|| text("type"));
    let webhook = classify_webhook(
        text("message").as_deref(),
        text("error").as_deref(),
        event.as_deref(),
    );
    Ok(Event::Webhook(webhook))
}
