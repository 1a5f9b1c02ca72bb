//! The user's `AbortSignal`: listened to while a run or a request is going, and the
//! `reason` an ABORTED error carries as its `cause`.

use core::cell::RefCell;

use js_sys::Function;
use wasm_bindgen::JsValue;

use super::bindings::{call, get, AbortSignal};
use super::wake::{Waker, Woken};

/// An optional signal and the listener registered on it.
pub struct Signal {
    signal: Option<AbortSignal>,
    listener: RefCell<Option<Function>>,
}

impl Signal {
    /// Wraps the `signal` option.
    pub fn new(signal: Option<AbortSignal>) -> Signal {
        Signal {
            signal,
            listener: RefCell::new(None),
        }
    }

    /// The signal's `reason` when it has aborted.
    pub fn reason(&self) -> Option<JsValue> {
        let signal = self.signal.as_ref()?;
        aborted(signal).then(|| get(signal, "reason"))
    }

    /// Wakes `waker`'s target with [`Woken::Abort`] when the signal aborts. False (and no
    /// listener) when it has aborted already.
    pub fn listen(&self, waker: &Waker) -> bool {
        let Some(signal) = &self.signal else {
            return true;
        };
        if aborted(signal) {
            return false;
        }
        let listener = waker.callback(Woken::Abort);
        let _ = call(signal, "addEventListener", &"abort".into(), &listener);
        self.listener.replace(Some(listener));
        true
    }

    /// Removes the listener, so a long-lived shared signal keeps nothing of ours alive.
    pub fn unlisten(&self) {
        if let (Some(signal), Some(listener)) = (&self.signal, self.listener.take()) {
            let _ = call(signal, "removeEventListener", &"abort".into(), &listener);
        }
    }
}

fn aborted(signal: &AbortSignal) -> bool {
    get(signal, "aborted").as_bool() == Some(true)
}
