//! The JS-facing glue (wasm32 only): it performs the engine's fetches and timers and calls
//! the user's callbacks. It never decides policy: retry, cadence and classification are the
//! engine's and the api's.
//!
//! Layers, lowest first:
//! - wrappers of one web concern each: [`fetch`] (one HTTP exchange), [`body`] (JSON bodies
//!   → the engine's [`crate::api::Outcome`]), [`interrupt`] (stop, abort signal, webhook),
//!   [`errors`] and [`payloads`] (what crosses to JS), [`options`] (what comes from JS);
//! - [`driver`]: the async loop that feeds the engine and performs its actions, with a
//!   [`driver::Delivery`] saying where rows go;
//! - the exported API: [`poller`] (`JobPoller`, rows to the JS receiver that calls the
//!   user's callbacks: js/delivery.js), [`step`] (`pollStep`, rows in the result) and
//!   [`schedule`] (`scheduleWorkflow`).
//!
//! `step` and `schedule` are the feature `step-and-schedule` (on by default): a page that only
//! polls loads a module built without them (docs/size.md).

mod body;
mod driver;
mod errors;
mod fetch;
mod interrupt;
mod options;
mod payloads;
mod poller;
#[cfg(feature = "step-and-schedule")]
mod schedule;
#[cfg(feature = "step-and-schedule")]
mod step;
// Only in the whole module (the worker's): a page that only polls does not carry it.
#[cfg(feature = "step-and-schedule")]
mod v4_status;
mod webhook;

pub use poller::{JobPoller, Receiver};
#[cfg(feature = "step-and-schedule")]
pub use schedule::schedule_workflow;
#[cfg(feature = "step-and-schedule")]
pub use step::poll_step;
