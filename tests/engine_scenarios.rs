//! Scripted scenarios through the engine's public API: a scripted server answers each
//! request, a simulated clock advances with every sleep.

use captaindata_poller::api::{Outcome, Page, RunInfo};
use captaindata_poller::engine::{
    Action, Batch, Config, ErrorCode, Event, FetchRequest, PollError, Poller, RequestKind,
    RetryPolicy, SleepReason, Summary,
};

const BASE: &str = "https://api.captaindata.co/v3";
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
    let info = RunInfo {
        status: status.into(),
        row_count: Some(rows),
        ..RunInfo::default()
    };
    Reply {
        outcome: Outcome::Run(info),
        rows: vec![],
    }
}

fn http(status: u16, retry_after: Option<&str>, message: Option<&str>) -> Reply {
    let outcome = Outcome::Http {
        status,
        retry_after: retry_after.map(str::to_string),
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
    sleeps: Vec<(u32, SleepReason)>,
    delivered: Vec<u64>,
    statuses: Vec<String>,
    cursors: Vec<String>,
    complete: Option<Summary>,
    error: Option<PollError>,
    yielded: bool,
    now: u64,
    first_offset: Option<u64>,
}

fn config() -> Config {
    let mut config = Config::new(BASE, "job-1").expect("valid config");
    config.interval_ms = 1_000;
    config.retry = RetryPolicy {
        retries: 3,
        min_delay_ms: 100,
        max_delay_ms: 5_000,
    };
    config
}

/// Drives `poller` until it ends or idles, answering requests with `server(request, now)`.
fn drive(
    poller: &mut Poller,
    now: u64,
    mut server: impl FnMut(&FetchRequest, u64) -> Reply,
) -> Log {
    let mut log = Log {
        now,
        ..Log::default()
    };
    let mut rows: Vec<u64> = vec![];
    for _ in 0..10_000 {
        match poller.next_action(log.now) {
            Action::Fetch(request) => {
                let reply = server(&request, log.now);
                if matches!(reply.outcome, Outcome::Results(_)) {
                    rows = reply.rows;
                }
                log.now += 10;
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
                log.now += u64::from(ms);
                poller.handle(Event::TimerFired, log.now);
            }
            Action::Emit(batch) => {
                // Batches are contiguous: each starts where the previous one ended.
                let first = *log.first_offset.get_or_insert(batch.offset);
                assert_eq!(batch.offset, first + log.delivered.len() as u64);
                log.delivered
                    .extend_from_slice(&rows[batch.start..batch.end]);
                log.cursors.push(poller.cursor());
                poller.handle(Event::BatchDone, log.now);
            }
            Action::Status(run) => log.statuses.push(run.status),
            Action::Yield => {
                log.yielded = true;
                return log;
            }
            Action::Complete(summary) => {
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

/// Answers the request `req` that `poller` sent, at time `now`.
fn respond(poller: &mut Poller, req: &FetchRequest, outcome: Outcome, now: u64) {
    let id = req.id;
    poller.handle(Event::Response { id, outcome }, now);
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
    let mut poller = Poller::new(config(), None, 0).unwrap();
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
    assert!(log
        .sleeps
        .iter()
        .all(|s| *s == (1_000, SleepReason::Interval)));
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
    let mut first = Poller::new(config(), None, 0).unwrap();
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
                cursor = Some(first.cursor());
                first.handle(Event::Stop, 0);
            }
            Action::Emit(_) => first.handle(Event::BatchDone, 0),
            Action::Fail(e) => {
                assert_eq!(e.code, ErrorCode::Aborted);
                break;
            }
            _ => {}
        }
    }
    let cursor = cursor.expect("a cursor after page 2");
    assert!(!cursor.contains("captaindata"), "no host in the cursor");
    let mut second = Poller::new(config(), Some(&cursor), 1_000).unwrap();
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
        ("cursor", "cursor belongs to run job-1, not job-2")
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
    let mut poller = Poller::new(config(), None, 0).unwrap();
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
    let mut poller = Poller::new(config(), None, 0).unwrap();
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
        let mut poller = Poller::new(config(), None, 0).unwrap();
        let log = drive(&mut poller, 0, |_, _| http(status, None, None));
        let error = log.error.expect("failed");
        assert_eq!((error.code, error.http_status), (want, Some(status)));
        assert_eq!(log.fetches.len(), 1);
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
    poller.handle(Event::Stop, 5);
    let Action::Fail(error) = poller.next_action(5) else {
        panic!("abort")
    };
    assert_eq!(error.code, ErrorCode::Aborted);
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
    assert!(matches!(
        poller.next_action(3),
        Action::Fail(PollError {
            code: ErrorCode::Aborted,
            ..
        })
    ));
    assert_eq!(poller.next_action(4), Action::Idle);
    assert_eq!(poller.requests(), 1);
}

#[test]
fn a_webhook_during_the_interval_sleep_triggers_one_final_read() {
    let mut poller = Poller::new(config(), None, 0).unwrap();
    let mut served = 1;
    let mut slept = false;
    let mut log = Log::default();
    loop {
        match poller.next_action(0) {
            Action::Fetch(req) => {
                let reply = match req.kind {
                    RequestKind::Results => page(0..served, None),
                    RequestKind::Run => run("running", served),
                };
                log.fetches.push(req.clone());
                poller.handle(
                    Event::Response {
                        id: req.id,
                        outcome: reply.outcome,
                    },
                    0,
                );
            }
            Action::Sleep {
                reason: SleepReason::Interval,
                ..
            } if !slept => {
                slept = true;
                served = 3;
                poller.handle(Event::Webhook { failed: false }, 0);
            }
            Action::Emit(batch) => {
                log.delivered.extend(batch.start as u64..batch.end as u64);
                poller.handle(Event::BatchDone, 0);
            }
            Action::Status(_) => {}
            Action::Complete(summary) => {
                log.complete = Some(summary);
                break;
            }
            other => panic!("unexpected {other:?}"),
        }
    }
    assert_eq!(log.delivered, vec![0, 1, 2]);
    let kinds: Vec<RequestKind> = log.fetches.iter().map(|f| f.kind).collect();
    assert_eq!(
        kinds,
        vec![RequestKind::Results, RequestKind::Run, RequestKind::Results]
    );
    assert_eq!(log.complete.map(|s| s.status), Some("finished".into()));
}

#[test]
fn a_failed_webhook_fails_after_the_final_read() {
    let mut poller = Poller::new(config(), None, 0).unwrap();
    let Action::Fetch(req) = poller.next_action(0) else {
        panic!("fetch first")
    };
    poller.handle(Event::Webhook { failed: true }, 1);
    respond(&mut poller, &req, page(0..2, None).outcome, 2);
    assert!(matches!(poller.next_action(2), Action::Emit(_)));
    poller.handle(Event::BatchDone, 3);
    // That read was sent before the webhook: the tail is read once more.
    let Action::Fetch(req) = poller.next_action(3) else {
        panic!("final read")
    };
    respond(&mut poller, &req, page(0..3, None).outcome, 4);
    assert_eq!(
        poller.next_action(4),
        Action::Emit(Batch {
            start: 2,
            end: 3,
            offset: 2
        })
    );
    poller.handle(Event::BatchDone, 5);
    let Action::Fail(error) = poller.next_action(5) else {
        panic!("fail")
    };
    assert_eq!(error.code, ErrorCode::JobFailed);
    assert_eq!(poller.requests(), 2);
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
    let mut poller = Poller::new(config(), None, 0).unwrap();
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
        let mut poller = Poller::new(config(), None, 0).unwrap();
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
    let mut config = config();
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
    assert!(matches!(poller.next_action(0), Action::Status(_)));
    assert_eq!(
        poller.next_action(0),
        Action::Sleep {
            ms: 2_147_483_647,
            reason: SleepReason::Interval
        }
    );
}
