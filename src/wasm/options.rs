//! JS options → engine [`Config`], the connection the glue holds, and callbacks.
//!
//! Every option is checked up front; a bad one is a `TypeError` naming it. The engine
//! validates what it owns (`jobUid`, `baseUrl`, the content of `cursor`).

use alloc::string::String;

use js_sys::{Function, Object, Reflect};
use wasm_bindgen::{JsCast, JsValue};

use super::bindings::{call, get, AbortSignal, Headers};
use super::errors::{config_error, invalid_option, type_error};
use crate::engine::{Config, Event, RetryPolicy};
use crate::text::concat;

/// The documented default `baseUrl`.
pub const DEFAULT_BASE_URL: &str = "https://api.captaindata.co/v3";
const MAX_TIMER_MS: f64 = 2_147_483_647.0;
const MAX_SAFE_INTEGER: f64 = 9_007_199_254_740_991.0;
const POSITIVE_MS: &str = "a positive number of milliseconds";

/// What the glue needs to talk to the API: headers (auth + user's), fetch, row keys.
pub struct Connection {
    /// Sent with every request; holds the API key, which goes nowhere else. A plain object of
    /// (lower-case) names and values: a `Headers` instance costs several times its memory,
    /// kept by every poller of a fleet for its whole life.
    pub headers: Object,
    /// The user's `fetch`, called with `this` undefined; the global one when absent.
    pub fetch: Option<Function>,
    /// `rowKey`: read `String(row[rowKey])` for the engine's de-duplication.
    pub row_key: Option<String>,
    /// Per-request timeout (also carried by each engine request).
    pub timeout_ms: u32,
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

/// Typed access to one JS options object.
pub struct Reader<'a> {
    object: &'a JsValue,
    /// Put before an option's name in errors: `retry.` for the members of `retry`.
    prefix: &'static str,
}

impl<'a> Reader<'a> {
    /// Checks that `value` is an object; `name` is how the error refers to it.
    pub fn new(value: &'a JsValue, name: &str) -> Result<Reader<'a>, JsValue> {
        if !value.is_object() || value.is_function() {
            return Err(invalid_option(name, "an object", value));
        }
        Ok(Reader {
            object: value,
            prefix: "",
        })
    }

    /// The raw value; `undefined` when absent (or a getter threw).
    pub fn get(&self, name: &str) -> JsValue {
        Reflect::get(self.object, &name.into()).unwrap_or(JsValue::UNDEFINED)
    }

    /// The option `name`, `None` when absent; `Err` (naming it) when `accept` refuses it.
    fn read<T>(
        &self,
        name: &str,
        expected: &str,
        accept: impl FnOnce(&JsValue) -> Option<T>,
    ) -> Result<Option<T>, JsValue> {
        let value = self.get(name);
        if value.is_undefined() {
            return Ok(None);
        }
        match accept(&value) {
            Some(ok) => Ok(Some(ok)),
            None => Err(invalid_option(
                &concat(&[self.prefix, name]),
                expected,
                &value,
            )),
        }
    }

    /// An optional number of milliseconds in `1..=max` (fractions round up).
    pub fn ms(&self, name: &str, default: u64, max: f64) -> Result<u64, JsValue> {
        let ms = self.read(name, POSITIVE_MS, |v| {
            v.as_f64().filter(|&n| n > 0.0 && n <= max)
        })?;
        Ok(ms.map_or(default, round_up))
    }

    /// An optional timer delay: at most 2^31−1 ms, the longest `setTimeout` honours.
    pub fn timer_ms(&self, name: &str, default: u32) -> Result<u32, JsValue> {
        Ok(self.ms(name, default.into(), MAX_TIMER_MS)? as u32)
    }

    /// An optional integer in `min..=max` (`min` is 0 or 1).
    pub fn integer(&self, name: &str, min: f64, max: f64) -> Result<Option<f64>, JsValue> {
        let expected = match min > 0.0 {
            true => "a positive integer",
            false => "a non-negative integer",
        };
        let fits = |n: &f64| is_integer(*n) && *n >= min && *n <= max;
        self.read(name, expected, |v| v.as_f64().filter(fits))
    }

    /// An optional non-empty string.
    pub fn string(&self, name: &str) -> Result<Option<String>, JsValue> {
        self.read(name, "a non-empty string", |v| {
            v.as_string().filter(|text| !text.is_empty())
        })
    }

    /// An optional function.
    pub fn function(&self, name: &str) -> Result<Option<Function>, JsValue> {
        self.read(name, "a function", |v| {
            v.is_function().then(|| v.clone().unchecked_into())
        })
    }
}

/// `n.ceil()` for `0 < n <= 2^53` (`f64::ceil` needs std).
fn round_up(n: f64) -> u64 {
    let whole = n as u64;
    whole + u64::from((whole as f64) < n)
}

/// `n.fract() == 0.0` for finite `|n| <= 2^53`; false for NaN and infinities (`fract` needs std).
fn is_integer(n: f64) -> bool {
    (n as i64) as f64 == n
}

/// Reads the options `JobPoller` and `pollStep` share.
pub fn common(options: &Reader) -> Result<Common, JsValue> {
    let job_uid = options.get("jobUid");
    let Some(job_uid) = job_uid.as_string() else {
        return Err(invalid_option("jobUid", "a non-empty string", &job_uid));
    };
    let base_url = options.string("baseUrl")?;
    let base_url = base_url.as_deref().unwrap_or(DEFAULT_BASE_URL);
    let mut config = Config::new(base_url, &job_uid).map_err(|e| config_error(&e))?;
    config.timeout_ms = options.timer_ms("timeoutMs", config.timeout_ms)?;
    config.retry = retry(options, config.retry)?;
    if let Some(seed) = options.integer("seed", 0.0, MAX_SAFE_INTEGER)? {
        config.seed = seed as u64;
    }
    let row_key = options.string("rowKey")?;
    config.dedupe = row_key.is_some();
    let cursor = options.get("cursor");
    let cursor = match cursor.as_string() {
        Some(text) => Some(text),
        None if cursor.is_undefined() => None,
        None => return Err(invalid_option("cursor", "a string", &cursor)),
    };
    let mut connection = connection(options, config.timeout_ms)?;
    connection.row_key = row_key;
    Ok(Common {
        config,
        cursor,
        connection,
        signal: signal(options)?,
    })
}

/// `headers`, `apiKey`, `projectId` and `fetch`: how requests are sent.
pub fn connection(options: &Reader, timeout_ms: u32) -> Result<Connection, JsValue> {
    Ok(Connection {
        headers: headers(options)?,
        fetch: options.function("fetch")?,
        row_key: None,
        timeout_ms,
    })
}

/// The user's headers plus the credentials, checked (by `Headers`) and flattened.
fn headers(options: &Reader) -> Result<Object, JsValue> {
    let extra = options.get("headers");
    let headers = if extra.is_undefined() {
        Headers::new(&JsValue::UNDEFINED)
    } else if extra.is_object() && !extra.is_function() {
        Headers::new(&extra)
    } else {
        Err(JsValue::NULL)
    };
    let invalid = |_| invalid_option("headers", "an object of header names and values", &extra);
    let headers = headers.map_err(invalid)?;
    // Set after the user's headers: the documented credentials win over a stray copy.
    if let Some(key) = options.string("apiKey")? {
        let value = String::from("x-api-key ") + &key;
        call(&headers, "set", &"Authorization".into(), &value.into()).map_err(invalid_api_key)?;
    }
    if let Some(project) = options.string("projectId")? {
        let project = JsValue::from(project);
        call(&headers, "set", &"x-project-id".into(), &project)
            .map_err(|_| invalid_option("projectId", "a valid header value", &project))?;
    }
    // `Object.fromEntries(headers)`, reached through a plain object's constructor: the
    // structural call costs no binding of its own (see bindings.rs).
    let object = get(&Object::new(), "constructor");
    let flat = call(&object, "fromEntries", &headers, &JsValue::UNDEFINED).map_err(invalid)?;
    Ok(flat.unchecked_into())
}

fn invalid_api_key(_: JsValue) -> JsValue {
    // The value is never echoed: it is a secret.
    type_error("Expected `apiKey` to be a valid header value")
}

fn retry(options: &Reader, default: RetryPolicy) -> Result<RetryPolicy, JsValue> {
    let value = options.get("retry");
    if value.is_undefined() {
        return Ok(default);
    }
    let retry = Reader {
        prefix: "retry.",
        ..Reader::new(&value, "retry")?
    };
    let retries = retry.integer("retries", 0.0, 1_000.0)?;
    let policy = RetryPolicy {
        retries: retries.map_or(default.retries, |n| n as u32),
        min_delay_ms: retry.timer_ms("minDelayMs", default.min_delay_ms)?,
        max_delay_ms: retry.timer_ms("maxDelayMs", default.max_delay_ms)?,
    };
    if policy.min_delay_ms > policy.max_delay_ms {
        let got = retry.get("maxDelayMs");
        let got = if got.is_undefined() {
            (policy.max_delay_ms as f64).into()
        } else {
            got
        };
        return Err(invalid_option(
            "retry.maxDelayMs",
            "at least `retry.minDelayMs`",
            &got,
        ));
    }
    Ok(policy)
}

/// `signal`, an `AbortSignal` if given.
pub fn signal(options: &Reader) -> Result<Option<AbortSignal>, JsValue> {
    let value = options.get("signal");
    if value.is_undefined() {
        return Ok(None);
    }
    value
        .dyn_into::<AbortSignal>()
        .map(Some)
        .map_err(|value| invalid_option("signal", "an AbortSignal", &value))
}

/// The engine budgets: `maxDurationMs` (may exceed a timer's range) and `maxRequests`.
pub fn budgets(options: &Reader, duration_name: &str, config: &mut Config) -> Result<(), JsValue> {
    let default = config.max_duration_ms.unwrap_or(21_600_000);
    config.max_duration_ms = Some(options.ms(duration_name, default, MAX_SAFE_INTEGER)?);
    if let Some(n) = options.integer("maxRequests", 1.0, u32::MAX.into())? {
        config.max_requests = Some(n as u32);
    }
    Ok(())
}

/// A relayed webhook as an engine event; a payload for another job is a `TypeError`.
pub fn webhook_event(payload: &JsValue, job_uid: &str) -> Result<Event, JsValue> {
    let payload = Reader::new(payload, "payload")?;
    let uid = payload.get("job_uid");
    if !uid.is_undefined() && !uid.is_null() && uid.as_string().as_deref() != Some(job_uid) {
        return Err(type_error(
            "The webhook payload's `job_uid` is not this poller's `jobUid`",
        ));
    }
    let message = payload.get("message").as_string().unwrap_or_default();
    let failed = message
        .trim()
        .to_ascii_lowercase()
        .starts_with("job failed")
        || payload.get("error").as_bool() == Some(true);
    Ok(Event::Webhook { failed })
}
