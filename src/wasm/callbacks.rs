//! Calling the user's callbacks. A callback that throws, or whose promise rejects, is
//! reported to `onCallbackError(error, name)` (or `console.error`) and never ends the poll.

use alloc::string::String;

use js_sys::futures::JsFuture;
use js_sys::{Function, Promise};
use wasm_bindgen::{JsCast, JsValue};

use super::bindings::console_error;
use super::options::Reader;
use super::stop::{Settled, StopSwitch};
use super::task::promise;

/// The five optional callbacks.
pub struct Callbacks {
    on_batch: Option<Function>,
    on_status: Option<Function>,
    on_complete: Option<Function>,
    on_error: Option<Function>,
    on_callback_error: Option<Function>,
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
        let Some(pending) = self.call(callback.as_ref(), name, arg) else {
            return;
        };
        let reporter = self.on_callback_error.clone();
        // The returned promise always resolves: the rejection is reported instead.
        let _ = promise(async move {
            if let Err(error) = JsFuture::from(pending).await {
                report(reporter.as_ref(), &error, name);
            }
            Ok(JsValue::UNDEFINED)
        });
    }

    /// `onBatch`, then `sink` (the async iterator): each awaited if it returns a promise,
    /// unless the poller is stopped meanwhile. False when stopped.
    pub async fn deliver(
        &self,
        batch: &JsValue,
        sink: Option<&Function>,
        stop: &StopSwitch,
    ) -> bool {
        for (callback, name) in [(self.on_batch.as_ref(), "onBatch"), (sink, "iterator")] {
            let Some(pending) = self.call(callback, name, batch) else {
                continue;
            };
            match stop.race(&[&pending]).await {
                Settled::Stopped => return false,
                Settled::Error(error) => report(self.on_callback_error.as_ref(), &error, name),
                Settled::Value(_) => {}
            }
        }
        !stop.is_stopped()
    }

    /// Calls `callback(arg)`; returns its promise when it returned a thenable.
    fn call(&self, callback: Option<&Function>, name: &str, arg: &JsValue) -> Option<Promise> {
        match callback?.call1(&JsValue::UNDEFINED, arg) {
            Ok(value) if is_thenable(&value) => Some(Promise::resolve(&value)),
            Ok(_) => None,
            Err(error) => {
                report(self.on_callback_error.as_ref(), &error, name);
                None
            }
        }
    }
}

fn is_thenable(value: &JsValue) -> bool {
    (value.is_object() || value.is_function())
        && super::body::field(value, "then").is_instance_of::<Function>()
}

fn report(reporter: Option<&Function>, error: &JsValue, name: &str) {
    let reported =
        reporter.is_some_and(|f| f.call2(&JsValue::UNDEFINED, error, &name.into()).is_ok());
    if !reported {
        let mut message = String::from("captaindata-poller: the `");
        message.push_str(name);
        message.push_str("` callback failed:");
        console_error(&message, error);
    }
}
