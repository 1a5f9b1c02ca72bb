//! The page around a `JobPoller`: is it hidden (`document.visibilityState`), is the runtime
//! online (`navigator.onLine`)? Both are told to the engine as they change, through
//! listeners removed when the poller's run ends. Where there is no `document` (Web Workers,
//! Node, workerd) or no boolean `navigator.onLine` (Node, workerd), nothing is watched. A
//! poller shared by tabs takes its visibility from the tab layer instead (`_pace`): hidden
//! only when every sharing tab is.

use std::rc::Rc;

use gloo_events::EventListener;
use wasm_bindgen::prelude::*;
use web_sys::{Document, EventTarget};

use super::driver::Session;
use crate::engine::Event;

#[wasm_bindgen]
extern "C" {
    /// `globalThis.document`: `undefined` outside pages.
    #[wasm_bindgen(thread_local_v2, js_namespace = globalThis, js_name = document)]
    static DOCUMENT: JsValue;

    /// `globalThis.navigator`: a `Navigator`, a `WorkerNavigator`, Node's, or `undefined`.
    #[wasm_bindgen(thread_local_v2, js_namespace = globalThis, js_name = navigator)]
    static NAVIGATOR: JsValue;

    /// Any navigator; only `onLine` is read, and only when it is a boolean.
    type AnyNavigator;
    #[wasm_bindgen(method, getter, js_name = onLine)]
    fn on_line(this: &AnyNavigator) -> Option<bool>;
}

/// The listeners of one run; dropping it removes them.
pub struct PageWatch {
    _listeners: Vec<EventListener>,
}

/// Tells `session` the page's state now, then each change, until the watch is dropped;
/// the visibility only with `visibility` (else the tab layer tells it).
pub fn watch(session: &Rc<Session>, visibility: bool) -> PageWatch {
    let mut listeners = Vec::new();
    let document = DOCUMENT.with(JsValue::clone).dyn_into::<Document>();
    if let Some(document) = document.ok().filter(|_| visibility) {
        if document.hidden() {
            session.event(Event::Hidden(true));
        }
        let (session, page) = (session.clone(), document.clone());
        listeners.push(EventListener::new(
            &document,
            "visibilitychange",
            move |_| {
                session.event(Event::Hidden(page.hidden()));
            },
        ));
    }
    let navigator: AnyNavigator = NAVIGATOR.with(JsValue::clone).unchecked_into();
    let online = navigator.is_object().then(|| navigator.on_line()).flatten();
    let global = js_sys::global().dyn_into::<EventTarget>().ok();
    if let (Some(online), Some(global)) = (online, global) {
        if !online {
            session.event(Event::Online(false));
        }
        for (name, online) in [("online", true), ("offline", false)] {
            let session = session.clone();
            listeners.push(EventListener::new(&global, name, move |_| {
                session.event(Event::Online(online));
            }));
        }
    }
    PageWatch {
        _listeners: listeners,
    }
}
