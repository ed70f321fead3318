//! `cargo xtask embed-example`: builds the core component, runs the minimal second embedder
//! (`host-native/examples/embed_core.rs`: wasmtime, the WIT world, an in-memory map; nothing of
//! RockLake's server) and checks what it prints. The example is built with host-native's
//! dependencies, so wasmtime is compiled once for the workspace, not again for xtask.

use anyhow::{bail, Context, Result};

/// Runs the example on the component `cargo xtask component` built and fails unless it prints
/// [`EXPECTED`] (then a count of the keys it stored).
pub fn check() -> Result<()> {
    let component = std::env::var_os("ROCKLAKE_COMPONENT")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| {
            std::env::var_os("CARGO_TARGET_DIR")
                .map(std::path::PathBuf::from)
                .unwrap_or_else(|| crate::root().join("target"))
                .join("wasm32-unknown-unknown/release/rocklake_core.wasm")
        });
    let out = crate::cargo()
        .args([
            "run",
            "--quiet",
            "-p",
            "rocklake",
            "--example",
            "embed_core",
            "--",
        ])
        .arg(&component)
        .current_dir(crate::root())
        .output()
        .context("run the embed_core example")?;
    if !out.status.success() {
        bail!(
            "the embed_core example failed ({}): {}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let printed: Vec<String> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(str::to_string)
        .collect();
    for line in &printed {
        eprintln!("    embed-example: {line}");
    }
    let keys_line = printed.last().cloned().unwrap_or_default();
    if printed.len() != EXPECTED.len() + 1
        || printed.iter().zip(EXPECTED).any(|(got, want)| got != want)
        || !keys_line.ends_with("keys in the host's map")
        || keys_line.starts_with("0 ")
    {
        bail!("the minimal embedder printed {printed:?}, expected {EXPECTED:?} and a key count");
    }
    eprintln!("==> embed-example: the component ran in the minimal embedder");
    Ok(())
}

pub const EXPECTED: &[&str] = &[
    "CREATE TABLE",
    "INSERT 0 2",
    "snapshot_id|schema_version :: 1|1 (SELECT 1)",
    "ERROR 23505 duplicate key value violates unique constraint \"ducklake_snapshot_pkey\"",
];
