//! One HTTP exchange: the request with the connection's headers, a per-request
//! `AbortController` and timeout, and the parsed JSON body.
//!
//! [`send`] is a future: dropping it before it ends (stop, abort signal) aborts the request
//! and clears its timeout.

use std::pin::pin;

use futures_util::future::{select, Either};
use gloo_timers::future::TimeoutFuture;
use js_sys::{Function, Object, Promise};
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::JsFuture;
use web_sys::{AbortController, RequestInit, Response};

#[wasm_bindgen]
extern "C" {
    /// The global `fetch`, never `window.fetch`: pages, Web Workers, Node and workerd all
    /// have it. Looked up at call time, so a fake installed on `globalThis` is used.
    #[wasm_bindgen(catch, js_name = fetch)]
    fn global_fetch(url: &str, init: &RequestInit) -> Result<Promise, JsValue>;
}

/// What the glue needs to talk to the API.
pub struct Connection {
    /// Sent with every request; holds the API key, which goes nowhere else. A plain object:
    /// a `Headers` instance costs several times its memory, kept by every poller of a fleet.
    pub headers: Object,
    /// The user's `fetch`, called with `this` undefined; the global one when absent.
    pub fetch: Option<Function>,
    /// `rowKey`: read `String(row[rowKey])` for the engine's de-duplication.
    pub row_key: Option<String>,
}

/// How an exchange ended.
pub enum Answer {
    /// The server answered; `body` is the parsed JSON, `Err` when it was not JSON.
    Http {
        /// HTTP status.
        status: u16,
        /// The response, for the headers that may hint when to retry: read only by a failure
        /// (a 2xx has no retry to hint, and reading them was part of every round's own CPU).
        response: Response,
        /// The parsed body.
        body: Result<JsValue, JsValue>,
    },
    /// No response at all: `fetch` rejected (connection refused or dropped, CORS…) with
    /// this value, kept as the `cause` of an error it leads to.
    Network(JsValue),
    /// Calling `fetch` threw (a programming error in an injected `fetch`): nothing was sent.
    NotSent(JsValue),
    /// No answer (or body) within the timeout; the request was aborted.
    Timeout,
}

/// An `AbortController` that aborts its request when dropped, unless the exchange
/// completed (aborting then would build a `DOMException` and fire an event for nothing).
struct AbortOnDrop {
    controller: Option<AbortController>,
}

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        if let Some(controller) = self.controller.take() {
            controller.abort();
        }
    }
}

/// Sends one request with `body`, if any (JSON text, its `Content-Type` in the headers).
pub async fn send(
    conn: &Connection,
    method: &str,
    url: &str,
    body: Option<&str>,
    timeout_ms: u32,
) -> Answer {
    let controller = match AbortController::new() {
        Ok(controller) => controller,
        Err(error) => return Answer::NotSent(error),
    };
    let init = RequestInit::new();
    init.set_method(method);
    init.set_signal(Some(&controller.signal()));
    // A body's `Content-Type` is in its connection's headers (js/step-options.js): the GETs'
    // never carry one, which would make a browser ask a CORS preflight first.
    init.set_headers(&conn.headers);
    if let Some(body) = body {
        init.set_body(&body.into());
    }
    let sent = match &conn.fetch {
        // `this` is undefined: a platform fetch (workerd) must not be called on our object.
        Some(fetch) => fetch
            .call2(&JsValue::UNDEFINED, &url.into(), &init)
            .map(|value| Promise::resolve(&value)),
        None => global_fetch(url, &init),
    };
    let sent = match sent {
        Ok(sent) => sent,
        Err(error) => return Answer::NotSent(error),
    };
    let mut guard = AbortOnDrop {
        controller: Some(controller),
    };
    let exchange = pin!(receive(sent));
    match select(exchange, TimeoutFuture::new(timeout_ms)).await {
        Either::Left((answer, _)) => {
            guard.controller = None; // over: nothing left to cancel
            answer
        }
        Either::Right(_) => Answer::Timeout, // `guard` aborts the request
    }
}

/// The response, then its JSON body.
async fn receive(sent: Promise) -> Answer {
    let response = match JsFuture::from(sent).await {
        Ok(response) => response,
        Err(error) => return Answer::Network(error),
    };
    // Unchecked: an injected `fetch` may answer any object shaped like a `Response`.
    let response: Response = response.unchecked_into();
    let status = response.status();
    if !(100..1000).contains(&status) {
        return Answer::Network(response.into());
    }
    let body = match response.json() {
        Ok(parsing) => JsFuture::from(parsing).await,
        Err(error) => Err(error),
    };
    Answer::Http {
        status,
        response,
        body,
    }
}
