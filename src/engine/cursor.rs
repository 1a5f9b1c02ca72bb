//! The resume token: `"cdp1."` + base64url (no padding) of a small `|`-separated text.
//!
//! Payload fields: job uid, rows delivered, rows of the current page consumed, polls
//! done, terminal status (`s:<status>` success / `f:<status>` failure / `i:<status>` ended
//! with rows missing / empty), the
//! current page relative to the origin (empty = first page), and, when not 0, the quiet
//! status-guided ticks since the last results read, the `/results` 404s after the end and the
//! quiet-long reads in a row that found nothing (each absent in older cursors). Free-text fields are
//! percent-encoded so `|` can separate them. The host is never stored, nor any secret.

use alloc::string::String;
use alloc::vec::Vec;

use super::validation::{validate_path_segment, ConfigError};

const PREFIX: &str = "cdp1.";

/// How the run ended, as a cursor saves it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum EndKind {
    Succeeded,
    Failed,
    /// Ended with rows known missing (the details are read again: a cursor keeps no list).
    Incomplete,
}

/// The position a cursor restores: decoded with owned text (`S = String`), encoded from the
/// poller's own (`S = &str`, nothing copied).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(super) struct CursorState<S = String> {
    pub job_uid: S,
    pub offset: u64,
    pub skip: usize,
    pub polls: u32,
    /// Status-guided ticks in a row that said nothing new (so cron rounds keep counting).
    pub quiet: u32,
    /// `/results` 404s after the run's end (so cron rounds spend the retries once, not each).
    pub missing: u32,
    /// Quiet-long results reads in a row that found nothing (so cron rounds keep the longer wait).
    pub quiet_misses: u32,
    /// `(kind, status)` when the run's end was seen but the final read did not finish.
    pub terminal: Option<(EndKind, S)>,
    /// Path + query of the page being read, relative to the base's origin.
    pub page: Option<S>,
}

impl<S: AsRef<str>> CursorState<S> {
    pub fn encode(&self) -> String {
        let mut text = String::from(self.job_uid.as_ref());
        let mut digits = itoa::Buffer::new();
        for n in [self.offset, self.skip as u64, self.polls.into()] {
            text.push('|');
            text.push_str(digits.format(n));
        }
        text.push('|');
        if let Some((kind, status)) = &self.terminal {
            text.push_str(match kind {
                EndKind::Succeeded => "s:",
                EndKind::Failed => "f:",
                EndKind::Incomplete => "i:",
            });
            percent_encode(&mut text, status.as_ref());
        }
        text.push('|');
        if let Some(page) = &self.page {
            percent_encode(&mut text, page.as_ref());
        }
        // Trailing counters: written up to the last one that is not 0.
        let counters = [self.quiet, self.missing, self.quiet_misses];
        let written = counters.iter().rposition(|&n| n > 0).map_or(0, |i| i + 1);
        for n in &counters[..written] {
            text.push('|');
            text.push_str(digits.format(u64::from(*n)));
        }
        let mut cursor = String::from(PREFIX);
        base64url_encode(&mut cursor, text.as_bytes());
        cursor
    }
}

impl CursorState {
    /// Parses a cursor and checks it belongs to `job_uid`.
    pub fn decode(cursor: &str, job_uid: &str) -> Result<CursorState, ConfigError> {
        let state = parse(cursor)
            .ok_or_else(|| ConfigError::expected("cursor", "a string from poller.cursor"))?;
        if state.job_uid != job_uid {
            let what = [
                "a cursor of run ",
                job_uid,
                " (got one of run ",
                &state.job_uid,
                ")",
            ];
            return Err(ConfigError::expected("cursor", &what.concat()));
        }
        Ok(state)
    }
}

fn parse(cursor: &str) -> Option<CursorState> {
    let bytes = base64url_decode(cursor.strip_prefix(PREFIX)?)?;
    let text = String::from_utf8(bytes).ok()?;
    let mut fields = text.split('|');
    let mut next = || fields.next();
    let job_uid: String = next()?.into();
    validate_path_segment("cursor", &job_uid).ok()?;
    let offset = next()?.parse::<u64>().ok()?;
    let skip = usize::try_from(next()?.parse::<u64>().ok()?).ok()?;
    let polls = u32::try_from(next()?.parse::<u64>().ok()?).ok()?;
    let terminal = match next()? {
        "" => None,
        t => {
            let (kind, status) = t.split_once(':')?;
            let kind = match kind {
                "s" => EndKind::Succeeded,
                "i" => EndKind::Incomplete,
                _ => EndKind::Failed,
            };
            Some((kind, percent_decode(status)?))
        }
    };
    let page = match next()? {
        "" => None,
        p => Some(percent_decode(p)?).filter(|p| p.starts_with("/")),
    };
    let mut counter = || match next() {
        None => Some(0),
        Some(n) => u32::try_from(n.parse::<u64>().ok()?).ok(),
    };
    let quiet = counter()?;
    let missing = counter()?;
    let quiet_misses = counter()?;
    if next().is_some() {
        return None;
    }
    Some(CursorState {
        job_uid,
        offset,
        skip,
        polls,
        quiet,
        missing,
        quiet_misses,
        terminal,
        page,
    })
}

/// Appends `text` to `out`, escaping `%`, `|` and anything outside printable ASCII.
fn percent_encode(out: &mut String, text: &str) {
    for b in text.bytes() {
        if b.is_ascii_graphic() && b != b'%' && b != b'|' {
            out.push(char::from(b));
        } else {
            out.push('%');
            out.push(char::from(HEX[usize::from(b >> 4)]));
            out.push(char::from(HEX[usize::from(b & 15)]));
        }
    }
}

fn percent_decode(text: &str) -> Option<String> {
    let mut out = Vec::with_capacity(text.len());
    let mut bytes = text.bytes();
    while let Some(b) = bytes.next() {
        if b == b'%' {
            let hi = hex_value(bytes.next()?)?;
            let lo = hex_value(bytes.next()?)?;
            out.push(hi << 4 | lo);
        } else {
            out.push(b);
        }
    }
    String::from_utf8(out).ok()
}

const HEX: &[u8; 16] = b"0123456789ABCDEF";
const B64: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

fn hex_value(b: u8) -> Option<u8> {
    char::from(b)
        .to_digit(16)
        .and_then(|d| u8::try_from(d).ok())
}

/// Appends `data` to `out` in base64url without padding.
fn base64url_encode(out: &mut String, data: &[u8]) {
    for chunk in data.chunks(3) {
        let n = chunk
            .iter()
            .enumerate()
            .fold(0u32, |n, (i, &b)| n | u32::from(b) << (16 - 8 * i));
        for i in 0..=chunk.len() {
            out.push(char::from(B64[(n >> (18 - 6 * i) & 63) as usize]));
        }
    }
}

fn base64url_decode(text: &str) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(text.len() * 3 / 4);
    for chunk in text.as_bytes().chunks(4) {
        if chunk.len() == 1 {
            return None;
        }
        let mut n = 0u32;
        for (i, &c) in chunk.iter().enumerate() {
            let v = B64.iter().position(|&b| b == c)?;
            n |= (v as u32) << (18 - 6 * i);
        }
        for i in 0..chunk.len() - 1 {
            out.push((n >> (16 - 8 * i)) as u8);
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn encoded(data: &[u8]) -> String {
        let mut out = String::new();
        base64url_encode(&mut out, data);
        out
    }

    fn sample() -> CursorState {
        CursorState {
            job_uid: "run-1.a~b_c".into(),
            offset: 12_345,
            skip: 17,
            polls: 4,
            quiet: 3,
            missing: 2,
            quiet_misses: 1,
            terminal: Some((EndKind::Failed, "stopped|odd%".into())),
            page: Some("/v3/jobs/run-1.a~b_c/results?cursor=a%2Fb|c&x=.~é".into()),
        }
    }

    #[test]
    fn round_trips_every_field() {
        let state = sample();
        let cursor = state.encode();
        assert_eq!(CursorState::decode(&cursor, "run-1.a~b_c"), Ok(state));
        let first = CursorState {
            job_uid: "j".into(),
            ..CursorState::default()
        };
        assert_eq!(CursorState::decode(&first.encode(), "j"), Ok(first));
        // A trailing counter set, the ones before it 0: written as 0s, read back in place.
        let misses_only = CursorState {
            job_uid: "j".into(),
            quiet_misses: 2,
            ..CursorState::default()
        };
        assert_eq!(
            CursorState::decode(&misses_only.encode(), "j"),
            Ok(misses_only)
        );
    }

    #[test]
    fn is_json_safe_and_holds_no_host() {
        let cursor = sample().encode();
        assert!(cursor.starts_with("cdp1."));
        assert!(cursor
            .bytes()
            .all(|b| b.is_ascii_graphic() && b != b'"' && b != b'\\'));
        let text = String::from_utf8(base64url_decode(&cursor[5..]).unwrap()).unwrap();
        assert!(!text.contains("://"));
    }

    #[test]
    fn base64url_round_trips_all_lengths() {
        let data: Vec<u8> = (0..=255).collect();
        for n in 0..10 {
            assert_eq!(
                base64url_decode(&encoded(&data[..n])).as_deref(),
                Some(&data[..n])
            );
        }
        assert_eq!(encoded(b"hello?>"), "aGVsbG8_Pg");
    }

    #[test]
    fn another_runs_cursor_is_refused_by_name() {
        let err = CursorState::decode(&sample().encode(), "other").unwrap_err();
        assert_eq!(err.option, "cursor");
        assert_eq!(
            err.message,
            "Expected `cursor` to be a cursor of run other (got one of run run-1.a~b_c)"
        );
    }

    #[test]
    fn malformed_cursors_are_refused() {
        let good = sample().encode();
        for bad in [
            "",
            "cdp1.",
            "cdp2.abc",
            "cdp1.!!!!",
            &good[..good.len() - 1],
            "x",
        ] {
            let err = CursorState::decode(bad, "run-1.a~b_c").unwrap_err();
            assert_eq!(
                err.message,
                "Expected `cursor` to be a string from poller.cursor"
            );
        }
        let tampered = format!("cdp1.{}", encoded(b"j|1|x|0||"));
        assert!(CursorState::decode(&tampered, "j").is_err());
    }
}
