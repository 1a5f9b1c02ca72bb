//! The JS-facing glue (wasm32 only): it performs the engine's fetches and timers and calls
//! the user's callbacks. It never decides policy: retry, cadence and classification are the
//! engine's and the api's.
//!
//! Layers, lowest first:
//! - wrappers of one web concern each: [`fetch`] (one HTTP exchange), [`body`] (JSON bodies
//!   → the engine's [`crate::api::Outcome`]), [`interrupt`] (stop, abort signal, webhook),
//!   [`errors`] and [`payloads`] (what crosses to JS), [`options`] (what comes from JS);
//! - [`driver`]: the async loop that feeds the engine and performs its actions, with a
//!   [`driver::Delivery`] saying where rows go, and [`retries`] naming the retries it sees;
//! - the exported API: [`poller`] (`JobPoller`, rows to the JS receiver that calls the
//!   user's callbacks: js/delivery.js), [`step`] (`pollStep`, rows in the result) and
//!   [`schedule`] (`scheduleWorkflow`).
//!
//! [`stream_cursor`] gives the push client (js/push.js) the engine's cursors at an offset.
//!
//! `step`, `schedule` and `stream_cursor` are the feature `step-and-schedule` (on by default): a page that only
//! polls loads a module built without them (docs/size.md).

mod body;
mod driver;
mod errors;
mod fetch;
mod interrupt;
mod options;
mod payloads;
mod poller;
mod retries;
#[cfg(feature = "step-and-schedule")]
mod schedule;
#[cfg(feature = "step-and-schedule")]
mod step;
#[cfg(feature = "step-and-schedule")]
mod stream_cursor;
// Only in the whole module (the worker's): a page that only polls does not carry it.
#[cfg(feature = "step-and-schedule")]
mod v4_status;
mod webhook;

pub use poller::{JobPoller, Receiver};
#[cfg(feature = "step-and-schedule")]
pub use schedule::schedule_workflow;
#[cfg(feature = "step-and-schedule")]
pub use step::poll_step;
