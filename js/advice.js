// What a failure says to do, in words loaded only once something failed: a page that polls
// without trouble never downloads them (docs/size.md).

/** Added to the message of a browser's error that got no response at all. */
export const CORS_ADVICE = "; in a browser most likely CORS: point baseUrl at a proxy such as captaindata-poller/worker";

/** Why a .wasm answered with an HTML page (an app's fallback to index.html) did not load. */
export const notDeployed = (url) => `the server answered text/html for ${url}: is the file deployed at that URL?`;

/** A failure the app has no `onError` for: one console line, so that it is never silent. */
export const logFailure = (error) => console.error(`captaindata-poller: ${error.code}: ${error.message}`);
