//! Callbacks from JS into Rust, without Rust futures.
//!
//! Whatever the glue waits for (a promise settling, a timer, the user's signal) calls
//! back into one [`Waiter`] with the number of the wait it was registered under, so a
//! waiter can ignore a callback whose wait it has since cancelled. The JS functions are
//! handed to the JS garbage collector: one that is never called (a cleared timer, the
//! other half of a `then`) is freed with its closure once JS drops it.

use alloc::rc::Rc;

use js_sys::{Array, Function, Promise};
use wasm_bindgen::closure::Closure;
use wasm_bindgen::{JsCast, JsValue};

use super::bindings::{call, get, promise_resolve, NewPromise};
use super::timer::Timeout;

/// What called back.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Woken {
    /// The awaited promise (or thenable) resolved.
    Resolved,
    /// The awaited promise rejected.
    Rejected,
    /// The timer fired.
    Timer,
    /// The user's `AbortSignal` aborted.
    Abort,
}

/// Something that waits for JS.
pub trait Waiter {
    /// JS called back: `wait` is the number the callback was registered under.
    fn wake(self: Rc<Self>, wait: u32, woken: Woken, value: JsValue);
}

/// Registers callbacks for one wait of one [`Waiter`].
pub struct Waker {
    target: Rc<dyn Waiter>,
    wait: u32,
}

impl Waker {
    /// Callbacks into `target` tagged with `wait`.
    pub fn new(target: Rc<dyn Waiter>, wait: u32) -> Waker {
        Waker { target, wait }
    }

    /// A JS function that wakes the target with `woken` and its argument.
    pub fn callback(&self, woken: Woken) -> Function {
        let (target, wait) = (self.target.clone(), self.wait);
        let closure = Closure::<dyn Fn(JsValue)>::own_aborting(move |value: JsValue| {
            target.clone().wake(wait, woken, value);
        });
        closure.into_js_value().unchecked_into()
    }

    /// Wake with `Resolved`/`Rejected` when `value` settles (a thenable is adopted, any
    /// other value resolves on the next microtask).
    pub fn on_settle(&self, value: &JsValue) {
        let (resolved, rejected) = (
            self.callback(Woken::Resolved),
            self.callback(Woken::Rejected),
        );
        let _ = call(&promise_resolve(value), "then", &resolved, &rejected);
    }

    /// Wake with `Timer` after `ms`; dropping the guard cancels it.
    pub fn after(&self, ms: u32) -> Timeout {
        Timeout::arm(ms, &self.callback(Woken::Timer))
    }
}

/// The two ends of a promise handed to JS: settle it once, when the work is over.
pub struct Settle {
    resolve: Function,
    reject: Function,
}

impl Settle {
    /// A pending promise and the ends that settle it.
    pub fn new() -> (Promise, Settle) {
        // `new Promise(ends.push.bind(ends, undefined))`: the executor pushes `resolve` and
        // `reject` after the bound `undefined` (at 1 and 2), synchronously. A Rust closure as
        // executor would cost its own closure kind (and shim) in the wasm and the JS glue.
        let ends = Array::new();
        let collect = call(&get(&ends, "push"), "bind", &ends, &JsValue::UNDEFINED);
        let promise = NewPromise::new(&collect.unwrap_or_default().unchecked_into());
        let resolve = get(&ends, "1").unchecked_into();
        let reject = get(&ends, "2").unchecked_into();
        (promise.unchecked_into(), Settle { resolve, reject })
    }

    /// Resolves with `Ok`, rejects with `Err`.
    pub fn settle(&self, outcome: Result<JsValue, JsValue>) {
        let _ = match outcome {
            Ok(value) => self.resolve.call1(&JsValue::UNDEFINED, &value),
            Err(error) => self.reject.call1(&JsValue::UNDEFINED, &error),
        };
    }
}
