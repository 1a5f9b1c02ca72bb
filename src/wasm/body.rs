//! Parsed JSON bodies → the small metadata the engine reads ([`Page`], [`RunInfo`]).
//!
//! Rows stay JS values: only `results.length`, `paging` and (with `rowKey`) one key per row
//! are read, by key, from the parsed body.

use js_sys::{Array, Date, Reflect};
use wasm_bindgen::prelude::*;
use web_sys::Response;

use super::fetch::Answer;
use crate::api::{decimal, retry_hint, ErrorCode, MissingRows, Outcome, Page, RunInfo};
use crate::engine::RequestKind;

#[wasm_bindgen]
extern "C" {
    /// `String(value)`: how JS spells a value (row keys, option values in messages). It
    /// throws for a symbol.
    #[wasm_bindgen(catch, js_name = String)]
    pub fn js_string(value: &JsValue) -> Result<String, JsValue>;
}

/// An engine GET answered: the outcome, plus the JS values the glue keeps from it.
pub struct Read {
    /// What the engine is told.
    pub outcome: Outcome,
    /// The `results` array of a good results body.
    pub rows: Option<Array>,
    /// The parsed body of a good run body (it feeds `onStatus`).
    pub run: Option<JsValue>,
    /// What `fetch` threw or rejected with, when there was no response: the `cause` of the
    /// error it may lead to.
    pub failure: Option<JsValue>,
}

/// What `answer` to a request of `kind` tells the engine.
pub fn read(answer: Answer, kind: RequestKind, row_key: Option<&str>) -> Read {
    let (status, response, body) = match answer {
        Answer::Http {
            status,
            response,
            body,
        } => (status, response, body),
        Answer::Network(error) => return Read::failure(Outcome::Network, error),
        Answer::NotSent(error) => return Read::failure(Outcome::NotSent, error),
        Answer::Timeout => return failed(Outcome::Timeout),
    };
    if !(200..300).contains(&status) {
        let message = body.as_ref().ok().and_then(error_message);
        return failed(http_failure(status, &response, message));
    }
    let Ok(body) = body else {
        return failed(Outcome::BadBody("the body is not valid JSON".into()));
    };
    match kind {
        RequestKind::Results => results(&body, row_key),
        RequestKind::Run => match run_info(&body) {
            Ok(info) => Read {
                outcome: Outcome::Run(info),
                rows: None,
                run: Some(body),
                failure: None,
            },
            Err(why) => failed(why),
        },
    }
}

/// A non-2xx answer, its retry hint from `Retry-After` or `X-RateLimit-Reset` (read here only:
/// a 2xx has no retry to hint).
fn http_failure(status: u16, response: &Response, message: Option<String>) -> Outcome {
    let headers = response.headers();
    let header = |name: &str| headers.get(name).ok().flatten();
    let retry = retry_hint(
        header("Retry-After").as_deref(),
        header("X-RateLimit-Reset").as_deref(),
        parse_http_date,
    );
    Outcome::Http {
        status,
        retry,
        message,
    }
}

/// An HTTP date → ms since the Unix epoch, by JS `Date.parse` (which reads all three
/// formats of RFC 9110 §5.6.7); `None` when it cannot.
fn parse_http_date(text: &str) -> Option<u64> {
    let ms = Date::parse(text);
    (ms.is_finite() && ms >= 0.0).then_some(ms as u64)
}

fn failed(outcome: Outcome) -> Read {
    Read {
        outcome,
        rows: None,
        run: None,
        failure: None,
    }
}

impl Read {
    fn failure(outcome: Outcome, error: JsValue) -> Read {
        Read {
            failure: Some(error),
            ..failed(outcome)
        }
    }
}

/// A 2xx results body: `results` must be an array; no `paging` means a single page.
fn results(body: &JsValue, row_key: Option<&str>) -> Read {
    let Ok(rows) = field(body, "results").dyn_into::<Array>() else {
        return failed(bad("the results body has no `results` array"));
    };
    let paging = field(body, "paging");
    let len = rows.length() as usize;
    let page = Page {
        len,
        has_next_page: field(&paging, "have_next_page").as_bool() == Some(true),
        next: next_page(&field(&paging, "next")),
        keys: row_key.map(|key| row_keys(&rows, key)),
    };
    Read {
        outcome: Outcome::Results(page),
        rows: Some(rows),
        run: None,
        failure: None,
    }
}

/// `paging.next` as text: a URL, a path or a query string as given; a page number in decimal.
fn next_page(next: &JsValue) -> Option<String> {
    let number = next.as_f64().filter(|n| n.fract() == 0.0 && *n >= 0.0);
    match number {
        Some(page) => Some(decimal(page as u64)),
        None => next.as_string(),
    }
}

fn row_keys(rows: &Array, key: &str) -> Vec<String> {
    rows.iter()
        .map(|row| js_string(&field(&row, key)).unwrap_or_default())
        .collect()
}

/// A 2xx run body: `status` must be a string.
fn run_info(body: &JsValue) -> Result<RunInfo, Outcome> {
    let Some(status) = field(body, "status").as_string() else {
        return Err(bad("the run body has no `status` string"));
    };
    Ok(RunInfo {
        status,
        row_count: count(body, "row_count"),
        total_row_count: count(body, "total_row_count"),
        number_inputs: count(body, "number_inputs"),
        error_message: field(body, "error_message")
            .as_string()
            .filter(|text| !text.is_empty()),
        missing: missing_rows(body),
    })
}

/// `rows_missing` (the worker's, with `error_code` `ROWS_MISSING` or `ROWS_CAP_REACHED`): what
/// a run that ended lacks. Absent, `null`, or with another code: none. Read leniently (a batch
/// that is not a string is left out, a count that is not a number unknown): what matters is
/// that rows are missing, which the object and its code say.
fn missing_rows(body: &JsValue) -> Option<MissingRows> {
    let missing = field(body, "rows_missing");
    if !missing.is_object() {
        return None;
    }
    let code = ErrorCode::missing_rows(&field(body, "error_code").as_string()?)?;
    let batches: Vec<String> = match field(&missing, "batches").dyn_into::<Array>() {
        Ok(list) => list.iter().filter_map(|b| b.as_string()).collect(),
        Err(_) => Vec::new(),
    };
    Some(MissingRows {
        code,
        batch_count: count(&missing, "batch_count").unwrap_or(batches.len() as u64),
        count: count(&missing, "count"),
        batches,
    })
}

fn count(body: &JsValue, key: &str) -> Option<u64> {
    let n = field(body, key).as_f64()?;
    (n.is_finite() && n >= 0.0).then_some(n as u64)
}

/// The error text of a non-2xx body: `message` (v3), else `error_label` (v1/v4), else
/// `error`, when a string.
pub fn error_message(body: &JsValue) -> Option<String> {
    ["message", "error_label", "error"]
        .iter()
        .find_map(|key| field(body, key).as_string())
}

/// `target[key]`; `undefined` when `target` is not an object or the getter threw.
pub fn field(target: &JsValue, key: &str) -> JsValue {
    if !target.is_object() {
        return JsValue::UNDEFINED;
    }
    Reflect::get(target, &key.into()).unwrap_or(JsValue::UNDEFINED)
}

fn bad(why: &str) -> Outcome {
    Outcome::BadBody(why.into())
}
