//! Prints, as JSON, the rules the JS side of the package needs from the crate: the error codes
//! and which are final, the classes of the v3 and v4 statuses, the default settings (a poller's
//! and a step's) and the texts of the errors the tab layer words itself.
//!
//! `node scripts/rules.mjs` runs it (`cargo run --example rules`) and writes js/rules.js;
//! tests/rules-drift.test.mjs fails when that file, or any copy of a value in it, drifts.
//! Every value is read from the crate (its constants, `Config::new`, the classifiers, the
//! engine's own messages), never written here.

// Native only (it prints); the wasm32 build of the examples (clippy) gets an empty main.
fn main() {
    #[cfg(not(target_arch = "wasm32"))]
    table::main();
}

#[cfg(not(target_arch = "wasm32"))]
mod table {
    use captaindata_poller::api::{
        classify_status, classify_v4_status, ErrorCode, Outcome, Page, RunInfo,
        ALL_INPUTS_FAILED_TEXT, OTHER_RUN_TEXT,
    };
    use captaindata_poller::engine::{
        Action, Config, Event, Poller, ReadMode, RequestKind, ABORTED_TEXT,
    };
    use serde_json::{json, Map, Value};

    /// The statuses v3 documents (DESIGN §1); any other word is classified like "" (active).
    const V3_STATUSES: [&str; 8] = [
        "pending",
        "running",
        "paused",
        "finished",
        "completed",
        "warning",
        "shutdown",
        "stopped",
    ];

    /// The statuses v4 documents (DESIGN §7).
    const V4_STATUSES: [&str; 10] = [
        "CREATED",
        "INVALID",
        "QUEUED",
        "SCHEDULED",
        "BLOCKED",
        "STOPPED",
        "RUNNING",
        "FAILED",
        "PARTIAL_SUCCEEDED",
        "SUCCEEDED",
    ];

    fn codes(filter: impl Fn(ErrorCode) -> bool) -> Vec<&'static str> {
        ErrorCode::ALL
            .into_iter()
            .filter(|&c| filter(c))
            .map(ErrorCode::as_str)
            .collect()
    }

    fn v3_statuses() -> Value {
        let classes: Map<String, Value> = V3_STATUSES
            .iter()
            .map(|s| (s.to_string(), json!(classify_status(s).as_str())))
            .collect();
        json!({ "statuses": classes, "otherwise": classify_status("").as_str() })
    }

    fn v4_statuses() -> Value {
        let entry = |s: &str| {
            let v4 = classify_v4_status(s);
            let error = v4.error.map(ErrorCode::as_str);
            json!({ "class": v4.class.as_str(), "v3Status": v4.v3_status, "errorCode": error })
        };
        let known: Map<String, Value> = V4_STATUSES
            .iter()
            .map(|s| (s.to_string(), entry(s)))
            .collect();
        json!({ "statuses": known, "otherwise": entry("") })
    }

    fn read_mode(mode: ReadMode) -> &'static str {
        match mode {
            ReadMode::StatusGuided => "status",
            ReadMode::EveryTick => "every-tick",
        }
    }

    fn defaults() -> Result<Value, String> {
        let c = Config::new(Config::DEFAULT_BASE_URL, "j").map_err(|e| format!("{e:?}"))?;
        let mut step = c.clone();
        step.set_step();
        Ok(json!({
            "poller": {
                "baseUrl": c.base_url(),
                "intervalMs": c.interval_ms,
                "statusEvery": c.status_every,
                "readMode": read_mode(c.read_mode),
                "maxDurationMs": c.max_duration_ms,
                "maxRequests": c.max_requests,
                "timeoutMs": c.timeout_ms,
                "hiddenIntervalMs": c.hidden_interval_ms,
                "pageSize": c.page_size,
                "retry": {
                    "retries": c.retry.retries,
                    "minDelayMs": c.retry.min_delay_ms,
                    "maxDelayMs": c.retry.max_delay_ms,
                },
            },
            "step": {
                "maxRequests": step.max_requests,
                "deadlineMs": step.max_duration_ms,
                "readMode": read_mode(step.read_mode),
            },
        }))
    }

    /// The poller's next actions until `pick` takes one, answering every request with `answer`
    /// and firing every timer at once. `None` after 10,000 actions.
    fn drive<T>(
        poller: &mut Poller,
        answer: impl Fn(RequestKind) -> Outcome,
        pick: impl Fn(&mut Poller, Action) -> Option<T>,
    ) -> Option<T> {
        for _ in 0..10_000 {
            match poller.next_action(0) {
                Action::Fetch(req) => {
                    let outcome = answer(req.kind);
                    poller.handle(
                        Event::Response {
                            id: req.id,
                            outcome,
                        },
                        0,
                    );
                }
                Action::Sleep { .. } => poller.handle(Event::TimerFired, 0),
                other => {
                    if let Some(found) = pick(poller, other) {
                        return Some(found);
                    }
                }
            }
        }
        None
    }

    fn running(rows: u64) -> Outcome {
        Outcome::Run(RunInfo {
            status: "running".into(),
            row_count: Some(rows),
            ..RunInfo::default()
        })
    }

    fn failure_of(action: Action, code: ErrorCode) -> Option<String> {
        match action {
            Action::Fail(e) if e.code == code => Some(e.message),
            _ => None,
        }
    }

    /// `text` with the one occurrence of `value` replaced by `{name}`.
    fn template(text: &str, value: &str, name: &str) -> Result<String, String> {
        if text.matches(value).count() != 1 {
            return Err(format!("`{value}` is not once in `{text}`"));
        }
        Ok(text.replace(value, &format!("{{{name}}}")))
    }

    /// The engine's own messages, with the numbers in them as `{placeholders}`.
    fn messages() -> Result<Value, String> {
        // Values that appear nowhere else in the messages.
        const MAX_DURATION: u64 = 7_654_321;
        const MAX_REQUESTS: u32 = 3;
        let base = || Config::new(Config::DEFAULT_BASE_URL, "j").map_err(|e| format!("{e:?}"));
        let poller = |config| Poller::new(config, None, 0).map_err(|e| format!("{e:?}"));

        let mut config = base()?;
        config.max_duration_ms = Some(MAX_DURATION);
        let mut p = poller(config)?;
        // The deadline has passed by the first action.
        let timeout =
            failure_of(p.next_action(MAX_DURATION), ErrorCode::Timeout).ok_or("no TIMEOUT")?;

        let mut config = base()?;
        config.max_requests = Some(MAX_REQUESTS);
        let mut p = poller(config)?;
        let budget = drive(
            &mut p,
            |_| running(0),
            |_, a| failure_of(a, ErrorCode::BudgetExhausted),
        )
        .ok_or("no BUDGET_EXHAUSTED")?;

        let mut p = poller(base()?)?;
        let page = |kind| match kind {
            RequestKind::Results => Outcome::Results(Page {
                len: 3,
                ..Page::default()
            }),
            RequestKind::Run => running(3),
        };
        let failed = drive(&mut p, page, |p, a| match a {
            Action::Emit(_) => {
                p.handle(Event::BatchFailed, 0);
                None
            }
            other => failure_of(other, ErrorCode::CallbackFailed),
        })
        .ok_or("no CALLBACK_FAILED")?;

        Ok(json!({
            "TIMEOUT": template(&timeout, &MAX_DURATION.to_string(), "maxDurationMs")?,
            "BUDGET_EXHAUSTED": template(&budget, &format!("({MAX_REQUESTS})"), "maxRequests")?
                .replace("{maxRequests}", "({maxRequests})"),
            "CALLBACK_FAILED": template(&failed, "0..3", "from..to")?.replace("{from..to}", "{from}..{to}"),
            "ABORTED": ABORTED_TEXT,
            "WEBHOOK_OF_ANOTHER_RUN": OTHER_RUN_TEXT,
        }))
    }

    fn rules() -> Result<Value, String> {
        Ok(json!({
            "errorCodes": codes(|_| true),
            "finalErrorCodes": codes(ErrorCode::is_final),
            "v3": v3_statuses(),
            "allInputsFailedText": ALL_INPUTS_FAILED_TEXT,
            "v4": v4_statuses(),
            "defaults": defaults()?,
            "messages": messages()?,
        }))
    }

    pub fn main() {
        match rules() {
            Ok(table) => println!("{table:#}"),
            Err(problem) => {
                eprintln!("rules: {problem}");
                std::process::exit(1);
            }
        }
    }
}
