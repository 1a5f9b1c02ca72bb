//! One HTTP exchange: request with headers, a per-request `AbortController` and timeout,
//! the parsed JSON body, and (for the engine's GETs) the [`Outcome`].
//!
//! An [`Exchange`] is the request in flight. Its owner hands it every callback of its
//! wait ([`Exchange::advance`]) until it yields an [`Answer`]; dropping it aborts the
//! request and clears the timeout, so leaving early (stop, abort) cancels it.

use alloc::string::String;

use js_sys::{Object, Reflect};
use wasm_bindgen::JsValue;

use super::bindings::{call, get, global_fetch, AbortController, Headers};
use super::body::{error_message, results_outcome, run_outcome};
use super::options::Connection;
use super::timer::Timeout;
use super::wake::{Waker, Woken};
use crate::api::Outcome;
use crate::engine::{FetchRequest, RequestKind};

/// How an exchange ended.
pub enum Answer {
    /// The server answered; `body` is the parsed JSON, `Err` when it was not JSON.
    Http {
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
}

/// A request in flight.
pub struct Exchange {
    controller: AbortController,
    _deadline: Option<Timeout>,
    /// Status and `Retry-After` once the response arrived; the body is being read.
    head: Option<(u16, Option<String>)>,
    /// The body was read: nothing is left to cancel. Aborting anyway would build a
    /// DOMException and fire an abort event per request for nothing (measured: ~11 % CPU).
    complete: bool,
}

impl Drop for Exchange {
    fn drop(&mut self) {
        if self.complete {
            return;
        }
        let _ = call(
            &self.controller,
            "abort",
            &JsValue::UNDEFINED,
            &JsValue::UNDEFINED,
        );
    }
}

impl Exchange {
    /// Sends one request with the connection's headers; `waker` hears of the response and
    /// of the timeout. `Err` when it could not even be sent.
    pub fn send(
        conn: &Connection,
        method: &str,
        url: &str,
        body: Option<&str>,
        timeout_ms: u32,
        waker: &Waker,
    ) -> Result<Exchange, Answer> {
        let mut exchange = Exchange {
            controller: AbortController::new(),
            _deadline: None,
            head: None,
            complete: false,
        };
        let init = request_init(conn, method, body, &exchange.controller).ok_or(Answer::Network)?;
        let sent = match &conn.fetch {
            // `this` is undefined: a bound-less platform fetch (workerd) must not see our object.
            Some(fetch) => fetch.call2(&JsValue::UNDEFINED, &url.into(), &init),
            None => global_fetch(url, &init),
        };
        let sent = sent.map_err(|_| Answer::Network)?;
        exchange._deadline = Some(waker.after(timeout_ms));
        waker.on_settle(&sent);
        Ok(exchange)
    }

    /// One callback of this exchange's wait: the answer, or `None` while the body is read.
    pub fn advance(&mut self, woken: Woken, value: JsValue, waker: &Waker) -> Option<Answer> {
        if woken == Woken::Timer {
            return Some(Answer::Timeout);
        }
        let body = match woken {
            Woken::Resolved => Ok(value),
            _ => Err(value),
        };
        match self.head.take() {
            Some((status, retry_after)) => {
                self.complete = true;
                Some(Answer::Http {
                    status,
                    retry_after,
                    body,
                })
            }
            None => self.on_response(body, waker),
        }
    }

    fn on_response(&mut self, response: Result<JsValue, JsValue>, waker: &Waker) -> Option<Answer> {
        let Ok(response) = response else {
            return Some(Answer::Network);
        };
        let status = get(&response, "status").as_f64();
        let Some(status) = status.filter(|s| (100.0..1000.0).contains(s)) else {
            return Some(Answer::Network);
        };
        let status = status as u16;
        let headers = get(&response, "headers");
        let retry_after = call(&headers, "get", &"Retry-After".into(), &JsValue::UNDEFINED);
        let retry_after = retry_after.ok().and_then(|v| v.as_string());
        match call(&response, "json", &JsValue::UNDEFINED, &JsValue::UNDEFINED) {
            Ok(parsing) => {
                waker.on_settle(&parsing);
                self.head = Some((status, retry_after));
                None
            }
            Err(error) => Some(Answer::Http {
                status,
                retry_after,
                body: Err(error),
            }),
        }
    }
}

/// An engine GET answered: the outcome, plus the JS values the glue keeps from it.
pub struct Fetched {
    /// What the engine is told.
    pub outcome: Outcome,
    /// The `results` array of a good results body.
    pub rows: Option<JsValue>,
    /// The parsed body (a run body feeds `onStatus`).
    pub body: JsValue,
}

/// Reads the engine's answer to `req` from what the exchange brought back.
pub fn fetched(conn: &Connection, req: &FetchRequest, answer: Answer) -> Fetched {
    let (status, retry_after, body) = match answer {
        Answer::Http {
            status,
            retry_after,
            body,
        } => (status, retry_after, body),
        Answer::Network => return failed(Outcome::Network),
        Answer::Timeout => return failed(Outcome::Timeout),
    };
    if !(200..300).contains(&status) {
        let message = body.as_ref().ok().and_then(error_message);
        return failed(Outcome::Http {
            status,
            retry_after,
            message,
        });
    }
    let Ok(body) = body else {
        return failed(Outcome::BadBody("the body is not valid JSON".into()));
    };
    let (outcome, rows) = match req.kind {
        RequestKind::Results => results_outcome(&body, conn.row_key.as_deref()),
        RequestKind::Run => (run_outcome(&body), None),
    };
    Fetched {
        outcome,
        rows,
        body,
    }
}

fn failed(outcome: Outcome) -> Fetched {
    Fetched {
        outcome,
        rows: None,
        body: JsValue::UNDEFINED,
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
            let (name, value) = ("Content-Type".into(), "application/json".into());
            call(&headers, "set", &name, &value).ok()?;
            headers.into()
        }
        None => conn.headers.clone().into(),
    };
    let set = |key: &str, value: &JsValue| Reflect::set(&init, &key.into(), value).is_ok();
    let ok = set("method", &method.into())
        && set("headers", &headers)
        && set("signal", &get(controller, "signal"))
        && body.map_or(true, |b| set("body", &b.into()));
    ok.then_some(init)
}
