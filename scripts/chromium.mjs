// Debian's Chromium, headless, driven by playwright-core (no browser download): the size check,
// the browser tests and the bench's demo run launch it the same way.
import { CHROMIUM } from "./setup.mjs";

export { CHROMIUM };

const ARGS = [
  "--no-sandbox",
  "--headless",
  "--disable-gpu",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
  "--no-first-run",
  "--disable-quic",
];

/** A headless Chromium (playwright-core is an npm package: imported when first needed). */
export async function launchBrowser() {
  const { chromium } = await import("playwright-core");
  return chromium.launch({ executablePath: CHROMIUM, args: ARGS });
}
