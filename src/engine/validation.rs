//! Validation of the options that end up in a URL: the base URL, path segments, and the
//! shortest interval against a remote API. (The URL helpers they use are in `url.rs`.)

use alloc::string::String;

use super::url::{is_loopback_host, split_host, split_scheme, valid_host, valid_port};
use crate::api::first_chars;

/// An option failed validation; `option` is the JS option name (`jobUid`, `baseUrl`, …).
/// Its message is always worded by [`ConfigError::expected`], as js/options.js's `invalid`
/// words the options checked in JS: "Expected \`option\` to be …".
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConfigError {
    /// The option at fault, as the JS user spells it.
    pub option: &'static str,
    /// What is wrong, for a `TypeError` message.
    pub message: String,
}

/// Checks that `value` is one safe URL path segment (a run or workflow uid):
/// non-empty, only `[A-Za-z0-9._~-]`, and not `.` or `..`, so it can never change the path.
///
/// ```
/// use captaindata_poller::engine::validate_path_segment;
/// assert!(validate_path_segment("jobUid", "a1b2-c3").is_ok());
/// assert_eq!(validate_path_segment("jobUid", "a/b").unwrap_err().option, "jobUid");
/// ```
pub fn validate_path_segment(option: &'static str, value: &str) -> Result<(), ConfigError> {
    if value.is_empty() {
        return Err(ConfigError::expected(option, "a non-empty string"));
    }
    let allowed = |c: char| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | '~');
    if value == "." || value == ".." || !value.chars().all(allowed) {
        let what = "a run id: letters, digits, '-', '_', '.', '~'";
        return Err(ConfigError::expected(option, &got(what, value)));
    }
    Ok(())
}

/// Checks a base URL and returns it without trailing `/`: `https://host[:port][/path]`,
/// or `http://` for localhost, 127.0.0.1 and `[::1]` only; no credentials, query or fragment.
///
/// ```
/// use captaindata_poller::engine::validate_base_url;
/// assert_eq!(validate_base_url("https://api.captaindata.co/v3/").unwrap(), "https://api.captaindata.co/v3");
/// assert!(validate_base_url("http://example.com").is_err());
/// ```
pub fn validate_base_url(value: &str) -> Result<String, ConfigError> {
    const OPTION: &str = "baseUrl";
    let Some((scheme, rest)) = split_scheme(value) else {
        return Err(ConfigError::expected(OPTION, &got("an http(s) URL", value)));
    };
    let scheme = scheme.to_ascii_lowercase();
    let cut = rest.find('/').unwrap_or(rest.len());
    let (authority, path) = (
        rest.get(..cut).unwrap_or(rest),
        rest.get(cut..).unwrap_or(""),
    );
    // Echoing the value could leak credentials or a token in a query: say what, not what value.
    if authority.contains('@') {
        return Err(ConfigError::expected(
            OPTION,
            "a URL without credentials (user:pass@)",
        ));
    }
    if value.contains(['?', '#']) {
        return Err(ConfigError::expected(
            OPTION,
            "a URL without query or fragment",
        ));
    }
    let host = split_host(authority).filter(|(h, p)| valid_host(h) && valid_port(p));
    let Some((host, _)) = host else {
        return Err(ConfigError::expected(
            OPTION,
            &got("a URL with a valid host", value),
        ));
    };
    let local = is_loopback_host(host);
    if !(scheme == "https" || scheme == "http" && local) {
        let what = "an https URL (http only for localhost, 127.0.0.1 or [::1])";
        return Err(ConfigError::expected(OPTION, &got(what, value)));
    }
    if path
        .chars()
        .any(|c| c.is_ascii_control() || c == ' ' || c == '\\' || !c.is_ascii())
    {
        return Err(ConfigError::expected(
            OPTION,
            &got("a URL with a plain path", value),
        ));
    }
    let mut path = path;
    while let Some(shorter) = path.strip_suffix("/") {
        path = shorter;
    }
    Ok([&scheme, "://", authority, path].concat())
}

/// The shortest `intervalMs` against a remote API: faster polling only suits a local
/// simulator (each tick is at least one request on the user's API budget).
pub const MIN_REMOTE_INTERVAL_MS: u32 = 1_000;

/// Checks `intervalMs` against the (validated) base URL: below [`MIN_REMOTE_INTERVAL_MS`]
/// only on loopback (localhost, 127.0.0.1, `[::1]`).
///
/// ```
/// use captaindata_poller::engine::validate_interval;
/// assert!(validate_interval(10, "http://127.0.0.1:8080/v3").is_ok());
/// assert!(validate_interval(10, "https://api.captaindata.co/v3").is_err());
/// assert!(validate_interval(1_000, "https://api.captaindata.co/v3").is_ok());
/// ```
pub fn validate_interval(interval_ms: u32, base_url: &str) -> Result<(), ConfigError> {
    let authority = split_scheme(base_url).and_then(|(_, rest)| rest.split('/').next());
    let local = authority
        .and_then(split_host)
        .is_some_and(|(host, _)| is_loopback_host(host));
    if interval_ms >= MIN_REMOTE_INTERVAL_MS || local {
        return Ok(());
    }
    Err(ConfigError::expected(
        "intervalMs",
        "at least 1000 ms against a remote API (less only for a baseUrl on localhost, \
         127.0.0.1 or [::1])",
    ))
}

impl ConfigError {
    /// `Expected \`option\` to be what`: the one wording of a refused option.
    pub(crate) fn expected(option: &'static str, what: &str) -> ConfigError {
        ConfigError {
            option,
            message: ["Expected `", option, "` to be ", what].concat(),
        }
    }
}

/// `what (got "value")`, the value cut short so a pasted blob does not flood the message.
fn got(what: &str, value: &str) -> String {
    [what, " (got \"", first_chars(value, 80), "\")"].concat()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn run_ids_are_single_safe_segments() {
        for ok in ["a", "abc-DEF_1.2~x", "..."] {
            assert!(validate_path_segment("jobUid", ok).is_ok(), "{ok}");
        }
        for bad in [
            "", ".", "..", "a/b", "../x", "a b", "a?b", "a#b", "a%2F", "é",
        ] {
            let err = validate_path_segment("jobUid", bad).unwrap_err();
            assert_eq!(err.option, "jobUid");
            assert!(
                err.message.starts_with("Expected `jobUid` to be"),
                "{}",
                err.message
            );
        }
        let err = validate_path_segment("jobUid", "a/b").unwrap_err();
        assert_eq!(
            err.message,
            "Expected `jobUid` to be a run id: letters, digits, '-', '_', '.', '~' (got \"a/b\")"
        );
    }

    #[test]
    fn good_base_urls_lose_their_trailing_slash() {
        let cases = [
            (
                "https://api.captaindata.co/v3",
                "https://api.captaindata.co/v3",
            ),
            (
                "https://api.captaindata.co/v3/",
                "https://api.captaindata.co/v3",
            ),
            ("HTTPS://Example.com:8443/", "https://Example.com:8443"),
            ("http://localhost:8787/v3", "http://localhost:8787/v3"),
            ("http://127.0.0.1:9/", "http://127.0.0.1:9"),
            ("http://[::1]:3000/api", "http://[::1]:3000/api"),
        ];
        for (input, want) in cases {
            assert_eq!(validate_base_url(input).as_deref(), Ok(want), "{input}");
        }
    }

    #[test]
    fn bad_base_urls_are_refused_without_echoing_secrets() {
        let bad = [
            "",
            "api.captaindata.co",
            "http://api.captaindata.co/v3",
            "http://localhost.evil.com",
            "ftp://localhost",
            "https://",
            "https://:443",
            "https://host:0",
            "https://host:99999",
            "https://ho st/",
            "https://host/a b",
            "https://host/v3?x=1",
            "https://host/v3#frag",
            "https://user:secret@host/v3",
        ];
        for input in bad {
            let err = validate_base_url(input).unwrap_err();
            assert_eq!(err.option, "baseUrl", "{input}");
        }
        let err = validate_base_url("https://user:secret@host/v3").unwrap_err();
        assert!(!err.message.contains("secret"));
        let err = validate_base_url("https://host/v3?key=secret").unwrap_err();
        assert!(!err.message.contains("secret"));
    }
}
