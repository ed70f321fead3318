//! Project tasks: `cargo xtask ci` installs what the tests need and runs every suite;
//! `cargo xtask bench <name>` runs a benchmark against the reference measured in the same run.

mod bench;

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{bail, Context, Result};
use clap::{Parser, Subcommand};

#[derive(Parser)]
#[command(name = "xtask", about = "RockLake project tasks")]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Install prerequisites (scripts/setup.sh) and run every check and test suite.
    Ci {
        /// Skip scripts/setup.sh (prerequisites already installed).
        #[arg(long)]
        no_setup: bool,
    },
    /// Build the core as a WebAssembly component (target/wasm32-unknown-unknown/release).
    Component,
    /// Run a benchmark: store | duckdb | core | commit.
    Bench { name: String },
}

fn root() -> PathBuf {
    std::env::var_os("CARGO_MANIFEST_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")))
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_default()
}

fn run(cmd: &mut Command) -> Result<()> {
    eprintln!("==> {cmd:?}");
    let status = cmd
        .current_dir(root())
        .status()
        .with_context(|| format!("spawn {cmd:?}"))?;
    if !status.success() {
        bail!("command failed ({status}): {cmd:?}");
    }
    Ok(())
}

fn cargo() -> Command {
    Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()))
}

fn build_component() -> Result<()> {
    let has_target = Command::new("rustup")
        .args(["target", "list", "--installed"])
        .output()
        .map(|o| {
            String::from_utf8_lossy(&o.stdout)
                .lines()
                .any(|l| l.trim() == "wasm32-unknown-unknown")
        })
        .unwrap_or(false);
    if !has_target {
        bail!(
            "the wasm32-unknown-unknown target is not installed and scripts/setup.sh could not add it; \
             see docs/decisions/0003-wasm-toolchain.md for the pinned fallback"
        );
    }
    // rustc's wasm-component-ld links the cdylib straight into a component (no WASI imports:
    // clock and storage come through the WIT imports).
    run(cargo()
        .env(
            "CARGO_TARGET_WASM32_UNKNOWN_UNKNOWN_LINKER",
            "wasm-component-ld",
        )
        .args([
            "build",
            "-p",
            "rocklake-core",
            "--target",
            "wasm32-unknown-unknown",
            "--release",
        ]))
}

/// The core's dependency tree must not contain an async runtime, networking or a clock source.
fn check_core_is_pure() -> Result<()> {
    let out = cargo()
        .args([
            "tree",
            "-p",
            "rocklake-core",
            "-e",
            "normal",
            "--prefix",
            "none",
            "--target",
            "all",
        ])
        .current_dir(root())
        .output()
        .context("cargo tree")?;
    let tree = String::from_utf8_lossy(&out.stdout);
    let banned = [
        "tokio",
        "mio",
        "socket2",
        "async-std",
        "getrandom",
        "rand",
        "chrono",
        "libc",
    ];
    let found: Vec<&str> = tree
        .lines()
        .filter_map(|l| l.split_whitespace().next())
        .filter(|name| banned.contains(name))
        .collect();
    if !found.is_empty() {
        bail!("rocklake-core must stay pure, but its dependency tree contains {found:?}");
    }
    eprintln!(
        "==> rocklake-core dependency tree is pure ({} crates)",
        tree.lines().count()
    );
    Ok(())
}

fn ci(no_setup: bool) -> Result<()> {
    if !no_setup {
        run(Command::new("bash").arg("scripts/setup.sh"))?;
    }
    run(cargo().args(["fmt", "--all", "--", "--check"]))?;
    check_core_is_pure()?;
    run(cargo().args([
        "clippy",
        "--workspace",
        "--all-targets",
        "--",
        "-D",
        "warnings",
    ]))?;
    run(cargo().args(["build", "-p", "rocklake"]))?;
    if root().join("core-wasm/src/guest.rs").exists() {
        build_component()?;
    }
    // Unit, property and integration tests of every crate, then the end-to-end suites (real
    // DuckDB, real PostgreSQL), two at a time: the machine has two cores.
    run(cargo().args(["test", "--workspace", "--exclude", "rocklake-tests"]))?;
    run(cargo().args([
        "test",
        "-p",
        "rocklake-tests",
        "--",
        "--test-threads",
        "2",
        "--nocapture",
    ]))?;
    if root().join("core-wasm/src/guest.rs").exists() {
        // The same end-to-end suites once more on the WebAssembly component.
        run(cargo().env("ROCKLAKE_CORE", "wasm").args([
            "test",
            "-p",
            "rocklake-tests",
            "--test",
            "duckdb_end_to_end",
            "--test",
            "differential_vs_postgres",
            "--test",
            "bad_input",
            "--test",
            "replica",
            "--",
            "--test-threads",
            "2",
        ]))?;
    }
    Ok(())
}

fn main() -> Result<()> {
    match Cli::parse().cmd {
        Cmd::Ci { no_setup } => ci(no_setup),
        Cmd::Component => build_component(),
        Cmd::Bench { name } => bench(&name),
    }
}

fn bench(name: &str) -> Result<()> {
    bench::bench(name)
}
