//! The wasm32 allocator.

/// Talc instead of std's dlmalloc: a smaller module (measured in docs/size.md), and it frees
/// and reuses memory like dlmalloc (a long poll allocates per request), growing the wasm
/// memory on demand.
#[global_allocator]
static ALLOCATOR: talc::wasm::WasmDynamicTalc = talc::wasm::new_wasm_dynamic_allocator();
