//! URLs as plain strings: a URL's parts (scheme, host, port), origins compared, `paging.next`
//! resolved against the base URL, and what a 404 says about the base URL. (No `url` crate: it
//! would add IDNA tables to the wasm for one comparison.) Searches take a `char`, prefixes
//! and suffixes a `&str`: a `&str` search links core's two-way searcher, a `char` prefix is
//! encoded to UTF-8 before it is compared (both cost every page's wasm; docs/size.md).

use alloc::string::String;

/// `scheme://rest` → `(scheme, rest)`: the first `:` must be followed by `//`. Searched for
/// as a byte: a `&str` pattern links core's two-way string searcher (≈ 1.4 KB of wasm) for
/// this one separator.
pub(super) fn split_scheme(url: &str) -> Option<(&str, &str)> {
    let colon = url.find(':')?;
    let rest = url.get(colon + 1..)?.strip_prefix("//")?;
    Some((url.get(..colon)?, rest))
}

/// The normalised origin of an absolute URL: lowercase scheme and host, default port
/// (80 for http, 443 for https) dropped. `None` when it is not an absolute http(s) URL
/// or carries credentials.
pub(super) fn origin_of(url: &str) -> Option<String> {
    let (scheme, rest) = split_scheme(url)?;
    let scheme = scheme.to_ascii_lowercase();
    let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let authority = rest.get(..end)?;
    if authority.contains('@') || authority.is_empty() {
        return None;
    }
    let (host, port) = split_host(authority)?;
    let default = match scheme.as_str() {
        "https" => "443",
        "http" => "80",
        _ => return None,
    };
    let mut origin = [&scheme, "://", &host.to_ascii_lowercase()].concat();
    if !port.is_empty() && port != default {
        origin.push(':');
        origin.push_str(port);
    }
    Some(origin)
}

/// `scheme://authority` of a validated base URL, as written (used to build request URLs).
pub(super) fn origin_prefix(base: &str) -> &str {
    let after = split_scheme(base).map_or(0, |(scheme, _)| scheme.len() + 3);
    let rest = base.get(after..).unwrap_or_default();
    let end = rest.find(['/', '?', '#']).map_or(base.len(), |i| after + i);
    base.get(..end).unwrap_or(base)
}

/// Resolves `paging.next` to a location relative to the base's origin (path + query).
/// Accepts an absolute URL on the same origin, an origin-relative `/path`, or a
/// query-only `?…` (relative to `current`, the path of the page that gave it).
/// Anything else is refused: credentials must never go to another origin.
pub(super) fn resolve_next(base: &str, current: &str, next: &str) -> Result<String, &'static str> {
    let next = before(next, '#');
    let location = if next.starts_with("//") {
        return resolve_next(base, current, &[scheme_of(base), ":", next].concat());
    } else if next.starts_with("/") {
        next.into()
    } else if next.starts_with("?") {
        [before(current, '?'), next].concat()
    } else if split_scheme(next).is_some() {
        if origin_of(next).is_none() || origin_of(next) != origin_of(base) {
            return Err("paging.next points to another origin than baseUrl");
        }
        let rest = next.get(origin_prefix(next).len()..).unwrap_or_default();
        match rest.starts_with("/") {
            true => rest.into(),
            false => ["/", rest].concat(),
        }
    } else {
        return Err("paging.next is neither an absolute nor an origin-relative URL");
    };
    if location.chars().any(|c| c.is_ascii_control() || c == ' ') {
        return Err("paging.next contains spaces or control characters");
    }
    Ok(location)
}

/// True when the (validated) base URL's path ends in a version segment such as `/v3`: a
/// `baseUrl` without one is the usual cause of a 404 on every path.
///
/// ```
/// use captaindata_poller::engine::has_version_segment;
/// assert!(has_version_segment("https://api.captaindata.co/v3"));
/// assert!(!has_version_segment("https://api.captaindata.co"));
/// assert!(!has_version_segment("https://proxy.example/api"));
/// ```
pub fn has_version_segment(base_url: &str) -> bool {
    let bytes = base_url.as_bytes();
    // The last segment, after the `//` of the scheme: "v" and digits.
    let last = bytes.iter().rposition(|&b| b == b'/').unwrap_or(0);
    let segment = bytes.get(last + 1..).unwrap_or_default();
    let is_path = bytes.get(last.saturating_sub(1)) != Some(&b'/');
    matches!(segment, [b'v', digits @ ..] if !digits.is_empty() && digits.iter().all(u8::is_ascii_digit))
        && is_path
}

/// A 404's message: `text`, the request (`method path`) and, when `base_url` has no version
/// segment, that hint.
///
/// ```
/// use captaindata_poller::engine::not_found_text;
/// let text = not_found_text("HTTP 404", "GET", "/jobs/j1", "https://api.captaindata.co");
/// assert_eq!(text, "HTTP 404 (GET /jobs/j1; baseUrl has no version segment such as /v3)");
/// ```
pub fn not_found_text(text: &str, method: &str, path: &str, base_url: &str) -> String {
    match has_version_segment(base_url) {
        true => [text, " (", method, " ", path, ")"].concat(),
        false => {
            let hint = "; baseUrl has no version segment such as /v3)";
            [text, " (", method, " ", path, hint].concat()
        }
    }
}

pub(super) fn is_loopback_host(host: &str) -> bool {
    matches!(
        host.to_ascii_lowercase().as_str(),
        "localhost" | "127.0.0.1" | "[::1]"
    )
}

/// `host[:port]` or `[v6][:port]` → (host, port text).
pub(super) fn split_host(authority: &str) -> Option<(&str, &str)> {
    if authority.starts_with("[") {
        let end = authority.find(']')? + 1;
        let (host, rest) = (authority.get(..end)?, authority.get(end..)?);
        return match rest {
            "" => Some((host, "")),
            _ => Some((host, rest.strip_prefix(":")?)),
        };
    }
    Some(authority.split_once(':').unwrap_or((authority, "")))
}

pub(super) fn valid_host(host: &str) -> bool {
    let ok = |c: char| c.is_ascii_alphanumeric() || c == '-' || c == '.';
    let v6 = |c: char| c.is_ascii_hexdigit() || c == ':' || c == '.';
    match host.strip_prefix("[").and_then(|h| h.strip_suffix("]")) {
        Some(inner) => !inner.is_empty() && inner.chars().all(v6),
        None => !host.is_empty() && host.chars().all(ok),
    }
}

pub(super) fn valid_port(port: &str) -> bool {
    let number = port.parse::<u16>().ok();
    port.is_empty() || port.len() <= 5 && number.is_some_and(|p| p > 0)
}

fn scheme_of(base: &str) -> &str {
    split_scheme(base).map_or(base, |(scheme, _)| scheme)
}

/// `text` up to the first `needle` (all of it when absent).
fn before(text: &str, needle: char) -> &str {
    text.split_once(needle).map_or(text, |(head, _)| head)
}

#[cfg(test)]
mod tests {
    use super::*;

    const BASE: &str = "https://api.captaindata.co/v3";

    #[test]
    fn origins_normalise_case_and_default_ports() {
        let o = |u| origin_of(u);
        assert_eq!(o("HTTPS://API.CaptainData.co:443/x"), o(BASE));
        assert_eq!(o("http://localhost:80"), Some("http://localhost".into()));
        assert_ne!(o("http://api.captaindata.co/v3"), o(BASE));
        assert_ne!(o("https://api.captaindata.co:8443/v3"), o(BASE));
        assert_eq!(o("https://user@api.captaindata.co/v3"), None);
        assert_eq!(o("ftp://api.captaindata.co"), None);
    }

    #[test]
    fn next_on_the_same_origin_becomes_relative() {
        let r = |n| resolve_next(BASE, "/v3/jobs/j/results", n);
        assert_eq!(
            r("/v3/jobs/j/results?page=2"),
            Ok("/v3/jobs/j/results?page=2".into())
        );
        assert_eq!(
            r("https://api.captaindata.co:443/v3/jobs/j/results?cursor=a%2Fb"),
            Ok("/v3/jobs/j/results?cursor=a%2Fb".into())
        );
        assert_eq!(r("https://api.captaindata.co?x=1"), Ok("/?x=1".into()));
        assert_eq!(r("?page=3#frag"), Ok("/v3/jobs/j/results?page=3".into()));
        assert_eq!(r("//api.captaindata.co/v3/p"), Ok("/v3/p".into()));
    }

    #[test]
    fn next_on_another_origin_is_refused() {
        let r = |n| resolve_next(BASE, "/v3/jobs/j/results", n);
        for bad in [
            "https://evil.example/v3/jobs/j/results",
            "http://api.captaindata.co/v3/jobs/j/results",
            "https://api.captaindata.co.evil.example/v3",
            "https://api.captaindata.co@evil.example/v3",
            "//evil.example/v3",
            "javascript:alert(1)",
            "results?page=2",
        ] {
            assert!(r(bad).is_err(), "{bad}");
        }
    }
}
