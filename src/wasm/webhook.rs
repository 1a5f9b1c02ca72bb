//! A raw Captain Data webhook payload → the crate's classification (`api::WebhookPayload`):
//! the engine's event for `webhookReceived` and `pollStep({ webhook })`, and `classifyWebhook`
//! for the worker. The payload is JSON metadata, read by key like the API's bodies (why not
//! serde: docs/size.md).

use wasm_bindgen::prelude::*;

use super::body::field;
use super::errors::type_error;
use crate::api::{Webhook, WebhookError, WebhookPayload, OTHER_RUN_TEXT};
use crate::engine::Event;

/// `payload` as an engine event; a payload for another job is a `TypeError`. `name` is how
/// the error refers to the payload (`payload`, or pollStep's option `webhook`).
pub fn webhook_event(payload: &JsValue, job_uid: &str, name: &str) -> Result<Event, JsValue> {
    classified(payload, Some(job_uid), name).map(Event::Webhook)
}

// Which event a raw webhook payload reports: "created", "succeeded", "failed" or "other".
// With `jobUid`, a payload naming another run is a TypeError.
#[allow(missing_docs)]
#[wasm_bindgen(js_name = classifyWebhook)]
pub fn classify_webhook(payload: &JsValue, job_uid: &JsValue) -> Result<JsValue, JsValue> {
    let hook = classified(payload, job_uid.as_string().as_deref(), "payload")?;
    Ok(JsValue::from_str(hook.kind.as_str()))
}

fn classified(payload: &JsValue, job_uid: Option<&str>, name: &str) -> Result<Webhook, JsValue> {
    // js/options.js refuses it first, showing the value; this is for direct callers.
    if !payload.is_object() {
        return Err(type_error(
            &["Expected `", name, "` to be an object"].concat(),
        ));
    }
    let uid = field(payload, "job_uid");
    if let Some(job_uid) = job_uid {
        if !uid.is_undefined() && !uid.is_null() && uid.as_string().as_deref() != Some(job_uid) {
            return Err(type_error(OTHER_RUN_TEXT));
        }
    }
    let text = |key: &str| field(payload, key).as_string();
    let (event, kind, message) = (text("event"), text("type"), text("message"));
    let error = field(payload, "error");
    let error_text = error.as_string();
    let error = match (error.as_bool(), error_text.as_deref()) {
        (Some(true), _) => WebhookError::Flag,
        (_, Some(text)) if !text.is_empty() => WebhookError::Text(text),
        _ => WebhookError::None,
    };
    Ok(WebhookPayload {
        event: event.as_deref(),
        kind: kind.as_deref(),
        message: message.as_deref(),
        error,
    }
    .classify())
}
