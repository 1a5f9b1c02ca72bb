//! Property test: the engine against an in-test model of the Captain Data API under random
//! fault plans, driven with a simulated clock. Prints "property: N fault plans, V violations".
#![cfg(not(target_arch = "wasm32"))]

use std::cell::{Cell, RefCell};
use std::collections::BTreeMap;
use std::io::Write;
use std::time::{Duration, UNIX_EPOCH};

use captaindata_poller::api::{Outcome, Page, RunInfo};
use captaindata_poller::engine::{
    Action, Config, ErrorCode, Event, FetchRequest, Poller, RequestKind, RetryPolicy,
};
use proptest::prelude::*;
use proptest::test_runner::{Config as RunnerConfig, TestCaseError, TestRunner};

const BASE: &str = "https://api.captaindata.co/v3";
const JOB: &str = "run-7";
/// Cron ticks in step mode.
const TICK_MS: u64 = 60_000;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum End {
    Finished,
    Warning,
    Stopped,
    AllInputsFailed,
}

#[derive(Clone, Debug)]
struct Plan {
    seed: u64,
    rows: u64,
    page_size: u64,
    /// Rows of page k−1 the server repeats at the start of page k (dedupe is on when > 0).
    dup: u64,
    finish_at: u64,
    end: End,
    fault_pct: u64,
    absolute_next: bool,
    stop_at: Option<u64>,
    webhook_delay: Option<u64>,
    resume_pct: u64,
    max_requests: Option<u32>,
    max_duration: Option<u64>,
    step_mode: bool,
    interval_ms: u32,
    status_every: u32,
    retry: RetryPolicy,
}

impl Plan {
    /// No faults, no stop, no budget, a normal ending: it must complete with every row.
    fn clean(&self) -> bool {
        self.fault_pct == 0
            && self.stop_at.is_none()
            && self.max_requests.is_none()
            && self.max_duration.is_none()
            && self.end != End::AllInputsFailed
    }

    fn config(&self) -> Config {
        let mut config = Config::new(BASE, JOB).expect("valid");
        config.interval_ms = self.interval_ms;
        config.status_every = self.status_every;
        config.max_requests = self.max_requests;
        config.max_duration_ms = self.max_duration.or(Some(21_600_000));
        config.timeout_ms = 200;
        config.retry = self.retry;
        config.seed = self.seed;
        config.step_mode = self.step_mode;
        config.dedupe = self.dup > 0;
        config
    }
}

fn plan() -> impl Strategy<Value = Plan> {
    let shape = (any::<u64>(), 0u64..80, 1u64..10, 0u64..4, 0u64..60_000);
    let end = prop_oneof![
        4 => Just(End::Finished),
        2 => Just(End::Warning),
        2 => Just(End::Stopped),
        1 => Just(End::AllInputsFailed),
    ];
    let faults = (
        prop_oneof![2 => Just(0u64), 3 => 1u64..40],
        any::<bool>(),
        proptest::option::weighted(0.2, 0u64..80_000),
        proptest::option::weighted(0.4, 0u64..5_000),
        prop_oneof![Just(0u64), 1u64..25],
    );
    let limits = (
        proptest::option::weighted(0.25, 1u32..120),
        proptest::option::weighted(0.25, 1u64..90_000),
        proptest::bool::weighted(0.25),
        1u32..5_000,
        1u32..7,
        (0u32..6, 0u32..400, 0u32..4_000),
    );
    (shape, end, faults, limits).prop_map(|(shape, end, faults, limits)| {
        let (seed, rows, page_size, dup, finish_at) = shape;
        let (fault_pct, absolute_next, stop_at, webhook_delay, resume_pct) = faults;
        let (max_requests, max_duration, step_mode, interval_ms, status_every, retry) = limits;
        let retry = RetryPolicy {
            retries: retry.0,
            min_delay_ms: retry.1,
            max_delay_ms: retry.1 + retry.2,
        };
        let mut plan = Plan {
            seed,
            rows,
            page_size,
            dup: dup.min(page_size - 1),
            finish_at,
            end,
            fault_pct,
            absolute_next,
            stop_at,
            webhook_delay,
            resume_pct,
            max_requests,
            max_duration,
            step_mode,
            interval_ms,
            status_every,
            retry,
        };
        if step_mode {
            // A cron tick: a request budget and a deadline per tick; no stop or webhook.
            plan.max_requests = Some(plan.max_requests.unwrap_or(10).max(3));
            plan.max_duration = Some(plan.max_duration.unwrap_or(20_000).clamp(5_000, TICK_MS));
            plan.stop_at = None;
            plan.webhook_delay = None;
        }
        plan
    })
}

/// SplitMix64 for the model's own randomness (faults, latency, status flapping).
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        (z ^ (z >> 31)) % n.max(1)
    }
}

/// The model server: rows arrive over time, pages of a fixed size, injected faults.
struct Server<'a> {
    plan: &'a Plan,
    rng: Rng,
}

impl Server<'_> {
    fn available(&self, now: u64) -> u64 {
        let p = self.plan;
        (0..p.rows)
            .take_while(|i| (i + 1) * p.finish_at / (p.rows + 1) <= now)
            .count() as u64
    }

    fn ended(&self, now: u64) -> bool {
        now >= self.plan.finish_at
    }

    /// Answers `request` sent at `now`: (outcome, row ids of the page, latency).
    fn answer(&mut self, request: &FetchRequest, now: u64) -> (Outcome, Vec<u64>, u64) {
        let latency = 1 + self.rng.below(50);
        if latency >= u64::from(request.timeout_ms) {
            return (Outcome::Timeout, vec![], u64::from(request.timeout_ms));
        }
        if self.rng.below(100) < self.plan.fault_pct {
            return (self.fault(now), vec![], latency);
        }
        let aif = self.plan.end == End::AllInputsFailed && self.ended(now);
        let (outcome, rows) = match request.kind {
            RequestKind::Results if aif && self.rng.below(2) == 0 => (
                Outcome::Http {
                    status: 400,
                    retry_after: None,
                    message: Some("All Inputs Failed".into()),
                },
                vec![],
            ),
            RequestKind::Results => self.page(&request.url, now),
            RequestKind::Run => (Outcome::Run(self.run(now)), vec![]),
        };
        (outcome, rows, latency)
    }

    fn fault(&mut self, now: u64) -> Outcome {
        let retry_after = match self.rng.below(6) {
            0 => None,
            1 => Some("1".to_string()),
            2 => Some("0".to_string()),
            3 => Some("99999999999999".to_string()),
            4 => Some("soon".to_string()),
            _ => {
                let at = UNIX_EPOCH + Duration::from_millis(now + self.rng.below(5_000));
                Some(httpdate::fmt_http_date(at))
            }
        };
        match self.rng.below(6) {
            0 => Outcome::Http {
                status: 429,
                retry_after,
                message: None,
            },
            1 => Outcome::Http {
                status: 503,
                retry_after: None,
                message: Some("busy".into()),
            },
            2 => Outcome::Http {
                status: 500,
                retry_after: None,
                message: None,
            },
            3 => Outcome::Network,
            4 => Outcome::Timeout,
            _ => Outcome::BadBody("truncated JSON".into()),
        }
    }

    fn page(&mut self, url: &str, now: u64) -> (Outcome, Vec<u64>) {
        let p = self.plan;
        let k: u64 = url
            .split_once("?page=")
            .and_then(|(_, n)| n.parse().ok())
            .unwrap_or(0);
        let available = self.available(now);
        let first = (k * p.page_size).saturating_sub(if k > 0 { p.dup } else { 0 });
        let end = ((k + 1) * p.page_size).min(available).max(first);
        let rows: Vec<u64> = (first..end).collect();
        let has_next = available > (k + 1) * p.page_size;
        let path = format!("/v3/jobs/{JOB}/results?page={}", k + 1);
        let next = match p.absolute_next {
            true => format!("https://API.captaindata.co:443{path}"),
            false => path,
        };
        let page = Page {
            len: rows.len(),
            has_next_page: has_next,
            next: has_next.then_some(next),
            keys: Some(rows.iter().map(u64::to_string).collect()),
        };
        (Outcome::Results(page), rows)
    }

    fn run(&mut self, now: u64) -> RunInfo {
        let (status, error_message) = match (self.ended(now), self.plan.end) {
            (false, _) => (
                ["pending", "running", "paused", "Queued"][self.rng.below(4) as usize],
                None,
            ),
            (true, End::Finished) => ("finished", None),
            (true, End::Warning) => ("Warning", None),
            (true, End::Stopped) => ("stopped", Some("stopped by the user".to_string())),
            (true, End::AllInputsFailed) => {
                ("running", Some("Error: all inputs failed".to_string()))
            }
        };
        RunInfo {
            status: status.into(),
            row_count: Some(self.available(now)),
            total_row_count: Some(self.plan.rows),
            number_inputs: Some(3),
            error_message,
        }
    }
}

/// What one plan produced.
#[derive(Debug, Default)]
struct Outcomes {
    delivered: Vec<u64>,
    terminal: Option<Action>,
}

fn check(plan: &Plan, tally: &mut BTreeMap<&'static str, u32>) -> Result<(), String> {
    let outcomes = simulate(plan)?;
    let label = match &outcomes.terminal {
        Some(Action::Complete(_)) => "complete",
        Some(Action::Fail(error)) => error.code.as_str(),
        _ => "unfinished",
    };
    *tally.entry(label).or_default() += 1;
    let all: Vec<u64> = (0..plan.rows).collect();
    if !all.starts_with(&outcomes.delivered) {
        return Err(format!(
            "rows out of order, lost or repeated: {:?}",
            outcomes.delivered
        ));
    }
    match &outcomes.terminal {
        Some(Action::Complete(summary)) => {
            if !matches!(plan.end, End::Finished | End::Warning) {
                return Err(format!("completed a run that ends {:?}", plan.end));
            }
            if outcomes.delivered != all || summary.total_results != plan.rows {
                return Err(format!(
                    "completed with {} of {} rows",
                    outcomes.delivered.len(),
                    plan.rows
                ));
            }
        }
        Some(Action::Fail(error)) => {
            let allowed = match error.code {
                ErrorCode::JobFailed => outcomes.delivered == all,
                ErrorCode::AllInputsFailed => plan.end == End::AllInputsFailed,
                ErrorCode::Aborted => plan.stop_at.is_some(),
                ErrorCode::BudgetExhausted => plan.max_requests.is_some() && !plan.step_mode,
                ErrorCode::Timeout => !plan.step_mode,
                ErrorCode::RetriesExhausted | ErrorCode::BadResponse => plan.fault_pct > 0,
                ErrorCode::Unauthorized | ErrorCode::NotFound => false,
            };
            let clean_failure = plan.clean() && error.code != ErrorCode::JobFailed;
            if !allowed || clean_failure {
                return Err(format!("unexpected failure {error:?}"));
            }
        }
        Some(other) => return Err(format!("not a terminal action: {other:?}")),
        None if plan.clean() || plan.step_mode && plan.fault_pct == 0 => {
            return Err("never ended".into())
        }
        None => {}
    }
    Ok(())
}

/// Drives pollers (a new one on every resume or cron tick) until a terminal action.
fn simulate(plan: &Plan) -> Result<Outcomes, String> {
    let mut server = Server {
        plan,
        rng: Rng(plan.seed ^ 0x5EED),
    };
    let mut rng = Rng(plan.seed.rotate_left(17));
    let mut out = Outcomes::default();
    let mut now = 0;
    let mut poller = Poller::new(plan.config(), None, now).map_err(|e| e.message)?;
    let mut started = now;
    let webhook_at = plan.webhook_delay.map(|d| plan.finish_at + d);
    let (mut stopped, mut hooked) = (false, false);
    let mut rows: Vec<u64> = vec![];
    for _ in 0..200_000 {
        if let Some(max) = plan.max_duration.filter(|_| !poller.is_terminal()) {
            if now > started + max {
                return Err(format!(
                    "still going at {now}, past the deadline {}",
                    started + max
                ));
            }
        }
        let action = poller.next_action(now);
        if let Some(max) = plan.max_requests {
            if poller.requests() > max {
                return Err(format!("{} requests, budget {max}", poller.requests()));
            }
        }
        // Events that happen before `until`: a stop and a webhook, each once.
        let mut events_until = |poller: &mut Poller, now: &mut u64, until: u64| -> bool {
            let mut due: Vec<(u64, Event)> = vec![];
            if let Some(t) = plan.stop_at.filter(|&t| !stopped && t <= until) {
                due.push((t, Event::Stop));
            }
            if let Some(t) = webhook_at.filter(|&t| !hooked && t <= until) {
                let failed = plan.end != End::Finished && plan.end != End::Warning;
                due.push((t, Event::Webhook { failed }));
            }
            due.sort_by_key(|d| d.0);
            let any = !due.is_empty();
            for (t, event) in due {
                *now = (*now).max(t);
                stopped |= event == Event::Stop;
                hooked |= matches!(event, Event::Webhook { .. });
                poller.handle(event, *now);
            }
            any
        };
        match action {
            Action::Fetch(request) => {
                if !request
                    .url
                    .starts_with("https://api.captaindata.co/v3/jobs/run-7")
                {
                    return Err(format!("request to {}", request.url));
                }
                let (outcome, page_rows, latency) = server.answer(&request, now);
                let until = now + latency;
                events_until(&mut poller, &mut now, until);
                now = until;
                if matches!(outcome, Outcome::Results(_)) {
                    rows = page_rows;
                }
                poller.handle(
                    Event::Response {
                        id: request.id,
                        outcome,
                    },
                    now,
                );
            }
            Action::Sleep { ms, .. } => {
                let wake = now + u64::from(ms);
                // The glue cancels the timer on a stop or a webhook.
                if !events_until(&mut poller, &mut now, wake) {
                    now = wake;
                    poller.handle(Event::TimerFired, now);
                }
            }
            Action::Emit(batch) => {
                if batch.offset != out.delivered.len() as u64 {
                    return Err(format!(
                        "batch at offset {} after {} rows",
                        batch.offset,
                        out.delivered.len()
                    ));
                }
                let Some(new) = rows.get(batch.start..batch.end) else {
                    return Err(format!("batch {batch:?} outside a page of {}", rows.len()));
                };
                out.delivered.extend_from_slice(new);
                poller.handle(Event::BatchDone, now);
                if rng.below(100) < plan.resume_pct && !plan.step_mode {
                    // A page reload: a new poller from the saved cursor.
                    poller = Poller::new(plan.config(), Some(&poller.cursor()), now)
                        .map_err(|e| e.message)?;
                    started = now;
                }
            }
            Action::Status(_) => {}
            Action::Yield => {
                if !plan.step_mode {
                    return Err("yield outside step mode".into());
                }
                now = (now / TICK_MS + 1) * TICK_MS;
                poller = Poller::new(plan.config(), Some(&poller.cursor()), now)
                    .map_err(|e| e.message)?;
                started = now;
                if now > 200 * TICK_MS + plan.finish_at {
                    return Ok(out);
                }
            }
            Action::Complete(_) | Action::Fail(_) => {
                let requests = poller.requests();
                poller.handle(Event::TimerFired, now);
                poller.handle(
                    Event::Response {
                        id: requests,
                        outcome: Outcome::Network,
                    },
                    now,
                );
                poller.handle(Event::Webhook { failed: false }, now);
                if poller.next_action(now + 1_000_000) != Action::Idle
                    || poller.requests() != requests
                {
                    return Err("activity after the terminal action".into());
                }
                out.terminal = Some(action);
                return Ok(out);
            }
            Action::Idle => return Err("idle with nothing pending".into()),
        }
    }
    Err("no end after 200 000 actions".into())
}

#[test]
fn every_row_exactly_once_under_random_fault_plans() {
    let cases = std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1_000);
    let mut runner = TestRunner::new(RunnerConfig {
        cases,
        failure_persistence: None,
        ..RunnerConfig::default()
    });
    let plans = Cell::new(0u32);
    let violations = Cell::new(0u32);
    let tally = RefCell::new(BTreeMap::new());
    let result = runner.run(&plan(), |plan| {
        plans.set(plans.get() + 1);
        check(&plan, &mut tally.borrow_mut()).map_err(|why| {
            violations.set(violations.get() + 1);
            TestCaseError::fail(why)
        })
    });
    // Written to the raw stderr so it shows without --nocapture.
    let _ = writeln!(
        std::io::stderr(),
        "property: {} fault plans, {} violations; endings {:?}",
        plans.get(),
        violations.get(),
        tally.borrow()
    );
    if let Err(failure) = result {
        panic!("{failure}");
    }
}
