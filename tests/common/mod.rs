//! What the engine's test files share: the API they poll, a config with short delays, the
//! answers a server gives, and handing an answer to the poller.
// Each test file is its own crate and uses only some of these.
#![allow(dead_code)]

use captaindata_poller::api::{Outcome, Page, RunInfo};
use captaindata_poller::engine::{Config, Event, FetchRequest, Poller, RetryPolicy};

/// The base URL every test polls.
pub const BASE: &str = "https://api.captaindata.co/v3";

/// Run `job-1` on [`BASE`], read every second, retried 3 times from 100 ms to 5 s.
pub fn config() -> Config {
    let mut config = Config::new(BASE, "job-1").expect("valid config");
    config.interval_ms = 1_000;
    config.retry = RetryPolicy {
        retries: 3,
        min_delay_ms: 100,
        max_delay_ms: 5_000,
    };
    config
}

/// A run in `status` that counts `rows`.
pub fn run_info(status: &str, rows: u64) -> RunInfo {
    RunInfo {
        status: status.into(),
        row_count: Some(rows),
        ..RunInfo::default()
    }
}

/// A results page of `len` rows without keys, the last.
pub fn results(len: usize) -> Outcome {
    Outcome::Results(Page {
        len,
        ..Page::default()
    })
}

/// The page number of a results URL's `?page=` (0 for the first page, which has none).
pub fn page_of(url: &str) -> u64 {
    url.split_once("?page=")
        .map_or(0, |(_, n)| n.parse().expect("a page number"))
}

/// Answers the request `req` that `poller` sent, at time `now`.
pub fn respond(poller: &mut Poller, req: &FetchRequest, outcome: Outcome, now: u64) {
    let id = req.id;
    poller.handle(Event::Response { id, outcome }, now);
}

/// ms since the Unix epoch of an HTTP date: what the glue gets from JS `Date.parse`.
pub fn parse_date(value: &str) -> Option<u64> {
    let at = httpdate::parse_http_date(value).ok()?;
    let ms = at.duration_since(std::time::UNIX_EPOCH).ok()?.as_millis();
    u64::try_from(ms).ok()
}
