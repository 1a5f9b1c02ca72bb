//! One source for the error codes: the Rust `ErrorCode` list and `is_final`. The JS list
//! (js/error-codes.js), the `ErrorCode` type (index.d.ts) and the type test must say the
//! same, and the worker and the demo must use the shared list rather than a set of their own.
// Native only: it reads the repository's files.
#![cfg(not(target_arch = "wasm32"))]

use std::fs;
use std::path::Path;

use captaindata_poller::api::ErrorCode;

fn read(path: &str) -> String {
    let full = Path::new(env!("CARGO_MANIFEST_DIR")).join(path);
    fs::read_to_string(&full).unwrap_or_else(|e| panic!("{}: {e}", full.display()))
}

/// The double-quoted words from `start` to the first `end` after it.
fn quoted(text: &str, start: &str, end: &str) -> Vec<String> {
    let from = text.find(start).unwrap_or_else(|| panic!("no `{start}`")) + start.len();
    let rest = &text[from..];
    let block = &rest[..rest
        .find(end)
        .unwrap_or_else(|| panic!("no `{end}` after `{start}`"))];
    block
        .split('"')
        .skip(1)
        .step_by(2)
        .map(String::from)
        .collect()
}

fn rust_codes() -> Vec<String> {
    ErrorCode::ALL
        .iter()
        .map(|c| c.as_str().to_string())
        .collect()
}

fn rust_final_codes() -> Vec<String> {
    let finals = ErrorCode::ALL.iter().filter(|c| c.is_final());
    finals.map(|c| c.as_str().to_string()).collect()
}

#[test]
fn the_js_list_is_the_rust_list() {
    let js = read("js/error-codes.js");
    assert_eq!(
        quoted(&js, "ERROR_CODES = Object.freeze([", "]"),
        rust_codes()
    );
    let finals = quoted(&js, "FINAL_ERROR_CODES = Object.freeze([", "]");
    assert_eq!(finals, rust_final_codes());
}

#[test]
fn the_typescript_type_is_the_rust_list() {
    let types = read("index.d.ts");
    assert_eq!(quoted(&types, "export type ErrorCode =", ";"), rust_codes());
    let usage = read("tests/types/usage.ts");
    assert_eq!(
        quoted(&usage, "const codes: ErrorCode[] = [", "]"),
        rust_codes()
    );
}

#[test]
fn the_worker_and_the_demo_use_the_shared_list() {
    for (path, import) in [
        // The worker imports the package by its name, as a user's worker does.
        ("worker/src/v3-shapes.js", "captaindata-poller"),
        ("www/app.js", "captaindata-poller"),
    ] {
        let text = read(path);
        assert!(
            text.contains("isFinalError"),
            "{path} does not use isFinalError"
        );
        assert!(text.contains(import), "{path} does not import {import}");
    }
    for dir in ["worker/src", "www"] {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join(dir);
        for entry in fs::read_dir(&root).unwrap().flatten() {
            let text = fs::read_to_string(entry.path()).unwrap_or_default();
            let finals = rust_final_codes();
            let own_set = text.lines().any(|line| {
                let listed = finals
                    .iter()
                    .filter(|c| line.contains(&format!("\"{c}\"")))
                    .count();
                listed >= 2 && (line.contains("Set(") || line.contains('['))
            });
            assert!(
                !own_set,
                "{} keeps its own list of final codes",
                entry.path().display()
            );
        }
    }
}

#[test]
fn the_aborted_message_is_one_text() {
    // js/errors.js makes ABORTED itself when the signal aborts before the module has loaded.
    let js = read("js/errors.js");
    let text = quoted(&js, "export const ABORTED_TEXT =", ";");
    assert_eq!(text, [captaindata_poller::engine::ABORTED_TEXT]);
}
