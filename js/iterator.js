// `for await (const batch of poller)`: the same batches as `onBatch`, one at a time.
//
// The poller waits for the consumer: a batch is taken when the loop asks for the next one
// (its body ran to the end). Leaving the loop (`break`, `return`, or a throw, which JS turns
// into `return()`) stops the poller; the batch the body was on was not taken, so
// `poller.cursor` stays before it (save `batch.cursor` yourself to keep a batch you broke
// after). `iterator.throw(error)` (a manual consumer, or `yield*` delegation) fails that batch:
// the poller ends with CALLBACK_FAILED, `cause` = error.
//
// A run that ended with rows known missing (`summary.status === "incomplete"`) is not an error:
// the loop ends normally after the last stored batch, and the final result's `value` is the
// summary (`await poller.start()` after the loop gives it too).

/** An async iterator over `poller`'s batches; it starts the poller. */
export function iterate(poller, delivery) {
  let handed = null; // { batch, take, fail }: given by the poller, not yet handed to next()
  let current = null; // the batch the consumer holds: { take, fail }
  let waiting = null; // { resolve, reject } of a next() waiting for a batch
  let ended = null; // { error }, { summary } or {} once the poller ended

  const flush = () => {
    if (!waiting) return;
    const { resolve, reject } = waiting;
    if (handed) {
      current = handed;
      handed = waiting = null;
      resolve({ value: current.batch, done: false });
    } else if (ended) {
      waiting = null;
      if (ended.error) reject(ended.error);
      else resolve({ value: ended.summary, done: true });
    }
  };
  const settle = (how, value) => {
    const held = current;
    current = null;
    held?.[how](value);
  };

  delivery.setSink(
    (batch) =>
      new Promise((take, fail) => {
        handed = { batch, take, fail };
        flush();
      }),
  );
  poller.start().then(
    (summary) => {
      ended ??= { summary };
      flush();
    },
    (error) => {
      ended = { error };
      flush();
    },
  );

  return {
    next() {
      settle("take");
      return new Promise((resolve, reject) => {
        waiting = { resolve, reject };
        flush();
      });
    },
    return() {
      ended ??= {};
      poller.stop(); // first: a batch refused after stop() is not an error
      settle("fail", new Error("the loop ended before taking this batch")); // cursor before it
      return Promise.resolve({ value: undefined, done: true });
    },
    throw(error) {
      if (current) settle("fail", error);
      else poller.stop(); // between batches nothing was left untaken
      ended ??= {};
      return Promise.reject(error);
    },
    [Symbol.asyncIterator]() {
      return this;
    },
  };
}
