//! The JS errors the glue throws or rejects with.

use js_sys::{Error, Object, Reflect, TypeError};
use serde::Serialize;
use wasm_bindgen::{JsCast, JsValue};

use super::payloads::frozen;
use crate::engine::{ConfigError, PollError};

/// The engine's validation failure as a `TypeError`: its message, worded by the engine
/// ("Expected \`option\` to be …", naming the option), as it is.
pub fn config_error(error: &ConfigError) -> JsValue {
    type_error(&error.message)
}

/// A plain `TypeError` (wrong webhook payload and the like).
pub fn type_error(message: &str) -> JsValue {
    TypeError::new(message).into()
}

/// The fields a `CaptainDataError` carries besides its message.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ErrorFields<'a> {
    name: &'static str,
    code: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    status: Option<u16>,
    #[serde(skip_serializing_if = "Option::is_none")]
    run_status: Option<&'a str>,
}

/// A terminal error: an `Error` named `CaptainDataError` with `code`, `status`, `runStatus`
/// and, when a signal aborted the run, `cause = signal.reason`.
pub fn poll_error(error: &PollError, cause: Option<JsValue>) -> JsValue {
    let js = Error::new(&error.message);
    let fields = ErrorFields {
        name: "CaptainDataError",
        code: error.code.as_str(),
        status: error.http_status,
        run_status: error.run_status.as_deref(),
    };
    Object::assign(&js, frozen(&fields).unchecked_ref());
    if let Some(cause) = cause {
        let _ = Reflect::set(&js, &"cause".into(), &cause);
    }
    js.into()
}
