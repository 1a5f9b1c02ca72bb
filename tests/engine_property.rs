//! Property test: the engine against an in-test model of the Captain Data API under random
//! fault plans, driven with a simulated clock. Prints "property: N fault plans, V violations".
//!
//! `PROPERTY_CASES` sets the number of plans (default 1000). Each plan comes from its own
//! seed, printed on a violation; `PROPERTY_SEED=<seed>` replays that one plan, and
//! `PROPERTY_FIRST_SEED=<seed>` draws the run's plans from that seed on (the same plans twice).
#![cfg(not(target_arch = "wasm32"))]

mod common;

use std::collections::BTreeMap;
use std::io::Write;
use std::time::{Duration, UNIX_EPOCH};

use captaindata_poller::api::{
    classify_webhook, retry_hint, Outcome, Page, RunInfo, Webhook, WebhookKind,
};
use captaindata_poller::engine::{
    Action, Config, ErrorCode, Event, FetchRequest, Poller, ReadMode, RequestKind, RetryPolicy,
    QUIET_TICKS,
};
use proptest::prelude::*;
use proptest::strategy::ValueTree;
use proptest::test_runner::{Config as RunnerConfig, RngAlgorithm, TestRng, TestRunner};

use common::{parse_date, BASE};
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

/// How the model server spells `paging.next`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum NextForm {
    Path,
    Absolute,
    Query,
    /// A page number, pages counted from 0 (the first page's next is "1").
    Number0,
    /// A page number, pages counted from 1 (the first page's next is "2").
    Number1,
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
    next_form: NextForm,
    /// The run says `completed` instead of `finished`.
    completed: bool,
    /// `/results` is 404 while the run has no rows yet (for ever when it never has any).
    missing_results: bool,
    /// `row_count` lags the rows there are by up to this many.
    count_lag: u64,
    /// Status-guided or results on every tick.
    read_mode: ReadMode,
    /// Rows arrive in this many bursts (the last at the end) instead of one by one; a burst
    /// can cross several pages at once.
    bursts: Option<u64>,
    /// `row_count` counts the rows there were this long ago (as well as `count_lag`).
    count_lag_ms: u64,
    /// One status read in four reports a count half as high (a count that goes down).
    count_drops: bool,
    /// While running, `row_count` says up to this many rows more than the results hold.
    count_ahead: u64,
    /// While running, `row_count` stops moving at this time (a stuck count).
    count_stuck_at: Option<u64>,
    /// The run has no `row_count` at all.
    no_count: bool,
    /// Just after the run ends, a full page says it is the last for `retry.min_delay_ms`
    /// (its next page is not linked yet): only reading a full tail again finds the rest.
    late_next: bool,
    stop_at: Option<u64>,
    /// The stop at `stop_at` is the `AbortSignal` (ABORTED), not `stop()` (a summary).
    abort: bool,
    /// The consumer fails this percentage of batches (CALLBACK_FAILED), up to three times;
    /// each time a poller resumed from the cursor must deliver that batch again.
    consumer_fail_pct: u64,
    /// Webhooks of every kind, at any time (before the end too: a webhook is only a hint).
    webhooks: Vec<(u64, WebhookKind)>,
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
        // The API's page size is known (1000 on the real API).
        config.page_size = self.page_size as usize;
        config.read_mode = self.read_mode;
        config
    }

    /// The longest a row may wait in a clean plan (polling from the start, no faults): the
    /// quiet ticks a stale count costs, a lagging count, the end's drain, webhook reads.
    /// With an exact count, a row is read at the first tick that counts it.
    fn max_row_delay(&self) -> u64 {
        let pages = self.rows / self.page_size + 3;
        let tick = u64::from(self.interval_ms) + 50 * pages;
        let min_delay = u64::from(self.retry.min_delay_ms) + 50 * pages;
        let webhook_reads = 10 * self.webhooks.len() as u64;
        let exact = self.count_lag == 0
            && self.count_lag_ms == 0
            && !self.count_drops
            && self.count_stuck_at.is_none();
        let ticks = match exact {
            true => 2,
            false => u64::from(QUIET_TICKS) + 2,
        };
        ticks * tick
            + self.count_lag_ms
            + (u64::from(self.retry.retries) + 1 + webhook_reads) * min_delay
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
    let kind = prop_oneof![
        Just(WebhookKind::Created),
        Just(WebhookKind::Succeeded),
        Just(WebhookKind::Failed),
        Just(WebhookKind::Other),
    ];
    let next_form = prop_oneof![
        Just(NextForm::Path),
        Just(NextForm::Absolute),
        Just(NextForm::Query),
        Just(NextForm::Number0),
        Just(NextForm::Number1),
    ];
    let faults = (
        prop_oneof![2 => Just(0u64), 3 => 1u64..40],
        proptest::option::weighted(0.2, 0u64..80_000),
        proptest::collection::vec((0u64..70_000, kind), 0..4),
        prop_oneof![Just(0u64), 1u64..25],
    );
    let api = (
        next_form,
        any::<bool>(),
        any::<bool>(),
        prop_oneof![Just(0u64), 1u64..20],
        any::<bool>(),
    );
    let read_mode = prop_oneof![
        3 => Just(ReadMode::StatusGuided),
        1 => Just(ReadMode::EveryTick),
    ];
    let counts = (
        read_mode,
        proptest::option::weighted(0.5, 1u64..8),
        prop_oneof![Just(0u64), 1u64..20_000],
        proptest::bool::weighted(0.2),
        prop_oneof![3 => Just(0u64), 1 => 1u64..30],
        proptest::option::weighted(0.2, 0u64..40_000),
        proptest::bool::weighted(0.1),
    );
    // Exact counts often enough that the tight delay bound is exercised.
    let counts = counts.prop_map(|c| match c.0 == ReadMode::StatusGuided && c.2 % 3 == 0 {
        true => (c.0, c.1, 0, false, c.4, None, c.6),
        false => c,
    });
    let limits = (
        proptest::option::weighted(0.25, 1u32..120),
        proptest::option::weighted(0.25, 1u64..90_000),
        proptest::bool::weighted(0.25),
        1u32..5_000,
        1u32..7,
        (0u32..6, 0u32..400, 0u32..4_000),
    );
    let input = (shape, end, faults, api, limits, counts);
    input.prop_map(|(shape, end, faults, api, limits, counts)| {
        let (seed, rows, page_size, dup, finish_at) = shape;
        let (fault_pct, stop_at, webhooks, resume_pct) = faults;
        let (next_form, completed, missing_results, count_lag, late_next) = api;
        let (max_requests, max_duration, step_mode, interval_ms, status_every, retry) = limits;
        let (read_mode, bursts, count_lag_ms, count_drops, count_ahead, count_stuck_at, no_count) =
            counts;
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
            next_form,
            completed,
            missing_results,
            count_lag,
            read_mode,
            bursts,
            count_lag_ms,
            count_drops,
            count_ahead,
            count_stuck_at,
            // Without a count, a run whose results are 404 for ever cannot be told empty.
            no_count: no_count && !missing_results,
            late_next,
            stop_at,
            abort: seed % 2 == 1,
            consumer_fail_pct: match seed % 4 {
                0 => seed % 20,
                _ => 0,
            },
            webhooks,
            resume_pct,
            max_requests,
            max_duration,
            step_mode,
            interval_ms,
            status_every,
            retry,
        };
        if step_mode {
            // A cron tick: a request budget and a deadline per tick; no stop. Webhooks are
            // passed to the tick that follows them.
            plan.max_requests = Some(plan.max_requests.unwrap_or(10).max(3));
            plan.max_duration = Some(plan.max_duration.unwrap_or(20_000).clamp(5_000, TICK_MS));
            plan.stop_at = None;
            plan.consumer_fail_pct = 0;
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
        if let Some(bursts) = p.bursts {
            let done = match now >= p.finish_at {
                true => bursts,
                false => bursts * now / p.finish_at.max(1),
            };
            return p.rows * done / bursts;
        }
        (0..p.rows)
            .take_while(|i| (i + 1) * p.finish_at / (p.rows + 1) <= now)
            .count() as u64
    }

    /// When row `i` becomes readable.
    fn arrival(&self, i: u64) -> u64 {
        let (mut low, mut high) = (0, self.plan.finish_at);
        while low < high {
            let mid = (low + high) / 2;
            match self.available(mid) > i {
                true => high = mid,
                false => low = mid + 1,
            }
        }
        low
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
        // A run with no rows at all may keep answering 404 after its end too.
        let nothing_yet = self.available(now) == 0 && (!self.ended(now) || self.plan.rows == 0);
        let (outcome, rows) = match request.kind {
            RequestKind::Results if aif && self.rng.below(2) == 0 => (
                Outcome::Http {
                    status: 400,
                    retry: None,
                    message: Some("All Inputs Failed".into()),
                },
                vec![],
            ),
            RequestKind::Results if nothing_yet && self.plan.missing_results => (
                Outcome::Http {
                    status: 404,
                    retry: None,
                    message: Some("no results".into()),
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
        let reset = match self.rng.below(3) {
            0 => None,
            1 => Some(self.rng.below(4).to_string()),
            _ => Some(
                (now / 1_000 + self.rng.below(4))
                    .max(1_000_000_000)
                    .to_string(),
            ),
        };
        let retry = retry_hint(retry_after.as_deref(), reset.as_deref(), parse_date);
        match self.rng.below(6) {
            0 => Outcome::Http {
                status: 429,
                retry,
                message: None,
            },
            1 => Outcome::Http {
                status: 503,
                retry,
                message: Some("busy".into()),
            },
            2 => Outcome::Http {
                status: 500,
                retry: None,
                message: None,
            },
            3 => Outcome::Network,
            4 => Outcome::Timeout,
            _ => Outcome::BadBody("truncated JSON".into()),
        }
    }

    fn page(&mut self, url: &str, now: u64) -> (Outcome, Vec<u64>) {
        let p = self.plan;
        // The number of the first page.
        let base = u64::from(p.next_form == NextForm::Number1);
        let k: u64 = url
            .split_once("?page=")
            .map(|(_, n)| n.parse::<u64>().expect("a page number") - base)
            .unwrap_or(0);
        let available = self.available(now);
        let first = (k * p.page_size).saturating_sub(if k > 0 { p.dup } else { 0 });
        let end = ((k + 1) * p.page_size).min(available).max(first);
        let rows: Vec<u64> = (first..end).collect();
        let window = u64::from(p.retry.min_delay_ms) * u64::from(p.retry.retries.min(1));
        let unlinked = p.late_next && self.ended(now) && now < p.finish_at + window;
        let has_next = available > (k + 1) * p.page_size && !unlinked;
        let path = format!("/v3/jobs/{JOB}/results?page={}", k + 1);
        let next = match p.next_form {
            NextForm::Path => path,
            NextForm::Absolute => format!("https://API.captaindata.co:443{path}"),
            NextForm::Query => format!("?page={}", k + 1),
            NextForm::Number0 | NextForm::Number1 => (k + 1 + base).to_string(),
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
        let p_lag = self.plan.count_lag;
        let (status, error_message) = match (self.ended(now), self.plan.end) {
            (false, _) => (
                ["pending", "running", "paused", "Queued"][self.rng.below(4) as usize],
                None,
            ),
            (true, End::Finished) if self.plan.completed => ("completed", None),
            (true, End::Finished) => ("finished", None),
            (true, End::Warning) => ("Warning", None),
            (true, End::Stopped) => ("stopped", Some("stopped by the user".to_string())),
            (true, End::AllInputsFailed) => {
                ("running", Some("Error: all inputs failed".to_string()))
            }
        };
        RunInfo {
            status: status.into(),
            row_count: self.count(now, p_lag),
            total_row_count: Some(self.plan.rows),
            number_inputs: Some(3),
            error_message,
            missing: None,
        }
    }
}

impl Server<'_> {
    /// What `row_count` says at `now`: lagging, stuck, going down or ahead, as planned.
    fn count(&mut self, now: u64, lag: u64) -> Option<u64> {
        let p = self.plan;
        if p.no_count {
            return None;
        }
        let running = !self.ended(now);
        let mut at = now.saturating_sub(p.count_lag_ms);
        if let Some(stuck) = p.count_stuck_at.filter(|_| running) {
            at = at.min(stuck);
        }
        let mut count = self.available(at).saturating_sub(self.rng.below(lag + 1));
        if p.count_drops && self.rng.below(4) == 0 {
            count /= 2;
        }
        if running && p.count_ahead > 0 {
            count += self.rng.below(p.count_ahead + 1);
        }
        Some(count)
    }
}

/// A webhook payload of that kind, as Captain Data words it.
fn webhook(kind: WebhookKind) -> Webhook {
    let (message, error) = match kind {
        WebhookKind::Created => ("Job created.", None),
        WebhookKind::Succeeded => ("Job successfully finished.", None),
        WebhookKind::Failed => ("Job failed.", Some("quota reached")),
        WebhookKind::Other => ("Hello", None),
    };
    let hook = classify_webhook(Some(message), error, None);
    assert_eq!(hook.kind, kind);
    hook
}

/// What one plan produced.
#[derive(Debug, Default)]
struct Outcomes {
    delivered: Vec<u64>,
    /// When each delivered row reached the user.
    delivered_at: Vec<u64>,
    terminal: Option<Action>,
    ended_at: u64,
}

fn check(plan: &Plan, tally: &mut BTreeMap<&'static str, u32>) -> Result<(), String> {
    let outcomes = simulate(plan)?;
    let label = match &outcomes.terminal {
        Some(Action::Complete(_)) => "complete",
        Some(Action::Fail(error)) => error.code.as_str(),
        Some(Action::Stopped(_)) => "stopped",
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
    // Only the API's status ends a run: never a webhook before it.
    let by_status = match &outcomes.terminal {
        Some(Action::Complete(_)) => true,
        Some(Action::Fail(error)) => error.code == ErrorCode::JobFailed,
        _ => false,
    };
    if by_status && outcomes.ended_at < plan.finish_at {
        return Err(format!(
            "ended at {} before the API's status said so at {}",
            outcomes.ended_at, plan.finish_at
        ));
    }
    // No row waits for ever on a count: stale, stuck, lagging or gone down, the quiet ticks
    // read the results anyway (the end's drain alone would hide a rule that never reads).
    if plan.clean() && !plan.step_mode {
        let server = Server { plan, rng: Rng(0) };
        let bound = plan.max_row_delay();
        for (&row, &at) in outcomes.delivered.iter().zip(&outcomes.delivered_at) {
            let arrived = server.arrival(row);
            if at > arrived + bound {
                return Err(format!(
                    "row {row} readable at {arrived} delivered at {at}, more than {bound} later"
                ));
            }
        }
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
        Some(Action::Stopped(summary)) => {
            if plan.stop_at.is_none() || plan.abort {
                return Err("stopped without a stop()".into());
            }
            if summary.total_results != outcomes.delivered.len() as u64 {
                let n = summary.total_results;
                return Err(format!("stopped summary counts {n} rows"));
            }
        }
        Some(Action::Fail(error)) => {
            let allowed = match error.code {
                ErrorCode::JobFailed => outcomes.delivered == all,
                ErrorCode::AllInputsFailed => plan.end == End::AllInputsFailed,
                ErrorCode::Aborted => plan.stop_at.is_some() && plan.abort,
                ErrorCode::BudgetExhausted => plan.max_requests.is_some() && !plan.step_mode,
                ErrorCode::Timeout => !plan.step_mode,
                ErrorCode::RetriesExhausted | ErrorCode::BadResponse => plan.fault_pct > 0,
                ErrorCode::Unauthorized
                | ErrorCode::NotFound
                | ErrorCode::RateLimited
                | ErrorCode::ServerError
                | ErrorCode::NetworkError
                | ErrorCode::LoadFailed
                | ErrorCode::CallbackFailed
                | ErrorCode::TooManyViewers
                | ErrorCode::RowsMissing
                | ErrorCode::RowsCapReached => false,
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
    let mut webhooks = plan.webhooks.clone();
    webhooks.sort_by_key(|w| w.0);
    let (mut stopped, mut hooked, mut consumer_failures) = (false, 0, 0);
    let stop = match plan.abort {
        true => Event::Abort,
        false => Event::Stop,
    };
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
        if std::env::var("PROPERTY_TRACE").is_ok() {
            eprintln!("{now}: {action:?}");
        }
        if let Some(max) = plan.max_requests {
            if poller.requests() > max {
                return Err(format!("{} requests, budget {max}", poller.requests()));
            }
        }
        // Events that happen before `until`: a stop once, the webhooks due.
        let mut events_until = |poller: &mut Poller, now: &mut u64, until: u64| -> bool {
            let mut due: Vec<(u64, Event)> = vec![];
            if let Some(t) = plan.stop_at.filter(|&t| !stopped && t <= until) {
                due.push((t, stop.clone()));
            }
            while let Some(&(t, kind)) = webhooks.get(hooked).filter(|w| w.0 <= until) {
                due.push((t, Event::Webhook(webhook(kind))));
                hooked += 1;
            }
            due.sort_by_key(|d| d.0);
            let any = !due.is_empty();
            for (t, event) in due {
                *now = (*now).max(t);
                stopped |= event == stop;
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
                if consumer_failures < 3 && rng.below(100) < plan.consumer_fail_pct {
                    // The consumer failed to take the rows: they must come again.
                    consumer_failures += 1;
                    poller.handle(Event::BatchFailed, now);
                    match poller.next_action(now) {
                        Action::Fail(e) if e.code == ErrorCode::CallbackFailed => {}
                        other => return Err(format!("{other:?} after a failed batch")),
                    }
                    let cursor = poller.cursor();
                    poller =
                        Poller::new(plan.config(), Some(&cursor), now).map_err(|e| e.message)?;
                    started = now;
                    continue;
                }
                out.delivered.extend_from_slice(new);
                out.delivered_at.resize(out.delivered.len(), now);
                poller.handle(Event::BatchDone, now);
                if rng.below(100) < plan.resume_pct && !plan.step_mode {
                    // A page reload: a new poller from the saved cursor.
                    poller = Poller::new(plan.config(), Some(&poller.cursor()), now)
                        .map_err(|e| e.message)?;
                    started = now;
                }
            }
            Action::Status { .. } => {}
            Action::Yield => {
                if !plan.step_mode {
                    return Err("yield outside step mode".into());
                }
                now = (now / TICK_MS + 1) * TICK_MS;
                poller = Poller::new(plan.config(), Some(&poller.cursor()), now)
                    .map_err(|e| e.message)?;
                started = now;
                // The webhooks relayed since the last tick are passed to this one.
                let tick = now;
                events_until(&mut poller, &mut now, tick);
                if now > 200 * TICK_MS + plan.finish_at {
                    return Ok(out);
                }
            }
            Action::Complete(_) | Action::Fail(_) | Action::Stopped(_) => {
                let requests = poller.requests();
                poller.handle(Event::TimerFired, now);
                poller.handle(
                    Event::Response {
                        id: requests,
                        outcome: Outcome::Network,
                    },
                    now,
                );
                poller.handle(Event::Webhook(webhook(WebhookKind::Succeeded)), now);
                poller.handle(Event::Webhook(webhook(WebhookKind::Failed)), now);
                if poller.next_action(now + 1_000_000) != Action::Idle
                    || poller.requests() != requests
                {
                    return Err("activity after the terminal action".into());
                }
                out.terminal = Some(action);
                out.ended_at = now;
                return Ok(out);
            }
            Action::Idle => return Err("idle with nothing pending".into()),
        }
    }
    Err("no end after 200 000 actions".into())
}

/// The plan that `seed` stands for: the same seed always gives the same plan.
fn plan_for(seed: u64) -> Plan {
    let bytes: Vec<u8> = seed.to_le_bytes().repeat(4);
    let rng = TestRng::from_seed(RngAlgorithm::ChaCha, &bytes);
    let mut runner = TestRunner::new_with_rng(RunnerConfig::default(), rng);
    plan().new_tree(&mut runner).expect("a plan").current()
}

fn env_u64(name: &str) -> Option<u64> {
    std::env::var(name).ok().and_then(|v| v.parse().ok())
}

#[test]
fn every_row_exactly_once_under_random_fault_plans() {
    let replay = env_u64("PROPERTY_SEED");
    let cases = env_u64("PROPERTY_CASES").unwrap_or(1_000);
    // New plans on every run; each failing one is printed with the seed that replays it.
    // `PROPERTY_FIRST_SEED` fixes the run's seeds, so two builds can be given the same plans.
    let first = replay
        .or(env_u64("PROPERTY_FIRST_SEED"))
        .unwrap_or_else(|| {
            let now = std::time::SystemTime::now().duration_since(UNIX_EPOCH);
            now.map_or(0, |d| d.as_nanos() as u64)
        });
    let seeds: Vec<u64> = match replay {
        Some(seed) => vec![seed],
        None => (0..cases).map(|i| first.wrapping_add(i)).collect(),
    };
    let mut tally = BTreeMap::new();
    let mut violations = vec![];
    for &seed in &seeds {
        let plan = plan_for(seed);
        if replay.is_some() {
            let _ = writeln!(std::io::stderr(), "{plan:#?}");
        }
        if let Err(why) = check(&plan, &mut tally) {
            violations.push(format!("PROPERTY_SEED={seed}: {why}"));
        }
    }
    // Written to the raw stderr so it shows without --nocapture.
    let mut err = std::io::stderr();
    for violation in violations.iter().take(10) {
        let _ = writeln!(err, "violation, replay with {violation}");
    }
    let _ = writeln!(
        err,
        "property: {} fault plans, {} violations; endings {tally:?}",
        seeds.len(),
        violations.len(),
    );
    assert!(violations.is_empty(), "{}", violations[0]);
}

/// Replays one plan the campaign found failing, as a test of its own.
fn replay(seed: u64) {
    let mut tally = BTreeMap::new();
    assert_eq!(
        check(&plan_for(seed), &mut tally),
        Ok(()),
        "PROPERTY_SEED={seed}"
    );
}

/// Found by the campaign: a count trailing the rows at the end, waited for at an interval
/// shorter than `retry.minDelayMs`, and a `next` link that shows only after the end. The one
/// re-read after the wait came inside that window and missed 7 rows.
#[test]
fn a_count_awaited_at_the_end_is_reread_no_sooner_than_a_recheck() {
    replay(1_796_139_435_972_225_994);
}

/// Found by the campaign: cron rounds of 3 requests on a finished run with no rows whose
/// `/results` answers 404. Each round began a new backoff, so the retries were never spent and
/// the rounds never ended; the 404s after the end now travel in the cursor.
#[test]
fn cron_rounds_smaller_than_the_retries_end_a_run_whose_results_404() {
    replay(1_796_140_707_720_260_542);
}
