//! The JS-facing glue (wasm32 only): it performs the engine's fetches and timers and
//! calls the user's callbacks. It never decides policy: retry, cadence and
//! classification are the engine's and the api's.
//!
//! Layers, as in gloo/workers-rs: raw [`bindings`], small wrappers ([`timer`], [`stop`],
//! [`fetch`], [`body`]), then the exported API ([`poller`], [`step`], [`schedule`]).

mod bindings;
mod body;
mod callbacks;
mod driver;
mod errors;
mod fetch;
mod options;
mod payloads;
mod poller;
mod schedule;
mod step;
mod stop;
mod task;
mod timer;

pub use poller::JobPoller;
pub use schedule::schedule_workflow;
pub use step::poll_step;
