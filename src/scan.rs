//! Finding ASCII delimiters in text by plain byte comparison.
//!
//! The engine splits URLs, cursors and dates at fixed ASCII delimiters. core's `str`
//! patterns would do, but their substring searcher (two-way) and the panicking slicing
//! paths they carry cost several KB of wasm, most of it `core::fmt` for panic messages
//! the module can never show; these few lines do the same job without a panic path.

/// Byte offset of the first `needle` in `hay`.
pub(crate) fn find(hay: &str, needle: &str) -> Option<usize> {
    let needle = needle.as_bytes();
    if needle.is_empty() {
        return Some(0);
    }
    hay.as_bytes()
        .windows(needle.len())
        .position(|w| w == needle)
}

/// `hay` split around the first `needle`, like `str::split_once`.
pub(crate) fn split_once<'a>(hay: &'a str, needle: &str) -> Option<(&'a str, &'a str)> {
    let at = find(hay, needle)?;
    Some((hay.get(..at)?, hay.get(at + needle.len()..)?))
}

/// `hay` up to the first `needle` (all of it when absent), like `str::split(..).next()`.
pub(crate) fn before<'a>(hay: &'a str, needle: &str) -> &'a str {
    split_once(hay, needle).map_or(hay, |(head, _)| head)
}

/// The pieces of `hay` between `needle`s, like `str::split`.
pub(crate) fn split<'a>(hay: &'a str, needle: &'a str) -> impl Iterator<Item = &'a str> {
    let mut rest = Some(hay);
    core::iter::from_fn(move || {
        let text = rest?;
        let (piece, tail) = split_once(text, needle).map_or((text, None), |(p, t)| (p, Some(t)));
        rest = tail;
        Some(piece)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn behaves_like_the_str_methods() {
        for hay in ["", "a", "://", "https://h:1/p", "a|b||c|", "é|ü", "::"] {
            for needle in ["://", "|", ":", "é"] {
                assert_eq!(find(hay, needle), hay.find(needle), "{hay} {needle}");
                assert_eq!(split_once(hay, needle), hay.split_once(needle));
                assert_eq!(before(hay, needle), hay.split(needle).next().unwrap());
                let ours: Vec<&str> = split(hay, needle).collect();
                assert_eq!(ours, hay.split(needle).collect::<Vec<_>>());
            }
        }
    }
}
