// What survives a reload: the run being watched and its cursor (localStorage), and the rows
// already shown (IndexedDB: 10,000 rows do not fit localStorage's few MB). A batch is one
// record keyed by the position of its first row (one write per batch: a write per row took
// seconds of the page's main thread on a 50,000-row run); rows are read back by position, so a
// batch written twice cannot show a row twice.

const SESSION_KEY = "captaindata-poller-demo:run";
const DB_NAME = "captaindata-poller-demo";
const STORE = "batches";
const VERSION = 2; // 1 stored a record per row

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
    const req = indexedDB.open(DB_NAME, VERSION);
    req.onupgradeneeded = () => {
      const names = req.result.objectStoreNames;
      if (names.contains("rows")) req.result.deleteObjectStore("rows");
      if (!names.contains(STORE)) req.result.createObjectStore(STORE, { keyPath: ["jobUid", "offset"] });
    };
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
    store.put({ jobUid, offset, rows });
    return {};
  });
}

/** Every stored row of a run from its first, in order (records come sorted by offset). */
export async function storedRows(jobUid) {
  const records = await inStore("readonly", (store) => store.getAll(rangeOf(jobUid)));
  const rows = [];
  for (const { offset, rows: batch } of records) {
    if (offset > rows.length) break; // a gap: keep what is contiguous, the cursor says the rest
    for (let i = rows.length - offset; i < batch.length; i++) rows.push(batch[i]);
  }
  return rows;
}

/** Removes every stored row (of every run: the demo keeps one run at a time). */
export function clearStoredRows() {
  return inStore("readwrite", (store) => store.clear());
}
