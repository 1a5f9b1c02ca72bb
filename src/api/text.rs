//! Text built without `core::fmt`: `format!` links the formatting machinery into the wasm and
//! a call per message (≈ 2 KB gzipped, docs/size.md), so messages and URLs are concatenated
//! (`[a, b].concat()`) and numbers written by `itoa`.

use alloc::string::String;

/// `n` in decimal (one `u64` copy of itoa's code, not one per integer type).
///
/// ```
/// assert_eq!(captaindata_poller::api::decimal(404), "404");
/// ```
pub fn decimal(n: u64) -> String {
    itoa::Buffer::new().format(n).into()
}
