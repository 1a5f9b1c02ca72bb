// A port the system says is free on 127.0.0.1, for a server the test starts next.
import { createServer } from "node:net";

/** A port free on 127.0.0.1 a moment ago (the server started next binds it). */
export function freePort() {
  return new Promise((resolve, reject) => {
    const probe = createServer().once("error", reject);
    probe.listen(0, "127.0.0.1", () => {
      const { port } = probe.address();
      probe.close(() => resolve(port));
    });
  });
}
