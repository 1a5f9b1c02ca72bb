//! Raw bindings to the JS globals the glue uses.
//!
//! Everything is bound on the global object (never `window`), so the same module runs in
//! pages, Web Workers, Node and workerd. Members are structural: a fake `fetch` in a test
//! may return any object shaped like a `Response`.

use alloc::string::String;

use js_sys::{Function, Object, Promise};
use wasm_bindgen::prelude::*;

#[wasm_bindgen]
extern "C" {
    /// The global `fetch`, looked up at call time (a fake installed on `globalThis` is used).
    #[wasm_bindgen(catch, js_name = fetch)]
    pub fn global_fetch(url: &str, init: &Object) -> Result<JsValue, JsValue>;

    /// Global `setTimeout(handler, ms)`; the id is a number or (Node) an object.
    #[wasm_bindgen(js_name = setTimeout)]
    pub fn set_timeout(handler: &Function, ms: i32) -> JsValue;

    /// Global `clearTimeout`.
    #[wasm_bindgen(js_name = clearTimeout)]
    pub fn clear_timeout(id: &JsValue);

    /// `console.error`, the reporter of last resort for a throwing callback.
    #[wasm_bindgen(js_namespace = console, js_name = error)]
    pub fn console_error(message: &str, error: &JsValue);

    /// `String(value)`: how JS spells a value (row keys, option values in messages).
    #[wasm_bindgen(catch, js_name = String)]
    pub fn js_string(value: &JsValue) -> Result<String, JsValue>;

    /// `Promise.resolve(value)`: a promise that adopts a thenable.
    #[wasm_bindgen(js_namespace = Promise, js_name = resolve)]
    pub fn promise_resolve(value: &JsValue) -> Thenable;

    /// A promise, as far as the glue uses one.
    pub type Thenable;
    #[wasm_bindgen(method)]
    pub fn then(this: &Thenable, on_resolved: &Function, on_rejected: &Function);

    /// `AbortController`, one per request.
    pub type AbortController;
    #[wasm_bindgen(constructor)]
    pub fn new() -> AbortController;
    #[wasm_bindgen(method, getter)]
    pub fn signal(this: &AbortController) -> AbortSignal;
    #[wasm_bindgen(method)]
    pub fn abort(this: &AbortController);

    /// A user's `AbortSignal`.
    pub type AbortSignal;
    #[wasm_bindgen(method, getter)]
    pub fn aborted(this: &AbortSignal) -> bool;
    #[wasm_bindgen(method, getter)]
    pub fn reason(this: &AbortSignal) -> JsValue;
    #[wasm_bindgen(method, js_name = addEventListener)]
    pub fn add_event_listener(this: &AbortSignal, kind: &str, listener: &Function);
    #[wasm_bindgen(method, js_name = removeEventListener)]
    pub fn remove_event_listener(this: &AbortSignal, kind: &str, listener: &Function);

    /// `new Headers(init)`: accepts an object, an array of pairs or another `Headers`.
    #[wasm_bindgen(js_name = Headers)]
    #[derive(Clone)]
    pub type Headers;
    #[wasm_bindgen(constructor, catch, js_class = Headers)]
    pub fn new(init: &JsValue) -> Result<Headers, JsValue>;
    #[wasm_bindgen(method, catch, js_class = Headers)]
    pub fn set(this: &Headers, name: &str, value: &str) -> Result<(), JsValue>;

    /// What `fetch` resolves with; read structurally.
    pub type FetchResponse;
    #[wasm_bindgen(method, getter)]
    pub fn status(this: &FetchResponse) -> JsValue;
    #[wasm_bindgen(method, getter)]
    pub fn headers(this: &FetchResponse) -> ResponseHeaders;
    #[wasm_bindgen(method, catch)]
    pub fn json(this: &FetchResponse) -> Result<Promise, JsValue>;

    /// `response.headers`.
    pub type ResponseHeaders;
    #[wasm_bindgen(method, catch)]
    pub fn get(this: &ResponseHeaders, name: &str) -> Result<Option<String>, JsValue>;
}
