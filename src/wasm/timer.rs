//! A timer that clears itself when dropped: cancelling a sleep is dropping its guard.

use js_sys::{Function, Promise};
use wasm_bindgen::JsValue;

use super::bindings::{clear_timeout, set_timeout};

/// Longest delay `setTimeout` honours; longer ones fire at once in every runtime.
pub const MAX_DELAY_MS: u32 = i32::MAX as u32;

/// An armed `setTimeout`; dropping it clears the timeout.
#[must_use = "dropping a Timeout cancels it"]
pub struct Timeout {
    id: JsValue,
}

impl Drop for Timeout {
    fn drop(&mut self) {
        clear_timeout(&self.id);
    }
}

/// A promise that resolves with `token` after `ms`, and the guard that cancels it.
pub fn resolve_after(ms: u32, token: &JsValue) -> (Promise, Timeout) {
    let mut id = JsValue::UNDEFINED;
    let ms = ms.min(MAX_DELAY_MS) as i32;
    let promise = Promise::new(&mut |resolve: Function, _reject: Function| {
        id = set_timeout(&resolve, ms, token);
    });
    (promise, Timeout { id })
}
