//! The frozen objects handed to JS: batches, run status, summary, step results.

use alloc::string::String;

use js_sys::{Object, Reflect};
use wasm_bindgen::JsValue;

use super::bindings::get as field;
use crate::api::RunInfo;
use crate::engine::Summary;

/// A frozen plain object with these properties (`undefined` ones are left out).
pub fn frozen(entries: &[(&str, JsValue)]) -> JsValue {
    let object = Object::new();
    for (key, value) in entries.iter().filter(|(_, v)| !v.is_undefined()) {
        let _ = Reflect::set(&object, &(*key).into(), value);
    }
    Object::freeze(&object).into()
}

fn optional<T: Into<JsValue>>(value: Option<T>) -> JsValue {
    value.map_or(JsValue::NULL, Into::into)
}

fn number(n: u64) -> JsValue {
    (n as f64).into()
}

/// `onBatch`'s argument: `{ results, offset, cursor }`.
pub fn batch(rows: JsValue, offset: u64, cursor: String) -> JsValue {
    frozen(&[
        ("results", rows),
        ("offset", number(offset)),
        ("cursor", cursor.into()),
    ])
}

/// `onStatus`'s argument: the engine's reading plus descriptive fields of the run body.
pub fn run_status(info: &RunInfo, body: &JsValue) -> JsValue {
    let copy = |key: &str| {
        let value = field(body, key);
        if value.is_undefined() {
            JsValue::NULL
        } else {
            value
        }
    };
    frozen(&[
        ("status", info.status.as_str().into()),
        ("rowCount", optional(info.row_count.map(|n| n as f64))),
        (
            "totalRowCount",
            optional(info.total_row_count.map(|n| n as f64)),
        ),
        (
            "numberInputs",
            optional(info.number_inputs.map(|n| n as f64)),
        ),
        ("errorMessage", optional(info.error_message.as_deref())),
        ("name", copy("name")),
        ("uid", copy("uid")),
        ("workflowUid", copy("workflow_uid")),
        ("startTime", copy("start_time")),
        ("finishTime", copy("finish_time")),
    ])
}

/// `onComplete`'s argument and `start()`'s value.
pub fn summary(summary: &Summary, cursor: String) -> JsValue {
    frozen(&[
        ("status", summary.status.as_str().into()),
        ("totalResults", number(summary.total_results)),
        ("requests", summary.requests.into()),
        ("retries", summary.retries.into()),
        ("durationMs", number(summary.duration_ms)),
        ("cursor", cursor.into()),
    ])
}
