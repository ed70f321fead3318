//! The component's stack: Rust's wasm32 default is 1 MiB of linear memory, which a statement
//! nested to the core's limit (`depth::MAX_EXPR_DEPTH`) outgrows. The stack is placed first
//! in linear memory, so running past it traps instead of overwriting data.
// A build script runs in cargo, not in the core: reading cargo's target description is its job.
#[allow(clippy::disallowed_methods)]
fn main() {
    if std::env::var("CARGO_CFG_TARGET_ARCH").as_deref() == Ok("wasm32") {
        println!("cargo:rustc-link-arg-cdylib=-zstack-size=16777216");
    }
    println!("cargo:rerun-if-changed=build.rs");
}
