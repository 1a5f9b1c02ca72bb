//! The JS errors the glue throws or rejects with.

use alloc::string::String;

use js_sys::{Array, Error, Reflect, TypeError};
use wasm_bindgen::JsValue;

use super::bindings::js_string;
use crate::engine::{ConfigError, PollError};
use crate::scan;
use crate::text::{concat, first_chars};

/// `TypeError("Expected `option` to be <expected> (got <value>)")`.
pub fn invalid_option(option: &str, expected: &str, got: &JsValue) -> JsValue {
    let mut message = String::from("Expected `");
    message.push_str(option);
    message.push_str("` to be ");
    message.push_str(expected);
    message.push_str(" (got ");
    message.push_str(&describe(option, got));
    message.push(')');
    TypeError::new(&message).into()
}

/// The engine's validation failure as a `TypeError` naming the option.
pub fn config_error(error: &ConfigError) -> JsValue {
    let named = String::from("`") + error.option + "`";
    if scan::find(&error.message, &named).is_some() {
        return TypeError::new(&error.message).into();
    }
    TypeError::new(&(String::from("Invalid ") + &named + ": " + &error.message)).into()
}

/// A plain `TypeError` (wrong webhook payload and the like).
pub fn type_error(message: &str) -> JsValue {
    TypeError::new(message).into()
}

/// A terminal error: `Error` named `CaptainDataError` with `code`, `status`, `runStatus`
/// and, when a signal aborted the run, `cause = signal.reason`.
pub fn poll_error(error: &PollError, cause: Option<JsValue>) -> JsValue {
    let js = Error::new(&error.message);
    set(&js, "name", &"CaptainDataError".into());
    set(&js, "code", &error.code.as_str().into());
    if let Some(status) = error.http_status {
        set(&js, "status", &status.into());
    }
    if let Some(run_status) = &error.run_status {
        set(&js, "runStatus", &run_status.into());
    }
    if let Some(cause) = cause {
        set(&js, "cause", &cause);
    }
    js.into()
}

fn set(target: &JsValue, key: &str, value: &JsValue) {
    let _ = Reflect::set(target, &key.into(), value);
}

/// How a bad value is shown in a message; secrets are shown by type only.
fn describe(option: &str, value: &JsValue) -> String {
    if value.is_function() {
        return "a function".into();
    }
    if Array::is_array(value) {
        return "an array".into();
    }
    if value.is_object() {
        return "an object".into();
    }
    if option == "apiKey" {
        return value.js_typeof().as_string().unwrap_or_default();
    }
    if let Some(text) = value.as_string() {
        return concat(&["\"", first_chars(&text, 40), "\""]);
    }
    js_string(value).unwrap_or_default()
}
