//! What the glue hands to JS: batches, run status, summary, step results. Each is a
//! `Serialize` struct turned into a frozen plain object by serde-wasm-bindgen; JS values
//! (rows, fields copied from a body) pass through as they are (`preserve`).

use js_sys::Object;
use serde::Serialize;
use serde_wasm_bindgen::{preserve, Serializer};
use wasm_bindgen::{JsCast, JsValue};

use super::body::field;
use crate::api::RunInfo;
use crate::engine::Summary;

/// A frozen plain object from `value`; a missing optional field is `null`.
pub fn frozen<T: Serialize>(value: &T) -> JsValue {
    let serializer = Serializer::new().serialize_missing_as_null(true);
    let object = value.serialize(&serializer).unwrap_or(JsValue::NULL);
    if object.is_object() {
        Object::freeze(object.unchecked_ref::<Object>());
    }
    object
}

/// `onBatch`'s argument.
#[derive(Serialize)]
pub struct Batch {
    /// The new rows, a fresh JS array.
    #[serde(with = "preserve")]
    pub results: JsValue,
    /// Position of `results[0]` in the run.
    pub offset: f64,
    /// Resume token after this batch.
    pub cursor: String,
}

/// `onStatus`'s argument: the engine's reading plus descriptive fields of the run body.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RunStatus {
    status: String,
    row_count: Option<f64>,
    total_row_count: Option<f64>,
    number_inputs: Option<f64>,
    error_message: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    paused_for_ms: Option<f64>,
    #[serde(with = "preserve")]
    name: JsValue,
    #[serde(with = "preserve")]
    uid: JsValue,
    #[serde(with = "preserve")]
    workflow_uid: JsValue,
    #[serde(with = "preserve")]
    start_time: JsValue,
    #[serde(with = "preserve")]
    finish_time: JsValue,
}

impl RunStatus {
    /// From the engine's reading of `body`; `paused_for_ms` while the run is paused.
    pub fn new(info: &RunInfo, paused_for_ms: Option<u64>, body: &JsValue) -> RunStatus {
        let copy = |key: &str| match field(body, key) {
            value if value.is_undefined() => JsValue::NULL,
            value => value,
        };
        let number = |n: Option<u64>| n.map(|n| n as f64);
        RunStatus {
            status: info.status.clone(),
            row_count: number(info.row_count),
            total_row_count: number(info.total_row_count),
            number_inputs: number(info.number_inputs),
            error_message: info.error_message.clone(),
            paused_for_ms: number(paused_for_ms),
            name: copy("name"),
            uid: copy("uid"),
            workflow_uid: copy("workflow_uid"),
            start_time: copy("start_time"),
            finish_time: copy("finish_time"),
        }
    }
}

/// `onComplete`'s argument and `start()`'s value.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Completion {
    status: String,
    total_results: f64,
    requests: u32,
    retries: u32,
    duration_ms: f64,
    cursor: String,
}

impl Completion {
    /// The engine's summary and the final cursor.
    pub fn new(summary: Summary, cursor: String) -> Completion {
        Completion {
            status: summary.status,
            total_results: summary.total_results as f64,
            requests: summary.requests,
            retries: summary.retries,
            duration_ms: summary.duration_ms as f64,
            cursor,
        }
    }
}

/// `pollStep`'s value: the round's rows and where to continue.
#[cfg(feature = "step-and-schedule")]
#[derive(Serialize)]
pub struct StepResult {
    /// Every row this round delivered, in order.
    #[serde(with = "preserve")]
    pub results: JsValue,
    /// Where the next round starts.
    pub cursor: String,
    /// The last run status read (`"unknown"` before any).
    pub status: String,
    /// The run ended (completed or failed): no more rounds.
    pub done: bool,
    /// A terminal failure: a `CaptainDataError`.
    #[serde(with = "preserve", skip_serializing_if = "JsValue::is_undefined")]
    pub error: JsValue,
    /// Requests this round sent.
    pub requests: u32,
}

/// `scheduleWorkflow`'s value.
#[cfg(feature = "step-and-schedule")]
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Scheduled {
    /// The new run's uid.
    pub job_uid: String,
    /// The API's `message`.
    #[serde(with = "preserve")]
    pub message: JsValue,
    /// The API's `workflow`.
    #[serde(with = "preserve")]
    pub workflow: JsValue,
}
