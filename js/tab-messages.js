// The messages the tabs of a run exchange on its BroadcastChannel, and the shape of each. The
// protocol (js/tab-protocol.js) reads a message only once `wellFormed` accepts it: anything
// else is ignored and counted, never delivered as rows, a status or an outcome. The channel is
// open to any script of the origin (the lock of the same name shows in navigator.locks.query()):
// this check keeps out malformed data, not a script that posts well-formed messages.
//
// Only rows, cursors, statuses, outcomes and relayed webhook payloads travel; never an option,
// a credential or a header. `from` is the sending tab's id (a random UUID), `to` the tab a
// reply is meant for.
//   tab     {from, hidden, leads, hello?}        a tab's visibility (`leads`: it holds the lock);
//                                               `hello` asks the others to answer
//   bye     {from}                               a tab ended
//   leader  {from}                               a tab took the lock
//   batch   {from, offset, results, cursor}      rows the leader's poller delivered
//   status  {from, run}                          the run's status changed
//   want    {from, next}                         a tab misses rows from `next`
//   rows    {from, to, offset, results, cursor, known, run, end}
//                                               the leader's answer from its log (`run`, `end`:
//                                               its last status and the run's outcome, or null)
//   end     {from, outcome, total}               the run's outcome ({summary} or {error}), after
//                                               `total` rows
//   webhook {from, payload}                      a follower relays webhookReceived(payload)

import { ERROR_CODES } from "./error-codes.js";

const isId = (v) => typeof v === "string" && v.length > 0 && v.length <= 100;
const isBoolean = (v) => typeof v === "boolean";
const isString = (v) => typeof v === "string";
const isCount = (v) => Number.isSafeInteger(v) && v >= 0;
const isObject = (v) => typeof v === "object" && v !== null && !Array.isArray(v);
const optional = (check) => (v) => v === undefined || check(v);
const orNull = (check) => (v) => v === null || v === undefined || check(v);
const countOrNull = orNull(isCount);

/** A RunStatus as onStatus receives it (index.d.ts): the fields a page reads, of their types. */
const isRun = (v) =>
  isObject(v) &&
  isString(v.status) &&
  [v.rowCount, v.totalRowCount, v.numberInputs, v.pausedForMs].every(countOrNull) &&
  orNull(isString)(v.errorMessage) &&
  orNull(isObject)(v.retrying);

/** An outcome as `outcomeToWire` sends it: a summary with its status, or an error's fields. */
const isOutcome = (v) => {
  if (!isObject(v)) return false;
  if (v.summary !== undefined) return isObject(v.summary) && isString(v.summary.status) && v.error === undefined;
  const { error } = v;
  return (
    isObject(error) &&
    ERROR_CODES.includes(error.code) &&
    isString(error.message) &&
    optional(isCount)(error.status) &&
    optional(isString)(error.runStatus)
  );
};

const isEnd = (v) => isObject(v) && isOutcome(v.outcome) && isCount(v.total);

/** Each type's fields and the check each must pass. */
const SHAPES = {
  tab: { from: isId, hidden: isBoolean, leads: isBoolean, hello: optional(isBoolean) },
  bye: { from: isId },
  leader: { from: isId },
  batch: { from: isId, offset: isCount, results: Array.isArray, cursor: isString },
  status: { from: isId, run: isRun },
  want: { from: isId, next: isCount },
  rows: { from: isId, to: isId, offset: isCount, results: Array.isArray, cursor: isString, known: isCount, run: orNull(isRun), end: orNull(isEnd) },
  end: { from: isId, outcome: isOutcome, total: isCount },
  webhook: { from: isId, payload: isObject },
};

/** True when `message` is one of the messages above, every field of the right shape. */
export function wellFormed(message) {
  if (!isObject(message) || !Object.hasOwn(SHAPES, message.type)) return false;
  return Object.entries(SHAPES[message.type]).every(([field, check]) => check(message[field]));
}
