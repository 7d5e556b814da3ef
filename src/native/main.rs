//! The `webrag` binary (native only; see `webrag::native::cli`).
#[cfg(not(target_arch = "wasm32"))]
fn main() {
    webrag::native::cli::main()
}

#[cfg(target_arch = "wasm32")]
fn main() {}
