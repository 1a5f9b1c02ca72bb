// `--state FILE`: where a watch stands, rewritten after every batch that reached the output.
// Written to a temporary file, fsynced, then renamed over the old one: a crash leaves either
// the old state or the new one, never a torn file, and never a state ahead of the rows. The
// temporary file has a random name and is created exclusively, readable by its owner only: a
// link planted in the directory cannot make the CLI write through it.
import { randomBytes } from "node:crypto";
import { open, readFile, rename, unlink } from "node:fs/promises";
import path from "node:path";
import { fsReason } from "./file-checks.mjs";
import { UsageError } from "./usage-error.mjs";

const VERSION = 1;

/**
 * @typedef {{ version: 1, jobUid: string, workflowUid?: string, cursor: string | null,
 *   rows: number, format: string, out: string | null, outBytes: number,
 *   columns: string[] | null, done: boolean }} WatchState
 * `out` is the absolute path of `--out` (null: stdout); `outBytes` its length after the
 * last written batch; `columns` the CSV header written; `done` the run ended.
 */

/** The state in `file`, or null when the file does not exist yet. */
export async function readState(file) {
  let text;
  try {
    text = await readFile(file, "utf8");
  } catch (error) {
    if (error.code === "ENOENT") return null;
    throw new UsageError(`--state ${file}: cannot read it: ${fsReason(error)}`);
  }
  const refuse = (why) =>
    new UsageError(`--state ${file}: ${why}; it is left as it is: give another --state file, or remove this one to start again`);
  let state;
  try {
    state = JSON.parse(text);
  } catch {
    throw refuse(text.trim() === "" ? "the file is empty, not a state file written by this command" : "not a state file written by this command (not JSON)");
  }
  const valid =
    state?.version === VERSION &&
    typeof state.jobUid === "string" &&
    Number.isInteger(state.outBytes) &&
    Number.isInteger(state.rows) &&
    (state.cursor === null || typeof state.cursor === "string") &&
    (state.columns === null || Array.isArray(state.columns));
  if (!valid) throw refuse("not a state file written by this command");
  return state;
}

/** Owner read and write only: the state names the run and the output; the rows are personal data. */
export const PRIVATE_FILE_MODE = 0o600;

/** Replaces `file` with `state`, atomically and durably. */
export async function writeState(file, state) {
  const temporary = path.join(path.dirname(file), `.${path.basename(file)}.${randomBytes(8).toString("hex")}.tmp`);
  // "wx": O_CREAT | O_EXCL, which fails on any existing name, a symbolic link included.
  const handle = await open(temporary, "wx", PRIVATE_FILE_MODE);
  try {
    await handle.writeFile(`${JSON.stringify({ version: VERSION, ...state }, null, 2)}\n`);
    await handle.sync();
  } finally {
    await handle.close();
  }
  try {
    await rename(temporary, file);
  } catch (error) {
    await unlink(temporary).catch(() => {});
    throw error;
  }
  await syncDirectory(path.dirname(file));
}

/** Makes the rename itself durable (POSIX); where a directory cannot be fsynced, skip it. */
async function syncDirectory(dir) {
  try {
    const handle = await open(dir, "r");
    try {
      await handle.sync();
    } finally {
      await handle.close();
    }
  } catch {
    // Windows cannot open a directory; the rename is still atomic there.
  }
}
