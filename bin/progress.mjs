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

/** Colours and ANSI line erasing: a TTY, NO_COLOR (https://no-color.org) unset or empty, TERM not dumb. */
export const useColor = (stream, env) => Boolean(stream.isTTY) && !env.NO_COLOR && env.TERM !== "dumb";

/**
 * A text from the API (a status, an error message) without control characters: a server
 * cannot move the cursor, recolour or retitle the terminal. Line breaks and tabs stay.
 */
export const printable = (text) => String(text).replace(/[\x00-\x08\x0b-\x1f\x7f-\x9f]/g, "�");

/** The line cut to `width` columns (the last one an ellipsis), so that it never wraps. */
export function fitTo(text, width) {
  const chars = [...text];
  if (chars.length <= width) return text;
  return width <= 1 ? chars.slice(0, Math.max(0, width)).join("") : `${chars.slice(0, width - 1).join("")}…`;
}

/**
 * How many of the line's parts fit in `width` columns (with " · …" when some are left out):
 * a narrow terminal loses the last figures whole rather than a figure cut in half.
 */
export function keptParts(parts, width) {
  for (let kept = parts.length; kept > 0; kept--) {
    const text = `${parts.slice(0, kept).join(" · ")}${kept < parts.length ? " · …" : ""}`;
    if ([...text].length <= width) return kept;
  }
  return 0;
}

/**
 * @param {{ stream?: NodeJS.WriteStream, quiet?: boolean, env?: NodeJS.ProcessEnv,
 *   redact?: (text: string) => string, now?: () => number }} [options]
 */
export function createReporter({ stream = process.stderr, quiet = false, env = process.env, redact = (t) => t, now = Date.now } = {}) {
  // TERM=dumb cannot rewrite a line: plain log lines there, as in a pipe.
  const live = Boolean(stream.isTTY) && !quiet && env.TERM !== "dumb";
  // With NO_COLOR, the line is rewritten with a carriage return and spaces: no escape code at all.
  const ansi = live && useColor(stream, env);
  let shown = 0; // columns of the line on screen (0: none)
  let snapshot = null;
  let timer = null;

  const width = () => (stream.columns || 80) - 1;
  const clear = () => {
    // Spaces no wider than the terminal now is: after a resize, more would wrap.
    if (shown) stream.write(ansi ? "\r\x1b[2K" : `\r${" ".repeat(Math.min(shown, width()))}\r`);
    shown = 0;
  };
  const render = ({ rows, status, requests, retries, startedAt }) => {
    const parts = [plural(rows, "row"), status == null ? "starting" : printable(redact(String(status))), plural(requests, "request"), plural(retries, "retry", "retries"), formatElapsed(now() - startedAt)];
    const kept = keptParts(parts, width());
    if (kept === 0) {
      const text = fitTo(parts.join(" · "), width());
      return { text, columns: [...text].length };
    }
    const more = kept < parts.length ? " · …" : "";
    const columns = [...`${parts.slice(0, kept).join(" · ")}${more}`].length;
    if (ansi) {
      const tint = STATUS_COLORS[String(status).toLowerCase()];
      parts[0] = `\x1b[1m${parts[0]}\x1b[22m`;
      if (tint) parts[1] = `\x1b[${tint}m${parts[1]}\x1b[39m`;
    }
    return { text: `${parts.slice(0, kept).join(" · ")}${more}`, columns };
  };
  const draw = () => {
    if (!live || !snapshot) return;
    const { text, columns } = render(snapshot);
    // Without ANSI, spaces cover what is left of a longer previous line.
    stream.write(ansi ? `\r\x1b[2K${text}` : `\r${text}${" ".repeat(Math.max(0, Math.min(shown, width()) - columns))}`);
    shown = Math.max(columns, 1);
  };
  const line = (text) => {
    clear();
    stream.write(`${printable(redact(text))}\n`);
    draw();
  };
  // A narrower terminal: redraw at once at the new width (Node updates `columns` on SIGWINCH).
  const onResize = () => {
    clear();
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
      if (!quiet && !live) stream.write(`${printable(redact(text))}\n`);
    },
    /** New figures for the progress line (TTY only); the elapsed time ticks every second. */
    progress(next) {
      snapshot = next;
      draw();
      if (live && !timer) {
        timer = setInterval(draw, 1000).unref();
        stream.on("resize", onResize);
      }
    },
    /** Takes the progress line off the screen until the next figures (rows about to be printed on the terminal). */
    clear,
    /** Removes the progress line for good. */
    end() {
      if (timer) stream.off("resize", onResize);
      clearInterval(timer);
      timer = null;
      clear();
      snapshot = null;
    },
  };
}
