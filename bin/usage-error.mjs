// A mistake in how the command was called (a flag, a file, an environment variable): exit 2.
// The message names what is at fault.
export class UsageError extends Error {
  constructor(message) {
    super(message);
    this.name = "UsageError";
  }
}
