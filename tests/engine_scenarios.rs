//! Scripted scenarios through the engine's public API: a scripted server answers each
//! request, a simulated clock advances with every sleep.
// Native only: `httpdate` and the file system are native dev-dependencies.
#![cfg(not(target_arch = "wasm32"))]

mod common;

use captaindata_poller::api::{
    classify_webhook, retry_hint, Outcome, Page, RetryHint, RunInfo, Webhook, WebhookKind,
};
use captaindata_poller::engine::{
    Action, Batch, Config, EndPolicy, ErrorCode, Event, FetchRequest, PollError, Poller, ReadMode,
    RequestKind, SleepReason, Summary, ABORTED_TEXT, QUIET_TICKS,
};
use common::{config, page_of, parse_date, respond, run_info, BASE};
const RESULTS: &str = "https://api.captaindata.co/v3/jobs/job-1/results";
const RUN: &str = "https://api.captaindata.co/v3/jobs/job-1";

/// A server answer: the outcome and the ids of the rows in the `results` array.
struct Reply {
    outcome: Outcome,
    rows: Vec<u64>,
}

fn page(rows: std::ops::Range<u64>, next: Option<&str>) -> Reply {
    let rows: Vec<u64> = rows.collect();
    let outcome = Outcome::Results(Page {
        len: rows.len(),
        has_next_page: next.is_some(),
        next: next.map(str::to_string),
        keys: Some(rows.iter().map(u64::to_string).collect()),
    });
    Reply { outcome, rows }
}

fn run(status: &str, rows: u64) -> Reply {
    Reply {
        outcome: Outcome::Run(run_info(status, rows)),
        rows: vec![],
    }
}

fn http(status: u16, retry_after: Option<&str>, message: Option<&str>) -> Reply {
    http_hint(status, retry_hint(retry_after, None, parse_date), message)
}

fn http_hint(status: u16, retry: Option<RetryHint>, message: Option<&str>) -> Reply {
    let outcome = Outcome::Http {
        status,
        retry,
        message: message.map(str::to_string),
    };
    Reply {
        outcome,
        rows: vec![],
    }
}

fn fault(outcome: Outcome) -> Reply {
    Reply {
        outcome,
        rows: vec![],
    }
}

/// What the user of the poller saw.
#[derive(Default, Debug)]
struct Log {
    fetches: Vec<FetchRequest>,
    /// When each fetch was sent.
    fetch_times: Vec<u64>,
    sleeps: Vec<(u32, SleepReason)>,
    delivered: Vec<u64>,
    /// When each delivered row reached the user.
    delivered_at: Vec<u64>,
    statuses: Vec<String>,
    /// `paused_for_ms` of every status report.
    paused: Vec<Option<u64>>,
    cursors: Vec<String>,
    complete: Option<Summary>,
    error: Option<PollError>,
    yielded: bool,
    now: u64,
    first_offset: Option<u64>,
}

/// [`config`] reading the results on every tick (the status every few reads): the tests
/// that spell out that mode's exact request sequence.
fn every_tick() -> Config {
    let mut config = config();
    config.read_mode = ReadMode::EveryTick;
    config
}

/// Drives `poller` until it ends or idles, answering requests with `server(request, now)`.
fn drive(poller: &mut Poller, now: u64, server: impl FnMut(&FetchRequest, u64) -> Reply) -> Log {
    drive_hooked(poller, now, vec![], server)
}

/// [`drive`] with webhooks relayed at the given times (the glue cancels a pending sleep).
fn drive_hooked(
    poller: &mut Poller,
    now: u64,
    mut hooks: Vec<(u64, Webhook)>,
    mut server: impl FnMut(&FetchRequest, u64) -> Reply,
) -> Log {
    let mut log = Log {
        now,
        ..Log::default()
    };
    hooks.sort_by_key(|h| std::cmp::Reverse(h.0));
    // Relays the next webhook due before `until`; true when one was.
    let mut relay = |poller: &mut Poller, now: &mut u64, until: u64| match hooks.last() {
        Some((at, _)) if *at < until => {
            let (at, hook) = hooks.pop().expect("a webhook");
            *now = (*now).max(at);
            poller.handle(Event::Webhook(hook), *now);
            true
        }
        _ => false,
    };
    let mut rows: Vec<u64> = vec![];
    for _ in 0..10_000 {
        match poller.next_action(log.now) {
            Action::Fetch(request) => {
                let reply = server(&request, log.now);
                if matches!(reply.outcome, Outcome::Results(_)) {
                    rows = reply.rows;
                }
                log.fetch_times.push(log.now);
                let answered = log.now + 10;
                while relay(poller, &mut log.now, answered) {}
                log.now = answered;
                log.fetches.push(request.clone());
                poller.handle(
                    Event::Response {
                        id: request.id,
                        outcome: reply.outcome,
                    },
                    log.now,
                );
            }
            Action::Sleep { ms, reason } => {
                log.sleeps.push((ms, reason));
                let wake = log.now + u64::from(ms);
                if !relay(poller, &mut log.now, wake) {
                    log.now = wake;
                    poller.handle(Event::TimerFired, log.now);
                }
            }
            Action::Emit(batch) => {
                // Batches are contiguous: each starts where the previous one ended.
                let first = *log.first_offset.get_or_insert(batch.offset);
                assert_eq!(batch.offset, first + log.delivered.len() as u64);
                log.delivered
                    .extend_from_slice(&rows[batch.start..batch.end]);
                log.delivered_at.resize(log.delivered.len(), log.now);
                poller.handle(Event::BatchDone, log.now);
                log.cursors.push(poller.cursor());
            }
            Action::Status { run, paused_for_ms } => {
                log.statuses.push(run.status);
                log.paused.push(paused_for_ms);
            }
            Action::Yield => {
                log.yielded = true;
                return log;
            }
            Action::Complete(summary) | Action::Stopped(summary) => {
                log.complete = Some(summary);
                return log;
            }
            Action::Fail(error) => {
                log.error = Some(error);
                return log;
            }
            Action::Idle => return log,
        }
    }
    panic!("the poller never ended");
}

fn code(log: &Log) -> Option<ErrorCode> {
    log.error.as_ref().map(|e| e.code)
}

fn urls(log: &Log) -> Vec<&str> {
    log.fetches.iter().map(|f| f.url.as_str()).collect()
}

fn assert_all_requests_after_terminal_are_refused(poller: &mut Poller, now: u64) {
    assert!(poller.is_terminal());
    let before = poller.requests();
    poller.handle(Event::TimerFired, now);
    poller.handle(
        Event::Response {
            id: 1,
            outcome: Outcome::Network,
        },
        now,
    );
    assert_eq!(poller.next_action(now + 1_000_000), Action::Idle);
    assert_eq!(poller.requests(), before);
}

#[test]
fn rows_over_several_pages_arrive_once_in_order_then_complete() {
    let mut poller = Poller::new(every_tick(), None, 0).unwrap();
    let log = drive(&mut poller, 0, |req, _| match req.url.as_str() {
        RESULTS => page(0..3, Some("/v3/jobs/job-1/results?page=2")),
        u if u.ends_with("page=2") => page(3..6, Some(&format!("{RESULTS}?page=3"))),
        u if u.ends_with("page=3") => page(6..7, None),
        RUN => run("finished", 7),
        other => panic!("unexpected {other}"),
    });
    assert_eq!(log.delivered, (0..7).collect::<Vec<_>>());
    let summary = log.complete.expect("completed");
    assert_eq!(
        (summary.status.as_str(), summary.total_results),
        ("finished", 7)
    );
    assert_eq!(summary.requests as usize, log.fetches.len());
    // Catching up needs no sleep: three pages, the status, one final read of the tail.
    assert!(log.sleeps.is_empty());
    assert_eq!(log.fetches.len(), 5);
    assert_all_requests_after_terminal_are_refused(&mut poller, log.now);
}

#[test]
fn a_growing_tail_page_delivers_only_its_new_rows() {
    let mut poller = Poller::new(config(), None, 0).unwrap();
    let log = drive(&mut poller, 0, |req, now| {
        let available = (now / 1_000).min(5);
        match req.kind {
            RequestKind::Results => page(0..available, None),
            RequestKind::Run if available == 5 => run("finished", 5),
            RequestKind::Run => run("running", available),
        }
    });
    assert_eq!(log.delivered, vec![0, 1, 2, 3, 4]);
    assert_eq!(log.complete.map(|s| s.total_results), Some(5));
    // The steady cadence: the interval, lengthened by up to 5 % (never shortened).
    assert!(log
        .sleeps
        .iter()
        .all(|s| (1_000..=1_050).contains(&s.0) && s.1 == SleepReason::Interval));
    assert!(log.statuses.contains(&"running".to_string()));
}

#[test]
fn growth_slowing_down_reads_the_status_so_the_end_is_noticed_within_an_interval() {
    // Ten rows a second until the run ends between two polls: the poll after the end brings
    // fewer rows than the one before, which must trigger the status read at once.
    let end = 5_500;
    let mut poller = Poller::new(config(), None, 0).unwrap();
    let log = drive(&mut poller, 0, |req, now| {
        let available = now.min(end) / 100;
        match req.kind {
            RequestKind::Results => page(0..available, None),
            RequestKind::Run if now >= end => run("finished", available),
            RequestKind::Run => run("running", available),
        }
    });
    assert_eq!(log.delivered, (0..55).collect::<Vec<_>>());
    assert_eq!(log.complete.map(|s| s.total_results), Some(55));
    let noticed_after = log.now - end;
    assert!(
        noticed_after < 1_000,
        "completion noticed {noticed_after} ms after the run ended (interval 1000 ms)"
    );
}

#[test]
fn resume_mid_page_from_a_cursor_neither_repeats_nor_loses_rows() {
    let server = |req: &FetchRequest, now: u64| match req.url.as_str() {
        RESULTS => page(0..4, Some("/v3/jobs/job-1/results?p=2&k=%7E.x")),
        u if u.ends_with("p=2&k=%7E.x") => page(4..(6 + now / 1_000).min(9), None),
        _ => run(if now > 5_000 { "finished" } else { "running" }, 9),
    };
    let mut first = Poller::new(every_tick(), None, 0).unwrap();
    let mut seen = vec![];
    let mut cursor = None;
    // Stop the first poller right after it delivered part of page 2.
    for _ in 0..50 {
        match first.next_action(0) {
            Action::Fetch(req) => {
                let reply = server(&req, 0);
                seen.extend(reply.rows.clone());
                first.handle(
                    Event::Response {
                        id: req.id,
                        outcome: reply.outcome,
                    },
                    0,
                );
            }
            Action::Emit(batch) if batch.offset > 0 => {
                first.handle(Event::BatchDone, 0);
                cursor = Some(first.cursor());
                first.handle(Event::Stop, 0);
            }
            Action::Emit(_) => first.handle(Event::BatchDone, 0),
            Action::Stopped(summary) => {
                assert_eq!(summary.status, "stopped");
                break;
            }
            _ => {}
        }
    }
    let cursor = cursor.expect("a cursor after page 2");
    assert!(!cursor.contains("captaindata"), "no host in the cursor");
    let mut second = Poller::new(every_tick(), Some(&cursor), 1_000).unwrap();
    let log = drive(&mut second, 1_000, server);
    assert_eq!(
        log.first_offset,
        Some(6),
        "resumes after the 6 rows delivered"
    );
    assert_eq!(log.delivered, vec![6, 7, 8]);
    assert_eq!(log.complete.as_ref().map(|s| s.total_results), Some(9));
    assert!(
        urls(&log)[0].ends_with("?p=2&k=%7E.x"),
        "reads the saved page again first"
    );
}

#[test]
fn a_cursor_of_another_run_or_garbage_is_refused() {
    let poller = Poller::new(config(), None, 0).unwrap();
    let other = Config::new(BASE, "job-2").unwrap();
    let err = Poller::new(other, Some(&poller.cursor()), 0).unwrap_err();
    assert_eq!(
        (err.option, err.message.as_str()),
        (
            "cursor",
            "Expected `cursor` to be a cursor of run job-2 (got one of run job-1)"
        )
    );
    let err = Poller::new(config(), Some("{\"x\":1}"), 0).unwrap_err();
    assert_eq!(
        err.message,
        "Expected `cursor` to be a string from poller.cursor"
    );
}

#[test]
fn a_429_with_retry_after_waits_as_asked_within_bounds() {
    let mut calls = 0;
    let mut poller = Poller::new(every_tick(), None, 0).unwrap();
    let log = drive(&mut poller, 0, |req, _| {
        calls += 1;
        match (calls, req.kind) {
            (1, _) => http(429, Some("2"), None),
            (2, _) => http(429, Some("86400000000"), None),
            (3, _) => http(429, Some("0"), None),
            (_, RequestKind::Results) => page(0..2, None),
            (_, RequestKind::Run) => run("finished", 2),
        }
    });
    let backoffs: Vec<u32> = log.sleeps.iter().map(|s| s.0).collect();
    assert_eq!(backoffs, vec![2_000, 5_000, 100]);
    assert!(
        urls(&log)[..4].iter().all(|u| *u == RESULTS),
        "the same request is re-sent"
    );
    let summary = log.complete.expect("completed");
    assert_eq!((summary.retries, summary.total_results), (3, 2));
}

#[test]
fn a_burst_of_5xx_then_success_completes_and_too_many_gives_up() {
    let mut calls = 0;
    let mut poller = Poller::new(config(), None, 0).unwrap();
    let log = drive(&mut poller, 0, |req, _| {
        calls += 1;
        match (calls, req.kind) {
            (1..=3, _) => http(500 + calls as u16, None, None),
            (_, RequestKind::Results) => page(0..1, None),
            (_, RequestKind::Run) => run("warning", 1),
        }
    });
    assert_eq!(
        log.complete.map(|s| (s.status, s.retries)),
        Some(("warning".into(), 3))
    );
    for (ms, reason) in &log.sleeps {
        assert_eq!(*reason, SleepReason::Backoff);
        assert!((100..=400).contains(ms), "{ms}");
    }

    let mut poller = Poller::new(config(), None, 0).unwrap();
    let log = drive(&mut poller, 0, |_, _| http(503, None, None));
    let error = log.error.expect("failed");
    assert_eq!(error.code, ErrorCode::RetriesExhausted);
    assert_eq!(error.message, "HTTP 503 after 3 retries");
    assert_eq!(log.fetches.len(), 4);

    let mut poller = Poller::new(config(), None, 0).unwrap();
    let log = drive(&mut poller, 0, |_, _| {
        fault(Outcome::BadBody("not JSON".into()))
    });
    assert_eq!(code(&log), Some(ErrorCode::BadResponse));
}

#[test]
fn network_errors_and_timeouts_are_retried() {
    let mut calls = 0;
    let mut poller = Poller::new(config(), None, 0).unwrap();
    let log = drive(&mut poller, 0, |req, _| {
        calls += 1;
        match (calls, req.kind) {
            (1, _) => fault(Outcome::Network),
            (2, _) => fault(Outcome::Timeout),
            (_, RequestKind::Results) => page(0..1, None),
            (_, RequestKind::Run) => run("finished", 1),
        }
    });
    assert_eq!(log.delivered, vec![0]);
    assert!(log.complete.is_some());
}

#[test]
fn all_inputs_failed_in_a_4xx_body_stops_at_once() {
    let mut poller = Poller::new(config(), None, 0).unwrap();
    let log = drive(&mut poller, 0, |_, _| {
        http(400, None, Some("All Inputs Failed"))
    });
    assert_eq!(code(&log), Some(ErrorCode::AllInputsFailed));
    assert_eq!(log.fetches.len(), 1, "never retried");
    assert_all_requests_after_terminal_are_refused(&mut poller, log.now);
}

#[test]
fn all_inputs_failed_as_the_runs_error_message_stops_at_once() {
    let mut poller = Poller::new(every_tick(), None, 0).unwrap();
    let log = drive(&mut poller, 0, |req, _| match req.kind {
        RequestKind::Results => page(0..0, None),
        RequestKind::Run => {
            let info = RunInfo {
                status: "running".into(),
                error_message: Some("ALL INPUTS FAILED".into()),
                ..RunInfo::default()
            };
            Reply {
                outcome: Outcome::Run(info),
                rows: vec![],
            }
        }
    });
    assert_eq!(code(&log), Some(ErrorCode::AllInputsFailed));
    assert_eq!(log.fetches.len(), 2, "no request after the run said so");
    assert_eq!(log.statuses, vec!["running"]);
}

#[test]
fn bad_credentials_and_unknown_runs_are_not_retried() {
    for (status, want) in [
        (401, ErrorCode::Unauthorized),
        (403, ErrorCode::Unauthorized),
        (404, ErrorCode::NotFound),
        (400, ErrorCode::BadResponse),
        (405, ErrorCode::BadResponse),
    ] {
        let mut poller = Poller::new(every_tick(), None, 0).unwrap();
        let log = drive(&mut poller, 0, |_, _| http(status, None, None));
        let error = log.error.expect("failed");
        assert_eq!((error.code, error.http_status), (want, Some(status)));
        // A 404 on the results is NOT_FOUND only once the run is 404 too.
        let reads = if status == 404 { 2 } else { 1 };
        assert_eq!(log.fetches.len(), reads, "{status}: never retried");
    }
}

#[test]
fn max_duration_ends_polling_on_time() {
    let mut config = config();
    config.max_duration_ms = Some(10_500);
    let mut poller = Poller::new(config, None, 0).unwrap();
    let log = drive(&mut poller, 0, |req, _| match req.kind {
        RequestKind::Results => page(0..0, None),
        RequestKind::Run => run("running", 0),
    });
    assert_eq!(code(&log), Some(ErrorCode::Timeout));
    assert!(log.now <= 10_500, "ended at {}", log.now);
}

#[test]
fn max_requests_is_never_exceeded() {
    let mut config = config();
    config.max_requests = Some(7);
    let mut poller = Poller::new(config, None, 0).unwrap();
    let log = drive(&mut poller, 0, |req, _| match req.kind {
        RequestKind::Results => page(0..0, None),
        RequestKind::Run => run("running", 0),
    });
    assert_eq!(code(&log), Some(ErrorCode::BudgetExhausted));
    assert_eq!(log.fetches.len(), 7);
}

#[test]
fn stop_mid_request_ignores_the_late_answer() {
    let mut poller = Poller::new(config(), None, 0).unwrap();
    let Action::Fetch(req) = poller.next_action(0) else {
        panic!("fetch first")
    };
    poller.handle(Event::Abort, 5);
    let Action::Fail(error) = poller.next_action(5) else {
        panic!("abort")
    };
    assert_eq!(error.code, ErrorCode::Aborted);
    assert_eq!(error.message, ABORTED_TEXT);
    let outcome = page(0..3, None).outcome;
    respond(&mut poller, &req, outcome, 6);
    assert_eq!(poller.next_action(6), Action::Idle);
    assert_eq!(poller.requests(), 1);
}

#[test]
fn stop_mid_sleep_sends_nothing_more() {
    let mut poller = Poller::new(config(), None, 0).unwrap();
    let Action::Fetch(req) = poller.next_action(0) else {
        panic!("fetch first")
    };
    respond(&mut poller, &req, Outcome::Network, 1);
    assert!(matches!(
        poller.next_action(1),
        Action::Sleep {
            reason: SleepReason::Backoff,
            ..
        }
    ));
    poller.handle(Event::Stop, 2);
    poller.handle(Event::TimerFired, 3);
    let Action::Stopped(summary) = poller.next_action(3) else {
        panic!("a stop() is not an error")
    };
    assert_eq!(summary.status, "stopped");
    assert_eq!((summary.requests, summary.retries), (1, 1));
    assert_eq!(poller.next_action(4), Action::Idle);
    assert_eq!(poller.requests(), 1);
}

/// Runs `poller` to its first batch and returns it (its delivery not yet confirmed).
fn first_batch(poller: &mut Poller, rows: std::ops::Range<u64>) -> Batch {
    for _ in 0..20 {
        match poller.next_action(0) {
            Action::Fetch(req) => {
                let reply = match req.kind {
                    RequestKind::Results => page(rows.clone(), None),
                    RequestKind::Run => run("running", rows.end),
                };
                respond(poller, &req, reply.outcome, 0);
            }
            Action::Emit(batch) => return batch,
            Action::Status { .. } => {}
            other => panic!("unexpected {other:?}"),
        }
    }
    panic!("no batch")
}

#[test]
fn a_failed_batch_ends_with_callback_failed_and_keeps_the_cursor_before_it() {
    let mut poller = Poller::new(config(), None, 0).unwrap();
    let start = poller.cursor();
    let batch = first_batch(&mut poller, 0..3);
    assert_eq!(poller.cursor(), start, "not confirmed yet");
    assert_ne!(
        poller.cursor_after_batch(),
        start,
        "the batch carries the cursor after it"
    );
    poller.handle(Event::BatchFailed, 1);
    let Action::Fail(error) = poller.next_action(1) else {
        panic!("CALLBACK_FAILED")
    };
    assert_eq!(error.code, ErrorCode::CallbackFailed);
    assert!(error.message.contains("rows 0..3"), "{}", error.message);
    assert_eq!(poller.cursor(), start);
    assert_eq!(poller.delivered(), 0);
    // A poller resumed from the cursor delivers the same rows again.
    let mut again = Poller::new(config(), Some(&poller.cursor()), 2).unwrap();
    assert_eq!(first_batch(&mut again, 0..3), batch);
    again.handle(Event::BatchDone, 3);
    assert_eq!(again.delivered(), 3);
    assert_eq!(again.cursor(), again.cursor_after_batch());
}

#[test]
fn a_stop_while_a_batch_is_pending_leaves_it_unconfirmed() {
    let mut poller = Poller::new(config(), None, 0).unwrap();
    first_batch(&mut poller, 0..3);
    poller.handle(Event::Stop, 1);
    poller.handle(Event::BatchDone, 1); // too late: the stop came first
    let Action::Stopped(summary) = poller.next_action(1) else {
        panic!("stopped")
    };
    assert_eq!(summary.total_results, 0);
    assert_eq!(poller.delivered(), 0);
}

#[test]
fn a_fetch_that_threw_fails_at_once_without_retrying() {
    let mut poller = Poller::new(config(), None, 0).unwrap();
    let Action::Fetch(req) = poller.next_action(0) else {
        panic!("fetch first")
    };
    respond(&mut poller, &req, Outcome::NotSent, 1);
    let Action::Fail(error) = poller.next_action(1) else {
        panic!("no retry")
    };
    assert_eq!(error.code, ErrorCode::NetworkError);
    assert_eq!(poller.requests(), 1);
}

#[test]
fn a_404_names_its_path_and_a_base_url_without_version() {
    let not_found = |base: &str| {
        let config = Config::new(base, "job-1").unwrap();
        let mut poller = Poller::new(config, None, 0).unwrap();
        let Action::Fetch(req) = poller.next_action(0) else {
            panic!("fetch first")
        };
        respond(
            &mut poller,
            &req,
            http(404, None, Some("Not found")).outcome,
            1,
        );
        let Action::Fail(error) = poller.next_action(1) else {
            panic!("NOT_FOUND")
        };
        assert_eq!(error.code, ErrorCode::NotFound);
        error.message
    };
    let versioned = not_found(BASE);
    assert_eq!(versioned, "HTTP 404: Not found (GET /v3/jobs/job-1)");
    let bare = not_found("https://api.captaindata.co");
    assert!(
        bare.starts_with("HTTP 404: Not found (GET /jobs/job-1; "),
        "{bare}"
    );
    assert!(bare.contains("no version segment"), "{bare}");
}

#[test]
fn a_failed_run_delivers_its_partial_rows_then_fails() {
    let mut poller = Poller::new(config(), None, 0).unwrap();
    let log = drive(&mut poller, 0, |req, _| match req.kind {
        RequestKind::Results => page(0..2, None),
        RequestKind::Run => {
            let info = RunInfo {
                status: "Stopped".into(),
                error_message: Some("quota reached".into()),
                ..RunInfo::default()
            };
            Reply {
                outcome: Outcome::Run(info),
                rows: vec![],
            }
        }
    });
    assert_eq!(log.delivered, vec![0, 1]);
    let error = log.error.expect("failed");
    assert_eq!(error.code, ErrorCode::JobFailed);
    assert!(error.message.contains("Stopped") && error.message.contains("quota reached"));
}

#[test]
fn no_request_is_sent_before_the_batch_is_done() {
    let mut poller = Poller::new(every_tick(), None, 0).unwrap();
    let Action::Fetch(req) = poller.next_action(0) else {
        panic!("fetch first")
    };
    let outcome = page(0..3, Some("/v3/jobs/job-1/results?page=2")).outcome;
    respond(&mut poller, &req, outcome, 0);
    assert!(matches!(poller.next_action(0), Action::Emit(_)));
    for t in 1..5 {
        assert_eq!(poller.next_action(t * 100_000), Action::Idle);
    }
    poller.handle(Event::BatchDone, 500_000);
    assert!(matches!(poller.next_action(500_000), Action::Fetch(r) if r.url.ends_with("page=2")));
}

#[test]
fn a_next_page_on_another_origin_is_refused_without_a_request() {
    for next in [
        "https://evil.example/v3/jobs/job-1/results?page=2",
        "http://api.captaindata.co/v3/x",
    ] {
        let mut poller = Poller::new(every_tick(), None, 0).unwrap();
        let log = drive(&mut poller, 0, |_, _| page(0..2, Some(next)));
        assert_eq!(log.delivered, vec![0, 1], "rows before it are kept");
        assert_eq!(code(&log), Some(ErrorCode::BadResponse));
        assert!(urls(&log).iter().all(|u| u.starts_with(BASE)));
        assert_eq!(log.fetches.len(), 1);
    }
}

#[test]
fn dedupe_drops_rows_repeated_at_the_start_of_the_next_page() {
    let mut config = config();
    config.dedupe = true;
    let mut poller = Poller::new(config, None, 0).unwrap();
    let log = drive(&mut poller, 0, |req, _| match req.url.as_str() {
        RESULTS => page(0..4, Some("/v3/jobs/job-1/results?page=2")),
        u if u.ends_with("page=2") => page(2..7, None),
        _ => run("finished", 7),
    });
    assert_eq!(log.delivered, (0..7).collect::<Vec<_>>());
    assert_eq!(log.complete.map(|s| s.total_results), Some(7));
}

#[test]
fn step_mode_yields_each_tick_and_resumes_to_completion() {
    let mut step_config = config();
    step_config.step_mode = true;
    step_config.max_requests = Some(3);
    let server = |req: &FetchRequest, now: u64| {
        let available = (now / 60_000 * 2).min(8);
        match req.url.as_str() {
            RESULTS => page(
                0..available.min(4),
                (available > 4).then_some("/v3/jobs/job-1/results?page=2"),
            ),
            u if u.ends_with("page=2") => page(4..available, None),
            _ if available == 8 => run("finished", 8),
            _ => run("running", available),
        }
    };
    let mut cursor: Option<String> = None;
    let mut delivered = vec![];
    let mut ticks = 0;
    let summary = loop {
        ticks += 1;
        assert!(ticks < 50, "never completed");
        let now = ticks * 60_000;
        let mut poller = Poller::new(step_config.clone(), cursor.as_deref(), now).unwrap();
        let log = drive(&mut poller, now, server);
        assert!(log.fetches.len() <= 3, "tick budget respected");
        delivered.extend(log.delivered);
        cursor = Some(poller.cursor());
        assert!(log.error.is_none(), "{:?}", log.error);
        if let Some(summary) = log.complete {
            break summary;
        }
        assert!(log.yielded);
    };
    assert_eq!(delivered, (0..8).collect::<Vec<_>>());
    assert_eq!(summary.total_results, 8);
}

#[test]
fn sleeps_never_exceed_a_32_bit_timer() {
    let mut config = every_tick();
    config.interval_ms = u32::MAX;
    config.max_duration_ms = None;
    let mut poller = Poller::new(config, None, 0).unwrap();
    let Action::Fetch(req) = poller.next_action(0) else {
        panic!("fetch first")
    };
    respond(&mut poller, &req, page(0..1, None).outcome, 0);
    assert!(matches!(poller.next_action(0), Action::Emit(_)));
    poller.handle(Event::BatchDone, 0);
    let Action::Fetch(req) = poller.next_action(0) else {
        panic!("status read")
    };
    respond(&mut poller, &req, run("running", 1).outcome, 0);
    assert!(matches!(poller.next_action(0), Action::Status { .. }));
    assert_eq!(
        poller.next_action(0),
        Action::Sleep {
            ms: 2_147_483_647,
            reason: SleepReason::Interval
        }
    );
}

// ---- Webhooks: hints to read now, never the proof of the end ----

fn hook(message: &str, error: Option<&str>) -> Webhook {
    classify_webhook(Some(message), error, None)
}

/// 200 rows appear over 4 s (one every 20 ms); the API says `end_status` from `end_at` on.
fn growing_run(end_at: u64, end_status: &str) -> impl FnMut(&FetchRequest, u64) -> Reply + '_ {
    move |req, now| {
        let available = (now / 20).min(200);
        match req.kind {
            RequestKind::Results => page(0..available, None),
            RequestKind::Run if now >= end_at => run(end_status, available),
            RequestKind::Run => run("running", available.saturating_sub(30)),
        }
    }
}

#[test]
fn a_created_webhook_ends_nothing_and_reads_nothing_early() {
    let created = hook("Job created.", None);
    assert_eq!(created.kind, WebhookKind::Created);
    let hooks = vec![(150, created.clone()), (1_500, created)];
    let mut poller = Poller::new(config(), None, 0).unwrap();
    let with = drive_hooked(&mut poller, 0, hooks, growing_run(4_500, "finished"));
    let mut poller = Poller::new(config(), None, 0).unwrap();
    let without = drive(&mut poller, 0, growing_run(4_500, "finished"));
    assert_eq!(with.delivered, (0..200).collect::<Vec<_>>());
    assert_eq!(with.complete.map(|s| s.total_results), Some(200));
    assert_eq!(
        with.fetch_times, without.fetch_times,
        "the same reads, at the same times"
    );
}

#[test]
fn a_success_webhook_before_the_api_says_finished_reads_on_until_it_does() {
    let succeeded = hook("Job successfully finished.", None);
    let mut poller = Poller::new(config(), None, 0).unwrap();
    let log = drive_hooked(
        &mut poller,
        0,
        vec![(1_500, succeeded.clone()), (1_600, succeeded)],
        growing_run(4_500, "finished"),
    );
    assert_eq!(log.delivered, (0..200).collect::<Vec<_>>(), "every row");
    let summary = log.complete.expect("completed");
    assert_eq!(summary.total_results, 200);
    assert!(
        log.now >= 4_500,
        "completed at {} before the API said so",
        log.now
    );
    // The webhook cut the interval short: the status was read at once.
    let at = log.fetch_times.iter().position(|&t| t >= 1_500).unwrap();
    assert_eq!(
        (log.fetch_times[at], log.fetches[at].kind),
        (1_500, RequestKind::Run)
    );
    // Then the short cadence (min_delay_ms = 100) for webhook_reads (10) reads, then the
    // interval again.
    let short = log.sleeps.iter().filter(|s| s.0 == 100).count();
    assert_eq!(short, 10);
    assert!(log.now - 4_500 < 1_100, "end noticed within an interval");
}

#[test]
fn a_failed_webhook_is_confirmed_by_the_status_and_lends_its_error_text() {
    let failed = hook("Job failed.", Some("not enough credits"));
    let mut poller = Poller::new(config(), None, 0).unwrap();
    let log = drive_hooked(
        &mut poller,
        0,
        vec![(1_500, failed.clone())],
        growing_run(2_000, "shutdown"),
    );
    let error = log.error.expect("failed");
    assert_eq!(error.code, ErrorCode::JobFailed);
    assert!(
        log.now >= 2_000,
        "failed at {} before the API said so",
        log.now
    );
    assert!(error.message.contains("shutdown"), "{}", error.message);
    assert!(
        error.message.contains("not enough credits"),
        "{}",
        error.message
    );
    let n = log.delivered.len() as u64;
    assert!(n >= 100, "rows up to the end: {n}");
    assert_eq!(log.delivered, (0..n).collect::<Vec<_>>());

    // The API, not the webhook, decides: a failed webhook for a run that finishes completes.
    let mut poller = Poller::new(config(), None, 0).unwrap();
    let hooks = vec![(1_500, failed)];
    let log = drive_hooked(&mut poller, 0, hooks, growing_run(4_500, "finished"));
    assert_eq!(log.complete.map(|s| s.total_results), Some(200));
}

#[test]
fn a_webhook_alone_never_makes_the_cursor_terminal_and_step_mode_yields_while_running() {
    // Status-guided, the round reads the status first; every tick, the results first.
    for (mode, first) in [
        (
            ReadMode::StatusGuided,
            [RequestKind::Run, RequestKind::Results],
        ),
        (
            ReadMode::EveryTick,
            [RequestKind::Results, RequestKind::Run],
        ),
    ] {
        let mut step = config();
        step.read_mode = mode;
        step.step_mode = true;
        let mut poller = Poller::new(step.clone(), None, 1_000).unwrap();
        poller.handle(
            Event::Webhook(hook("Job successfully finished.", None)),
            1_000,
        );
        let log = drive(&mut poller, 1_000, growing_run(9_000, "finished"));
        assert!(log.yielded && log.complete.is_none());
        let kinds: Vec<RequestKind> = log.fetches.iter().map(|f| f.kind).collect();
        assert_eq!(kinds, first, "{mode:?}: reads both, yields");
        // The next tick, from that cursor, with the API still running: no completion.
        let cursor = poller.cursor();
        let mut next = Poller::new(step.clone(), Some(&cursor), 2_000).unwrap();
        let log = drive(&mut next, 2_000, growing_run(9_000, "finished"));
        assert!(log.yielded && log.complete.is_none(), "{log:?}");
        // Once the API says finished, the round drains and completes.
        let mut last = Poller::new(step, Some(&next.cursor()), 9_000).unwrap();
        let log = drive(&mut last, 9_000, growing_run(9_000, "finished"));
        assert_eq!(log.complete.map(|s| s.total_results), Some(200));
    }
}

#[test]
fn a_webhook_during_a_backoff_does_not_cut_it_short() {
    let mut calls = 0;
    let mut poller = Poller::new(config(), None, 0).unwrap();
    let hooks = vec![(50, hook("Job successfully finished.", None))];
    let log = drive_hooked(&mut poller, 0, hooks, |req, _| {
        calls += 1;
        match (calls, req.kind) {
            (1, _) => http(429, Some("2"), None),
            (_, RequestKind::Results) => page(0..3, None),
            (_, RequestKind::Run) => run("finished", 3),
        }
    });
    assert_eq!(
        log.fetch_times[1], 2_010,
        "the retry waits the full Retry-After"
    );
    assert_eq!(log.complete.map(|s| s.total_results), Some(3));
}

// ---- Every form of paging.next ----

/// 180 rows in pages of 50, all there; `next_of(k)` is page k's `paging.next` (pages
/// numbered from `first`), `None` on the last page. Page k is read at `?page=k`; the first
/// page also without a parameter.
fn paged(first: u64, next_of: impl Fn(u64) -> String) -> impl FnMut(&FetchRequest, u64) -> Reply {
    move |req, _| {
        if req.kind == RequestKind::Run {
            return run("finished", 180);
        }
        let k = req
            .url
            .split_once("page=")
            .map_or(first, |(_, n)| n.parse::<u64>().unwrap());
        let start = (k - first) * 50;
        let end = (start + 50).min(180);
        let last = end == 180;
        let mut reply = page(start..end, None);
        if let Outcome::Results(p) = &mut reply.outcome {
            p.has_next_page = !last;
            p.next = (!last).then(|| next_of(k));
        }
        reply
    }
}

/// Page k's `paging.next`.
type NextOf = Box<dyn Fn(u64) -> String>;

#[test]
fn every_form_of_paging_next_reads_every_page() {
    let forms: Vec<(&str, u64, NextOf)> = vec![
        (
            "absolute URL",
            0,
            Box::new(|k| format!("{RESULTS}?page={}", k + 1)),
        ),
        (
            "path",
            0,
            Box::new(|k| format!("/v3/jobs/job-1/results?page={}", k + 1)),
        ),
        ("query", 0, Box::new(|k| format!("?page={}", k + 1))),
        ("page number from 0", 0, Box::new(|k| (k + 1).to_string())),
        ("page number from 1", 1, Box::new(|k| (k + 1).to_string())),
    ];
    for (form, first, next_of) in forms {
        let mut poller = Poller::new(every_tick(), None, 0).unwrap();
        let log = drive(&mut poller, 0, paged(first, next_of));
        assert_eq!(log.delivered, (0..180).collect::<Vec<_>>(), "{form}");
        assert_eq!(
            log.complete.as_ref().map(|s| s.total_results),
            Some(180),
            "{form}"
        );
        let pages: Vec<&str> = urls(&log)
            .into_iter()
            .filter(|u| u.contains("/results"))
            .collect();
        assert_eq!(
            pages.len(),
            5,
            "{form}: four pages and the final read: {pages:?}"
        );
        let want = format!("{RESULTS}?page={}", first + 3);
        assert_eq!(pages[3], want, "{form}");
    }
}

#[test]
fn a_page_number_replaces_the_page_parameter_and_a_page_naming_itself_is_the_tail() {
    let mut poller = Poller::new(config(), None, 0).unwrap();
    let log = drive(&mut poller, 0, |req, _| match req.url.as_str() {
        RUN => run("finished", 5),
        RESULTS => page(0..3, Some("/v3/jobs/job-1/results?size=3&page=1")),
        u if u.ends_with("?size=3&page=1") => page(3..5, Some("2")),
        u if u.ends_with("?size=3&page=2") => page(5..5, Some("2")),
        other => panic!("unexpected {other}"),
    });
    assert_eq!(log.delivered, (0..5).collect::<Vec<_>>());
    assert_eq!(log.complete.map(|s| s.total_results), Some(5));
}

#[test]
fn a_next_page_that_cannot_be_used_is_a_bad_response_not_a_short_success() {
    for next in [
        None,
        Some(""),
        Some("results?page=2"),
        Some("two"),
        Some("-1"),
    ] {
        let mut poller = Poller::new(config(), None, 0).unwrap();
        let log = drive(&mut poller, 0, |req, _| match req.kind {
            RequestKind::Run => run("finished", 100),
            RequestKind::Results => {
                let mut reply = page(0..50, None);
                if let Outcome::Results(p) = &mut reply.outcome {
                    p.has_next_page = true;
                    p.next = next.map(str::to_string);
                }
                reply
            }
        });
        assert_eq!(code(&log), Some(ErrorCode::BadResponse), "{next:?}");
        assert_eq!(log.delivered.len(), 50, "{next:?}: rows before it are kept");
        assert!(log.complete.is_none());
    }
}

// ---- Statuses ----

#[test]
fn completed_is_success_like_finished_in_any_case() {
    for status in ["completed", "COMPLETED", "Finished"] {
        let mut poller = Poller::new(config(), None, 0).unwrap();
        let log = drive(&mut poller, 0, |req, _| match req.kind {
            RequestKind::Results => page(0..4, None),
            RequestKind::Run => run(status, 4),
        });
        let summary = log.complete.expect(status);
        assert_eq!(
            (summary.status.as_str(), summary.total_results),
            (status, 4)
        );
    }
}

#[test]
fn a_paused_run_is_reported_with_how_long_then_ends_at_the_timeout() {
    let mut config = config();
    config.max_duration_ms = Some(10_500);
    let mut poller = Poller::new(config, None, 0).unwrap();
    let log = drive(&mut poller, 0, |req, _| match req.kind {
        RequestKind::Results => page(0..2, None),
        RequestKind::Run => run("paused", 2),
    });
    assert_eq!(code(&log), Some(ErrorCode::Timeout));
    assert_eq!(log.delivered, vec![0, 1]);
    assert!(log.statuses.len() >= 5 && log.statuses.iter().all(|s| s == "paused"));
    let paused: Vec<u64> = log
        .paused
        .iter()
        .map(|p| p.expect("paused_for_ms"))
        .collect();
    assert_eq!(paused[0], 0);
    assert!(paused.windows(2).all(|w| w[1] > w[0]), "{paused:?}");
    assert!(*paused.last().unwrap() >= 8_000, "{paused:?}");
}

#[test]
fn paused_then_running_reports_no_pause() {
    let mut poller = Poller::new(config(), None, 0).unwrap();
    let log = drive(&mut poller, 0, |req, now| match req.kind {
        RequestKind::Results => page(0..(now / 1_000).min(6), None),
        RequestKind::Run if now < 2_500 => run("paused", 0),
        RequestKind::Run if now < 6_000 => run("running", 3),
        RequestKind::Run => run("finished", 6),
    });
    assert_eq!(log.complete.map(|s| s.total_results), Some(6));
    let i = log.statuses.iter().position(|s| s == "running").unwrap();
    assert!(log.paused[..i].iter().all(Option::is_some));
    assert!(log.paused[i..].iter().all(Option::is_none));
}

// ---- 404 on /results ----

#[test]
fn results_404_while_the_run_exists_keeps_polling_until_rows_come() {
    let mut poller = Poller::new(config(), None, 0).unwrap();
    let log = drive(&mut poller, 0, |req, now| match req.kind {
        RequestKind::Results if now < 3_000 => http(404, None, Some("no results")),
        RequestKind::Results => page(0..3, None),
        RequestKind::Run if now < 4_000 => run("pending", 0),
        RequestKind::Run => run("finished", 3),
    });
    assert_eq!(log.delivered, vec![0, 1, 2]);
    assert_eq!(log.complete.map(|s| s.total_results), Some(3));
}

#[test]
fn results_404_after_the_end_is_retried_and_completes_empty_only_if_the_run_counts_no_rows() {
    let mut poller = Poller::new(every_tick(), None, 0).unwrap();
    let log = drive(&mut poller, 0, |req, _| match req.kind {
        RequestKind::Results => http(404, None, None),
        RequestKind::Run => run("finished", 0),
    });
    assert_eq!(log.complete.map(|s| s.total_results), Some(0));
    // The first read, the status, the drain and its 3 retries.
    assert_eq!(log.fetches.len(), 6);

    let mut poller = Poller::new(every_tick(), None, 0).unwrap();
    let log = drive(&mut poller, 0, |req, _| match req.kind {
        RequestKind::Results => http(404, None, None),
        RequestKind::Run => run("finished", 12),
    });
    assert_eq!(code(&log), Some(ErrorCode::RetriesExhausted));
}

#[test]
fn results_404_and_run_404_is_not_found() {
    let mut poller = Poller::new(every_tick(), None, 0).unwrap();
    let log = drive(&mut poller, 0, |_, _| http(404, None, None));
    let error = log.error.expect("failed");
    assert_eq!(
        (error.code, error.http_status),
        (ErrorCode::NotFound, Some(404))
    );
    let kinds: Vec<RequestKind> = log.fetches.iter().map(|f| f.kind).collect();
    assert_eq!(kinds, [RequestKind::Results, RequestKind::Run]);
}

// ---- Counts lag ----

#[test]
fn a_lagging_count_and_a_full_tail_page_are_drained_to_the_last_row() {
    // The API says finished with a count that lags; the second page is full and claims to be
    // the last until 300 ms later, when a third page appears.
    let mut config = config();
    config.page_size = 3;
    let mut poller = Poller::new(config, None, 0).unwrap();
    let log = drive(&mut poller, 0, |req, now| {
        let late = now >= 300;
        match req.url.as_str() {
            RUN => run("finished", 4),
            RESULTS => page(0..3, Some("?page=2")),
            u if u.ends_with("page=2") => page(3..6, late.then_some("?page=3")),
            u if u.ends_with("page=3") => page(6..8, None),
            other => panic!("unexpected {other}"),
        }
    });
    assert_eq!(log.delivered, (0..8).collect::<Vec<_>>());
    assert_eq!(log.complete.map(|s| s.total_results), Some(8));
}

#[test]
fn a_full_tail_page_is_read_again_a_bounded_number_of_times() {
    let mut config = every_tick();
    config.page_size = 3;
    let mut poller = Poller::new(config, None, 0).unwrap();
    let log = drive(&mut poller, 0, |req, _| match req.kind {
        RequestKind::Run => run("finished", 3),
        RequestKind::Results => page(0..3, None),
    });
    assert_eq!(log.complete.map(|s| s.total_results), Some(3));
    // The count agrees with the rows and says the tail is full: the first read, the status,
    // and the drain `reread_delay_ms` after it, which is the one re-read.
    assert_eq!(log.fetches.len(), 3);
    assert_eq!(log.sleeps, vec![(100, SleepReason::Backoff)]);
}

#[test]
fn a_cron_round_at_the_end_reads_a_tail_the_count_fills_once() {
    // A round resumed 900 rows into the third page; the status says finished and counts
    // 3,000: the tail will be full. It is read once, `reread_delay_ms` after the status (the
    // re-read a full tail needs), not at once and again.
    let mut config = config();
    config.step_mode = true;
    let cursor = config.cursor_at(2_900, 1_000);
    let mut poller = Poller::new(config, Some(&cursor), 0).unwrap();
    let log = drive(&mut poller, 0, |req, _| match req.kind {
        RequestKind::Run => run("finished", 3_000),
        RequestKind::Results => page(2_000..3_000, None),
    });
    assert_eq!(log.complete.map(|s| s.total_results), Some(3_000));
    let kinds: Vec<RequestKind> = log.fetches.iter().map(|f| f.kind).collect();
    assert_eq!(kinds, [RequestKind::Run, RequestKind::Results]);
    assert_eq!(log.sleeps, vec![(100, SleepReason::Backoff)]);
    assert_eq!(log.delivered, (2_900..3_000).collect::<Vec<u64>>());
}

#[test]
fn the_end_of_a_run_is_read_by_its_own_settings_not_the_retries() {
    // A tail that stays full and behind its count: re-read as often as `ending.rereads` says,
    // `ending.reread_delay_ms` apart, whatever the retry policy (3 retries, 100 ms).
    let mut config = every_tick();
    config.page_size = 3;
    config.ending = Some(EndPolicy {
        rereads: 1,
        reread_delay_ms: 700,
        ..EndPolicy::from(config.retry)
    });
    let mut poller = Poller::new(config, None, 0).unwrap();
    let log = drive(&mut poller, 0, |req, _| match req.kind {
        RequestKind::Run => run("finished", 5),
        RequestKind::Results => page(0..3, None),
    });
    assert_eq!(log.complete.map(|s| s.total_results), Some(3));
    // The first read, the status, the drain, one re-read.
    assert_eq!(log.fetches.len(), 4);
    assert_eq!(log.sleeps, vec![(700, SleepReason::Backoff)]);
}

#[test]
fn the_reads_after_a_webhook_have_their_own_pause() {
    let succeeded = hook("Job successfully finished.", None);
    let mut config = config();
    config.webhook_reads = 3;
    config.webhook_delay_ms = Some(250);
    let mut poller = Poller::new(config, None, 0).unwrap();
    let log = drive_hooked(
        &mut poller,
        0,
        vec![(1_500, succeeded)],
        growing_run(4_500, "finished"),
    );
    assert_eq!(log.complete.map(|s| s.total_results), Some(200));
    // Three fast reads 250 ms apart (not `retry.min_delay_ms`), then the interval again.
    let fast: Vec<_> = log.sleeps.iter().filter(|s| s.0 < 1_000).collect();
    assert_eq!(fast, vec![&(250, SleepReason::Interval); 3]);
}

#[test]
fn a_count_seen_trailing_is_waited_for_at_the_end_instead_of_rereading_a_full_tail() {
    // Status first; 3 rows (a full page) from 2.5 s, the run over at 5 s, its count 4 s behind
    // the rows. A read finds the rows before the count: at the end the count still says 0,
    // so the status is read again (not the full page) until it says 3, then the page once.
    let mut config = config();
    config.page_size = 3;
    let mut poller = Poller::new(config, None, 0).unwrap();
    let rows_at = |t: u64| if t >= 2_500 { 3 } else { 0 };
    let log = drive(&mut poller, 0, |req, now| match req.kind {
        RequestKind::Run => {
            let status = if now >= 5_000 { "finished" } else { "running" };
            run(status, rows_at(now.saturating_sub(4_000)))
        }
        RequestKind::Results => page(0..rows_at(now), None),
    });
    assert_eq!(log.delivered, vec![0, 1, 2]);
    assert_eq!(log.complete.map(|s| s.total_results), Some(3));
    let after_end: Vec<RequestKind> = log
        .fetches
        .iter()
        .zip(&log.fetch_times)
        .filter(|(_, t)| **t >= 5_000)
        .map(|(f, _)| f.kind)
        .collect();
    let tail_reads = after_end
        .iter()
        .filter(|k| **k == RequestKind::Results)
        .count();
    // The drain and one look once the count agrees (not the drain and 3 re-reads).
    assert_eq!(tail_reads, 2, "{after_end:?}");
    assert!(
        after_end.ends_with(&[RequestKind::Run, RequestKind::Results]),
        "{after_end:?}"
    );
    // Completed soon after the count caught up (at 6.5 s), within an interval.
    assert!(log.now < 8_500, "completed at {}", log.now);
}

#[test]
fn a_full_tail_page_behind_its_count_is_read_again_up_to_the_retries() {
    let mut config = every_tick();
    config.page_size = 3;
    let mut poller = Poller::new(config, None, 0).unwrap();
    let log = drive(&mut poller, 0, |req, _| match req.kind {
        RequestKind::Run => run("finished", 5),
        RequestKind::Results => page(0..3, None),
    });
    assert_eq!(log.complete.map(|s| s.total_results), Some(3));
    // The count says 5: the first read, the status, the drain, then `retry.retries` (3) re-reads.
    assert_eq!(log.fetches.len(), 6);
}

#[test]
fn the_page_size_is_learned_from_the_api() {
    // Pages of 2 (default page_size 1000): the full tail page is read again all the same.
    let mut poller = Poller::new(config(), None, 0).unwrap();
    let log = drive(&mut poller, 0, |req, now| match req.url.as_str() {
        RUN => run("finished", 4),
        RESULTS => page(0..2, Some("1")),
        u if u.ends_with("page=1") => page(2..4, (now >= 100).then_some("2")),
        u if u.ends_with("page=2") => page(4..5, None),
        other => panic!("unexpected {other}"),
    });
    assert_eq!(log.delivered, (0..5).collect::<Vec<_>>());
}

// ---- Server hints and network errors ----

#[test]
fn retry_after_and_rate_limit_reset_in_every_form() {
    // A real clock (ms since the epoch) so that dates mean something.
    let t0 = 1_764_524_400_000; // Sun, 30 Nov 2025 17:40:00 GMT
    let mut config = config();
    config.retry.retries = 10;
    config.retry.max_delay_ms = 9_000;
    let mut calls = 0;
    let mut poller = Poller::new(config, None, t0).unwrap();
    let log = drive(&mut poller, t0, |req, now| {
        calls += 1;
        let date = httpdate::fmt_http_date(
            std::time::UNIX_EPOCH + std::time::Duration::from_millis(now + 3_010),
        );
        let reset_at = ((now + 10) / 1_000 + 4).to_string();
        match (calls, req.kind) {
            (1, _) => http(429, Some("2"), None),
            (2, _) => http(429, Some(&date), None),
            (3, _) => http(429, Some("99999999999999999999999"), None),
            (4, _) => http(429, Some("0"), None),
            (5, _) => http_hint(429, retry_hint(None, Some("1.5"), parse_date), None),
            (6, _) => http_hint(
                429,
                retry_hint(Some("soon"), Some(&reset_at), parse_date),
                None,
            ),
            (7, _) => http(429, Some("soon"), None),
            (_, RequestKind::Results) => page(0..2, None),
            (_, RequestKind::Run) => run("finished", 2),
        }
    });
    let waits: Vec<u32> = log.sleeps.iter().map(|s| s.0).collect();
    // An HTTP date has whole seconds: 3 s from the answer, less the truncated ms.
    assert!((2_000..=3_000).contains(&waits[1]), "date: {waits:?}");
    assert_eq!(
        [waits[0], waits[2], waits[3], waits[4]],
        [2_000, 9_000, 100, 1_500],
        "{waits:?}"
    );
    assert!(
        (3_000..=4_000).contains(&waits[5]),
        "epoch reset: {waits:?}"
    );
    assert!(
        (100..=6_400).contains(&waits[6]),
        "garbage: plain backoff: {waits:?}"
    );
    assert_eq!(log.complete.map(|s| s.retries), Some(7));
}

/// The CORS advice is the browser entry's to add (js/advice.js): a terminal, Node or a Worker
/// gets no word of browsers.
#[test]
fn a_network_error_says_no_response_came_and_nothing_of_browsers() {
    let mut poller = Poller::new(config(), None, 0).unwrap();
    let log = drive(&mut poller, 0, |_, _| fault(Outcome::Network));
    let error = log.error.expect("failed");
    assert_eq!(error.code, ErrorCode::RetriesExhausted);
    assert!(error.message.contains("no response"), "{}", error.message);
    for word in ["CORS", "proxy", "://"] {
        assert!(!error.message.contains(word), "{}", error.message);
    }
}

// ---- Status-guided reads: the results only when the status says they changed ----

/// Rows readable at `now` when `burst` rows appear every `every` ms, up to `total`.
fn bursts_at(now: u64, every: u64, burst: u64, total: u64) -> u64 {
    (now / every * burst).min(total)
}

/// A run whose rows come `burst` at a time every `every` ms up to `total`, in pages of `size`
/// (`?page=N` from 1; the first page has no parameter), `finished` once every row is there.
/// The status reports `row_count: count(now)`.
fn bursty(
    total: u64,
    size: u64,
    every: u64,
    burst: u64,
    count: impl Fn(u64) -> Option<u64>,
) -> impl FnMut(&FetchRequest, u64) -> Reply {
    let end_at = total.div_ceil(burst) * every;
    move |req, now| {
        let available = bursts_at(now, every, burst, total);
        match req.kind {
            RequestKind::Run => {
                let info = RunInfo {
                    status: if now >= end_at { "finished" } else { "running" }.into(),
                    row_count: count(now),
                    ..RunInfo::default()
                };
                Reply {
                    outcome: Outcome::Run(info),
                    rows: vec![],
                }
            }
            RequestKind::Results => {
                let k = page_of(&req.url);
                let first = k * size;
                let end = ((k + 1) * size).min(available).max(first);
                let next = (available > (k + 1) * size).then(|| format!("?page={}", k + 1));
                page(first..end, next.as_deref())
            }
        }
    }
}

fn kinds(log: &Log) -> Vec<RequestKind> {
    log.fetches.iter().map(|f| f.kind).collect()
}

fn count_of(log: &Log, kind: RequestKind) -> usize {
    log.fetches.iter().filter(|f| f.kind == kind).count()
}

#[test]
fn status_guided_is_the_default() {
    assert_eq!(
        Config::new(BASE, "job-1").unwrap().read_mode,
        ReadMode::StatusGuided
    );
}

#[test]
fn bursts_are_read_once_each_and_quiet_ticks_read_only_the_status() {
    // 5 rows every 3 intervals, pages of 10, 40 rows: the count is exact.
    let server = || bursty(40, 10, 3_000, 5, |now| Some(bursts_at(now, 3_000, 5, 40)));
    let mut config = config();
    config.page_size = 10;
    let mut poller = Poller::new(config.clone(), None, 0).unwrap();
    let guided = drive(&mut poller, 0, server());
    assert_eq!(guided.delivered, (0..40).collect::<Vec<_>>());
    assert_eq!(guided.complete.as_ref().map(|s| s.total_results), Some(40));
    // A results read per burst, one more per page boundary, the end's drain; on quiet ticks
    // only the empty page before the first burst (2 ticks) and the probes for a lagging
    // count (src/engine/poller/lag.rs).
    let results = count_of(&guided, RequestKind::Results);
    assert!(results <= 8 + 4 + 2 + 2 + 2, "{results} results reads");
    // Each row within one interval (jittered up by at most 5 %) of its burst.
    for (i, at) in guided.delivered_at.iter().enumerate() {
        let appeared = (i as u64 / 5 + 1) * 3_000;
        assert!(
            *at <= appeared + 1_050,
            "row {i} at {at}, appeared {appeared}"
        );
    }
    // Reading the results on every tick delivers the same rows with far more results reads.
    config.read_mode = ReadMode::EveryTick;
    let mut poller = Poller::new(config, None, 0).unwrap();
    let every = drive(&mut poller, 0, server());
    assert_eq!(every.delivered, guided.delivered);
    let every_results = count_of(&every, RequestKind::Results);
    // (The guided reads of the empty page before the first burst cost a few bytes each.)
    assert!(
        every_results >= 2 * (results - 2),
        "{every_results} vs {results}"
    );
    assert!(every.fetches.len() > guided.fetches.len());
}

#[test]
fn bursts_further_apart_than_the_quiet_ticks_are_not_read_again_once_per_gap() {
    // 5 rows every 12 intervals, pages of 100, 40 rows: the count is exact, the gaps are
    // longer than QUIET_TICKS. The first quiet-long read finds nothing the count hid: the wait
    // doubles past the gap, so the burst's partly filled page is not read again in each gap.
    let every = 12_000;
    let server = || bursty(40, 100, every, 5, |now| Some(bursts_at(now, every, 5, 40)));
    let mut config = config();
    config.page_size = 100;
    let mut poller = Poller::new(config, None, 0).unwrap();
    let log = drive(&mut poller, 0, server());
    assert_eq!(log.delivered, (0..40).collect::<Vec<_>>());
    // From the first burst on (before it, the empty page is read on every tick, a few bytes
    // each): a read per burst (8), the end's drain and the first gap's quiet-long read. No
    // probe for a lagging count: it announced the first burst on time. A read per gap
    // besides would be 6 more.
    let results = log
        .fetches
        .iter()
        .zip(&log.fetch_times)
        .filter(|(f, at)| f.kind == RequestKind::Results && **at >= every)
        .count();
    assert!(
        results <= 8 + 1 + 1,
        "{results} results reads from the first burst on"
    );
    for (i, at) in log.delivered_at.iter().enumerate() {
        let appeared = (i as u64 / 5 + 1) * every;
        assert!(
            *at <= appeared + 1_050,
            "row {i} at {at}, appeared {appeared}"
        );
    }
}

#[test]
fn a_count_lagging_two_intervals_delays_the_read_but_loses_nothing() {
    let lag = 2_000;
    let count = move |now: u64| Some(bursts_at(now.saturating_sub(lag), 3_000, 5, 40));
    let mut config = config();
    config.page_size = 10;
    let mut poller = Poller::new(config, None, 0).unwrap();
    let log = drive(&mut poller, 0, bursty(40, 10, 3_000, 5, count));
    assert_eq!(log.delivered, (0..40).collect::<Vec<_>>());
    assert_eq!(log.complete.map(|s| s.total_results), Some(40));
    for (i, at) in log.delivered_at.iter().enumerate() {
        let appeared = (i as u64 / 5 + 1) * 3_000;
        assert!(*at <= appeared + lag + 1_050, "row {i} at {at}");
    }
}

#[test]
fn a_count_that_does_not_move_is_overridden_after_the_quiet_ticks() {
    // 3 rows counted and read at once; 3 more at 1.5 s that the count never shows.
    let mut poller = Poller::new(config(), None, 0).unwrap();
    let log = drive(&mut poller, 0, |req, now| match req.kind {
        RequestKind::Run if now >= 30_000 => run("finished", 6),
        RequestKind::Run => run("running", 3),
        RequestKind::Results if now >= 1_500 => page(0..6, None),
        RequestKind::Results => page(0..3, None),
    });
    assert_eq!(log.delivered, (0..6).collect::<Vec<_>>());
    assert_eq!(log.complete.as_ref().map(|s| s.total_results), Some(6));
    // At most QUIET_TICKS ticks read the status only; the next one reads the results anyway.
    let ticks = u64::from(QUIET_TICKS) + 1;
    assert!(
        log.delivered_at[3] <= 1_500 + ticks * 1_050,
        "{:?}",
        log.delivered_at
    );
}

#[test]
fn rows_found_before_the_count_are_not_left_waiting_for_it() {
    // Rows there from the start, the count says 0 until the end: the page of a running run
    // that delivered nothing yet is read anyway (it costs a few bytes while empty).
    let mut poller = Poller::new(config(), None, 0).unwrap();
    let log = drive(&mut poller, 0, |req, now| match req.kind {
        RequestKind::Run if now >= 30_000 => run("finished", 3),
        RequestKind::Run => run("running", 0),
        RequestKind::Results => page(0..3, None),
    });
    assert_eq!(log.delivered, vec![0, 1, 2]);
    assert!(log.delivered_at[0] <= 1_100, "{:?}", log.delivered_at);
}

#[test]
fn a_count_that_goes_down_loses_nothing() {
    // 10 rows counted, then a stale count of 4 while 5 more rows arrive at 4 s.
    let mut poller = Poller::new(config(), None, 0).unwrap();
    let log = drive(&mut poller, 0, |req, now| {
        let available = if now >= 4_000 { 15 } else { 10 };
        match req.kind {
            RequestKind::Run if now >= 30_000 => run("finished", 15),
            RequestKind::Run if now >= 2_000 => run("running", 4),
            RequestKind::Run => run("running", 10),
            RequestKind::Results => page(0..available, None),
        }
    });
    assert_eq!(log.delivered, (0..15).collect::<Vec<_>>());
    assert_eq!(log.complete.map(|s| s.total_results), Some(15));
    // The quiet ticks end the wait long before the run does.
    assert!(log.delivered_at[10] < 4_000 + 1_000 * (u64::from(QUIET_TICKS) + 2));
}

#[test]
fn a_count_past_the_page_reads_every_page_up_to_it_in_one_tick() {
    // Pages of 10: 3 rows, then 25 at once at 2.5 s.
    let mut config = config();
    config.page_size = 10;
    let mut poller = Poller::new(config, None, 0).unwrap();
    let count = |now: u64| Some(if now >= 2_500 { 25 } else { 3 });
    let mut server = bursty(25, 10, 1, 25, |_| None);
    let log = drive(&mut poller, 0, move |req, now| {
        let mut reply = server(req, now.max(1) * u64::from(now >= 2_500));
        if now < 2_500 && req.kind == RequestKind::Results {
            reply = page(0..3, None);
        }
        if let Outcome::Run(info) = &mut reply.outcome {
            info.row_count = count(now);
            info.status = if now >= 9_000 { "finished" } else { "running" }.into();
        }
        reply
    });
    assert_eq!(log.delivered, (0..25).collect::<Vec<_>>());
    // The tick after the jump: the status, then the tail page, page 1 and page 2 at once.
    let at = log.fetch_times.iter().position(|t| *t >= 2_500).unwrap();
    let tick: Vec<&str> = log.fetches[at..at + 4]
        .iter()
        .map(|f| f.url.as_str())
        .collect();
    assert_eq!(
        tick,
        [
            RUN.to_string(),
            RESULTS.to_string(),
            format!("{RESULTS}?page=1"),
            format!("{RESULTS}?page=2")
        ]
    );
    assert!(log.delivered_at[24] < log.fetch_times[at] + 100);
}

#[test]
fn a_run_without_a_count_reads_the_results_every_tick() {
    let mut poller = Poller::new(config(), None, 0).unwrap();
    let log = drive(&mut poller, 0, |req, now| {
        let available = (now / 1_000).min(5);
        match req.kind {
            RequestKind::Run => {
                let status = if available == 5 {
                    "finished"
                } else {
                    "running"
                };
                Reply {
                    outcome: Outcome::Run(RunInfo {
                        status: status.into(),
                        ..RunInfo::default()
                    }),
                    rows: vec![],
                }
            }
            RequestKind::Results => page(0..available, None),
        }
    });
    assert_eq!(log.delivered, (0..5).collect::<Vec<_>>());
    let ticks = count_of(&log, RequestKind::Run);
    assert!(count_of(&log, RequestKind::Results) >= ticks);
}

#[test]
fn rows_on_every_tick_are_read_results_first_then_status_first_once_quiet() {
    // 10 rows a tick for 10 s, then nothing until the end at 20 s; pages of 20 (a run that
    // stays on its first page is read status first: tests/engine_reads.rs).
    let server = |req: &FetchRequest, now: u64| {
        let available = now.min(10_000) / 100;
        match req.kind {
            RequestKind::Results => {
                let k = page_of(&req.url);
                let end = (20 * (k + 1)).min(available).max(20 * k);
                let next = (available > 20 * (k + 1)).then(|| format!("?page={}", k + 1));
                page(20 * k..end, next.as_deref())
            }
            RequestKind::Run if now >= 20_000 => run("finished", available),
            RequestKind::Run => run("running", available),
        }
    };
    let mut poller = Poller::new(config(), None, 0).unwrap();
    let guided = drive(&mut poller, 0, server);
    let mut poller = Poller::new(every_tick(), None, 0).unwrap();
    let every = drive(&mut poller, 0, server);
    assert_eq!(guided.delivered, (0..100).collect::<Vec<_>>());
    assert_eq!(guided.delivered, every.delivered);
    // The first read of each tick: results while rows flow (from the third tick), the status
    // once they stopped.
    // A tick starts with the first fetch after a sleep (a gap in the fetch times).
    let tick_starts: Vec<(u64, RequestKind)> = guided
        .fetches
        .iter()
        .zip(&guided.fetch_times)
        .enumerate()
        .filter(|(i, (_, t))| *i == 0 || **t > guided.fetch_times[i - 1] + 500)
        .map(|(_, (f, t))| (*t / 1_000, f.kind))
        .collect();
    let mut flowing = tick_starts.iter().filter(|(s, _)| (4..=9).contains(s));
    assert!(flowing.clone().count() >= 5);
    assert!(
        flowing.all(|(_, k)| *k == RequestKind::Results),
        "{tick_starts:?}"
    );
    let mut quiet = tick_starts.iter().filter(|(s, _)| (12..=19).contains(s));
    assert!(quiet.clone().count() >= 6);
    assert!(
        quiet.all(|(_, k)| *k == RequestKind::Run),
        "{tick_starts:?}"
    );
    // While rows flow it costs what reading every tick costs; quiet, less.
    assert!(guided.fetches.len() < every.fetches.len());
    assert!(count_of(&guided, RequestKind::Results) < count_of(&every, RequestKind::Results));
    // The end is noticed at the first status read after it, within an interval (lengthened
    // by up to 5 %); completion follows after the drain (its requests and one re-read).
    let noticed = guided
        .fetches
        .iter()
        .zip(&guided.fetch_times)
        .find(|(f, t)| f.kind == RequestKind::Run && **t >= 20_000)
        .map(|(_, t)| *t);
    assert!(
        noticed.is_some_and(|t| t - 20_000 <= 1_050),
        "noticed at {noticed:?}"
    );
    assert!(
        guided.now - noticed.unwrap_or(0) <= 200,
        "completed at {}",
        guided.now
    );
}

#[test]
fn a_step_with_nothing_new_is_one_status_read_and_quiet_rounds_carry_over() {
    let mut step = config();
    step.step_mode = true;
    // 3 rows readable from the start; the count says 0 until the end at 20 rounds.
    let server = |req: &FetchRequest, now: u64| match req.kind {
        RequestKind::Run if now >= 20 * 60_000 => run("finished", 3),
        RequestKind::Run => run("running", 0),
        RequestKind::Results => page(0..3, None),
    };
    let mut cursor: Option<String> = None;
    let mut per_round = vec![];
    let mut delivered = vec![];
    for round in 1..=25u64 {
        let now = round * 60_000;
        let mut poller = Poller::new(step.clone(), cursor.as_deref(), now).unwrap();
        let log = drive(&mut poller, now, server);
        per_round.push(kinds(&log));
        delivered.extend(log.delivered.iter().copied());
        cursor = Some(poller.cursor());
        if log.complete.is_some() {
            break;
        }
        assert!(log.yielded);
    }
    assert_eq!(delivered, vec![0, 1, 2]);
    let one_status = vec![RequestKind::Run];
    let both = vec![RequestKind::Run, RequestKind::Results];
    // QUIET_TICKS rounds of one status read, then one that reads the results anyway.
    let q = QUIET_TICKS as usize;
    assert!(
        per_round[..q].iter().all(|r| *r == one_status),
        "{per_round:?}"
    );
    assert_eq!(per_round[q], both);
    assert!(per_round[q + 1..q + 1 + q].iter().all(|r| *r == one_status));
}

#[test]
fn a_single_new_row_is_read_at_the_next_tick() {
    // One row every 2.5 intervals: each is counted at the next tick and read then.
    let count = |now: u64| Some(bursts_at(now, 2_500, 1, 6));
    let mut poller = Poller::new(config(), None, 0).unwrap();
    let log = drive(&mut poller, 0, bursty(6, 10, 2_500, 1, count));
    assert_eq!(log.delivered, (0..6).collect::<Vec<_>>());
    for (i, at) in log.delivered_at.iter().enumerate() {
        let appeared = (i as u64 + 1) * 2_500;
        assert!(
            *at <= appeared + 1_050,
            "row {i} at {at}, appeared {appeared}"
        );
    }
}

#[test]
fn a_cursor_saved_during_the_drain_reads_a_full_tail_once_more() {
    // The run is over; the cursor was saved after a full page 1 that did not link page 2 yet.
    let mut config = config();
    config.page_size = 3;
    let server = |req: &FetchRequest, now: u64| match req.url.as_str() {
        RUN => run("finished", 1),
        RESULTS => page(0..3, (now >= 1_050).then_some("?page=2")),
        u if u.ends_with("page=2") => page(3..5, None),
        other => panic!("unexpected {other}"),
    };
    let mut first = Poller::new(config.clone(), None, 1_000).unwrap();
    let mut cursor = None;
    for _ in 0..20 {
        match first.next_action(1_000) {
            Action::Fetch(req) => {
                let reply = server(&req, 1_000);
                respond(&mut first, &req, reply.outcome, 1_000);
            }
            Action::Emit(_) => {
                first.handle(Event::BatchDone, 1_000);
                cursor = Some(first.cursor());
                break;
            }
            _ => {}
        }
    }
    let mut second = Poller::new(config, cursor.as_deref(), 1_000).unwrap();
    let log = drive(&mut second, 1_000, server);
    assert_eq!(log.delivered, vec![3, 4]);
    assert_eq!(log.complete.map(|s| s.total_results), Some(5));
}
