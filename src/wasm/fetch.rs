//! One HTTP exchange: request with headers, a per-request `AbortController` and timeout,
//! the parsed JSON body, and (for the engine's GETs) the [`Outcome`].

use alloc::string::String;

use js_sys::{Array, Object, Reflect};
use wasm_bindgen::{JsCast, JsValue};

use super::bindings::{global_fetch, AbortController, FetchResponse, Headers};
use super::body::{error_message, results_outcome, run_outcome};
use super::options::Connection;
use super::stop::{Settled, StopSwitch};
use super::timer::resolve_after;
use crate::api::Outcome;
use crate::engine::{FetchRequest, RequestKind};

/// How an exchange ended.
pub enum Exchange {
    /// The server answered; `body` is the parsed JSON, `Err` when it was not JSON.
    Answer {
        /// HTTP status.
        status: u16,
        /// The raw `Retry-After` header.
        retry_after: Option<String>,
        /// The parsed body.
        body: Result<JsValue, JsValue>,
    },
    /// `fetch` rejected (connection refused, dropped, CORS…).
    Network,
    /// No answer (or body) within the timeout; the request was aborted.
    Timeout,
    /// The poller was stopped; the request was aborted.
    Stopped,
}

/// An engine GET performed: the outcome, plus the JS values the glue keeps from it.
pub struct Fetched {
    /// What the engine is told.
    pub outcome: Outcome,
    /// The `results` array of a good results body.
    pub rows: Option<Array>,
    /// The parsed body (a run body feeds `onStatus`).
    pub body: JsValue,
}

/// Aborts its request when dropped: leaving an exchange early cancels it.
struct AbortOnDrop(AbortController);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// Performs the engine's GET; `None` when stopped meanwhile.
pub async fn get(conn: &Connection, req: &FetchRequest, stop: &StopSwitch) -> Option<Fetched> {
    let exchange = exchange(conn, "GET", &req.url, None, req.timeout_ms, stop).await;
    let (status, retry_after, body) = match exchange {
        Exchange::Answer {
            status,
            retry_after,
            body,
        } => (status, retry_after, body),
        Exchange::Network => return Some(failed(Outcome::Network)),
        Exchange::Timeout => return Some(failed(Outcome::Timeout)),
        Exchange::Stopped => return None,
    };
    if !(200..300).contains(&status) {
        let message = body.as_ref().ok().and_then(error_message);
        return Some(failed(Outcome::Http {
            status,
            retry_after,
            message,
        }));
    }
    let Ok(body) = body else {
        return Some(failed(Outcome::BadBody(
            "the body is not valid JSON".into(),
        )));
    };
    let (outcome, rows) = match req.kind {
        RequestKind::Results => results_outcome(&body, conn.row_key.as_deref()),
        RequestKind::Run => (run_outcome(&body), None),
    };
    Some(Fetched {
        outcome,
        rows,
        body,
    })
}

fn failed(outcome: Outcome) -> Fetched {
    Fetched {
        outcome,
        rows: None,
        body: JsValue::UNDEFINED,
    }
}

/// Sends one request with the connection's headers and waits for the JSON body.
pub async fn exchange(
    conn: &Connection,
    method: &str,
    url: &str,
    body: Option<&str>,
    timeout_ms: u32,
    stop: &StopSwitch,
) -> Exchange {
    let controller = AbortOnDrop(AbortController::new());
    let Some(init) = request_init(conn, method, body, &controller.0) else {
        return Exchange::Network;
    };
    let sent = match &conn.fetch {
        // `this` is undefined: a bound-less platform fetch (workerd) must not see our object.
        Some(fetch) => fetch.call2(&JsValue::UNDEFINED, &url.into(), &init),
        None => global_fetch(url, &init),
    };
    let Ok(sent) = sent else {
        return Exchange::Network;
    };
    let token: JsValue = Object::new().into();
    let (deadline, _timer) = resolve_after(timeout_ms, &token);
    let response: FetchResponse = match stop.race(&[&sent, &deadline]).await {
        Settled::Stopped => return Exchange::Stopped,
        Settled::Value(v) if v == token => return Exchange::Timeout,
        Settled::Value(v) if v.is_object() => v.unchecked_into(),
        Settled::Value(_) | Settled::Error(_) => return Exchange::Network,
    };
    let Some(status) = response
        .status()
        .as_f64()
        .filter(|s| (100.0..1000.0).contains(s))
    else {
        return Exchange::Network;
    };
    let retry_after = response.headers().get("Retry-After").ok().flatten();
    let parsed = match response.json() {
        Ok(parsing) => stop.race(&[&parsing, &deadline]).await,
        Err(e) => Settled::Error(e),
    };
    let body = match parsed {
        Settled::Stopped => return Exchange::Stopped,
        Settled::Value(v) if v == token => return Exchange::Timeout,
        Settled::Value(v) => Ok(v),
        Settled::Error(e) => Err(e),
    };
    Exchange::Answer {
        status: status as u16,
        retry_after,
        body,
    }
}

fn request_init(
    conn: &Connection,
    method: &str,
    body: Option<&str>,
    controller: &AbortController,
) -> Option<Object> {
    let init = Object::new();
    let headers: JsValue = match body {
        // A copy, so the shared headers never carry a body's content type.
        Some(_) => {
            let headers = Headers::new(&conn.headers).ok()?;
            headers.set("Content-Type", "application/json").ok()?;
            headers.into()
        }
        None => conn.headers.clone().into(),
    };
    let set = |key: &str, value: &JsValue| Reflect::set(&init, &key.into(), value).is_ok();
    let ok = set("method", &method.into())
        && set("headers", &headers)
        && set("signal", &controller.signal())
        && body.map_or(true, |b| set("body", &b.into()));
    ok.then_some(init)
}
