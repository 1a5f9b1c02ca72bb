// The tab-sharing protocol (js/tab-protocol.js), fast and without a browser: 1–8 simulated
// tabs on one simulated run, with a fake Web Lock manager (FIFO, exclusive), a fake
// BroadcastChannel (structured clones, in order per sender, delayed) and a fake poller per tab
// (budgets, pace, webhooks, backpressure, failures). Each case draws joins, closes, hides,
// stops, budgets, lost leaders, slow or failing consumers and webhooks from a seed; the
// checks are what a user of each tab would notice, its summary included. Then the messages
// a tab refuses (malformed, or rows and outcomes from a tab that never said it leads), and the
// texts and summary fields the tab layer shares with the lone wasm poller, checked against the
// real one (the Node entry, on the simulator in process: run after `npm run build`).
//
//   TAB_CASES=20000 node --test tests/tab-protocol.test.mjs     more cases
//   TAB_SEED=123456 node --test tests/tab-protocol.test.mjs     replay one failing case
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";
import { JobPoller } from "captaindata-poller";
import { summary } from "../js/summary.js";
import { TabProtocol, outcomeToWire } from "../js/tab-protocol.js";
import { wellFormed } from "../js/tab-messages.js";
import { callbackFailed, limitError } from "../js/tab-errors.js";
import { CaptainDataError } from "../js/errors.js";
import { createSim } from "../sim/index.js";
import { random } from "../scripts/chaos/campaign.js"; // the seeded mulberry32 the chaos campaign draws with

const CASES = Number(process.env.TAB_CASES ?? 3000);
const REPLAY = process.env.TAB_SEED === undefined ? null : Number(process.env.TAB_SEED);

const INTERVAL = 100; // the visible pace of every fake poller
const HIDDEN_INTERVAL = 5000; // longer than a run: a wrongly hidden leader is seen at once
const MAX_DELAY = 20; // the channel's and the lock manager's longest delay
const PACE_BOUND = 4 * MAX_DELAY + 5; // a visible tab is heard by the leader within this

/** A discrete-event clock: callbacks at virtual times, in order (ties: first scheduled first). */
class Clock {
  now = 0;
  #queue = [];
  #seq = 0;

  at(time, fn) {
    const item = { time: Math.max(time, this.now), seq: this.#seq++, fn };
    let i = this.#queue.length;
    while (i > 0 && (this.#queue[i - 1].time > item.time || (this.#queue[i - 1].time === item.time && this.#queue[i - 1].seq > item.seq))) i -= 1;
    this.#queue.splice(i, 0, item);
  }

  run(limit = 200000) {
    for (let steps = 0; this.#queue.length > 0; steps += 1) {
      assert.ok(steps < limit, "the simulation does not settle");
      const item = this.#queue.shift();
      this.now = item.time;
      item.fn();
    }
  }
}

const rowsOf = (from, to) => Array.from({ length: to - from }, (_, i) => ({ id: from + i }));
const cursorAt = (offset) => `c${offset}`;
const offsetOf = (cursor) => Number(cursor.slice(1));

/** The simulated run: rows appear in bursts; at `endsAt` it finishes or fails. */
function drawRun(rnd) {
  const rows = rnd.int(0, 60);
  const endsAt = rnd.int(50, 1500);
  const times = rowsOf(0, rows).map(() => rnd.int(0, endsAt)).sort((a, b) => a - b);
  const failed = rnd.chance(0.2);
  return {
    rows,
    endsAt,
    failed,
    pageSize: rnd.int(2, 12),
    available: (t) => (t >= endsAt ? rows : times.filter((x) => x <= t).length),
  };
}

/** Draws one case: the run and what each tab does. */
function drawCase(seed) {
  const rnd = random(seed);
  const run = drawRun(rnd);
  const tabs = rowsOf(0, rnd.int(1, 8)).map(({ id }) => {
    const joinAt = id === 0 ? 0 : rnd.int(0, run.endsAt + 200);
    const plan = {
      id: `tab${id}`,
      joinAt,
      resumeAt: rnd.chance(0.2) ? rnd.int(0, run.available(joinAt)) : 0,
      hidden: rnd.chance(0.5),
      toggles: rowsOf(0, rnd.int(0, 4)).map(() => joinAt + rnd.int(0, run.endsAt + 300)),
      stopAt: rnd.chance(0.12) ? joinAt + rnd.int(0, run.endsAt) : null,
      closeAt: rnd.chance(0.12) ? joinAt + rnd.int(0, run.endsAt) : null,
      byeOnClose: rnd.chance(0.5),
      maxRequests: rnd.chance(0.3) ? rnd.int(1, 10) : undefined,
      maxDurationMs: rnd.chance(0.15) ? rnd.int(50, 2000) : undefined,
      flaky: rnd.chance(0.15), // its pollers may run out of retries
      consumerMs: rnd.chance(0.2) ? 150 : 10,
      consumerFailsAt: rnd.chance(0.05) ? rnd.int(1, 5) : null,
      webhooks: rowsOf(0, rnd.int(0, 2)).map(() => joinAt + rnd.int(0, run.endsAt + 100)),
      logRows: rnd.chance(0.5) ? rnd.int(1, 20) : 1000,
      maxAhead: rnd.chance(0.5) ? rnd.int(1, 20) : 2000,
    };
    return plan;
  });
  return { seed, run, tabs, rnd };
}

/** Runs one case; returns what every tab saw, and throws on the first broken rule. */
function simulate({ seed, run, tabs: plans, rnd }) {
  const clock = new Clock();
  const delay = () => rnd.int(1, MAX_DELAY);
  const tabs = new Map();
  const lock = { holder: null, queue: [] };
  const lastDelivery = new Map(); // "from>to" → time of the last message scheduled (FIFO)
  const requests = { total: 0 };

  const grant = (tab) => {
    lock.holder = tab.id;
    clock.at(clock.now + delay(), () => send(tab, { type: "lock" }));
  };
  const locks = {
    request(tab) {
      if (lock.holder === null && lock.queue.length === 0) return grant(tab);
      lock.queue.push(tab.id);
      clock.at(clock.now + delay(), () => send(tab, { type: "queued" }));
    },
    release(tab) {
      lock.queue = lock.queue.filter((id) => id !== tab.id);
      if (lock.holder !== tab.id) return;
      lock.holder = null;
      const next = lock.queue.shift();
      if (next !== undefined) grant(tabs.get(next));
    },
  };

  const post = (from, message) => {
    const data = structuredClone(message);
    for (const to of tabs.values()) {
      if (to === from || !to.open) continue;
      const key = `${from.id}>${to.id}`;
      const at = Math.max(clock.now + delay(), lastDelivery.get(key) ?? 0);
      lastDelivery.set(key, at);
      clock.at(at, () => to.open && send(to, { type: "message", data }));
    }
  };

  /** Hands an event to a tab's machine and performs its effects, as js/tabs.js does. */
  function send(tab, event) {
    if (tab.gone) return;
    for (const effect of tab.machine.handle(event, clock.now)) perform(tab, effect);
    tab.poller?.release();
  }

  function perform(tab, effect) {
    switch (effect.type) {
      case "post":
        return post(tab, effect.message);
      case "lock":
        return locks.request(tab);
      case "poll":
        assert.equal(tab.poller, null, `${tab.id}: one poller at a time`);
        tab.poller = fakePoller(tab, effect);
        return undefined;
      case "stopPoll":
        return tab.poller?.stop();
      case "pace":
        return tab.poller?.pace(effect.hidden);
      case "webhook":
        return tab.poller?.webhook();
      case "deliver":
        return consume(tab, effect.batch);
      case "status":
        tab.statuses.push(effect.run.status);
        return undefined;
      case "role":
        tab.roles.push(effect.role);
        return undefined;
      case "release":
        tab.open = false;
        locks.release(tab);
        return undefined;
      case "end":
        assert.equal(tab.outcome, null, `${tab.id}: one outcome`);
        tab.outcome = { ...effect.outcome, at: clock.now };
        return undefined;
      case "ignored": // every message here is well formed; some batches come before the hello's answer
        assert.equal(effect.why, "notFromLeader", `${tab.id} ignored a message of the protocol's own`);
        return undefined;
      default:
        throw new Error(`unknown effect ${effect.type}`);
    }
  }

  /** The tab's consumer: checks every batch, takes its time, may fail once. */
  function consume(tab, batch) {
    const { offset, results, cursor } = batch;
    assert.equal(offset, tab.next, `${tab.id}: batch at ${offset} after rows up to ${tab.next}`);
    assert.ok(results.length > 0, `${tab.id}: empty batch`);
    assert.deepEqual(results.map((r) => r.id), rowsOf(offset, offset + results.length).map((r) => r.id), `${tab.id}: rows in order`);
    assert.equal(offsetOf(cursor), offset + results.length, `${tab.id}: the batch's cursor is after its rows`);
    tab.batches += 1;
    tab.firstRowAt ??= clock.now;
    clock.at(clock.now + tab.plan.consumerMs, () => {
      if (tab.outcome || tab.gone) return undefined; // ended meanwhile: the cursor stays before it
      if (tab.plan.consumerFailsAt === tab.batches) {
        return send(tab, { type: "deliveryFailed", error: new CaptainDataError("CALLBACK_FAILED", "onBatch threw") });
      }
      tab.next = offset + results.length;
      return send(tab, { type: "delivered", offset: tab.next, cursor });
    });
  }

  /**
   * What a tab's summary counts: the requests and retries of its pollers that ended with a
   * summary (a wasm poller's error carries no figures: one that fails while this tab ends
   * adds nothing).
   */
  function summarized(tab, poller) {
    tab.summarized.requests += poller.sent;
    tab.summarized.retries += poller.retries;
  }

  /** What a wasm poller does, as far as the protocol can tell. */
  function fakePoller(tab, { cursor, maxRequests, maxDurationMs }) {
    const startedAt = clock.now;
    const failsAfter = tab.plan.flaky && rnd.chance(0.5) ? rnd.int(0, 4) : null;
    const poller = { offset: offsetOf(cursor), sent: 0, retries: 0, hidden: false, stopped: false, sleep: null, waiting: null, seen: null };
    const end = (outcome) => {
      if (poller.stopped) return;
      poller.stopped = true;
      if (outcome.summary) summarized(tab, poller);
      clock.at(clock.now + 1, () => {
        if (tab.poller === poller) tab.poller = null;
        send(tab, { type: "pollEnded", ...outcome });
      });
    };
    const schedule = (ms, hidden) => {
      if (hidden) assertNoVisibleTab(tab);
      const token = {};
      poller.sleep = { token, hidden, until: clock.now + ms };
      clock.at(clock.now + ms, () => poller.sleep?.token === token && tick());
    };
    const tick = () => {
      poller.sleep = null;
      if (poller.stopped) return;
      if (maxDurationMs !== undefined && clock.now - startedAt >= maxDurationMs) return end({ error: new CaptainDataError("TIMEOUT", "poller deadline") });
      if (maxRequests !== undefined && poller.sent >= maxRequests) return end({ error: new CaptainDataError("BUDGET_EXHAUSTED", "poller budget") });
      poller.sent += 1;
      tab.requests += 1;
      requests.total += 1;
      if (tab.plan.flaky && rnd.chance(0.3)) poller.retries += 1; // a retried request
      if (tab.plan.maxRequests !== undefined) assert.ok(tab.requests <= tab.plan.maxRequests, `${tab.id} sent more than its maxRequests`);
      if (failsAfter !== null && poller.sent > failsAfter) return end({ error: new CaptainDataError("RETRIES_EXHAUSTED", "lost") });
      const available = run.available(clock.now);
      const over = clock.now >= run.endsAt;
      const status = over ? (run.failed ? "shutdown" : "finished") : "running";
      if (status !== poller.seen) {
        poller.seen = status;
        send(tab, { type: "polledStatus", run: { status } });
        if (poller.stopped) return undefined;
      }
      if (poller.offset < available) {
        const to = Math.min(available, poller.offset + run.pageSize);
        const batch = { offset: poller.offset, results: rowsOf(poller.offset, to), cursor: cursorAt(to) };
        poller.offset = to;
        poller.waiting = to; // backpressure: the next request waits for this tab's consumer
        send(tab, { type: "polled", batch });
        return undefined;
      }
      if (over && run.failed) return end({ error: new CaptainDataError("JOB_FAILED", "the run failed: shutdown", { runStatus: "shutdown" }) });
      if (over) return end({ summary: { status: "finished", totalResults: poller.offset, requests: poller.sent, retries: poller.retries } });
      return schedule(poller.hidden ? HIDDEN_INTERVAL : INTERVAL, poller.hidden);
    };
    Object.assign(poller, {
      stop() {
        if (poller.stopped) return;
        poller.stopped = true;
        poller.sleep = poller.waiting = null;
        summarized(tab, poller);
        clock.at(clock.now + 1, () => {
          if (tab.poller === poller) tab.poller = null;
          send(tab, { type: "pollEnded", summary: { status: "stopped", requests: poller.sent, retries: poller.retries } });
        });
      },
      pace(hidden) {
        const was = poller.hidden;
        poller.hidden = hidden;
        // As the engine does: visible again cuts a hidden sleep and polls at once.
        if (was && !hidden && poller.sleep) schedule(0, false);
      },
      webhook() {
        if (poller.sleep) schedule(0, poller.hidden);
      },
      /** The glue resolves the poller's onBatch once the tab has delivered past it, or ended. */
      release() {
        if (poller.waiting === null || poller.stopped) return;
        if (tab.machine.delivered < poller.waiting && !tab.machine.ended) return;
        poller.waiting = null;
        clock.at(clock.now + 1, tick);
      },
    });
    clock.at(clock.now + 1, tick);
    return poller;
  }

  for (const plan of plans) {
    const tab = {
      id: plan.id,
      plan,
      open: false,
      gone: false,
      poller: null,
      next: plan.resumeAt,
      batches: 0,
      requests: 0,
      summarized: { requests: 0, retries: 0 },
      statuses: [],
      roles: [],
      outcome: null,
      hidden: plan.hidden,
      visibleSince: plan.hidden ? null : plan.joinAt,
      startedAt: plan.joinAt,
      stopped: false,
      closed: false,
    };
    tab.machine = new TabProtocol({
      id: plan.id,
      offset: plan.resumeAt,
      cursor: cursorAt(plan.resumeAt),
      maxRequests: plan.maxRequests,
      maxDurationMs: plan.maxDurationMs,
      logRows: plan.logRows,
      maxAhead: plan.maxAhead,
    });
    tabs.set(plan.id, tab);
    clock.at(plan.joinAt, () => {
      tab.open = true;
      send(tab, { type: "start", hidden: tab.hidden });
      if (!tab.hidden) checkPaceLater(tab);
    });
    if (plan.maxDurationMs !== undefined) clock.at(plan.joinAt + plan.maxDurationMs, () => send(tab, { type: "timeout" }));
    for (const at of plan.toggles) {
      clock.at(at, () => {
        tab.hidden = !tab.hidden;
        tab.visibleSince = tab.hidden ? null : clock.now;
        send(tab, { type: "visibility", hidden: tab.hidden });
        if (!tab.hidden) checkPaceLater(tab);
      });
    }
    for (const at of plan.webhooks) clock.at(at, () => send(tab, { type: "webhook", payload: { job_uid: "job", message: "Job successfully finished." } }));
    if (plan.stopAt !== null) {
      clock.at(plan.stopAt, () => {
        if (tab.outcome || tab.gone) return;
        tab.stopped = true;
        send(tab, { type: "stop" });
      });
    }
    if (plan.closeAt !== null) {
      clock.at(plan.closeAt, () => {
        if (tab.outcome || tab.gone) return;
        // The page goes away: pagehide may post `bye`; the browser drops its lock and channel.
        if (plan.byeOnClose) send(tab, { type: "unload" });
        tab.closed = tab.gone = true;
        tab.open = false;
        if (tab.poller) tab.poller.stopped = true;
        tab.poller = null;
        locks.release(tab);
      });
    }
  }

  /** A poller takes the hidden pace: no tab may have been visible long enough to be heard. */
  function assertNoVisibleTab(pacer) {
    for (const tab of tabs.values()) {
      const heard = tab.visibleSince !== null && tab.open && clock.now - tab.visibleSince >= PACE_BOUND;
      assert.ok(!heard, `${pacer.id} polls at the hidden pace while ${tab.id} is visible`);
    }
  }

  /** A tab visible for PACE_BOUND ms: the leader's poller must not be in a hidden sleep then. */
  function checkPaceLater(tab) {
    const since = tab.visibleSince;
    clock.at(clock.now + PACE_BOUND, () => {
      if (tab.visibleSince !== since || tab.gone || tab.outcome) return;
      const leader = tabs.get(lock.holder);
      const sleep = leader?.poller?.sleep;
      assert.ok(!(sleep && sleep.hidden), `${leader?.id} sleeps at the hidden pace while ${tab.id} is visible`);
    });
  }

  clock.run();
  return { tabs: [...tabs.values()], lock, requests: requests.total, now: clock.now };
}

/** The fields of index.d.ts `Summary`, in the order the wasm poller gives them. */
const SUMMARY_FIELDS = ["status", "totalResults", "requests", "retries", "durationMs", "cursor"];

/** A tab's summary (a success or a stop): every field, with this tab's own figures. */
function checkSummary(tab, summary) {
  const { id } = tab;
  assert.deepEqual(Object.keys(summary), SUMMARY_FIELDS, `${id}: the summary's fields`);
  assert.ok(Object.isFrozen(summary), `${id}: the summary is frozen`);
  assert.equal(summary.requests, tab.summarized.requests, `${id}: the summary counts the requests this tab sent`);
  assert.equal(summary.retries, tab.summarized.retries, `${id}: the summary counts this tab's retries`);
  assert.equal(summary.totalResults, tab.next, `${id}: totalResults are the rows it delivered`);
  assert.equal(summary.durationMs, tab.outcome.at - tab.startedAt, `${id}: durationMs from its own start()`);
}

/** The rules every tab's user can check. */
function check(world, { run }) {
  const live = world.tabs.filter((t) => !t.closed);
  for (const tab of live) {
    const { id, outcome, plan } = tab;
    assert.ok(outcome, `${id} never ended (role ${tab.machine.role})`);
    if (outcome.summary || outcome.stopped) checkSummary(tab, outcome.summary ?? outcome.stopped);
    if (outcome.summary) {
      assert.ok(!run.failed && outcome.at >= run.endsAt, `${id} completed before the run did`);
      assert.equal(tab.next, run.rows, `${id} completed with rows missing`);
      assert.equal(outcome.summary.totalResults, run.rows, `${id}: totalResults`);
      assert.equal(outcome.summary.status, "finished");
    } else if (outcome.stopped) {
      assert.ok(tab.stopped, `${id} stopped without its own stop()`);
      assert.equal(outcome.stopped.cursor, cursorAt(tab.next), `${id}: the stopped cursor is after its last delivered row`);
    } else {
      const { code } = outcome.error;
      const why = {
        JOB_FAILED: () => run.failed && outcome.at >= run.endsAt && tab.next === run.rows,
        BUDGET_EXHAUSTED: () => plan.maxRequests !== undefined && tab.requests >= plan.maxRequests,
        TIMEOUT: () => plan.maxDurationMs !== undefined && outcome.at - tab.startedAt >= plan.maxDurationMs,
        RETRIES_EXHAUSTED: () => plan.flaky,
        CALLBACK_FAILED: () => plan.consumerFailsAt !== null,
      }[code];
      assert.ok(why?.(), `${id} ended with ${code}: not its own limit nor the run's outcome`);
    }
    if (tab.stopped && !outcome.stopped) assert.ok(outcome.at <= plan.stopAt, `${id}: stop() came first`);
  }
  assert.equal(world.lock.holder, null, "the lock is released after the end");
  assert.deepEqual(world.lock.queue, [], "no lock request is left waiting");
  for (const tab of world.tabs) {
    assert.ok(!tab.open, `${tab.id}'s channel is closed`);
    assert.ok(!tab.poller || tab.poller.stopped, `${tab.id}'s poller is stopped`);
  }
}

function runCase(seed) {
  const drawn = drawCase(seed);
  try {
    const world = simulate(drawn);
    check(world, drawn);
    return world;
  } catch (error) {
    error.message = `seed ${seed} (replay: TAB_SEED=${seed} node --test tests/tab-protocol.test.mjs): ${error.message}`;
    throw error;
  }
}

test(`the tab protocol over random cases (${REPLAY === null ? CASES : 1} cases)`, (t) => {
  const first = REPLAY ?? (Date.now() % 1000000) * 1000;
  const count = REPLAY === null ? CASES : 1;
  t.diagnostic(`seeds ${first}…${first + count - 1}; replay one with TAB_SEED=<seed>`);
  let requests = 0;
  const ends = {};
  for (let i = 0; i < count; i += 1) {
    const world = runCase(first + i);
    requests += world.requests;
    for (const { outcome: o } of world.tabs) {
      const kind = o === null ? "closed" : o.summary ? "completed" : o.stopped ? "stopped" : o.error.code;
      ends[kind] = (ends[kind] ?? 0) + 1;
    }
  }
  const tabs = Object.entries(ends).map(([kind, n]) => `${n} ${kind}`).join(", ");
  t.diagnostic(`tab protocol: ${count} cases, ${requests} requests, 0 violations; tabs: ${tabs}`);
});

/** A case without randomness in what the tabs do: they join at `joins` and stay visible. */
function steadyCase(joins, { logRows = 1000, rows = 50 } = {}) {
  const run = { rows, endsAt: 1000, failed: false, pageSize: 10, available: (time) => (time >= 1000 ? rows : Math.floor((time * rows) / 1000)) };
  const tabs = joins.map((joinAt, i) => ({
    id: `tab${i}`, joinAt, resumeAt: 0, hidden: false, toggles: [], stopAt: null, closeAt: null, byeOnClose: false,
    maxRequests: undefined, maxDurationMs: undefined, flaky: false, consumerMs: 5, consumerFailsAt: null, webhooks: [],
    logRows, maxAhead: 2000,
  }));
  const drawn = { seed: 7, run, tabs, rnd: random(7) };
  const world = simulate(drawn);
  check(world, drawn);
  return world;
}

test("one run, 1/3/5 tabs that stay: about one tab's requests whatever the number of tabs", (t) => {
  const counts = [1, 3, 5].map((n) => steadyCase(rowsOf(0, n).map(({ id }) => id * 30)).requests);
  t.diagnostic(`requests for 1/3/5 tabs: ${counts.join("/")}`);
  assert.ok(counts[2] <= counts[0] * 1.2, `${counts}`);
});

test("a tab that joins after the leader's log moved on reads what it missed itself, then follows", () => {
  const { tabs } = steadyCase([0, 600], { logRows: 5 });
  const [leader, late] = tabs;
  assert.ok(late.firstRowAt < 700, `the late tab got its first rows at ${late.firstRowAt} ms, not when the run ended`);
  // It read the 30 rows it missed (3 pages and the page it met the leader's rows on), then stopped.
  assert.ok(late.requests > 0 && late.requests <= 5, `late tab ${late.requests} requests, leader ${leader.requests}`);
});

// A tab that polled the run alone (js/tabs.js) hands its last rows, requests and start over.
test("a tab that polled alone leads on: a joining tab gets the rows it kept; its budget counts what it sent", () => {
  const kept = Array.from({ length: 30 }, (_, i) => ({ id: `row-${i}` }));
  const tab = new TabProtocol({ id: "a", offset: 30, cursor: "c30", kept, requests: 4, startedAt: 0, maxRequests: 5 });
  tab.handle({ type: "start", hidden: false }, 10);
  const led = tab.handle({ type: "lock" }, 10);
  assert.deepEqual(
    led.find((e) => e.type === "poll"),
    { type: "poll", cursor: "c30", maxRequests: 1 },
    "polls on from where it stopped, with what is left of its budget",
  );
  tab.handle({ type: "message", data: { type: "tab", from: "b", hidden: false, hello: true } }, 11);
  const answer = tab.handle({ type: "message", data: { type: "want", from: "b", next: 0 } }, 12);
  const rows = answer.find((e) => e.type === "post" && e.message.type === "rows")?.message;
  assert.equal(rows?.offset, 0, "answered from its first kept row");
  assert.deepEqual(rows.results.map((r) => r.id), kept.map((r) => r.id));

  const spent = new TabProtocol({ id: "c", offset: 0, cursor: "c0", requests: 5, startedAt: 0, maxRequests: 5 });
  spent.handle({ type: "start", hidden: false }, 10);
  const ended = spent.handle({ type: "lock" }, 10).find((e) => e.type === "end");
  assert.equal(ended?.outcome.error.code, "BUDGET_EXHAUSTED", "a budget spent alone is spent");
  assert.match(ended.outcome.error.message, /maxRequests \(5\)/, "named as the tab's own budget");
});

// ---- messages: read only when well formed, rows and outcomes only from a leader ------------

/** A follower of `leader` (told by the leader's answer to its hello), with nothing delivered yet. */
function follower({ leader = "lead" } = {}) {
  const tab = new TabProtocol({ id: "f", offset: 0, cursor: "c0" });
  tab.handle({ type: "start", hidden: false }, 0);
  tab.handle({ type: "queued" }, 1);
  tab.handle({ type: "message", data: { type: "tab", from: leader, hidden: false, leads: true } }, 2);
  return tab;
}

const received = (tab, data, now = 3) => tab.handle({ type: "message", data }, now);
/** What a user of the tab would notice: rows, a status, an outcome. */
const noticed = (effects) => effects.filter((e) => ["deliver", "status", "end"].includes(e.type));

const BATCH = { type: "batch", from: "lead", offset: 0, results: [{ id: 0 }, { id: 1 }], cursor: "c2" };
const END = { type: "end", from: "lead", outcome: { summary: { status: "finished" } }, total: 0 };

test("a malformed or unknown message is ignored and counted, never delivered as rows, a status or an end", () => {
  const tab = follower();
  const malformed = [
    null,
    "batch",
    [BATCH],
    { ...BATCH, type: "rows!" },
    { type: "hello", from: "lead" },
    { ...BATCH, from: undefined },
    { ...BATCH, from: 7 },
    { ...BATCH, offset: -1 },
    { ...BATCH, offset: "0" },
    { ...BATCH, offset: 1.5 },
    { ...BATCH, results: { 0: { id: 0 }, length: 1 } },
    { ...BATCH, cursor: undefined },
    { ...BATCH, cursor: 2 },
    { type: "status", from: "lead", run: null },
    { type: "status", from: "lead", run: { status: 3 } },
    { type: "status", from: "lead", run: { status: "running", rowCount: "many" } },
    { type: "status", from: "lead", run: { status: "running", errorMessage: 5 } },
    { type: "status", from: "lead", run: { status: "running", retrying: "yes" } },
    { ...END, total: -2 },
    { ...END, outcome: { summary: {} } },
    { ...END, outcome: { error: { code: "NOT_A_CODE", message: "x" } } },
    { ...END, outcome: { error: { code: "JOB_FAILED" } } },
    { ...END, outcome: { summary: { status: "finished" }, error: { code: "JOB_FAILED", message: "x" } } },
    { type: "rows", from: "lead", to: "f", offset: 0, results: [{ id: 0 }], cursor: "c1", known: "1", run: null, end: null },
    { type: "rows", from: "lead", to: "f", offset: 0, results: [{ id: 0 }], cursor: "c1", known: 1, run: null, end: { total: 1 } },
    { type: "tab", from: "x", hidden: "no", leads: false },
    { type: "tab", from: "x", hidden: false }, // `leads` is required
    { type: "want", from: "x", next: -1 },
    { type: "webhook", from: "x", payload: "Job failed." },
  ];
  for (const data of malformed) {
    const effects = received(tab, data);
    assert.deepEqual(noticed(effects), [], `delivered from ${JSON.stringify(data)}`);
    assert.ok(!effects.some((e) => e.type === "post"), `answered ${JSON.stringify(data)}`);
    assert.deepEqual(effects.filter((e) => e.type === "ignored"), [{ type: "ignored", why: "malformed" }], `counted ${JSON.stringify(data)}`);
  }
  assert.deepEqual(tab.ignored, { malformed: malformed.length, notFromLeader: 0 });
  // The same tab reads the well-formed batch: the checks above are not why nothing came.
  assert.deepEqual(noticed(received(tab, BATCH)).map((e) => e.type), ["deliver"]);
  assert.deepEqual(tab.ignored, { malformed: malformed.length, notFromLeader: 0 });
});

test("a forged batch, status, answer or end from a tab that never said it leads reaches no callback", () => {
  const tab = follower();
  const forged = [
    { ...BATCH, from: "mallory" },
    { type: "status", from: "mallory", run: { status: "finished" } },
    { type: "rows", from: "mallory", to: "f", offset: 0, results: [{ id: "forged" }], cursor: "c1", known: 1, run: null, end: null },
    { ...END, from: "mallory" },
    { ...END, from: "mallory", outcome: { error: { code: "JOB_FAILED", message: "forged", runStatus: "shutdown" } } },
  ];
  for (const data of forged) {
    const effects = received(tab, data);
    assert.deepEqual(noticed(effects), [], `delivered from ${JSON.stringify(data)}`);
    assert.deepEqual(effects.filter((e) => e.type === "ignored"), [{ type: "ignored", why: "notFromLeader" }]);
  }
  // An answer meant for another tab is not this tab's business: not read, not counted.
  assert.deepEqual(received(tab, { type: "rows", from: "lead", to: "g", offset: 0, results: [], cursor: "c0", known: 0, run: null, end: null }), []);
  assert.deepEqual(tab.ignored, { malformed: 0, notFromLeader: forged.length });
  assert.equal(tab.ended, false, "a forged end ended nothing");
  // A tab that announces it took the lock is a leader from then on: its rows and end are read.
  received(tab, { type: "leader", from: "next" });
  assert.deepEqual(noticed(received(tab, { ...BATCH, from: "next" })).map((e) => e.type), ["deliver"]);
  tab.handle({ type: "delivered", offset: 2, cursor: "c2" }, 4);
  const ended = noticed(received(tab, { ...END, from: "next", total: 2 }, 5));
  assert.deepEqual(ended.map((e) => e.type), ["end"]);
  assert.equal(ended[0].outcome.summary.totalResults, 2);
});

test("every message a tab posts is one a tab reads (the protocol passes its own checks)", () => {
  // The random cases above fail on any `ignored` other than a batch that came before the
  // leader's answer; here a leader's and a follower's posts go through wellFormed one by one.
  const leader = new TabProtocol({ id: "L", offset: 0, cursor: "c0", kept: [], requests: 0 });
  const posts = [];
  const collect = (effects) => posts.push(...effects.filter((e) => e.type === "post").map((e) => e.message));
  collect(leader.handle({ type: "start", hidden: true }, 0));
  collect(leader.handle({ type: "lock" }, 1));
  collect(leader.handle({ type: "message", data: { type: "tab", from: "F", hidden: false, leads: false, hello: true } }, 2));
  collect(leader.handle({ type: "polledStatus", run: { status: "running", rowCount: 2, totalRowCount: null, numberInputs: 1 } }, 3));
  collect(leader.handle({ type: "polled", batch: { offset: 0, results: [{ id: 0 }, { id: 1 }], cursor: "c2" } }, 4));
  collect(leader.handle({ type: "message", data: { type: "want", from: "F", next: 0 } }, 5));
  collect(leader.handle({ type: "webhook", payload: { job_uid: "job" } }, 6));
  collect(leader.handle({ type: "visibility", hidden: false }, 7));
  collect(leader.handle({ type: "delivered", offset: 2, cursor: "c2" }, 8));
  collect(leader.handle({ type: "pollEnded", error: new CaptainDataError("JOB_FAILED", "the run failed", { runStatus: "shutdown" }) }, 9));
  collect(leader.handle({ type: "message", data: { type: "want", from: "F", next: 1 } }, 10));
  const f = new TabProtocol({ id: "F", offset: 0, cursor: "c0" });
  collect(f.handle({ type: "start", hidden: false }, 11));
  collect(f.handle({ type: "queued" }, 11));
  collect(f.handle({ type: "webhook", payload: { job_uid: "job" } }, 11));
  collect(f.handle({ type: "unload" }, 12));
  const types = new Set(posts.map((m) => m.type));
  assert.deepEqual([...types].sort(), ["batch", "bye", "end", "leader", "rows", "status", "tab", "want", "webhook"]);
  const reader = follower({ leader: "L" });
  for (const message of posts) {
    const effects = reader.handle({ type: "message", data: structuredClone(message) }, 20);
    assert.ok(!effects.some((e) => e.type === "ignored" && e.why === "malformed"), `${JSON.stringify(message)} is malformed`);
  }
});

// ---- the summary: every field, this tab's figures, once its last poller has ended ---------

test("a leader stopped while its poller runs ends once the poller has: the summary counts its requests and retries", () => {
  const tab = new TabProtocol({ id: "a", offset: 30, cursor: "c30", requests: 4, retries: 1, startedAt: 100 });
  tab.handle({ type: "start", hidden: false }, 150);
  tab.handle({ type: "lock" }, 150);
  tab.handle({ type: "polled", batch: { offset: 30, results: [{ id: 30 }], cursor: "c31" } }, 160);
  tab.handle({ type: "delivered", offset: 31, cursor: "c31" }, 161);
  const stopping = tab.handle({ type: "stop" }, 170);
  assert.deepEqual(stopping.map((e) => e.type), ["stopPoll", "post", "release"], "lets go at once, ends after its poller");
  const [end] = tab.handle({ type: "pollEnded", summary: { status: "stopped", totalResults: 31, requests: 3, retries: 2, durationMs: 20, cursor: "c31" } }, 175);
  assert.deepEqual(end, {
    type: "end",
    outcome: { stopped: { status: "stopped", totalResults: 31, requests: 7, retries: 3, durationMs: 75, cursor: "c31" } },
  });
  assert.ok(Object.isFrozen(end.outcome.stopped));
});

test("a follower's success: the run's status from the leader's end, every other figure its own", () => {
  const tab = follower();
  received(tab, BATCH);
  tab.handle({ type: "delivered", offset: 2, cursor: "c2" }, 4);
  const leaders = { status: "warning", totalResults: 99, requests: 40, retries: 7, durationMs: 9999, cursor: "c99" };
  const [end] = noticed(received(tab, { ...END, outcome: { summary: leaders }, total: 2 }, 50));
  assert.deepEqual(end.outcome, { summary: { status: "warning", totalResults: 2, requests: 0, retries: 0, durationMs: 50, cursor: "c2" } });
});

// ---- one source: the tab layer's texts and summary are the lone wasm poller's --------------

/** A real wasm poller (the Node entry) on the simulator, in process; `start()`'s outcome. */
async function lonePoller(spec, options = {}) {
  const sim = createSim({ apiKey: "k", projectId: "p" });
  const { jobUid } = sim.createJob({ pageSize: 5, ...spec });
  if (spec.finished) sim.finish(jobUid);
  const fetch = (input, init) => sim.handle(new Request(input, init));
  const poller = new JobPoller({ jobUid, apiKey: "k", projectId: "p", baseUrl: "http://127.0.0.1/v3", fetch, intervalMs: 20, ...options });
  try {
    return { summary: await poller.start() };
  } catch (error) {
    return { error };
  }
}

test("the tab layer words TIMEOUT, BUDGET_EXHAUSTED and CALLBACK_FAILED as the engine does", async () => {
  const running = { rows: 20, durationMs: 3_600_000 };
  const timeout = await lonePoller(running, { maxDurationMs: 50 });
  assert.equal(timeout.error?.code, "TIMEOUT");
  assert.equal(limitError("TIMEOUT", { maxDurationMs: 50 }).message, timeout.error.message);
  const budget = await lonePoller(running, { maxRequests: 2 });
  assert.equal(budget.error?.code, "BUDGET_EXHAUSTED");
  assert.equal(limitError("BUDGET_EXHAUSTED", { maxRequests: 2 }).message, budget.error.message);
  let failedOn = null;
  const refused = await lonePoller({ rows: 12, finished: true }, {
    onBatch(batch) {
      if (batch.offset > 0) {
        failedOn = batch;
        throw new Error("full");
      }
    },
  });
  assert.equal(refused.error?.code, "CALLBACK_FAILED");
  assert.ok(failedOn, "a second batch came, and its onBatch threw");
  const { offset, results } = failedOn;
  assert.equal(callbackFailed(offset, offset + results.length, null).message, refused.error.message);
});

test("the summary of every path has the fields index.d.ts promises, in the wasm poller's order", async () => {
  const types = readFileSync(new URL("../index.d.ts", import.meta.url), "utf8");
  // `Summary` is a union on `status` over the figures every summary has (an incomplete one adds
  // `missing` after them, as the wasm poller does).
  const fields = (name) => {
    const block = types.slice(types.indexOf(`export interface ${name} `));
    return [...block.slice(0, block.indexOf("\n}")).matchAll(/^ {2}readonly (\w+)\??:/gm)].map((m) => m[1]);
  };
  assert.deepEqual(["status", ...fields("SummaryFigures")], SUMMARY_FIELDS);
  assert.deepEqual(fields("IncompleteSummary"), ["status", "missing"]);
  const lone = await lonePoller({ rows: 7, finished: true });
  assert.deepEqual(Object.keys(lone.summary ?? {}), SUMMARY_FIELDS, "the lone wasm poller's");
  assert.deepEqual(Object.keys(summary({})), SUMMARY_FIELDS, "js/summary.js's (a stop before the module loaded, every tab)");
});

test("the tab options are checked where tabs cannot share too (Node): a TypeError naming the option", () => {
  const base = { jobUid: "job", baseUrl: "http://127.0.0.1/v3" };
  const refused = [
    [{ shareKey: 42 }, "Expected `shareKey` to be a string (got 42)"],
    [{ shareKey: { team: "a" } }, "Expected `shareKey` to be a string (got an object)"],
    [{ shareAcrossTabs: "yes" }, 'Expected `shareAcrossTabs` to be a boolean (got "yes")'],
    [{ onRoleChange: "show" }, 'Expected `onRoleChange` to be a function (got "show")'],
  ];
  for (const [options, message] of refused) assert.throws(() => new JobPoller({ ...base, ...options }), { name: "TypeError", message });
  const poller = new JobPoller({ ...base, shareKey: "team-a", shareAcrossTabs: true });
  assert.equal(poller.role, "alone", "a key changes nothing where tabs cannot share");
  poller.free();
});

test("what a real wasm poller hands the tab layer passes the message checks: its batches, statuses, summary and errors", async () => {
  const [batches, runs] = [[], []];
  const record = { onBatch: (batch) => void batches.push(batch), onStatus: (run) => void runs.push(run) };
  const done = await lonePoller({ rows: 12, finished: true }, record);
  const failed = await lonePoller({ rows: 3, outcome: "shutdown", durationMs: 0 }, {});
  const spent = await lonePoller({ rows: 3, durationMs: 3_600_000 }, { ...record, maxRequests: 2 });
  assert.ok(batches.length >= 3 && runs.length >= 2, `${batches.length} batches, ${runs.length} statuses`);
  const from = "leader-id";
  for (const { offset, results, cursor } of batches) assert.ok(wellFormed({ type: "batch", from, offset, results, cursor }), `batch at ${offset}`);
  for (const run of runs) assert.ok(wellFormed(structuredClone({ type: "status", from, run })), `status ${JSON.stringify(run)}`);
  const ends = [done, failed, spent].map((outcome) => ({ type: "end", from, outcome: outcomeToWire(outcome), total: 3 }));
  assert.deepEqual(ends.map((m) => Object.keys(m.outcome)), [["summary"], ["error"], ["error"]]);
  for (const end of ends) assert.ok(wellFormed(structuredClone(end)), `end ${JSON.stringify(end.outcome)}`);
});
