//! Calling the user's callbacks. A callback that throws, or whose promise rejects, is
//! reported to `onCallbackError(error, name)` (or `console.error`) and never ends the poll.

use js_sys::{Function, Promise};
use wasm_bindgen::JsValue;
use wasm_bindgen_futures::{spawn_local, JsFuture};

use super::body::field;
use super::options::{function, Options};

/// The optional callbacks of a `JobPoller`.
pub struct Callbacks {
    /// `onBatch`, awaited when it returns a promise.
    pub on_batch: Option<Function>,
    /// `onStatus`.
    pub on_status: Option<Function>,
    /// `onComplete`.
    pub on_complete: Option<Function>,
    /// `onError`.
    pub on_error: Option<Function>,
    /// Where failures of the others go.
    on_callback_error: Option<Function>,
}

impl Callbacks {
    /// Reads (and type-checks) the callbacks from the options.
    pub fn read(options: &Options) -> Result<Callbacks, JsValue> {
        Ok(Callbacks {
            on_batch: function("onBatch", options.get("onBatch")?)?,
            on_status: function("onStatus", options.get("onStatus")?)?,
            on_complete: function("onComplete", options.get("onComplete")?)?,
            on_error: function("onError", options.get("onError")?)?,
            on_callback_error: function("onCallbackError", options.get("onCallbackError")?)?,
        })
    }

    /// Calls `callback(arg)` and waits for the promise it returns, if any.
    pub async fn call_and_wait(
        &self,
        callback: Option<&Function>,
        name: &'static str,
        arg: &JsValue,
    ) {
        if let Some(pending) = self.call(callback, name, arg) {
            if let Err(error) = JsFuture::from(pending).await {
                self.report(&error, name);
            }
        }
    }

    /// Calls `callback(arg)` without waiting; a rejection of its promise is still reported.
    pub fn notify(&self, callback: Option<&Function>, name: &'static str, arg: &JsValue) {
        if let Some(pending) = self.call(callback, name, arg) {
            let reporter = self.on_callback_error.clone();
            spawn_local(async move {
                if let Err(error) = JsFuture::from(pending).await {
                    report(reporter.as_ref(), &error, name);
                }
            });
        }
    }

    /// Calls `callback(arg)`; returns what it returned when that is a thenable.
    fn call(&self, callback: Option<&Function>, name: &str, arg: &JsValue) -> Option<Promise> {
        match callback?.call1(&JsValue::UNDEFINED, arg) {
            // Only objects are awaited: a function with a `then` member is a plain value.
            Ok(value) if value.is_object() && field(&value, "then").is_function() => {
                Some(Promise::resolve(&value))
            }
            Ok(_) => None,
            Err(error) => {
                self.report(&error, name);
                None
            }
        }
    }

    fn report(&self, error: &JsValue, name: &str) {
        report(self.on_callback_error.as_ref(), error, name);
    }
}

/// Hands a callback's failure to `reporter`, or to `console.error` when there is none (or
/// it threw too).
fn report(reporter: Option<&Function>, error: &JsValue, name: &str) {
    let reported =
        reporter.is_some_and(|f| f.call2(&JsValue::UNDEFINED, error, &name.into()).is_ok());
    if !reported {
        let message = format!("captaindata-poller: the `{name}` callback failed:");
        web_sys::console::error_2(&message.into(), error);
    }
}
