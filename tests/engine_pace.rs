//! The pace of a page's poller, hand-stepped through the engine's public API: a hidden page
//! polls at `hidden_interval_ms` (or not at all) and at once when visible again; offline,
//! nothing is sent and no retry is spent; the steady cadence is jittered.
#![cfg(not(target_arch = "wasm32"))]

mod common;

use captaindata_poller::api::Outcome;
use captaindata_poller::engine::{
    Action, Event, FetchRequest, Poller, RequestKind, SleepReason, Summary,
};
use common::{config, respond, results, run_info};

fn running(rows: u64) -> Outcome {
    Outcome::Run(run_info("running", rows))
}

/// Answers `req` at `now`: results bring one row more each time (`reads` counts them), the run
/// is running with `counted_ahead` rows more than were read.
fn answer(poller: &mut Poller, req: FetchRequest, reads: &mut usize, counted_ahead: u64, now: u64) {
    let outcome = match req.kind {
        RequestKind::Results => {
            *reads += 1;
            results(*reads)
        }
        RequestKind::Run => running(*reads as u64 + counted_ahead),
    };
    respond(poller, &req, outcome, now);
}

/// Answers every request ([`respond`], the count never ahead) until the engine sleeps;
/// returns the sleep.
fn until_sleep(poller: &mut Poller, now: u64, reads: &mut usize) -> (u32, SleepReason) {
    loop {
        match poller.next_action(now) {
            Action::Fetch(req) => answer(poller, req, reads, 0, now),
            Action::Emit(_) => poller.handle(Event::BatchDone, now),
            Action::Status { .. } => {}
            Action::Sleep { ms, reason } => return (ms, reason),
            other => panic!("unexpected {other:?}"),
        }
    }
}

/// Answers `first` and what follows with a run that has finished with 5 rows; the summary.
fn drain(poller: &mut Poller, first: FetchRequest, now: u64) -> Summary {
    let mut next = Some(first);
    loop {
        if let Some(req) = next.take() {
            let outcome = match req.kind {
                RequestKind::Results => results(5),
                RequestKind::Run => Outcome::Run(run_info("finished", 5)),
            };
            respond(poller, &req, outcome, now);
        }
        match poller.next_action(now) {
            Action::Fetch(req) => next = Some(req),
            Action::Emit(_) => poller.handle(Event::BatchDone, now),
            Action::Sleep { .. } => poller.handle(Event::TimerFired, now),
            Action::Status { .. } => {}
            Action::Complete(summary) => return summary,
            other => panic!("unexpected {other:?}"),
        }
    }
}

#[test]
fn a_hidden_page_polls_at_the_hidden_interval_and_at_once_when_visible() {
    let mut config = config();
    config.hidden_interval_ms = Some(60_000);
    let mut poller = Poller::new(config, None, 0).unwrap();
    let mut reads = 0;
    let (ms, reason) = until_sleep(&mut poller, 0, &mut reads);
    assert_eq!(reason, SleepReason::Interval);
    assert!((1_000..=1_050).contains(&ms));
    // Hidden (the glue cancels the timer): the rest of the sleep is stretched.
    poller.handle(Event::Hidden(true), 10);
    assert_eq!(
        poller.next_action(10),
        Action::Sleep {
            ms: 60_000,
            reason: SleepReason::Interval
        }
    );
    // Visible again: a poll at once (the status first, by default), then the normal cadence.
    poller.handle(Event::Hidden(false), 20_000);
    assert!(matches!(poller.next_action(20_000), Action::Fetch(_)));
}

#[test]
fn hidden_polling_can_be_paused_and_the_deadline_still_ends_it() {
    let mut config = config();
    config.hidden_interval_ms = None;
    config.max_duration_ms = Some(100_000);
    let mut poller = Poller::new(config, None, 0).unwrap();
    let mut reads = 0;
    until_sleep(&mut poller, 0, &mut reads);
    poller.handle(Event::Hidden(true), 10);
    // Only the deadline is left to wait for: no poll until visible.
    let sleep = poller.next_action(10);
    assert_eq!(
        sleep,
        Action::Sleep {
            ms: 99_990,
            reason: SleepReason::Interval
        }
    );
    poller.handle(Event::TimerFired, 100_000);
    assert!(matches!(poller.next_action(100_000), Action::Fail(e) if e.code.as_str() == "TIMEOUT"));
}

#[test]
fn offline_sends_nothing_spends_no_retry_and_polls_at_once_when_online() {
    let mut poller = Poller::new(config(), None, 0).unwrap();
    let mut reads = 0;
    until_sleep(&mut poller, 0, &mut reads);
    poller.handle(Event::TimerFired, 1_100);
    let Action::Fetch(req) = poller.next_action(1_100) else {
        panic!("a poll was due");
    };
    // The network goes while the request is in flight; its failure spends no retry.
    poller.handle(Event::Online(false), 1_150);
    for t in [1_200, 1_300] {
        respond(&mut poller, &req, Outcome::Network, t);
    }
    let waiting = poller.next_action(1_200);
    assert!(
        matches!(waiting, Action::Sleep { ms, .. } if ms > 1_000_000),
        "no request and no backoff while offline: {waiting:?}"
    );
    // Back online: the same read at once, and it counts as no retry.
    poller.handle(Event::Online(true), 50_000);
    let Action::Fetch(again) = poller.next_action(50_000) else {
        panic!("online: a poll at once");
    };
    assert_eq!(
        again.kind, req.kind,
        "the read that failed offline, sent again"
    );
    let summary = drain(&mut poller, again, 50_000);
    assert_eq!(summary.retries, 0, "no retry was spent offline");
}

#[test]
fn many_offline_failures_never_exhaust_the_retries() {
    let mut poller = Poller::new(config(), None, 0).unwrap();
    poller.handle(Event::Online(false), 0);
    // Offline from the start: nothing is sent at all.
    assert!(!matches!(poller.next_action(0), Action::Fetch(_)));
    poller.handle(Event::Online(true), 10);
    for t in 0..20 {
        let Action::Fetch(req) = poller.next_action(10 + t) else {
            panic!("online again: the read is sent");
        };
        poller.handle(Event::Online(false), 10 + t);
        respond(&mut poller, &req, Outcome::Network, 10 + t);
        poller.handle(Event::Online(true), 10 + t);
    }
    // Twenty failed reads while offline, three retries allowed: still polling.
    assert!(matches!(poller.next_action(100), Action::Fetch(_)));
}

#[test]
fn the_steady_cadence_is_jittered_by_seed_never_below_the_interval() {
    let intervals = |seed: u64| {
        let mut config = config();
        config.seed = seed;
        let mut poller = Poller::new(config, None, 0).unwrap();
        let mut reads = 0;
        let mut now = 0;
        (0..8)
            .map(|_| {
                let (ms, _) = until_sleep(&mut poller, now, &mut reads);
                now += u64::from(ms);
                poller.handle(Event::TimerFired, now);
                ms
            })
            .collect::<Vec<_>>()
    };
    let (a, b) = (intervals(1), intervals(2));
    assert!(
        a.iter().chain(&b).all(|ms| (1_000..=1_050).contains(ms)),
        "{a:?} {b:?}"
    );
    assert_ne!(a, b, "two clients started together do not poll in step");
    assert_eq!(a, intervals(1), "the same seed, the same cadence");
}

#[test]
fn the_pause_after_a_tick_is_the_interval_however_long_its_reads_took() {
    // Each request takes 150 ms. The pause from a tick's last answer to the next tick's first
    // request is the interval (jittered up by at most 5 %): the tick's reads never shorten
    // it, so the run is read no more often than a loop that sleeps the interval between ticks.
    let mut poller = Poller::new(config(), None, 0).unwrap();
    let (mut now, mut reads, mut pauses) = (0u64, 0usize, vec![]);
    let mut tick_ended: Option<u64> = None;
    while pauses.len() < 20 {
        match poller.next_action(now) {
            Action::Fetch(req) => {
                if let Some(ended) = tick_ended.take() {
                    pauses.push(now - ended);
                }
                now += 150;
                answer(&mut poller, req, &mut reads, 1, now);
            }
            Action::Emit(_) => poller.handle(Event::BatchDone, now),
            Action::Status { .. } => {}
            Action::Sleep { ms, reason } => {
                assert_eq!(reason, SleepReason::Interval);
                tick_ended = Some(now);
                now += u64::from(ms);
                poller.handle(Event::TimerFired, now);
            }
            other => panic!("unexpected {other:?}"),
        }
    }
    assert!(
        pauses.iter().all(|p| (1_000..=1_050).contains(p)),
        "{pauses:?}"
    );
}
