//! What cuts a wait short: `stop()`, the user's `AbortSignal`, a relayed webhook, the page
//! hidden or shown, the network gone or back.
//!
//! The JS object raises an [`Interrupt`] through its [`Interrupter`]; the running loop
//! races whatever it waits for against it ([`Interrupts::until`], a `select`). Dropping the
//! losing wait cancels it: its timer is cleared, its request aborted.

use std::cell::{Cell, RefCell};
use std::pin::pin;
use std::rc::Rc;
use std::task::{Poll, Waker};

use futures_util::future::{poll_fn, select, Either, LocalBoxFuture};
use wasm_bindgen::closure::Closure;
use wasm_bindgen::JsCast;
use web_sys::AbortSignal;

/// Why a wait is cut short.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Interrupt {
    /// `stop()`: end now, quietly; nothing is sent after it.
    Stop,
    /// The signal aborted: end now with ABORTED; nothing is sent after it.
    Abort,
    /// An outside event for the engine (a webhook, the page hidden or shown, the network
    /// gone or back): a sleep (or an idle wait) ends so the engine can act on it.
    Wake,
}

/// What cuts a wait short.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cut {
    /// `stop()` or an abort (a request in flight).
    Halt,
    /// `stop()`, an abort or a wake (a sleep, an idle wait).
    HaltOrWake,
    /// Only an abort: after `stop()` the consumer finishes the batch in hand.
    Abort,
}

/// What was raised and not yet seen, and who to wake. Single-threaded, like everything
/// in the glue, so a `Cell` does what a channel would.
#[derive(Default)]
struct Raised {
    /// The first Stop or Abort: the one that ends the loop.
    halt: Cell<Option<Interrupt>>,
    wake: Cell<bool>,
    waker: RefCell<Option<Waker>>,
}

/// The raising side, held by the JS object (and the signal's listener).
#[derive(Clone)]
pub struct Interrupter(Rc<Raised>);

/// The waiting side, owned by the running loop.
pub struct Interrupts(Rc<Raised>);

/// A connected pair.
pub fn channel() -> (Interrupter, Interrupts) {
    let raised = Rc::new(Raised::default());
    (Interrupter(raised.clone()), Interrupts(raised))
}

impl Interrupter {
    /// Cuts the current wait short. Nobody waiting (not started, or over) is fine: a stop
    /// is remembered for a later start.
    pub fn send(&self, kind: Interrupt) {
        match kind {
            Interrupt::Wake => self.0.wake.set(true),
            halt => _ = self.0.halt.replace(self.0.halt.get().or(Some(halt))),
        }
        if let Some(waker) = self.0.waker.take() {
            waker.wake();
        }
    }

    /// Raises [`Interrupt::Abort`] when `signal` aborts. The listener is removed when the
    /// returned guard is dropped, so a long-lived shared signal keeps nothing of ours alive.
    pub fn on_abort(&self, signal: &AbortSignal) -> AbortListener {
        let interrupter = self.clone();
        let listener = Closure::<dyn FnMut()>::new(move || interrupter.send(Interrupt::Abort));
        // An `AbortSignal` is an `EventTarget`: adding a listener does not throw.
        let _ = signal.add_event_listener_with_callback("abort", listener.as_ref().unchecked_ref());
        AbortListener {
            signal: signal.clone(),
            listener,
        }
    }
}

/// The signal's `abort` listener, removed on drop. Written with web-sys rather than
/// gloo-events: its listener options object and `Event`-typed closure cost the page's wasm
/// 0.5 KB gzip for this one listener (docs/size.md); an abort fires once, and this
/// listener only raises a flag, so a second call would change nothing.
pub struct AbortListener {
    signal: AbortSignal,
    listener: Closure<dyn FnMut()>,
}

impl Drop for AbortListener {
    fn drop(&mut self) {
        let listener = self.listener.as_ref().unchecked_ref();
        let _ = self
            .signal
            .remove_event_listener_with_callback("abort", listener);
    }
}

impl Interrupts {
    /// `Stop` or `Abort`, once `stop()` was called or the signal aborted.
    pub fn halt(&self) -> Option<Interrupt> {
        self.0.halt.get()
    }

    /// Runs `work` to its end (`Some`), unless what `cut` names comes first (`None`; `work`
    /// is dropped, which cancels it).
    pub async fn until<T>(&mut self, cut: Cut, work: LocalBoxFuture<'_, T>) -> Option<T> {
        let raised = poll_fn(|cx| {
            let cuts = match (cut, self.halt()) {
                (Cut::Abort, halt) => halt == Some(Interrupt::Abort),
                (Cut::Halt, halt) => halt.is_some(),
                (Cut::HaltOrWake, halt) => halt.is_some() || self.0.wake.replace(false),
            };
            if cuts {
                return Poll::Ready(());
            }
            self.0.waker.replace(Some(cx.waker().clone()));
            Poll::Pending
        });
        match select(work, pin!(raised)).await {
            Either::Left((output, _)) => Some(output),
            Either::Right(_) => None,
        }
    }

    /// Forgets a wake that came while no sleep was going: the engine took its event
    /// already, so it must not cut the next sleep short.
    pub fn forget_wakes(&mut self) {
        self.0.wake.set(false);
    }

    /// Waits for the next interrupt (the engine is idle until one comes).
    pub async fn next(&mut self) {
        self.until(Cut::HaltOrWake, Box::pin(std::future::pending::<()>()))
            .await;
    }
}
