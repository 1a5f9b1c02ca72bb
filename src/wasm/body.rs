//! Parsed JSON bodies → the small metadata the engine reads ([`Page`], [`RunInfo`]).
//!
//! Rows stay JS values: only `results.length`, `paging` and (with `rowKey`) one key per
//! row are read.

use alloc::string::String;
use alloc::vec::Vec;

use js_sys::{Array, Reflect};
use wasm_bindgen::JsValue;

use super::bindings::{get as field, js_string};
use crate::api::{Outcome, Page, RunInfo};

/// A 2xx results body: `results` must be an array and `paging` an object.
pub fn results_outcome(body: &JsValue, row_key: Option<&str>) -> (Outcome, Option<JsValue>) {
    let rows = field(body, "results");
    if !Array::is_array(&rows) {
        return (bad("the results body has no `results` array"), None);
    }
    let paging = field(body, "paging");
    if !paging.is_object() {
        return (bad("the results body has no `paging` object"), None);
    }
    let len = field(&rows, "length").as_f64().unwrap_or(0.0) as usize;
    let page = Page {
        len,
        has_next_page: field(&paging, "have_next_page").as_bool() == Some(true),
        next: field(&paging, "next").as_string(),
        keys: row_key.map(|key| row_keys(&rows, len, key)),
    };
    (Outcome::Results(page), Some(rows))
}

fn row_keys(rows: &JsValue, len: usize, key: &str) -> Vec<String> {
    let row = |i: usize| Reflect::get(rows, &(i as f64).into()).unwrap_or_default();
    (0..len)
        .map(|i| js_string(&field(&row(i), key)).unwrap_or_default())
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
