//! What cuts a wait short: `stop()`, the user's `AbortSignal`, a relayed webhook.
//!
//! Each one sends an [`Interrupt`] on a channel that the running loop selects against
//! whatever it waits for ([`Interrupts::until`]). Dropping the wait cancels it: its timer is
//! cleared, its request aborted.

use std::cell::Cell;
use std::future::Future;
use std::pin::pin;
use std::rc::Rc;

use futures_channel::mpsc::{unbounded, UnboundedReceiver, UnboundedSender};
use futures_util::future::{select, Either};
use futures_util::StreamExt;
use gloo_events::EventListener;
use web_sys::AbortSignal;

/// Why a wait is cut short.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Interrupt {
    /// `stop()` or the signal: end now, nothing is sent after it.
    Stop,
    /// The engine took a webhook: a sleep (or an idle wait) ends so it can act on it.
    Webhook,
}

/// The sending side, held by the JS object (and the signal's listener).
#[derive(Clone)]
pub struct Interrupter {
    sender: UnboundedSender<Interrupt>,
    stopped: Rc<Cell<bool>>,
}

/// The receiving side, owned by the running loop.
pub struct Interrupts {
    receiver: UnboundedReceiver<Interrupt>,
    stopped: Rc<Cell<bool>>,
}

/// A connected pair.
pub fn channel() -> (Interrupter, Interrupts) {
    let (sender, receiver) = unbounded();
    let stopped = Rc::new(Cell::new(false));
    let interrupter = Interrupter {
        sender,
        stopped: stopped.clone(),
    };
    (interrupter, Interrupts { receiver, stopped })
}

impl Interrupter {
    /// Cuts the current wait short; `kind` says why. Nobody listening (not started, or over)
    /// is fine: a stop is still remembered for a later start.
    pub fn send(&self, kind: Interrupt) {
        if kind == Interrupt::Stop {
            self.stopped.set(true);
        }
        let _ = self.sender.unbounded_send(kind);
    }

    /// Sends [`Interrupt::Stop`] when `signal` aborts. The listener is removed when the
    /// returned guard is dropped, so a long-lived shared signal keeps nothing of ours alive.
    pub fn on_abort(&self, signal: &AbortSignal) -> EventListener {
        let interrupter = self.clone();
        EventListener::once(signal, "abort", move |_| interrupter.send(Interrupt::Stop))
    }
}

impl Interrupts {
    /// `stop()` was called or the signal aborted.
    pub fn stopped(&self) -> bool {
        self.stopped.get()
    }

    /// Runs `work` to its end (`Some`), unless a stop comes first, or a webhook when
    /// `webhook_too` (`None`; `work` is dropped, which cancels it).
    pub async fn until<F: Future>(&mut self, webhook_too: bool, work: F) -> Option<F::Output> {
        if self.stopped() {
            return None; // a stop that came between two waits
        }
        let mut work = pin!(work);
        loop {
            match select(work.as_mut(), self.receiver.next()).await {
                Either::Left((output, _)) => return Some(output),
                Either::Right((Some(Interrupt::Webhook), _)) if !webhook_too => continue,
                Either::Right(_) => return None,
            }
        }
    }

    /// Forgets webhooks that came while no sleep was going: the engine acted on them
    /// already, so they must not cut the next sleep short.
    pub fn forget_webhooks(&mut self) {
        // A stop read here is not lost: `stopped()` remembers it.
        while self.receiver.try_recv().is_ok() {}
    }

    /// Waits for the next interrupt (the engine is idle until one comes).
    pub async fn next(&mut self) -> Option<Interrupt> {
        self.receiver.next().await
    }
}
