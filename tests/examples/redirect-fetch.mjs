// Preloaded into an example's process (`node --import`): the example runs as written, with the
// API's (or a proxy's) real URL, and its requests go to the simulator on 127.0.0.1 instead.
// EXAMPLE_ORIGINS maps origins to local ones: {"https://api.captaindata.co": "http://127.0.0.1:…"}.
// Answers name the origin the example asked (`paging.next` URLs), as the real server's would.
// Any other address is refused: no live network in tests.
const origins = JSON.parse(process.env.EXAMPLE_ORIGINS ?? "{}");
const realFetch = globalThis.fetch;

globalThis.fetch = async function fetch(input, init) {
  const url = new URL(input instanceof Request ? input.url : String(input));
  const local = origins[url.origin];
  if (!local) {
    if (["127.0.0.1", "localhost", "[::1]"].includes(url.hostname)) return realFetch(input, init);
    throw new TypeError(`an example fetched ${url.origin}, which the tests do not reach`);
  }
  const response = await realFetch(new URL(url.pathname + url.search, local), init);
  const body = (await response.text()).replaceAll(local, url.origin);
  return new Response(response.status === 204 ? null : body, { status: response.status, statusText: response.statusText, headers: response.headers });
};
