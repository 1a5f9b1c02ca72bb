//! Calling the user's callbacks. A callback that throws, or whose promise rejects, is
//! reported to `onCallbackError(error, name)` (or `console.error`) and never ends the poll.

use alloc::rc::Rc;
use alloc::string::String;

use js_sys::Function;
use wasm_bindgen::JsValue;

use super::bindings::console_error;
use super::options::Reader;
use super::wake::{Waiter, Waker, Woken};

/// The five optional callbacks.
pub struct Callbacks {
    /// `onBatch`, awaited when it returns a promise.
    pub on_batch: Option<Function>,
    on_status: Option<Function>,
    on_complete: Option<Function>,
    on_error: Option<Function>,
    /// Where failures of the others go.
    pub on_callback_error: Option<Function>,
}

impl Callbacks {
    /// Reads (and type-checks) the callbacks from the options.
    pub fn read(options: &Reader) -> Result<Callbacks, JsValue> {
        Ok(Callbacks {
            on_batch: options.function("onBatch")?,
            on_status: options.function("onStatus")?,
            on_complete: options.function("onComplete")?,
            on_error: options.function("onError")?,
            on_callback_error: options.function("onCallbackError")?,
        })
    }

    /// `onStatus`, `onComplete`, `onError`: fire and forget (a rejection is still reported).
    pub fn notify(&self, name: &'static str, arg: &JsValue) {
        let callback = match name {
            "onStatus" => &self.on_status,
            "onComplete" => &self.on_complete,
            _ => &self.on_error,
        };
        if let Some(pending) = self.call(callback.as_ref(), name, arg) {
            let reporter = Reporter {
                reporter: self.on_callback_error.clone(),
                name,
            };
            Waker::new(Rc::new(reporter), 0).on_settle(&pending);
        }
    }

    /// Calls `callback(arg)`; returns what it returned when that is a thenable.
    pub fn call(&self, callback: Option<&Function>, name: &str, arg: &JsValue) -> Option<JsValue> {
        match callback?.call1(&JsValue::UNDEFINED, arg) {
            Ok(value) if is_thenable(&value) => Some(value),
            Ok(_) => None,
            Err(error) => {
                report(self.on_callback_error.as_ref(), &error, name);
                None
            }
        }
    }
}

/// Reports the rejection of a fire-and-forget callback's promise.
struct Reporter {
    reporter: Option<Function>,
    name: &'static str,
}

impl Waiter for Reporter {
    fn wake(self: Rc<Self>, _: u32, woken: Woken, error: JsValue) {
        if woken == Woken::Rejected {
            report(self.reporter.as_ref(), &error, self.name);
        }
    }
}

fn is_thenable(value: &JsValue) -> bool {
    // Only objects are awaited: a function with a `then` member is returned as is.
    value.is_object() && super::bindings::get(value, "then").is_function()
}

/// Hands a callback's failure to `reporter`, or to `console.error` when there is none
/// (or it threw too).
pub fn report(reporter: Option<&Function>, error: &JsValue, name: &str) {
    let reported =
        reporter.is_some_and(|f| f.call2(&JsValue::UNDEFINED, error, &name.into()).is_ok());
    if !reported {
        let mut message = String::from("captaindata-poller: the `");
        message.push_str(name);
        message.push_str("` callback failed:");
        console_error(&message, error);
    }
}
