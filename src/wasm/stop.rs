//! Cancellation: one switch per poller that every wait races against.
//!
//! `stop()` and the user's `AbortSignal` flip the same switch; whatever the glue is
//! awaiting (a fetch, a sleep, an async `onBatch`) loses the race at once, and the guards
//! it held (timer, `AbortController`) cancel their work when dropped.

use core::cell::Cell;

use js_sys::futures::JsFuture;
use js_sys::{Array, Function, Object, Promise};
use wasm_bindgen::{JsCast, JsValue};

use super::bindings::AbortSignal;

/// How a raced wait ended.
pub enum Settled {
    /// The awaited promise (or another raced promise) resolved with this value.
    Value(JsValue),
    /// The awaited promise rejected with this value.
    Error(JsValue),
    /// The switch was flipped first.
    Stopped,
}

/// The stop switch of one poller (or one `pollStep` call).
pub struct StopSwitch {
    promise: Promise,
    trigger: Function,
    token: JsValue,
    requested: Cell<bool>,
    listening: Cell<bool>,
    signal: Option<AbortSignal>,
}

impl StopSwitch {
    /// A switch that also flips when `signal` aborts (once [`StopSwitch::listen`] is called).
    pub fn new(signal: Option<AbortSignal>) -> StopSwitch {
        let token: JsValue = Object::new().into();
        let (promise, resolve) = deferred();
        // The listener resolves with the token whatever the event: it is the same function
        // for `stop()` and the signal, and removing it later needs that exact function.
        let trigger: Function = resolve.bind1(&JsValue::UNDEFINED, &token).unchecked_into();
        StopSwitch {
            promise,
            trigger,
            token,
            requested: Cell::new(false),
            listening: Cell::new(false),
            signal,
        }
    }

    /// Flip the switch (idempotent).
    pub fn stop(&self) {
        self.requested.set(true);
        let _ = self.trigger.call0(&JsValue::UNDEFINED);
    }

    /// True once `stop()` was called or the signal aborted.
    pub fn is_stopped(&self) -> bool {
        self.requested.get() || self.signal.as_ref().is_some_and(|s| s.aborted())
    }

    /// The signal's `reason` when the signal (not `stop()`) ended the run.
    pub fn abort_reason(&self) -> Option<JsValue> {
        let signal = self.signal.as_ref()?;
        signal.aborted().then(|| signal.reason())
    }

    /// Start listening to the signal; an already aborted signal flips the switch now.
    pub fn listen(&self) {
        let Some(signal) = &self.signal else { return };
        if signal.aborted() {
            self.stop();
        } else if !self.listening.replace(true) {
            signal.add_event_listener("abort", &self.trigger);
        }
    }

    /// Remove the signal listener, so a long-lived shared signal keeps no reference to us.
    pub fn unlisten(&self) {
        if let (Some(signal), true) = (&self.signal, self.listening.replace(false)) {
            signal.remove_event_listener("abort", &self.trigger);
        }
    }

    /// Wait for the first of `promises` (thenables are adopted) unless the switch flips first.
    pub async fn race(&self, promises: &[&JsValue]) -> Settled {
        if self.is_stopped() {
            return Settled::Stopped;
        }
        // The switch goes first: when both are already settled, stopping wins.
        let all = Array::of1(&self.promise);
        for p in promises {
            all.push(p);
        }
        match JsFuture::from(Promise::race(&all)).await {
            Ok(v) if v == self.token => Settled::Stopped,
            _ if self.is_stopped() => Settled::Stopped,
            Ok(v) => Settled::Value(v),
            Err(e) => Settled::Error(e),
        }
    }
}

/// A pending promise and the function that resolves it.
pub fn deferred() -> (Promise, Function) {
    let mut resolve_fn = None;
    let promise = Promise::new(&mut |resolve: Function, _reject: Function| {
        resolve_fn = Some(resolve);
    });
    // The executor runs synchronously, so the resolver is always there.
    let resolve = resolve_fn.unwrap_or_else(|| JsValue::UNDEFINED.unchecked_into());
    (promise, resolve)
}
