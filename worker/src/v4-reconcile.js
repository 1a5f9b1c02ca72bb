// What a v4 run still lacks once it is over, from its deliveries (GET /v4/runs/callbacks) and
// the batches the worker stored. Pure: the tracker performs the replays and decides the end.

/** Captain Data replays an original delivery at most this many times. */
export const MAX_REPLAYS = 3;
const IN_FLIGHT = new Set(["PENDING", "RUNNING"]);

/**
 * Per batch the run's deliveries name: stored (nothing to do); a delivery still pending or
 * being sent (wait for it); else replay its original while fewer than MAX_REPLAYS replays
 * exist (a failed delivery, or one that says SUCCESS while the batch never arrived); else it is
 * lost for good.
 * @param {{ uid: string, parent_uid?: string | null, status?: string, batch_uid?: string }[]} deliveries
 * @param {Set<string>} stored the batch uids the worker has
 * @param {(batchUid: string, replays: number) => boolean} [due] whether the next replay of a batch
 *   that has `replays` already may go now (a batch not due yet waits): replays are paced, so a
 *   receiver that is still down does not use them all at once
 * @param {(batchUid: string) => number} [counted] the replays the worker itself sent of a batch
 *   (failed requests included): a batch has had the more of that and of the replays the list
 *   shows, so a list that never shows them (or a replay request that fails) cannot bring more
 *   than MAX_REPLAYS
 * @returns {{ replay: string[], waiting: string[], lost: string[] }}
 *   `replay`: delivery uids to replay; `waiting`: batches on their way (replays included);
 *   `lost`: batches that can no longer be recovered.
 */
export function reconcile(deliveries, stored, due = () => true, counted = () => 0) {
  const batches = new Map();
  for (const d of deliveries) {
    if (typeof d.batch_uid !== "string" || d.batch_uid === "") continue;
    if (!batches.has(d.batch_uid)) batches.set(d.batch_uid, []);
    batches.get(d.batch_uid).push(d);
  }
  const plan = { replay: [], waiting: [], lost: [] };
  for (const [batchUid, ofBatch] of batches) {
    if (stored.has(batchUid)) continue;
    if (ofBatch.some((d) => IN_FLIGHT.has(String(d.status).toUpperCase()))) {
      plan.waiting.push(batchUid);
      continue;
    }
    const original = ofBatch.find((d) => d.parent_uid === null || d.parent_uid === undefined);
    const listed = original ? ofBatch.filter((d) => d.parent_uid === original.uid).length : MAX_REPLAYS;
    const replays = Math.max(listed, counted(batchUid));
    if (replays < MAX_REPLAYS) {
      if (due(batchUid, replays)) plan.replay.push(original.uid);
      plan.waiting.push(batchUid);
    } else {
      plan.lost.push(batchUid);
    }
  }
  return plan;
}
