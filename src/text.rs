//! Message and cursor text built without `core::fmt` (`format!` would add several KB to
//! the wasm) nor `[&str]::concat` (its length checks carry panic messages).

use alloc::string::String;

/// The pieces one after the other.
pub(crate) fn concat(pieces: &[&str]) -> String {
    let mut out = String::new();
    for piece in pieces {
        out.push_str(piece);
    }
    out
}

/// A decimal integer, like `text.parse::<u64>().ok()` (an optional `+`, then digits; no
/// overflow). One function for every integer the crate reads, instead of a copy of core's
/// generic parser per type.
pub(crate) fn parse_u64(text: &str) -> Option<u64> {
    let digits = text.strip_prefix('+').unwrap_or(text);
    if digits.is_empty() {
        return None;
    }
    digits.bytes().try_fold(0u64, |n, b| {
        let digit = b.is_ascii_digit().then(|| u64::from(b - b'0'))?;
        n.checked_mul(10)?.checked_add(digit)
    })
}

/// `bytes` as text when they are valid UTF-8, like `String::from_utf8(..).ok()`. Decoded
/// char by char (`char::from_u32` refuses surrogates and values past U+10FFFF): core's
/// validator, built for speed on long inputs, is 0.8 KB of wasm for a few short cursors.
pub(crate) fn utf8(bytes: &[u8]) -> Option<String> {
    let mut out = String::with_capacity(bytes.len());
    let mut rest = bytes.iter();
    while let Some(&lead) = rest.next() {
        // Continuation bytes, and the smallest code point a sequence this long may encode.
        let (more, min, bits) = match lead {
            0x00..=0x7F => (0, 0, lead),
            0xC0..=0xDF => (1, 0x80, lead & 0x1F),
            0xE0..=0xEF => (2, 0x800, lead & 0x0F),
            0xF0..=0xF7 => (3, 0x1_0000, lead & 0x07),
            _ => return None,
        };
        let mut code = u32::from(bits);
        for _ in 0..more {
            let next = rest.next().filter(|&&b| b & 0xC0 == 0x80)?;
            code = code << 6 | u32::from(next & 0x3F);
        }
        out.push(char::from_u32(code).filter(|_| code >= min)?);
    }
    Some(out)
}

/// The first `n` characters of `text` (all of it when shorter): long values are cut
/// short in messages.
pub(crate) fn first_chars(text: &str, n: usize) -> &str {
    let end = text.char_indices().nth(n).map_or(text.len(), |(i, _)| i);
    text.get(..end).unwrap_or(text)
}

/// Appends `n` in decimal.
pub(crate) fn push_decimal(out: &mut String, n: u64) {
    if n >= 10 {
        push_decimal(out, n / 10);
    }
    out.push(char::from(b'0' + (n % 10) as u8));
}

/// `n` in decimal.
pub(crate) fn decimal(n: u64) -> String {
    let mut out = String::new();
    push_decimal(&mut out, n);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cuts_at_a_character_count() {
        assert_eq!(first_chars("héllo", 2), "hé");
        assert_eq!(first_chars("héllo", 5), "héllo");
        assert_eq!(first_chars("hé", 80), "hé");
    }

    #[test]
    fn parses_like_std() {
        for text in [
            "",
            "+",
            "-1",
            "0",
            "+7",
            "007",
            "12a",
            " 1",
            "18446744073709551615",
            "18446744073709551616",
            "99999999999999999999",
            "1.0",
        ] {
            assert_eq!(parse_u64(text), text.parse::<u64>().ok(), "{text}");
        }
    }

    #[test]
    fn decodes_utf8_like_std() {
        let samples: [&[u8]; 14] = [
            b"",
            b"plain",
            "h\u{e9}llo \u{20ac} \u{1f600}".as_bytes(),
            b"\x80",
            b"\xC3",
            b"\xC0\x80",
            b"\xE0\x80\x80",
            b"\xED\xA0\x80",
            b"\xF4\x90\x80\x80",
            b"\xF8\x88\x80\x80\x80",
            b"\xE2\x82",
            b"a\xFFb",
            b"\xEF\xBF\xBF",
            b"\xF4\x8F\xBF\xBF",
        ];
        for bytes in samples {
            assert_eq!(
                utf8(bytes),
                String::from_utf8(bytes.to_vec()).ok(),
                "{bytes:?}"
            );
        }
        // Every one- and two-byte input.
        for a in 0..=255u8 {
            assert_eq!(utf8(&[a]), String::from_utf8(vec![a]).ok());
            for b in 0..=255u8 {
                assert_eq!(utf8(&[a, b]), String::from_utf8(vec![a, b]).ok());
            }
        }
        // Three- and four-byte leads with continuation bytes and their neighbours.
        let near = 0x70..=0xC7u8;
        for a in 0xE0..=0xFFu8 {
            for b in near.clone() {
                for c in near.clone() {
                    assert_eq!(utf8(&[a, b, c]), String::from_utf8(vec![a, b, c]).ok());
                    let four = vec![a, b, c, 0x80];
                    assert_eq!(utf8(&four), String::from_utf8(four.clone()).ok());
                }
            }
        }
    }

    #[test]
    fn concatenates() {
        assert_eq!(concat(&[]), "");
        assert_eq!(concat(&["a", "", "bc"]), "abc");
    }

    #[test]
    fn writes_like_display() {
        for n in [0, 7, 10, 99, 100, 12_345, u64::from(u32::MAX), u64::MAX] {
            assert_eq!(decimal(n), n.to_string());
        }
    }
}
