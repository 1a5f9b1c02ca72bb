// Files named by flags, checked before anything is scheduled, requested or written: a path
// that cannot be written is a usage error (exit 2) with no file created or cut, and no run
// launched for nothing. The error texts say what is wrong in words, with the system's code.
import { constants } from "node:fs";
import { access, stat } from "node:fs/promises";
import path from "node:path";
import { UsageError } from "./usage-error.mjs";

const REASONS = {
  ENOENT: "no such file",
  EACCES: "permission denied",
  EPERM: "permission denied",
  EISDIR: "it is a directory",
  ENOTDIR: "a part of the path is not a directory",
  EROFS: "read-only file system",
  ENOSPC: "no space left on the device",
  EDQUOT: "disk quota exceeded",
  EMFILE: "too many open files",
  ETXTBSY: "the file is busy",
};

/** "permission denied (EACCES)" for a file system error. */
export const fsReason = (error) => (REASONS[error?.code] ? `${REASONS[error.code]} (${error.code})` : (error?.code ?? error?.message ?? String(error)));

const statOrNull = (file) =>
  stat(file).catch((error) => {
    if (error.code === "ENOENT" || error.code === "ENOTDIR") return null;
    throw error;
  });

/**
 * Throws a UsageError naming `--flag FILE` unless FILE can be written (`byRename`: replaced
 * by a rename, which needs its directory writable too).
 */
export async function checkWritableFile(flag, file, { byRename = false } = {}) {
  const at = `--${flag} ${file}`;
  try {
    const info = await statOrNull(file);
    if (info?.isDirectory()) throw new UsageError(`${at}: it is a directory; give the path of a file`);
    if (info) await access(file, constants.W_OK);
    if (info && !byRename) return undefined;
    const dir = path.dirname(path.resolve(file));
    const parent = await statOrNull(dir);
    if (!parent) throw new UsageError(`${at}: the directory ${dir} does not exist`);
    if (!parent.isDirectory()) throw new UsageError(`${at}: ${dir} is not a directory`);
    return await access(dir, constants.W_OK);
  } catch (error) {
    if (error instanceof UsageError) throw error;
    throw new UsageError(`${at}: cannot write it: ${fsReason(error)}`);
  }
}

/**
 * An `--out` file that holds something is not cut to start a new document unless `--force`
 * says so: its rows may be all that is left of an earlier run. (A device such as /dev/null,
 * or an empty file, loses nothing.)
 */
async function checkNotReplacing(out) {
  const info = await statOrNull(out).catch(() => null);
  if (!info?.isFile() || info.size === 0) return;
  throw new UsageError(
    `--out ${out}: the file exists (${info.size.toLocaleString("en")} bytes) and would be replaced: pass --force to replace it, or give another file (--state FILE keeps where a watch stopped, to continue it later)`,
  );
}

/**
 * The checks of `watch` and `run` on `--out` and `--state`, before any request.
 * `continuing`: the output continues what a --state file or --cursor describes.
 */
export async function checkOutputFiles(values, { continuing = false } = {}) {
  const { out, state } = values;
  if (out !== undefined && state !== undefined && path.resolve(out) === path.resolve(state)) {
    throw new UsageError(`--out and --state both name ${out}: the state needs a file of its own`);
  }
  if (out !== undefined) await checkWritableFile("out", out);
  if (out !== undefined && !continuing && !values.force) await checkNotReplacing(out);
  if (state !== undefined) await checkWritableFile("state", state, { byRename: true });
}
