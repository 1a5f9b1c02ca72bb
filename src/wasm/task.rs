//! Running a Rust future as a JS promise.

use std::future::Future;
use std::pin::Pin;

use js_sys::Promise;
use wasm_bindgen::JsValue;
use wasm_bindgen_futures::future_to_promise;

type Boxed = Pin<Box<dyn Future<Output = Result<JsValue, JsValue>>>>;

/// `future_to_promise` behind one boxed type: one copy of its machinery in the wasm, not
/// one per exported async function (it is the bulk of the size of each).
pub fn promise(future: impl Future<Output = Result<JsValue, JsValue>> + 'static) -> Promise {
    let boxed: Boxed = Box::pin(future);
    future_to_promise(boxed)
}
