// A mistake in how the command was called (a flag, a file, an environment variable): exit 2.
// The message names what is at fault; `usage` (a command, or "main") asks for its usage
// lines too, for a command line that does not parse.
export class UsageError extends Error {
  /** @param {string} message @param {{ usage?: string }} [options] */
  constructor(message, { usage } = {}) {
    super(message);
    this.name = "UsageError";
    this.usage = usage;
  }
}
