//! Running a Rust future as a JS promise.

use alloc::boxed::Box;

use core::future::Future;
use core::pin::Pin;

use js_sys::futures::future_to_promise;
use js_sys::Promise;
use wasm_bindgen::JsValue;

type Boxed = Pin<Box<dyn Future<Output = Result<JsValue, JsValue>>>>;

/// `future_to_promise` behind one boxed type: one copy of its machinery in the wasm, not
/// one per exported async function (it is the bulk of the size of each).
pub fn promise(future: impl Future<Output = Result<JsValue, JsValue>> + 'static) -> Promise {
    let boxed: Boxed = Box::pin(future);
    future_to_promise(boxed)
}
