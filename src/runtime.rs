//! The wasm32 runtime pieces std would otherwise choose: the global allocator.

/// Talc instead of std's dlmalloc: a smaller module (about 2.6 KB less gzipped), and it
/// frees and reuses memory like dlmalloc (a long poll allocates per request), growing the
/// wasm memory on demand. Growing in place is left out (`disable-realloc-in-place`): the
/// strings built here are short, so copying on growth costs nothing noticeable.
#[global_allocator]
static ALLOCATOR: talc::wasm::WasmDynamicTalc = talc::wasm::new_wasm_dynamic_allocator();
