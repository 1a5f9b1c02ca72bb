//! Poll Captain Data v3 runs and hand early results to JavaScript as they appear.
//!
//! The crate has three layers: [`api`] (wire types and their classification),
//! [`engine`] (the pure poll state machine) and, on `wasm32` only, `wasm` (the
//! JS-facing glue that performs the engine's fetches and timers).
//!
//! The engine's [`engine::Poller`] coordinates small parts that each own their state and
//! rules: the position in the results, the cadence, the lag model, the end of a run, webhook
//! hints, retries and budgets. The [`engine`] module docs map each question ("the pause
//! between polls", "what a 429 does", "when a run is over") to the file that answers it, and
//! [`engine::Config`] holds every default.
#![deny(missing_docs)]

extern crate alloc;

pub mod api;
pub mod engine;

#[cfg(target_arch = "wasm32")]
mod wasm;

#[cfg(target_arch = "wasm32")]
mod runtime;

#[cfg(all(target_arch = "wasm32", feature = "step-and-schedule"))]
pub use wasm::{poll_step, schedule_workflow};
#[cfg(target_arch = "wasm32")]
pub use wasm::{JobPoller, Receiver};
