//! JS options → the engine's [`Config`], the [`Connection`] the glue holds, and callbacks.
//!
//! The options object holds functions and an `AbortSignal`, so it is read by name through
//! the one typed getter of [`Options`] rather than deserialised (why: docs/size.md). Every option is checked up front;
//! a bad one is a `TypeError` naming it. The engine validates what it owns (`jobUid`,
//! `baseUrl`, the content of `cursor`).

use js_sys::{Function, Math, Object};
use wasm_bindgen::prelude::*;
use web_sys::{AbortSignal, Headers};

use super::errors::{config_error, invalid_option, type_error};
use super::fetch::Connection;
use crate::engine::{Config, ReadMode, RetryPolicy};

#[wasm_bindgen]
extern "C" {
    /// The options of `new JobPoller(options)`, `pollStep(options)` and the connection of
    /// `scheduleWorkflow`. A getter that throws makes the call throw that error.
    pub type Options;
    /// `options[name]`.
    #[wasm_bindgen(method, indexing_getter, catch)]
    pub fn get(this: &Options, name: &str) -> Result<JsValue, JsValue>;
}

/// The documented default `baseUrl`.
pub const DEFAULT_BASE_URL: &str = Config::DEFAULT_BASE_URL;
/// The longest delay `setTimeout` honours; longer ones fire at once in every runtime.
const MAX_TIMER_MS: f64 = 2_147_483_647.0;
const MAX_SAFE_INTEGER: f64 = 9_007_199_254_740_991.0;

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

/// `value` as an options object; `name` is how the error refers to it.
pub fn object<T: JsCast>(value: JsValue, name: &str) -> Result<T, JsValue> {
    if !value.is_object() || value.is_function() {
        return Err(invalid_option(name, "an object", &value));
    }
    Ok(value.unchecked_into())
}

/// An optional number of milliseconds in `1..=max` (fractions round up).
pub fn ms(name: &str, value: JsValue, default: u64, max: f64) -> Result<u64, JsValue> {
    if value.is_undefined() {
        return Ok(default);
    }
    match value.as_f64().filter(|&n| n > 0.0 && n <= max) {
        Some(n) => Ok(n.ceil() as u64),
        None => Err(invalid_option(
            name,
            "a positive number of milliseconds",
            &value,
        )),
    }
}

/// An optional timer delay: at most 2^31−1 ms.
pub fn timer_ms(name: &str, value: JsValue, default: u32) -> Result<u32, JsValue> {
    Ok(ms(name, value, default.into(), MAX_TIMER_MS)? as u32)
}

/// An optional integer in `min..=max` (`min` is 0 or 1).
fn integer(name: &str, value: JsValue, min: f64, max: f64) -> Result<Option<f64>, JsValue> {
    if value.is_undefined() {
        return Ok(None);
    }
    let fits = |n: &f64| n.fract() == 0.0 && *n >= min && *n <= max;
    match value.as_f64().filter(fits) {
        Some(n) => Ok(Some(n)),
        None if min > 0.0 => Err(invalid_option(name, "a positive integer", &value)),
        None => Err(invalid_option(name, "a non-negative integer", &value)),
    }
}

/// An optional non-empty string.
pub fn string(name: &str, value: JsValue) -> Result<Option<String>, JsValue> {
    match value.as_string() {
        Some(text) if !text.is_empty() => Ok(Some(text)),
        _ if value.is_undefined() => Ok(None),
        _ => Err(invalid_option(name, "a non-empty string", &value)),
    }
}

/// An optional function.
pub fn function(name: &str, value: JsValue) -> Result<Option<Function>, JsValue> {
    match value.dyn_into::<Function>() {
        Ok(function) => Ok(Some(function)),
        Err(value) if value.is_undefined() => Ok(None),
        Err(value) => Err(invalid_option(name, "a function", &value)),
    }
}

/// Reads the options `JobPoller` and `pollStep` share.
pub fn common(options: &Options) -> Result<Common, JsValue> {
    let job_uid = options.get("jobUid")?;
    let Some(job_uid) = job_uid.as_string() else {
        return Err(invalid_option("jobUid", "a non-empty string", &job_uid));
    };
    let base_url = string("baseUrl", options.get("baseUrl")?)?;
    let base_url = base_url.as_deref().unwrap_or(DEFAULT_BASE_URL);
    let mut config = Config::new(base_url, &job_uid).map_err(|e| config_error(&e))?;
    config.timeout_ms = timer_ms("timeoutMs", options.get("timeoutMs")?, config.timeout_ms)?;
    config.retry = retry(options.get("retry")?, config.retry)?;
    // Without a seed, every client draws its own, so jitter spreads clients started together.
    let seed = integer("seed", options.get("seed")?, 0.0, MAX_SAFE_INTEGER)?;
    config.seed = seed.unwrap_or_else(|| Math::random() * MAX_SAFE_INTEGER) as u64;
    config.read_mode = read_mode(options.get("readMode")?, config.read_mode)?;
    let row_key = string("rowKey", options.get("rowKey")?)?;
    config.dedupe = row_key.is_some();
    let cursor = options.get("cursor")?;
    let cursor = match cursor.as_string() {
        Some(text) => Some(text),
        None if cursor.is_undefined() => None,
        None => return Err(invalid_option("cursor", "a string", &cursor)),
    };
    let mut connection = connection(options)?;
    connection.row_key = row_key;
    Ok(Common {
        config,
        cursor,
        connection,
        signal: signal(options)?,
    })
}

/// `headers`, `apiKey`, `projectId` and `fetch`: how requests are sent.
pub fn connection(options: &Options) -> Result<Connection, JsValue> {
    Ok(Connection {
        headers: headers(options)?,
        fetch: function("fetch", options.get("fetch")?)?,
        row_key: None,
    })
}

/// The user's headers plus the credentials, checked (by `Headers`) and flattened.
fn headers(options: &Options) -> Result<Object, JsValue> {
    let extra = options.get("headers")?;
    let invalid = |_| invalid_option("headers", "an object of header names and values", &extra);
    let headers = match extra.is_undefined() {
        true => Headers::new(),
        // `new Headers(init)` takes an object, an array of pairs or another `Headers`.
        false if extra.is_object() => Headers::new_with_str_sequence_sequence(&extra),
        false => Err(JsValue::NULL),
    };
    let headers = headers.map_err(invalid)?;
    // Set after the user's headers: the documented credentials win over a stray copy.
    if let Some(key) = string("apiKey", options.get("apiKey")?)? {
        headers
            .set("Authorization", &["x-api-key ", &key].concat())
            // The value is never echoed: it is a secret.
            .map_err(|_| type_error("Expected `apiKey` to be a valid header value"))?;
    }
    if let Some(project) = string("projectId", options.get("projectId")?)? {
        headers
            .set("x-project-id", &project)
            .map_err(|_| invalid_option("projectId", "a valid header value", &project.into()))?;
    }
    Object::from_entries(&headers).map_err(invalid)
}

fn retry(value: JsValue, default: RetryPolicy) -> Result<RetryPolicy, JsValue> {
    if value.is_undefined() {
        return Ok(default);
    }
    let retry: Options = object(value, "retry")?;
    let retries = integer("retry.retries", retry.get("retries")?, 0.0, 1_000.0)?;
    let max_delay = retry.get("maxDelayMs")?;
    let policy = RetryPolicy {
        retries: retries.map_or(default.retries, |n| n as u32),
        min_delay_ms: timer_ms(
            "retry.minDelayMs",
            retry.get("minDelayMs")?,
            default.min_delay_ms,
        )?,
        max_delay_ms: timer_ms("retry.maxDelayMs", max_delay.clone(), default.max_delay_ms)?,
    };
    if policy.min_delay_ms > policy.max_delay_ms {
        let got = match max_delay.is_undefined() {
            true => f64::from(policy.max_delay_ms).into(),
            false => max_delay,
        };
        let expected = "at least `retry.minDelayMs`";
        return Err(invalid_option("retry.maxDelayMs", expected, &got));
    }
    Ok(policy)
}

/// `signal`, an `AbortSignal` if given.
pub fn signal(options: &Options) -> Result<Option<AbortSignal>, JsValue> {
    let value = options.get("signal")?;
    if value.is_undefined() {
        return Ok(None);
    }
    value
        .dyn_into::<AbortSignal>()
        .map(Some)
        .map_err(|value| invalid_option("signal", "an AbortSignal", &value))
}

/// The engine budgets: a duration (`maxDurationMs` or `deadlineMs`, named by `duration`; it
/// may exceed a timer's range) and `maxRequests`.
pub fn budgets(options: &Options, duration: &str, config: &mut Config) -> Result<(), JsValue> {
    let default = config
        .max_duration_ms
        .unwrap_or(Config::DEFAULT_MAX_DURATION_MS);
    let value = options.get(duration)?;
    config.max_duration_ms = Some(ms(duration, value, default, MAX_SAFE_INTEGER)?);
    let max_requests = options.get("maxRequests")?;
    if let Some(n) = integer("maxRequests", max_requests, 1.0, u32::MAX.into())? {
        config.max_requests = Some(n as u32);
    }
    Ok(())
}

/// `readMode`: `"status"` (read a page only when the run's status says it changed) or
/// `"every-tick"`.
fn read_mode(value: JsValue, default: ReadMode) -> Result<ReadMode, JsValue> {
    match value.as_string().as_deref() {
        _ if value.is_undefined() => Ok(default),
        Some("status") => Ok(ReadMode::StatusGuided),
        Some("every-tick") => Ok(ReadMode::EveryTick),
        _ => Err(invalid_option(
            "readMode",
            "\"status\" or \"every-tick\"",
            &value,
        )),
    }
}

/// `hiddenIntervalMs`: a delay, or `Infinity` to pause polling while the page is hidden.
pub fn hidden_interval(value: JsValue, default: Option<u32>) -> Result<Option<u32>, JsValue> {
    match value.as_f64() {
        _ if value.is_undefined() => Ok(default),
        Some(f64::INFINITY) => Ok(None),
        Some(n) if n > 0.0 && n <= MAX_TIMER_MS => Ok(Some(n.ceil() as u32)),
        _ => Err(invalid_option(
            "hiddenIntervalMs",
            "a positive number of milliseconds or Infinity",
            &value,
        )),
    }
}

/// `statusEvery`, a positive integer.
pub fn status_every(options: &Options, default: u32) -> Result<u32, JsValue> {
    let every = integer(
        "statusEvery",
        options.get("statusEvery")?,
        1.0,
        u32::MAX.into(),
    )?;
    Ok(every.map_or(default, |n| n as u32))
}
