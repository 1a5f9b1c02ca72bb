//! Parsed JSON bodies → the small metadata the engine reads ([`Page`], [`RunInfo`]).
//!
//! Rows stay JS values: only `results.length`, `paging` and (with `rowKey`) one key per
//! row are read.

use alloc::string::String;
use alloc::vec::Vec;

use js_sys::{Array, Reflect};
use wasm_bindgen::{JsCast, JsValue};

use super::bindings::js_string;
use crate::api::{Outcome, Page, RunInfo};

/// `body[key]`, `undefined` when `body` is not an object.
pub fn field(body: &JsValue, key: &str) -> JsValue {
    if !body.is_object() {
        return JsValue::UNDEFINED;
    }
    Reflect::get(body, &key.into()).unwrap_or(JsValue::UNDEFINED)
}

/// A 2xx results body: `results` must be an array and `paging` an object.
pub fn results_outcome(body: &JsValue, row_key: Option<&str>) -> (Outcome, Option<Array>) {
    let Ok(rows) = field(body, "results").dyn_into::<Array>() else {
        return (bad("the results body has no `results` array"), None);
    };
    let paging = field(body, "paging");
    if !paging.is_object() {
        return (bad("the results body has no `paging` object"), None);
    }
    let page = Page {
        len: rows.length() as usize,
        has_next_page: field(&paging, "have_next_page").as_bool() == Some(true),
        next: field(&paging, "next").as_string(),
        keys: row_key.map(|key| row_keys(&rows, key)),
    };
    (Outcome::Results(page), Some(rows))
}

fn row_keys(rows: &Array, key: &str) -> Vec<String> {
    rows.iter()
        .map(|row| js_string(&field(&row, key)).unwrap_or_default())
        .collect()
}

/// A 2xx run body: `status` must be a string.
pub fn run_outcome(body: &JsValue) -> Outcome {
    let Some(status) = field(body, "status").as_string() else {
        return bad("the run body has no `status` string");
    };
    Outcome::Run(RunInfo {
        status,
        row_count: count(body, "row_count"),
        total_row_count: count(body, "total_row_count"),
        number_inputs: count(body, "number_inputs"),
        error_message: field(body, "error_message")
            .as_string()
            .filter(|text| !text.is_empty()),
    })
}

fn count(body: &JsValue, key: &str) -> Option<u64> {
    let n = field(body, key).as_f64()?;
    (n.is_finite() && n >= 0.0).then_some(n as u64)
}

/// The error text of a non-2xx body: its `message`, else its `error`, when a string.
pub fn error_message(body: &JsValue) -> Option<String> {
    field(body, "message")
        .as_string()
        .or_else(|| field(body, "error").as_string())
}

fn bad(why: &str) -> Outcome {
    Outcome::BadBody(why.into())
}
