//! Project tasks: `cargo xtask ci` installs what the tests need and runs every suite;
//! `cargo xtask bench <name>` runs a benchmark against the reference measured in the same run.

mod bench;
mod embed;
mod fuzz;

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
    /// Run the core component in a second, minimal embedder (wasmtime + an in-memory map;
    /// xtask/src/embed.rs) and check what it prints.
    EmbedExample,
    /// Run a benchmark: store | duckdb | core | commit | scale.
    Bench { name: String },
    /// Build the cargo-fuzz targets (fuzz/) and run each for a bounded time (docs/fuzzing.md);
    /// the long mode is `--seconds 600`.
    Fuzz {
        /// Seconds per target.
        #[arg(long, default_value_t = fuzz::CI_SECONDS)]
        seconds: u64,
        /// Targets to run (default: all): envelope, keys, sql, copy_binary, pg_message.
        targets: Vec<String>,
    },
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

/// Where scripts/setup.sh keeps venvs, downloads and the toolchain fallback.
fn cache_dir() -> PathBuf {
    std::env::var_os("ROCKLAKE_CACHE")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(std::env::var("HOME").unwrap_or_else(|_| "/root".into()))
                .join(".cache/rocklake")
        })
}

/// The Rust 1.97.0 toolchain scripts/setup.sh extracted when rustup could not add the wasm32
/// target (decision record 0003), as recorded in `$CACHE/wasm32-toolchain`.
fn fallback_toolchain() -> Option<PathBuf> {
    let record = std::fs::read_to_string(cache_dir().join("wasm32-toolchain")).ok()?;
    let dir = PathBuf::from(record.trim());
    (dir.join("bin/cargo").is_file()
        && dir.join("bin/rustc").is_file()
        && dir.join("lib/rustlib/wasm32-unknown-unknown").is_dir())
    .then_some(dir)
}

/// Builds the component with the fallback toolchain's own cargo and rustc (a 1.97 rust-std
/// cannot be used by the workspace's rustc), in a target directory of its own, and copies the
/// component to where the host looks for it.
fn build_component_with(toolchain: &Path) -> Result<()> {
    let own_target = cache_dir().join("target-toolchain-1.97.0");
    let bin = toolchain.join("bin");
    let path = std::env::var_os("PATH").unwrap_or_default();
    let mut paths = vec![bin.clone()];
    paths.extend(std::env::split_paths(&path));
    let path = std::env::join_paths(paths).context("PATH")?;
    eprintln!(
        "==> the wasm32 target comes from the pinned fallback toolchain {}",
        toolchain.display()
    );
    run(component_build(&mut Command::new(bin.join("cargo")))
        .env("RUSTC", bin.join("rustc"))
        .env("PATH", path)
        .env_remove("RUSTUP_TOOLCHAIN")
        .env_remove("RUSTC_WRAPPER")
        .env("CARGO_TARGET_DIR", &own_target))?;
    let rel = "wasm32-unknown-unknown/release/rocklake_core.wasm";
    let built = own_target.join(rel);
    let dest = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| root().join("target"))
        .join(rel);
    if let Some(dir) = dest.parent() {
        std::fs::create_dir_all(dir).with_context(|| format!("create {}", dir.display()))?;
    }
    // A fresh file: the old one may be a hard link to cargo's own artifact of the workspace
    // toolchain, which copying over it would overwrite.
    match std::fs::remove_file(&dest) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
            return Err(e).with_context(|| format!("remove {}", dest.display()));
        }
        _ => {}
    }
    std::fs::copy(&built, &dest)
        .with_context(|| format!("copy {} to {}", built.display(), dest.display()))?;
    eprintln!("==> component: {}", dest.display());
    Ok(())
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
    let forced = std::env::var("ROCKLAKE_FORCE_TOOLCHAIN_FALLBACK").as_deref() == Ok("1");
    if !has_target || forced {
        if let Some(toolchain) = fallback_toolchain() {
            return build_component_with(&toolchain);
        }
        bail!(
            "the wasm32-unknown-unknown target is not installed (or ROCKLAKE_FORCE_TOOLCHAIN_FALLBACK=1) \
             and the pinned fallback toolchain is not there either: run scripts/setup.sh, which adds \
             the target with rustup or else installs the fallback (docs/decisions/0003-wasm-toolchain.md)"
        );
    }
    run(component_build(&mut cargo()))
}

/// `cargo build` of the core component. rustc's wasm-component-ld links the cdylib straight
/// into a component (no WASI imports: clock and storage come through the WIT imports).
fn component_build(cargo: &mut Command) -> &mut Command {
    cargo
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
        ])
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
        // The component outside RockLake's server, in the minimal embedder.
        embed::check()?;
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
            "copy_formats",
            "--test",
            "cursors",
            "--test",
            "time_zones",
            "--test",
            "savepoints",
            "--test",
            "alter_table",
            "--test",
            "error_positions",
            "--test",
            "pipelines",
            "--test",
            "python_clients",
            "--test",
            "jdbc",
            "--test",
            "tokio_postgres",
            "--test",
            "node_postgres",
            "--test",
            "create_table_as",
            "--test",
            "maintenance_statements",
            "--test",
            "json_functions",
            "--test",
            "grouping_sets",
            "--test",
            "views",
            "--test",
            "portals",
            "--test",
            "records_and_bits",
            "--test",
            "advisory_locks",
            "--test",
            "activity",
            "--test",
            "sequences",
            "--test",
            "comments",
            "--test",
            "pg_dump_restore",
            "--test",
            "generated_queries_vs_postgres",
            "--test",
            "generated_lake_ops_vs_postgres",
            "--test",
            "concurrent_lake_invariants",
            "--test",
            "replica",
            "--test",
            "long_statements",
            "--",
            "--test-threads",
            "2",
        ]))?;
    }
    // Every fuzz target for a bounded time; a crash fails the run (docs/fuzzing.md).
    fuzz::fuzz(fuzz::CI_SECONDS, &[])?;
    Ok(())
}

fn main() -> Result<()> {
    match Cli::parse().cmd {
        Cmd::Ci { no_setup } => ci(no_setup),
        Cmd::Component => build_component(),
        Cmd::EmbedExample => build_component().and_then(|()| embed::check()),
        Cmd::Bench { name } => bench(&name),
        Cmd::Fuzz { seconds, targets } => fuzz::fuzz(seconds, &targets),
    }
}

fn bench(name: &str) -> Result<()> {
    bench::bench(name)
}
