//! The wasm glue as a user sees it, in Node and in headless Chromium (same bodies):
//! stopping cancels timers and requests, the global (or injected) `fetch` is used,
//! bad options throw a `TypeError` naming them, the receiver gets frozen batches and a
//! failing one ends the poll with CALLBACK_FAILED.
//!
//! Node:     CARGO_TARGET_WASM32_UNKNOWN_UNKNOWN_RUNNER=wasm-bindgen-test-runner \
//!           cargo test --target wasm32-unknown-unknown --test wasm_glue
//! Chromium: add WASM_BINDGEN_USE_BROWSER=1 CHROMEDRIVER=/usr/bin/chromedriver
#![cfg(target_arch = "wasm32")]

use captaindata_poller::{poll_step, JobPoller, Receiver};
use js_sys::{Function, Object, Reflect};
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::JsFuture;
use wasm_bindgen_test::wasm_bindgen_test;

#[wasm_bindgen(inline_js = r#"
// The timers the wasm code has pending (its sleeps, its requests' timeouts), told apart by a wasm
// frame on the stack; this file's own waits use the real setTimeout. A poller between polls holds
// its sleep and a request in flight its timeout, so "nothing left that could send a request" is
// no pending timer: a condition, not a duration.
const realSetTimeout = globalThis.setTimeout;
const realClearTimeout = globalThis.clearTimeout;
const turn = typeof setImmediate === "function" ? setImmediate : (fn) => {
  const channel = new MessageChannel();
  channel.port1.onmessage = () => { channel.port1.close(); fn(); };
  channel.port2.postMessage(0);
};
const pendingTimers = new Set();
const waiters = new Set();
let queued = false;
// Re-checks the waiters once the microtasks a change starts have run (a woken poller sends in them).
function changed() {
  if (queued) return;
  queued = true;
  turn(() => { queued = false; for (const recheck of [...waiters]) recheck(); });
}
globalThis.setTimeout = function setTimeout(fn, ms, ...rest) {
  if (!(new Error().stack ?? "").includes("wasm-function[")) return realSetTimeout(fn, ms, ...rest);
  const id = realSetTimeout((...args) => { pendingTimers.delete(id); changed(); return fn(...args); }, ms, ...rest);
  pendingTimers.add(id);
  changed();
  return id;
};
globalThis.clearTimeout = function clearTimeout(id) {
  if (pendingTimers.delete(id)) changed();
  return realClearTimeout(id);
};
// Resolves true once `check()` holds (first checked after the microtasks queued so far, then at
// every change of the wasm's timers or of a fake API's calls), false after `ms`: a bound for a
// stuck test only.
function until(check, ms) {
  return new Promise((resolve) => {
    const recheck = () => { if (check()) finish(true); };
    const bound = realSetTimeout(() => finish(false), ms);
    const finish = (value) => { waiters.delete(recheck); realClearTimeout(bound); resolve(value); };
    waiters.add(recheck);
    turn(recheck);
  });
}
export function quiet(ms) { return until(() => pendingTimers.size === 0, ms); }
export function untilCalls(api, n, ms) { return until(() => api.calls.length >= n, ms); }
// `{ settled }`, true once `promise` has settled.
export function settledFlag(promise) {
  const flag = { settled: false };
  promise.then(() => (flag.settled = true), () => (flag.settled = true));
  return flag;
}
export function isSettled(flag) { return flag.settled; }
// A fake Captain Data API: each results read has one more row; the run is `running`
// until `finishAfter` results reads, then `finished` with `finishAfter` rows. "hang" never answers until aborted.
export function fakeApi(mode, finishAfter) {
  const api = { calls: [], signals: [], reads: 0 };
  api.fetch = function (url, init) {
    api.calls.push({ url, auth: new Headers(init.headers).get("authorization"), self: this });
    changed();
    api.signals.push(init.signal);
    if (mode === "hang") {
      return new Promise((_, reject) => init.signal.addEventListener("abort", () => reject(init.signal.reason)));
    }
    let body;
    if (url.endsWith("/results")) {
      api.reads += 1;
      const results = Array.from({ length: Math.min(api.reads, finishAfter) }, (_, i) => ({ id: i }));
      body = { results, paging: { have_next_page: false, next: null } };
    } else {
      const finished = api.reads >= finishAfter;
      // The count runs one row ahead of the reads: the next results read will bring a row.
      body = { status: finished ? "finished" : "running", row_count: Math.min(api.reads + 1, finishAfter) };
    }
    return Promise.resolve(new Response(JSON.stringify(body), { status: 200 }));
  };
  return api;
}
export function callCount(api) { return api.calls.length; }
export function callAt(api, i) { return api.calls[i]; }
export function allSignalsAborted(api) { return api.signals.every((s) => s.aborted); }
export function swapGlobalFetch(fn) { const old = globalThis.fetch; globalThis.fetch = fn; return old; }
// A receiver (js/delivery.js's role) that records batches and statuses; `failAt`: the
// batch (by count) whose delivery throws, or rejects when `async`.
export function recorder(failAt, async) {
  const seen = { batches: [], statuses: [], calls: 0 };
  seen.batch = (batch) => {
    seen.calls += 1;
    if (seen.calls === failAt) {
      const error = new Error("boom");
      if (async) return Promise.reject(error);
      throw error;
    }
    seen.batches.push(batch);
    return undefined;
  };
  seen.status = (run) => { seen.statuses.push(run); };
  return seen;
}
export function isFrozen(value) { return Object.isFrozen(value); }
// A receiver whose batch promise the test settles: settleHeld(r, "take" | "refuse").
export function hangingReceiver() {
  const r = { calls: 0 };
  r.firstCall = new Promise((resolve) => { r.called = resolve; });
  r.batch = () => {
    r.calls += 1;
    r.called();
    return new Promise((take, refuse) => { r.take = take; r.refuse = refuse; });
  };
  r.status = () => {};
  return r;
}
export function settleHeld(r, how) { r[how](new Error("refused")); }
// Resolves when something arms a timer of between `minMs` and `maxMs` (a poller going to sleep
// for its interval): the condition a test waits for instead of a guessed duration.
export function timerArmed(minMs, maxMs) {
  return new Promise((resolve) => {
    const real = globalThis.setTimeout;
    globalThis.setTimeout = function (fn, ms, ...rest) {
      const id = real(fn, ms, ...rest);
      if (ms >= minMs && ms <= maxMs) { globalThis.setTimeout = real; resolve(); }
      return id;
    };
  });
}
// `promise`'s outcome, or the string "timeout" if it has not settled within `ms`.
export function within(promise, ms) {
  return Promise.race([promise, new Promise((resolve) => realSetTimeout(() => resolve("timeout"), ms))]);
}
export function throwingFetch() { return () => { throw new ReferenceError("fetchh is not defined"); }; }
export function kindsOf(api) { return api.calls.map((c) => (c.url.endsWith("/results") ? "results" : "run")); }
export function abortWith(controller, reason) { controller.abort(reason); }
"#)]
extern "C" {
    #[wasm_bindgen(js_name = fakeApi)]
    fn fake_api(mode: &str, finish_after: u32) -> JsValue;
    #[wasm_bindgen(js_name = callCount)]
    fn call_count(api: &JsValue) -> u32;
    #[wasm_bindgen(js_name = callAt)]
    fn call_at(api: &JsValue, i: u32) -> JsValue;
    #[wasm_bindgen(js_name = allSignalsAborted)]
    fn all_signals_aborted(api: &JsValue) -> bool;
    #[wasm_bindgen(js_name = swapGlobalFetch)]
    fn swap_global_fetch(f: &JsValue) -> JsValue;
    fn quiet(bound_ms: u32) -> js_sys::Promise;
    #[wasm_bindgen(js_name = untilCalls)]
    fn until_calls(api: &JsValue, n: u32, bound_ms: u32) -> js_sys::Promise;
    #[wasm_bindgen(js_name = settledFlag)]
    fn settled_flag(promise: &js_sys::Promise) -> JsValue;
    #[wasm_bindgen(js_name = isSettled)]
    fn is_settled(flag: &JsValue) -> bool;
    fn recorder(fail_at: u32, rejects: bool) -> JsValue;
    #[wasm_bindgen(js_name = throwingFetch)]
    fn throwing_fetch() -> JsValue;
    #[wasm_bindgen(js_name = isFrozen)]
    fn is_frozen(v: &JsValue) -> bool;
    #[wasm_bindgen(js_name = hangingReceiver)]
    fn hanging_receiver() -> JsValue;
    #[wasm_bindgen(js_name = settleHeld)]
    fn settle_held(receiver: &JsValue, how: &str);
    #[wasm_bindgen(js_name = kindsOf)]
    fn kinds_of(api: &JsValue) -> Vec<String>;
    #[wasm_bindgen(js_name = timerArmed)]
    fn timer_armed(min_ms: u32, max_ms: u32) -> js_sys::Promise;
    fn within(promise: &js_sys::Promise, ms: u32) -> js_sys::Promise;
}

fn get(target: &JsValue, key: &str) -> JsValue {
    Reflect::get(target, &key.into()).unwrap_or(JsValue::UNDEFINED)
}

fn options(entries: &[(&str, JsValue)]) -> JsValue {
    let object = Object::new();
    for (key, value) in entries {
        Reflect::set(&object, &(*key).into(), value).unwrap();
    }
    object.into()
}

/// A bound for a stuck test only: conditions are met within milliseconds.
const STUCK_MS: u32 = 10_000;

/// Waits until the wasm code holds no timer: no sleep that could wake it, no request in flight.
/// A poller that goes on polling always holds one, so it fails here instead of passing by luck.
async fn until_quiet(what: &str) {
    let quiet = JsFuture::from(quiet(STUCK_MS)).await.unwrap();
    assert_eq!(
        quiet, true,
        "{what}: still holds a timer after {STUCK_MS} ms"
    );
}

/// Waits until `api` has been called `n` times.
async fn until_called(api: &JsValue, n: u32) {
    let called = JsFuture::from(until_calls(api, n, STUCK_MS)).await.unwrap();
    assert_eq!(called, true, "fewer than {n} requests within {STUCK_MS} ms");
}

/// A poller delivering to `receiver` (a recorder when `None`).
fn poller_to(
    entries: &[(&str, JsValue)],
    receiver: Option<&JsValue>,
) -> Result<JobPoller, JsValue> {
    let seen = receiver.cloned().unwrap_or_else(|| recorder(0, false));
    JobPoller::new(
        options(entries).unchecked_into(),
        seen.unchecked_into::<Receiver>(),
    )
}

/// A loopback base URL: the fake `fetch` answers, and intervals below a second are allowed.
const LOCAL: &str = "http://127.0.0.1:9/v3";

/// A poller on [`LOCAL`] delivering to a recorder.
fn poller(entries: &[(&str, JsValue)]) -> JobPoller {
    let mut entries = entries.to_vec();
    entries.push(("baseUrl", LOCAL.into()));
    poller_to(&entries, None).unwrap()
}

fn code(error: &JsValue) -> String {
    get(error, "code").as_string().unwrap_or_default()
}

#[wasm_bindgen_test]
async fn stop_during_the_interval_sleep_sends_nothing_more() {
    let api = fake_api("ok", u32::MAX);
    let poller = poller(&[
        ("jobUid", "job1".into()),
        ("intervalMs", 200.into()),
        ("fetch", get(&api, "fetch")),
    ]);
    // Its first reads made, the poller sleeps for its interval (lengthened by up to 5 %).
    let asleep = JsFuture::from(timer_armed(150, 250));
    let done = JsFuture::from(poller.start());
    asleep.await.unwrap();
    let before = call_count(&api);
    assert!(before >= 1);
    poller.stop();
    poller.stop(); // idempotent
    let summary = done.await.unwrap();
    assert_eq!(get(&summary, "status"), "stopped", "stop() is not an error");
    assert_eq!(get(&summary, "cursor"), poller.cursor());
    until_quiet("stopped during its sleep").await; // the sleep was cancelled, not left to fire
    assert_eq!(call_count(&api), before, "no request after stop()");
}

#[wasm_bindgen_test]
async fn abort_during_a_request_rejects_with_aborted_and_the_signal_reason() {
    let api = fake_api("hang", 0);
    let controller = web_abort_controller();
    let poller = poller(&[
        ("jobUid", "job1".into()),
        ("signal", get(&controller, "signal")),
        ("fetch", get(&api, "fetch")),
    ]);
    let done = JsFuture::from(poller.start());
    until_called(&api, 1).await;
    assert_eq!(call_count(&api), 1);
    abort(&controller, "user left");
    let error = done.await.unwrap_err();
    assert_eq!(code(&error), "ABORTED");
    assert_eq!(get(&error, "cause"), "user left");
    assert!(
        all_signals_aborted(&api),
        "the in-flight request was aborted"
    );
    until_quiet("aborted").await;
    assert_eq!(call_count(&api), 1, "nothing sent after the abort");
}

#[wasm_bindgen_test]
async fn stop_during_a_request_aborts_it_and_sends_nothing_more() {
    let api = fake_api("hang", 0);
    let poller = poller(&[("jobUid", "job1".into()), ("fetch", get(&api, "fetch"))]);
    let done = JsFuture::from(poller.start());
    until_called(&api, 1).await;
    assert_eq!(call_count(&api), 1);
    poller.stop();
    let summary = done.await.unwrap();
    assert_eq!(get(&summary, "status"), "stopped");
    assert!(
        all_signals_aborted(&api),
        "the request in flight was aborted"
    );
    until_quiet("stopped").await;
    assert_eq!(call_count(&api), 1, "nothing sent after stop()");
}

#[wasm_bindgen_test]
async fn stop_while_an_async_batch_is_pending_lets_the_consumer_finish_it() {
    // Taken after the stop: it counts; refused after the stop: not counted, and no error.
    for (settle, counted) in [("take", 1), ("refuse", 0)] {
        let api = fake_api("ok", u32::MAX);
        let receiver = hanging_receiver();
        let entries = [
            ("jobUid", "job1".into()),
            ("intervalMs", 10.into()),
            ("fetch", get(&api, "fetch")),
            ("baseUrl", LOCAL.into()),
        ];
        let poller = poller_to(&entries, Some(&receiver)).unwrap();
        let start = poller.cursor();
        let done = poller.start();
        // The first batch is handed over and not settled.
        JsFuture::from(js_sys::Promise::from(get(&receiver, "firstCall")))
            .await
            .unwrap();
        assert_eq!(get(&receiver, "calls"), 1);
        let before = call_count(&api);
        // With the batch pending the poller holds no timer (no sleep, no request): it waits on
        // the batch. One that ignored backpressure would sleep 10 ms and read: never quiet.
        until_quiet("a batch pending").await;
        assert_eq!(
            call_count(&api),
            before,
            "backpressure: no request while the batch's promise is pending"
        );
        let ended = settled_flag(&done);
        poller.stop();
        until_quiet("stopped with a batch pending").await; // and the microtasks stop() started have run
        assert!(!is_settled(&ended), "start() waits for the batch in hand");
        settle_held(&receiver, settle);
        let summary = JsFuture::from(done).await.unwrap();
        assert_eq!(get(&summary, "status"), "stopped", "{settle}");
        assert_eq!(get(&summary, "totalResults"), counted, "{settle}");
        assert_eq!(poller.cursor() == start, counted == 0, "{settle}");
        until_quiet("stopped").await;
        assert_eq!(call_count(&api), before, "no request after stop()");
    }
}

#[wasm_bindgen_test]
async fn a_webhook_cuts_the_interval_short_and_the_status_decides_the_end() {
    const HOUR: u32 = 3_600_000;
    let api = fake_api("ok", 2);
    let poller = poller(&[
        ("jobUid", "job1".into()),
        ("intervalMs", HOUR.into()),
        ("fetch", get(&api, "fetch")),
    ]);
    // Its first reads made ("running"), the poller goes to sleep for its hour.
    // (The interval is lengthened by up to 5 %.)
    let asleep = JsFuture::from(timer_armed(HOUR / 2, HOUR / 2 * 3));
    let started = poller.start();
    asleep.await.unwrap();
    let before = call_count(&api) as usize;
    assert!(before >= 1, "the first reads were made");
    let payload = options(&[
        ("job_uid", "job1".into()),
        ("message", "Job successfully finished.".into()),
    ]);
    poller.webhook_received(payload).unwrap();
    // Ignored, the webhook would leave the poller asleep for the hour: bounded far below it.
    let summary = JsFuture::from(within(&started, 10_000)).await.unwrap();
    assert!(
        summary.as_string().as_deref() != Some("timeout"),
        "the webhook did not make the poller read at once (nothing within 10 s; its interval is an hour)"
    );
    assert_eq!(get(&summary, "status"), "finished");
    let kinds = kinds_of(&api);
    assert!(
        kinds.len() > before,
        "the webhook made the poller read at once"
    );
    assert!(
        kinds[before..].contains(&"run".to_string()),
        "{kinds:?}: the status was read"
    );
}

#[wasm_bindgen_test]
async fn an_already_aborted_signal_sends_nothing() {
    let api = fake_api("ok", 1);
    let controller = web_abort_controller();
    abort(&controller, "before start");
    let poller = poller(&[
        ("jobUid", "job1".into()),
        ("signal", get(&controller, "signal")),
        ("fetch", get(&api, "fetch")),
    ]);
    let error = JsFuture::from(poller.start()).await.unwrap_err();
    assert_eq!(code(&error), "ABORTED");
    assert_eq!(call_count(&api), 0);
}

#[wasm_bindgen_test]
async fn the_global_fetch_is_used_with_the_checked_headers() {
    // js/options.js puts the credentials into `headers`; the glue sends them as they are.
    let api = fake_api("ok", 1);
    let original = swap_global_fetch(&get(&api, "fetch"));
    let headers = options(&[("Authorization", "x-api-key secret-key".into())]);
    let poller = poller(&[
        ("jobUid", "job1".into()),
        ("headers", headers),
        ("intervalMs", 10.into()),
    ]);
    let summary = JsFuture::from(poller.start()).await;
    swap_global_fetch(&original);
    let summary = summary.unwrap();
    assert_eq!(get(&summary, "status"), "finished");
    assert!(call_count(&api) >= 2);
    let first = call_at(&api, 0);
    assert_eq!(get(&first, "auth"), "x-api-key secret-key");
    let url = get(&first, "url").as_string().unwrap();
    assert!(!url.contains("secret-key"), "the key is never in a URL");
}

#[wasm_bindgen_test]
async fn an_injected_fetch_replaces_the_global_one_and_is_called_unbound() {
    let global = fake_api("ok", 1);
    let injected = fake_api("ok", 1);
    let original = swap_global_fetch(&get(&global, "fetch"));
    let poller = poller(&[
        ("jobUid", "job1".into()),
        ("intervalMs", 10.into()),
        ("fetch", get(&injected, "fetch")),
    ]);
    let summary = JsFuture::from(poller.start()).await;
    swap_global_fetch(&original);
    assert!(summary.is_ok());
    assert_eq!(call_count(&global), 0);
    assert!(call_count(&injected) >= 2);
    assert!(
        get(&call_at(&injected, 0), "self").is_undefined(),
        "`this` is undefined"
    );
}

/// The types and ranges of the options are checked in JS (js/options.js, tested by
/// tests/package/hostile.test.mjs); the wasm refuses what the engine owns.
#[wasm_bindgen_test]
fn options_the_engine_refuses_throw_a_type_error_naming_the_option() {
    let cases: [(&str, JsValue, &str); 4] = [
        // Below a second only on loopback (the default baseUrl is the real API).
        ("intervalMs", 999.into(), "at least 1000 ms"),
        ("jobUid", "../other".into(), "`jobUid`"),
        ("baseUrl", "http://example.com".into(), "`baseUrl`"),
        ("minDelayMs", 90_000.into(), "`retry.maxDelayMs`"),
    ];
    for (option, value, named) in cases {
        let mut entries = vec![("jobUid", JsValue::from("job1"))];
        entries.push((option, value));
        let error = poller_to(&entries, None).err().unwrap();
        assert!(error.is_instance_of::<js_sys::TypeError>(), "{option}");
        let message = get(&error, "message").as_string().unwrap();
        assert!(message.contains(named), "{option}: {message}");
    }
    let missing = poller_to(&[], None).err().unwrap();
    assert!(get(&missing, "message")
        .as_string()
        .unwrap()
        .contains("`jobUid`"));
}

#[wasm_bindgen_test]
async fn batches_reach_the_receiver_frozen_and_statuses_as_readings() {
    let seen = recorder(0, false);
    let entries = [
        ("jobUid", "job1".into()),
        ("intervalMs", 10.into()),
        ("fetch", get(&fake_api("ok", 3), "fetch")),
        ("baseUrl", LOCAL.into()),
    ];
    let poller = poller_to(&entries, Some(&seen)).unwrap();
    let summary = JsFuture::from(poller.start()).await.unwrap();
    assert_eq!(get(&summary, "totalResults"), 3);
    let batches: js_sys::Array = get(&seen, "batches").into();
    assert_eq!(batches.length(), 3);
    for (i, batch) in batches.iter().enumerate() {
        assert!(is_frozen(&batch));
        assert_eq!(get(&batch, "offset"), i as u32);
        assert_eq!(js_sys::Array::from(&get(&batch, "results")).length(), 1);
    }
    // A status read is `[status, rowCount, totalRowCount, numberInputs, errorMessage,
    // pausedForMs, body]`: js/delivery.js shapes (and freezes) the RunStatus.
    let statuses: js_sys::Array = get(&seen, "statuses").into();
    let last = js_sys::Array::from(&statuses.get(statuses.length() - 1));
    assert_eq!(last.length(), 7);
    assert_eq!(last.get(0), "finished");
    assert!(last.get(5).is_null(), "not paused");
    assert_eq!(get(&last.get(6), "status"), "finished", "the run body");
}

#[wasm_bindgen_test]
async fn a_receiver_that_fails_ends_with_callback_failed_before_that_batch() {
    for rejects in [false, true] {
        let seen = recorder(2, rejects);
        let api = fake_api("ok", u32::MAX);
        let entries = [
            ("jobUid", "job1".into()),
            ("intervalMs", 10.into()),
            ("fetch", get(&api, "fetch")),
            ("baseUrl", LOCAL.into()),
        ];
        let poller = poller_to(&entries, Some(&seen)).unwrap();
        let error = JsFuture::from(poller.start()).await.unwrap_err();
        assert_eq!(code(&error), "CALLBACK_FAILED");
        assert_eq!(get(&get(&error, "cause"), "message"), "boom");
        assert_eq!(js_sys::Array::from(&get(&seen, "batches")).length(), 1);
        assert_eq!(poller.offset(), 1.0, "the failed batch is not counted");
        let sent = call_count(&api);
        until_quiet("failed").await;
        assert_eq!(call_count(&api), sent, "nothing sent after the failure");
    }
}

#[wasm_bindgen_test]
async fn a_fetch_that_throws_fails_at_once_with_the_error_as_cause() {
    let poller = poller(&[("jobUid", "job1".into()), ("fetch", throwing_fetch())]);
    let error = JsFuture::from(poller.start()).await.unwrap_err();
    assert_eq!(code(&error), "NETWORK_ERROR");
    let cause = get(&error, "cause");
    assert!(
        cause.is_instance_of::<js_sys::ReferenceError>(),
        "{cause:?}"
    );
}

#[wasm_bindgen_test]
async fn a_step_returns_its_rows_and_a_cursor_to_continue_from() {
    let api = fake_api("ok", u32::MAX);
    let step = options(&[("jobUid", "job1".into()), ("fetch", get(&api, "fetch"))]);
    let first = JsFuture::from(poll_step(step.unchecked_into()))
        .await
        .unwrap();
    assert_eq!(get(&first, "done"), false);
    assert_eq!(js_sys::Array::from(&get(&first, "results")).length(), 1);
    let cursor = get(&first, "cursor");
    let next = options(&[
        ("jobUid", "job1".into()),
        ("fetch", get(&api, "fetch")),
        ("cursor", cursor),
    ]);
    let second = JsFuture::from(poll_step(next.unchecked_into()))
        .await
        .unwrap();
    // The server now has 2 rows; only the new one comes back.
    assert_eq!(js_sys::Array::from(&get(&second, "results")).length(), 1);
    // What the engine owns it still refuses: an empty `jobUid` (js/options.js checks types).
    let bad = JsFuture::from(poll_step(
        options(&[("jobUid", "".into())]).unchecked_into(),
    ))
    .await;
    assert!(bad.unwrap_err().is_instance_of::<js_sys::TypeError>());
}

fn web_abort_controller() -> JsValue {
    let class = Reflect::get(&js_sys::global(), &"AbortController".into()).unwrap();
    Reflect::construct(class.unchecked_ref::<Function>(), &js_sys::Array::new()).unwrap()
}

fn abort(controller: &JsValue, reason: &str) {
    let abort: Function = get(controller, "abort").into();
    abort.call1(controller, &reason.into()).unwrap();
}
