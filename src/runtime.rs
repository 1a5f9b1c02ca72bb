//! The wasm32 runtime pieces std would otherwise choose: the allocator and (in the shipped,
//! `no_std` module) the panic handler.

/// Talc instead of std's dlmalloc: a smaller module (about 2.6 KB less gzipped), and it
/// frees and reuses memory like dlmalloc (a long poll allocates per request), growing the
/// wasm memory on demand. Growing in place is left out (`disable-realloc-in-place`): the
/// strings built here are short, so copying on growth costs nothing noticeable.
#[global_allocator]
static ALLOCATOR: talc::wasm::WasmDynamicTalc = talc::wasm::new_wasm_dynamic_allocator();

/// A panic traps at once, as std does with `panic = "abort"`, but without formatting a
/// message first: that keeps `core::fmt` out of the module. Library code does not panic
/// (no unwrap/expect, checked slicing); this is the backstop.
#[cfg(not(feature = "std"))]
#[panic_handler]
fn panic(_: &core::panic::PanicInfo) -> ! {
    core::arch::wasm32::unreachable()
}
