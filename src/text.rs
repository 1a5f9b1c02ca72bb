//! Integers as decimal text without `core::fmt`, which would add several KB to the wasm
//! (engine messages, cursors and the glue's errors all need a number now and then).

use alloc::string::String;

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
    fn writes_like_display() {
        for n in [0, 7, 10, 99, 100, 12_345, u64::from(u32::MAX), u64::MAX] {
            assert_eq!(decimal(n), n.to_string());
        }
    }
}
