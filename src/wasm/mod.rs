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

mod body;
mod driver;
mod errors;
mod fetch;
mod interrupt;
mod options;
mod page;
mod payloads;
mod poller;
mod schedule;
mod step;
mod webhook;

pub use poller::{JobPoller, Receiver};
pub use schedule::schedule_workflow;
pub use step::poll_step;
