//! The JS-facing glue (wasm32 only): it performs the engine's fetches and timers and
//! calls the user's callbacks. It never decides policy: retry, cadence and
//! classification are the engine's and the api's.
//!
//! Layers, as in gloo/workers-rs: raw [`bindings`], small wrappers ([`wake`], [`timer`], [`stop`],
//! [`fetch`], [`body`]), the [`driver`] loop, then the exported API ([`poller`], [`step`], [`schedule`]).

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
mod timer;
mod wake;

pub use poller::JobPoller;
pub use schedule::schedule_workflow;
pub use step::poll_step;
