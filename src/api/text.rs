//! Text built without `core::fmt`: `format!` links the formatting machinery into the wasm and
//! a call per message (≈ 2 KB gzipped, docs/size.md), so messages and URLs are concatenated
//! (`[a, b].concat()`) and numbers written by `itoa`.

use alloc::string::String;

/// `n` in decimal.
///
/// ```
/// assert_eq!(captaindata_poller::api::decimal(404_u16), "404");
/// ```
pub fn decimal(n: impl itoa::Integer) -> String {
    itoa::Buffer::new().format(n).into()
}
