//! A timer that clears itself when dropped: cancelling a sleep is dropping its guard.

use js_sys::Function;
use wasm_bindgen::JsValue;

use super::bindings::{clear_timeout, set_timeout};

/// Longest delay `setTimeout` honours; longer ones fire at once in every runtime.
pub const MAX_DELAY_MS: u32 = i32::MAX as u32;

/// An armed `setTimeout`; dropping it clears the timeout.
#[must_use = "dropping a Timeout cancels it"]
pub struct Timeout {
    id: JsValue,
}

impl Timeout {
    /// Calls `handler` after `ms` (capped at [`MAX_DELAY_MS`]).
    pub fn arm(ms: u32, handler: &Function) -> Timeout {
        let id = set_timeout(handler, ms.min(MAX_DELAY_MS) as i32);
        Timeout { id }
    }
}

impl Drop for Timeout {
    fn drop(&mut self) {
        clear_timeout(&self.id);
    }
}
