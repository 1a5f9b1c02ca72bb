//! What the glue hands to JS: batches, summary, step results, each a `Serialize` struct
//! turned into a frozen plain object by serde-wasm-bindgen (JS values, the rows, pass through
//! as they are: `preserve`); and a status read, an array js/delivery.js shapes ([`run_status`]).

use js_sys::{Array, Object, Reflect};
use serde::Serialize;
use serde_wasm_bindgen::{preserve, Serializer};
use wasm_bindgen::{JsCast, JsValue};

use crate::api::{MissingRows, RunInfo};
use crate::engine::Summary;

/// A frozen plain object from `value`; a missing optional field is `null`.
pub fn frozen<T: Serialize>(value: &T) -> JsValue {
    let serializer = Serializer::new()
        .serialize_missing_as_null(true)
        .serialize_maps_as_objects(true);
    let object = AsMap { fields: value }
        .serialize(&serializer)
        .unwrap_or(JsValue::NULL);
    if object.is_object() {
        Object::freeze(object.unchecked_ref::<Object>());
    }
    object
}

/// `fields` serialised as a map (serde serialises a struct with a flattened field so) of the
/// same keys: serde-wasm-bindgen turns it into the same plain object. A struct's field names
/// would go through its cache of `&'static str` → `JsString` (a thread-local `HashMap`,
/// hashbrown and all: 1.6 KB gzip of every page's wasm), which pays off for thousands of
/// objects; the glue builds a few per poll.
#[derive(Serialize)]
struct AsMap<'a, T> {
    #[serde(flatten)]
    fields: &'a T,
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

/// What the receiver is told of a status read: `[status, rowCount, totalRowCount,
/// numberInputs, errorMessage, pausedForMs, body]` (`null` for what the API did not send;
/// `pausedForMs` while the run is paused). js/delivery.js shapes it into `onStatus`'s frozen
/// `RunStatus`, copying the descriptive fields from the body: every page downloads this code,
/// and a serialised struct cost it more (docs/size.md).
pub fn run_status(info: &RunInfo, paused_for_ms: Option<u64>, body: &JsValue) -> JsValue {
    let number = |n: Option<u64>| n.map_or(JsValue::NULL, |n| (n as f64).into());
    let text = info
        .error_message
        .as_deref()
        .map_or(JsValue::NULL, JsValue::from);
    array(&[
        info.status.as_str().into(),
        number(info.row_count),
        number(info.total_row_count),
        number(info.number_inputs),
        text,
        number(paused_for_ms),
        body.clone(),
    ])
}

/// A JS array of `values`, in order.
pub fn array(values: &[JsValue]) -> JsValue {
    let array = Array::new();
    for value in values {
        array.push(value);
    }
    array.into()
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
    /// Only with `status` `"incomplete"` (absent otherwise: the other summaries keep their shape).
    #[serde(with = "preserve", skip_serializing_if = "JsValue::is_undefined")]
    missing: JsValue,
}

/// `summary.missing` (frozen `{ code, batches, batchCount, count }`), or `undefined` for none:
/// built with js-sys, as a serialised sequence and option cost every page's wasm 3.5 KB gzip.
pub fn missing(missing: Option<MissingRows>) -> JsValue {
    let Some(missing) = missing else {
        return JsValue::UNDEFINED;
    };
    let batches = Array::new();
    for name in &missing.batches {
        batches.push(&JsValue::from(name.as_str()));
    }
    Object::freeze(&batches);
    let count = missing.count.map_or(JsValue::NULL, |n| (n as f64).into());
    let object = Object::new();
    let fields: [(&str, JsValue); 4] = [
        ("code", missing.code.as_str().into()),
        ("batches", batches.into()),
        ("batchCount", (missing.batch_count as f64).into()),
        ("count", count),
    ];
    for (key, value) in fields {
        _ = Reflect::set(&object, &key.into(), &value);
    }
    Object::freeze(&object).into()
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
            missing: missing(summary.missing),
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
    /// The run ended with rows known missing (`status` `"incomplete"`, `done`).
    #[serde(with = "preserve", skip_serializing_if = "JsValue::is_undefined")]
    pub missing: JsValue,
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
