//! Raw bindings to the JS globals the glue uses, and structural access to JS objects.
//!
//! Everything is bound on the global object (never `window`), so the same module runs in
//! pages, Web Workers, Node and workerd. Members of platform objects (`Response`,
//! `AbortSignal`, `Headers`…) are read and called structurally through [`get`] and
//! [`call`] rather than bound one by one: each binding is a function in the generated JS
//! and an import in the wasm, and a fake `fetch` in a test may return any object shaped
//! like a `Response` anyway.

use alloc::string::String;

use js_sys::{Function, Object, Reflect};
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
    pub fn promise_resolve(value: &JsValue) -> JsValue;

    /// `new Promise(executor)`.
    #[wasm_bindgen(js_name = Promise)]
    pub type NewPromise;
    #[wasm_bindgen(constructor, js_class = Promise)]
    pub fn new(executor: &Function) -> NewPromise;

    /// `new AbortController()`, one per request.
    #[wasm_bindgen(js_name = AbortController)]
    pub type AbortController;
    #[wasm_bindgen(constructor, js_class = AbortController)]
    pub fn new() -> AbortController;

    /// A user's `AbortSignal` (bound for the `instanceof` check of the option).
    pub type AbortSignal;

    /// `new Headers(init)`: accepts an object, an array of pairs or another `Headers`.
    #[wasm_bindgen(js_name = Headers)]
    #[derive(Clone)]
    pub type Headers;
    #[wasm_bindgen(constructor, catch, js_class = Headers)]
    pub fn new(init: &JsValue) -> Result<Headers, JsValue>;
}

/// `target[key]`; `undefined` when `target` is neither an object nor a function, or the
/// getter threw.
pub fn get(target: &JsValue, key: &str) -> JsValue {
    if !target.is_object() && !target.is_function() {
        return JsValue::UNDEFINED;
    }
    Reflect::get(target, &key.into()).unwrap_or(JsValue::UNDEFINED)
}

/// `target[method](a, b)`; `Err` with what it threw (or a `TypeError` when there is no
/// such method). Extra `undefined` arguments are ignored by every method called this way.
pub fn call(target: &JsValue, method: &str, a: &JsValue, b: &JsValue) -> Result<JsValue, JsValue> {
    get(target, method)
        .unchecked_into::<Function>()
        .call2(target, a, b)
}
