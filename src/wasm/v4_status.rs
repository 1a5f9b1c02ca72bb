//! `classifyV4Status(status)`: the crate's v4 status classifier (`api::classify_v4_status`) for
//! JS, so the worker's v4 runs are classified by the same rules as everything else.

use serde::Serialize;
use wasm_bindgen::prelude::*;

use super::errors::type_error;
use super::payloads::frozen;
use crate::api::classify_v4_status;

/// What `classifyV4Status` returns (frozen).
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct V4Status {
    class: &'static str,
    v3_status: &'static str,
    error_code: Option<&'static str>,
}

// `{ class, v3Status, errorCode }` of a v4 run status: `class` is "active", "paused",
// "succeeded" or "failed"; `v3Status` what a v3 reader is shown; `errorCode` the final error of
// a failure. A status that is not a string is a TypeError.
#[allow(missing_docs)]
#[wasm_bindgen(js_name = classifyV4Status)]
pub fn classify_v4_status_js(status: &JsValue) -> Result<JsValue, JsValue> {
    let Some(text) = status.as_string() else {
        // js/options.js refuses it first, showing the value; this is for direct callers.
        return Err(type_error("Expected `status` to be a string"));
    };
    let seen = classify_v4_status(&text);
    Ok(frozen(&V4Status {
        class: seen.class.as_str(),
        v3_status: seen.v3_status,
        error_code: seen.error.map(|code| code.as_str()),
    }))
}
