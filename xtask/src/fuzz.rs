//! `cargo xtask fuzz [--seconds N] [TARGET...]`: builds the cargo-fuzz targets of `fuzz/` and
//! runs each for a bounded time (docs/fuzzing.md). Stable Rust: the targets are built with
//! `--sanitizer none` (cargo-fuzz's SanitizerCoverage flags are stable options; only the
//! sanitizers need nightly). A crash, a panic, a hang or an out-of-memory input fails the run and
//! leaves the input in `fuzz/artifacts/<target>/`.

use std::path::Path;
use std::process::Stdio;
use std::time::Instant;

use anyhow::{bail, Context, Result};

use crate::{cache_dir, cargo, root, run};

/// cargo-fuzz, installed with `cargo install --locked` when missing or of another version.
const CARGO_FUZZ_VERSION: &str = "0.13.2";

/// Every target in fuzz/Cargo.toml, in the order CI runs them.
pub const TARGETS: [&str; 5] = ["envelope", "keys", "sql", "copy_binary", "pg_message"];

/// Seconds per target in `cargo xtask ci`.
pub const CI_SECONDS: u64 = 25;

fn ensure_cargo_fuzz() -> Result<()> {
    let installed = cargo()
        .args(["fuzz", "--version"])
        .stderr(Stdio::null())
        .output()
        .map(|o| {
            String::from_utf8_lossy(&o.stdout).trim() == format!("cargo-fuzz {CARGO_FUZZ_VERSION}")
        })
        .unwrap_or(false);
    if installed {
        return Ok(());
    }
    run(cargo().args([
        "install",
        "--locked",
        "cargo-fuzz",
        "--version",
        &format!("={CARGO_FUZZ_VERSION}"),
    ]))
}

/// Arguments shared by `cargo fuzz build` and `cargo fuzz run`: the fuzz project, no sanitizer
/// (stable), its own target directory (instrumented builds must not mix with the workspace's).
///
/// Short runs (CI) build unoptimized (`--dev`): a cold optimized, instrumented build of the
/// whole tree (wasmtime, SlateDB) was measured at 41 minutes on this 2-core machine, far more
/// than the seconds of fuzzing it serves. Long runs build optimized for throughput.
fn build_args(target_dir: &Path, seconds: u64) -> Vec<String> {
    let mut args = vec![
        "--fuzz-dir".into(),
        root().join("fuzz").display().to_string(),
        "--sanitizer".into(),
        "none".into(),
        "--target-dir".into(),
        target_dir.display().to_string(),
    ];
    if seconds <= OPTIMIZE_ABOVE_SECONDS {
        args.push("--dev".into());
    }
    args
}

/// Runs longer than this (per target) use an optimized build.
const OPTIMIZE_ABOVE_SECONDS: u64 = 120;

/// The numbers libFuzzer reports with `-print_final_stats=1`.
fn final_stat(log: &str, name: &str) -> Option<u64> {
    log.lines()
        .rev()
        .find_map(|l| l.strip_prefix(&format!("stat::{name}:")))
        .and_then(|v| v.trim().parse().ok())
}

fn fuzz_one(target: &str, seconds: u64, target_dir: &Path) -> Result<()> {
    let fuzz_dir = root().join("fuzz");
    let seeds = fuzz_dir.join("corpus").join(target);
    // New inputs the fuzzer finds go to a working corpus in the cache (reused by the next run,
    // never committed); the committed seeds are only read.
    let work = cache_dir().join("fuzz-corpus").join(target);
    std::fs::create_dir_all(&work).with_context(|| format!("create {}", work.display()))?;
    let artifacts = fuzz_dir.join("artifacts").join(target);
    std::fs::create_dir_all(&artifacts)
        .with_context(|| format!("create {}", artifacts.display()))?;
    let log_path = cache_dir().join("fuzz-logs").join(format!("{target}.log"));
    if let Some(dir) = log_path.parent() {
        std::fs::create_dir_all(dir).with_context(|| format!("create {}", dir.display()))?;
    }
    let log = std::fs::File::create(&log_path)
        .with_context(|| format!("create {}", log_path.display()))?;

    let mut cmd = cargo();
    cmd.current_dir(root())
        .args(["fuzz", "run"])
        .args(build_args(target_dir, seconds))
        .arg(target)
        .arg(&work)
        .arg(&seeds)
        .arg("--")
        .arg(format!("-max_total_time={seconds}"))
        // One input taking longer than this is a hang; more memory than this is a failure too.
        .arg("-timeout=20")
        .arg("-rss_limit_mb=4096")
        .arg("-max_len=16384")
        .arg(format!("-artifact_prefix={}/", artifacts.display()))
        .arg("-print_final_stats=1");
    let dict = fuzz_dir.join(format!("{target}.dict"));
    if dict.exists() {
        cmd.arg(format!("-dict={}", dict.display()));
    }
    eprintln!(
        "==> fuzz {target} for {seconds} s (log: {})",
        log_path.display()
    );
    let started = Instant::now();
    let status = cmd
        .stdout(log.try_clone().context("log file")?)
        .stderr(log)
        .status()
        .with_context(|| format!("spawn {cmd:?}"))?;
    let text = std::fs::read_to_string(&log_path).unwrap_or_default();
    if !status.success() {
        let tail: Vec<&str> = text.lines().rev().take(80).collect();
        for line in tail.into_iter().rev() {
            eprintln!("    {line}");
        }
        bail!(
            "fuzz target {target} failed ({status}); the input is in {} (docs/fuzzing.md: \
             turn it into a regression test, then fix)",
            artifacts.display()
        );
    }
    let runs = final_stat(&text, "number_of_executed_units").unwrap_or(0);
    let per_sec = final_stat(&text, "average_exec_per_sec").unwrap_or(0);
    let corpus = std::fs::read_dir(&work).map(|d| d.count()).unwrap_or(0);
    eprintln!(
        "==> fuzz {target}: ok, {runs} inputs in {:.0} s ({per_sec}/s), working corpus {corpus}",
        started.elapsed().as_secs_f64()
    );
    Ok(())
}

/// Builds every target once, then fuzzes each of `targets` (all when empty) for `seconds`.
pub fn fuzz(seconds: u64, targets: &[String]) -> Result<()> {
    for t in targets {
        if !TARGETS.contains(&t.as_str()) {
            bail!(
                "unknown fuzz target {t:?} (targets: {})",
                TARGETS.join(", ")
            );
        }
    }
    let selected: Vec<&str> = if targets.is_empty() {
        TARGETS.to_vec()
    } else {
        targets.iter().map(String::as_str).collect()
    };
    ensure_cargo_fuzz()?;
    let target_dir = cache_dir().join("fuzz-target");
    let started = Instant::now();
    run(cargo()
        .args(["fuzz", "build"])
        .args(build_args(&target_dir, seconds)))?;
    eprintln!(
        "==> fuzz targets built in {:.0} s",
        started.elapsed().as_secs_f64()
    );
    prune_old_builds(&target_dir);
    for t in selected {
        fuzz_one(t, seconds, &target_dir)?;
    }
    Ok(())
}

/// Deletes all but the newest build of each fuzz target in the persistent target directory:
/// every build after a change to the core leaves another ~540 MB executable per target in
/// `deps`, and a developer machine's disk filled up with them.
fn prune_old_builds(target_dir: &Path) {
    let Ok(triples) = std::fs::read_dir(target_dir) else {
        return;
    };
    for triple in triples.flatten() {
        let deps = triple.path().join("debug").join("deps");
        let Ok(entries) = std::fs::read_dir(&deps) else {
            continue;
        };
        let files: Vec<_> = entries.flatten().collect();
        for t in TARGETS {
            let mut builds: Vec<(std::time::SystemTime, std::path::PathBuf)> = files
                .iter()
                .filter(|e| {
                    let name = e.file_name().to_string_lossy().to_string();
                    name.strip_prefix(t)
                        .and_then(|rest| rest.strip_prefix('-'))
                        .is_some_and(|hash| !hash.contains('.'))
                })
                .filter_map(|e| Some((e.metadata().ok()?.modified().ok()?, e.path())))
                .collect();
            builds.sort();
            builds.pop();
            for (_, old) in builds {
                if let Err(e) = std::fs::remove_file(&old) {
                    eprintln!(
                        "==> could not remove the old fuzz build {}: {e}",
                        old.display()
                    );
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pruning_keeps_the_newest_build_of_each_target_only() {
        let root = std::env::temp_dir().join(format!("rocklake-prune-{}", std::process::id()));
        let deps = root.join("x86_64-unknown-linux-gnu/debug/deps");
        std::fs::create_dir_all(&deps).expect("deps");
        let names = [
            "keys-aaa",
            "keys-bbb",
            "keys-bbb.d",
            "sqlparser-123",
            "sql-old",
            "sql-new",
        ];
        for (i, name) in names.iter().enumerate() {
            std::fs::write(deps.join(name), b"x").expect("write");
            let t =
                std::time::SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(1000 + i as u64);
            std::fs::File::options()
                .write(true)
                .open(deps.join(name))
                .and_then(|f| f.set_modified(t))
                .expect("mtime");
        }
        prune_old_builds(&root);
        let mut left: Vec<String> = std::fs::read_dir(&deps)
            .expect("read")
            .flatten()
            .map(|e| e.file_name().to_string_lossy().to_string())
            .collect();
        left.sort();
        let _ = std::fs::remove_dir_all(&root);
        assert_eq!(left, ["keys-bbb", "keys-bbb.d", "sql-new", "sqlparser-123"]);
    }
}
