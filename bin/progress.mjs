// What a person sees on stderr. On a TTY: one progress line rewritten in place (rows, the
// run's status, requests, retries, elapsed). Piped or redirected: plain log lines, no escape
// codes. `--quiet`: neither, only what must be said (errors, the job uid, how to resume).
// Nothing here ever writes to stdout: stdout is for rows.

const STATUS_COLORS = { finished: 32, completed: 32, warning: 33, paused: 33, shutdown: 31, stopped: 31, failed: 31 };

export const plural = (n, one, many = `${one}s`) => `${n.toLocaleString("en")} ${n === 1 ? one : many}`;

/** 75 s → "1:15", 3,725 s → "1:02:05". */
export function formatElapsed(ms) {
  const s = Math.floor(ms / 1000);
  const pad = (n) => String(n).padStart(2, "0");
  const [h, m] = [Math.floor(s / 3600), Math.floor((s % 3600) / 60)];
  return h > 0 ? `${h}:${pad(m)}:${pad(s % 60)}` : `${m}:${pad(s % 60)}`;
}

/** Whether to colour: a TTY, and NO_COLOR (https://no-color.org) unset or empty, and a capable TERM. */
export const useColor = (stream, env) => Boolean(stream.isTTY) && !env.NO_COLOR && env.TERM !== "dumb";

/**
 * @param {{ stream?: NodeJS.WriteStream, quiet?: boolean, env?: NodeJS.ProcessEnv,
 *   redact?: (text: string) => string, now?: () => number }} [options]
 */
export function createReporter({ stream = process.stderr, quiet = false, env = process.env, redact = (t) => t, now = Date.now } = {}) {
  const live = Boolean(stream.isTTY) && !quiet;
  const color = live && useColor(stream, env);
  let shown = false;
  let snapshot = null;
  let timer = null;

  const clear = () => {
    if (shown) stream.write("\r\x1b[2K");
    shown = false;
  };
  const render = ({ rows, status, requests, retries, startedAt }) => {
    const parts = [plural(rows, "row"), status ?? "starting", plural(requests, "request"), plural(retries, "retry", "retries"), formatElapsed(now() - startedAt)];
    const width = Math.max(20, (stream.columns || 80) - 1);
    const plain = parts.join(" · ");
    if (plain.length > width) return plain.slice(0, width);
    if (!color) return plain;
    const tint = STATUS_COLORS[String(status).toLowerCase()];
    if (tint) parts[1] = `\x1b[${tint}m${parts[1]}\x1b[39m`;
    return `\x1b[1m${parts[0]}\x1b[22m · ${parts.slice(1).join(" · ")}`;
  };
  const draw = () => {
    if (!live || !snapshot) return;
    stream.write(`\r\x1b[2K${render(snapshot)}`);
    shown = true;
  };
  const line = (text) => {
    clear();
    stream.write(`${redact(text)}\n`);
    draw();
  };

  return {
    /** Always shown, even with --quiet: errors, the scheduled job uid, the resume command. */
    say: line,
    /** Shown unless --quiet: a note worth keeping in the scrollback (a late CSV field, "warning"). */
    note(text) {
      if (!quiet) line(text);
    },
    /** A log line for pipes and files only: a TTY shows the progress line instead. */
    log(text) {
      if (!quiet && !live) stream.write(`${redact(text)}\n`);
    },
    /** New figures for the progress line (TTY only); the elapsed time ticks every second. */
    progress(next) {
      snapshot = next;
      draw();
      if (live && !timer) timer = setInterval(draw, 1000).unref();
    },
    /** Takes the progress line off the screen until the next figures (rows about to be printed on the terminal). */
    clear,
    /** Removes the progress line for good. */
    end() {
      clearInterval(timer);
      timer = null;
      clear();
      snapshot = null;
    },
  };
}
