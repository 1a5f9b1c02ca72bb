// Where rows go: stdout, or `--out FILE`. Each batch is one write; on a file it is then
// fsynced, so the resume state written after it is never ahead of the rows on disk.
import { open } from "node:fs/promises";
import { fsReason } from "./file-checks.mjs";
import { PRIVATE_FILE_MODE } from "./state-file.mjs";
import { UsageError } from "./usage-error.mjs";

/** A failure to write the rows: the message names where they were going. */
export class OutputError extends Error {
  constructor(target, cause) {
    super(`cannot write ${target}: ${fsReason(cause)}`, { cause });
    this.name = "OutputError";
    this.code = cause?.code;
  }
}

/** stdout as a sink: `write` resolves once Node handed the text to the OS (backpressure). */
export function stdoutSink(stream = process.stdout) {
  // An 'error' (EPIPE: `| head` closed the pipe) is also passed to the write callback below.
  stream.on("error", () => {});
  let bytes = 0;
  return {
    target: "stdout",
    get bytes() {
      return bytes;
    },
    write(text) {
      if (text === "") return Promise.resolve();
      return new Promise((resolve, reject) => {
        stream.write(text, (error) => (error ? reject(new OutputError("stdout", error)) : resolve()));
        bytes += Buffer.byteLength(text);
      });
    },
    sync: async () => {},
    close: async () => {},
  };
}

/**
 * `--out FILE` as a sink.
 * @param {string} file
 * @param {{ at: null | number | "end" }} where `null`: a new file (truncated); a number: resume
 *   after that many bytes (what the state recorded; anything written after it is cut off);
 *   `"end"`: continue after what the file holds (a resume from `--cursor`).
 */
export async function fileSink(file, { at }) {
  const target = `--out ${file}`;
  let handle;
  try {
    // Positioned writes need "r+" ("a" would ignore the position); "w" for a new file, which
    // is created readable by its owner only (an existing one keeps its mode).
    handle = at === null ? await open(file, "w", PRIVATE_FILE_MODE) : await open(file, "r+").catch((error) => {
      if (error.code !== "ENOENT") throw error;
      // Gone, though the --state file says it holds rows: say so, and create nothing.
      if (typeof at === "number" && at > 0) throw new UsageError(`${target} does not exist, but the --state file recorded ${at} bytes in it: remove the --state file to start again`);
      return open(file, "w", PRIVATE_FILE_MODE);
    });
  } catch (error) {
    if (error instanceof UsageError) throw error;
    throw new UsageError(`${target}: cannot open it: ${fsReason(error)}`);
  }
  const { size } = await handle.stat();
  let bytes = at === null ? 0 : at === "end" ? size : at;
  if (typeof at === "number") {
    if (size < at) {
      await handle.close();
      throw new UsageError(
        `${target} holds ${size} bytes, fewer than the ${at} the --state file recorded: it was changed since; remove the --state file to start again`,
      );
    }
    await handle.truncate(at);
  }
  const guard = async (what) => {
    try {
      return await what();
    } catch (error) {
      throw new OutputError(target, error);
    }
  };
  return {
    target,
    get bytes() {
      return bytes;
    },
    async write(text) {
      if (text === "") return;
      const data = Buffer.from(text);
      await guard(async () => {
        let done = 0;
        while (done < data.length) done += (await handle.write(data, done, data.length - done, bytes + done)).bytesWritten;
      });
      bytes += data.length;
    },
    // A device or a FIFO (/dev/null, a named pipe) cannot be fsynced: nothing to make durable.
    sync: () => guard(() => handle.sync().catch((error) => (["EINVAL", "ENOTSUP"].includes(error.code) ? undefined : Promise.reject(error)))),
    /** The last `n` bytes before the write position, as text (to continue a JSON array). */
    async tail(n) {
      const length = Math.min(n, bytes);
      const buffer = Buffer.alloc(length);
      await handle.read(buffer, 0, length, bytes - length);
      return buffer.toString();
    },
    /** The first line of the file (a CSV header), or "" when it has none. */
    async firstLine(max = 65536) {
      const buffer = Buffer.alloc(Math.min(max, bytes));
      await handle.read(buffer, 0, buffer.length, 0);
      const text = buffer.toString();
      const end = text.indexOf("\n");
      return end === -1 ? "" : text.slice(0, end);
    },
    /** Moves the write position back to `length` bytes, cutting off what follows. */
    async cutTo(length) {
      await guard(() => handle.truncate(length));
      bytes = length;
    },
    close: () => handle.close(),
  };
}
