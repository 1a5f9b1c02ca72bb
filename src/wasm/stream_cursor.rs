//! The engine's cursors for the push client (js/push.js), which gets rows from the worker's
//! stream by offset: never re-implemented in JS. In the whole module only: a page that polls
//! never loads them.

use wasm_bindgen::prelude::*;

use super::errors::config_error;
use crate::engine::Config;

fn config(base_url: &str, job_uid: &str) -> Result<Config, JsValue> {
    Config::new(base_url, job_uid).map_err(|e| config_error(&e))
}

// The resume token after the first `offset` rows of the run, served by the worker in fixed
// pages of `pageSize` rows.
#[allow(missing_docs)]
#[wasm_bindgen(js_name = streamCursor)]
pub fn stream_cursor(
    base_url: &str,
    job_uid: &str,
    offset: f64,
    page_size: f64,
) -> Result<String, JsValue> {
    // Offsets and page sizes come from the worker's frames, checked as integers by the client.
    Ok(config(base_url, job_uid)?.cursor_at(offset as u64, page_size as u64))
}

// Rows delivered before `cursor` (of this run): where the stream resumes.
#[allow(missing_docs)]
#[wasm_bindgen(js_name = cursorOffset)]
pub fn cursor_offset(base_url: &str, job_uid: &str, cursor: &str) -> Result<f64, JsValue> {
    let offset = config(base_url, job_uid)?
        .cursor_offset(cursor)
        .map_err(|e| config_error(&e))?;
    Ok(offset as f64)
}
