//! The checked options (js/options.js) → the engine's [`Config`], the [`Connection`] the glue
//! holds, and the user's signal.
//!
//! Every option is checked in JS, where a bad one is a `TypeError` naming it; the object the
//! glue gets holds checked values under the options' names (`retry` flattened into `retries`,
//! `minDelayMs`, `maxDelayMs`; `headers` with the credentials in them), so it is read here as
//! it is: checking in the wasm cost every page 2 KB (docs/size.md). The engine validates what
//! it owns: `jobUid`, `baseUrl`, the interval against it, the order of the retry delays, the
//! content of `cursor`.

use js_sys::Object;
use wasm_bindgen::prelude::*;
use web_sys::AbortSignal;

use super::errors::config_error;
use super::fetch::Connection;
use crate::engine::{validate_retry, Config, ReadMode};

#[wasm_bindgen]
extern "C" {
    /// The checked options of `JobPoller`, `pollStep` or `scheduleWorkflow` (js/options.js).
    pub type Options;
    /// `options[name]`.
    #[wasm_bindgen(method, indexing_getter)]
    fn get(this: &Options, name: &str) -> JsValue;
}

impl Options {
    /// A number option; `None` when not given.
    pub fn number(&self, name: &str) -> Option<f64> {
        self.get(name).as_f64()
    }

    /// A whole-number option (milliseconds, a count); `None` when not given.
    pub fn uint(&self, name: &str) -> Option<u32> {
        self.number(name).map(|n| n as u32)
    }

    /// A string option; `None` when not given.
    pub fn text(&self, name: &str) -> Option<String> {
        self.get(name).as_string()
    }

    /// An object or function option; `None` when not given.
    pub fn value<T: JsCast>(&self, name: &str) -> Option<T> {
        let value = self.get(name);
        (!value.is_undefined()).then(|| value.unchecked_into())
    }
}

/// Options shared by `JobPoller` and `pollStep`.
pub struct Common {
    /// The engine's configuration (defaults filled in).
    pub config: Config,
    /// Where to start.
    pub cursor: Option<String>,
    /// How to reach the API.
    pub connection: Connection,
    /// The user's signal.
    pub signal: Option<AbortSignal>,
}

/// The base URL the options give, or the documented default.
pub fn base_url(options: &Options) -> String {
    let base_url = options.text("baseUrl");
    base_url.unwrap_or_else(|| Config::DEFAULT_BASE_URL.into())
}

/// Reads the options `JobPoller` and `pollStep` share.
pub fn common(options: &Options) -> Result<Common, JsValue> {
    let job_uid = options.text("jobUid").unwrap_or_default();
    let mut config = Config::new(&base_url(options), &job_uid).map_err(|e| config_error(&e))?;
    config.timeout_ms = options.uint("timeoutMs").unwrap_or(config.timeout_ms);
    let retry = &mut config.retry;
    retry.retries = options.uint("retries").unwrap_or(retry.retries);
    retry.min_delay_ms = options.uint("minDelayMs").unwrap_or(retry.min_delay_ms);
    retry.max_delay_ms = options.uint("maxDelayMs").unwrap_or(retry.max_delay_ms);
    validate_retry(retry).map_err(|e| config_error(&e))?;
    config.seed = options.number("seed").unwrap_or_default() as u64;
    if options.text("readMode").as_deref() == Some("every-tick") {
        config.read_mode = ReadMode::EveryTick;
    }
    let mut connection = connection(options);
    connection.row_key = options.text("rowKey");
    config.dedupe = connection.row_key.is_some();
    Ok(Common {
        config,
        cursor: options.text("cursor"),
        connection,
        signal: options.value("signal"),
    })
}

/// `headers` (the credentials in them) and `fetch`: how requests are sent.
pub fn connection(options: &Options) -> Connection {
    Connection {
        headers: options.value::<Object>("headers").unwrap_or_default(),
        fetch: options.value("fetch"),
        row_key: None,
    }
}

/// The engine budgets: a duration (`maxDurationMs` or `deadlineMs`, named by `duration`; it
/// may exceed a timer's range) and `maxRequests`.
pub fn budgets(options: &Options, duration: &str, config: &mut Config) {
    if let Some(ms) = options.number(duration) {
        config.max_duration_ms = Some(ms as u64);
    }
    if let Some(n) = options.uint("maxRequests") {
        config.max_requests = Some(n);
    }
}
