//! The table of webhook forms (tests/webhook-forms.json) against the crate's classifier. The
//! fields are read as the wasm glue reads them (src/wasm/webhook.rs): strings only, and
//! `error` as `true`, a non-empty string, or nothing.
#![cfg(not(target_arch = "wasm32"))]

use captaindata_poller::api::{WebhookError, WebhookKind, WebhookPayload};
use serde_json::Value;

fn kind_named(name: &str) -> WebhookKind {
    match name {
        "created" => WebhookKind::Created,
        "succeeded" => WebhookKind::Succeeded,
        "failed" => WebhookKind::Failed,
        _ => WebhookKind::Other,
    }
}

#[test]
fn every_form_of_the_table() {
    let table: Value = serde_json::from_str(include_str!("webhook-forms.json")).unwrap();
    let forms = table["forms"].as_array().unwrap();
    assert!(forms.len() >= 15);
    for form in forms {
        let payload = &form["payload"];
        let text = |key: &str| payload[key].as_str();
        let error = match &payload["error"] {
            Value::Bool(true) => WebhookError::Flag,
            Value::String(s) if !s.is_empty() => WebhookError::Text(s),
            _ => WebhookError::None,
        };
        let hook = WebhookPayload {
            event: text("event"),
            kind: text("type"),
            message: text("message"),
            error,
        }
        .classify();
        let name = form["name"].as_str().unwrap();
        assert_eq!(
            hook.kind,
            kind_named(form["kind"].as_str().unwrap()),
            "{name}"
        );
        assert_eq!(hook.error.as_deref(), form["error"].as_str(), "{name}");
        assert_eq!(hook.kind.as_str(), form["kind"].as_str().unwrap(), "{name}");
    }
}
