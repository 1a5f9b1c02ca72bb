// What survives a reload: the run being watched and its cursor (localStorage), and the rows
// already shown (IndexedDB: 10,000 rows do not fit localStorage's few MB). Rows are keyed by
// their position in the run, so writing one twice cannot show it twice.

const SESSION_KEY = "captaindata-poller-demo:run";
const DB_NAME = "captaindata-poller-demo";
const STORE = "rows";

/**
 * @typedef {{ jobUid: string, mode: "sim" | "api", cursor: string | null, expectedRows: number | null, pageSize?: number, arrival?: "bursts" | "linear",
 *   intervalMs: number, state: "running" | "stopped" | "completed" | "failed", rows: number }} SavedRun
 */

/** @returns {SavedRun | null} */
export function loadSavedRun() {
  try {
    const saved = JSON.parse(localStorage.getItem(SESSION_KEY) ?? "null");
    return saved && typeof saved.jobUid === "string" ? saved : null;
  } catch {
    return null;
  }
}

/** @param {SavedRun} run */
export function saveRun(run) {
  localStorage.setItem(SESSION_KEY, JSON.stringify(run));
}

export function forgetRun() {
  localStorage.removeItem(SESSION_KEY);
}

let opening = null;
function db() {
  opening ??= new Promise((resolve, reject) => {
    const req = indexedDB.open(DB_NAME, 1);
    req.onupgradeneeded = () => req.result.createObjectStore(STORE, { keyPath: ["jobUid", "index"] });
    req.onsuccess = () => resolve(req.result);
    req.onerror = () => reject(req.error);
  });
  return opening;
}

async function inStore(mode, work) {
  const tx = (await db()).transaction(STORE, mode);
  const result = work(tx.objectStore(STORE));
  return new Promise((resolve, reject) => {
    tx.oncomplete = () => resolve(result.result);
    tx.onerror = () => reject(tx.error);
    tx.onabort = () => reject(tx.error);
  });
}

const rangeOf = (jobUid) => IDBKeyRange.bound([jobUid, 0], [jobUid, Number.MAX_SAFE_INTEGER]);

/** Stores rows `offset…` of a run; resolves once they are on disk. */
export function storeRows(jobUid, offset, rows) {
  return inStore("readwrite", (store) => {
    rows.forEach((row, i) => store.put({ jobUid, index: offset + i, row }));
    return {};
  });
}

/** Every stored row of a run, in order. */
export async function storedRows(jobUid) {
  const records = await inStore("readonly", (store) => store.getAll(rangeOf(jobUid)));
  return records.map((r) => r.row);
}

/** Removes every stored row (of every run: the demo keeps one run at a time). */
export function clearStoredRows() {
  return inStore("readwrite", (store) => store.clear());
}
