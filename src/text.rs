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
