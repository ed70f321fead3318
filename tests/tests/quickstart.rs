//! docs/quickstart.md, run as written: the server started with its defaults (on a free port
//! instead of 6543) in an empty directory, the Python block of step 3 run with DuckDB 1.5.5
//! and the ATTACH line the server printed, its output equal to the documented output.

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};

use rocklake_tests::{free_port, repo_root, rocklake_bin, venv_python};

/// The contents of the fenced blocks of `lang` in `text`, in order.
fn blocks<'a>(text: &'a str, lang: &str) -> Vec<&'a str> {
    let open = format!("```{lang}\n");
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(i) = rest.find(&open) {
        let body = &rest[i + open.len()..];
        let Some(end) = body.find("```") else { break };
        out.push(&body[..end]);
        rest = &body[end + 3..];
    }
    out
}

#[test]
fn quickstart_transcript_works() {
    let doc = std::fs::read_to_string(repo_root().join("docs/quickstart.md")).expect("read doc");
    let script = blocks(&doc, "python")
        .first()
        .copied()
        .expect("a python block")
        .to_string();
    let expected = blocks(&doc, "text")
        .into_iter()
        .find(|b| !b.starts_with("ATTACH"))
        .expect("an expected-output block")
        .trim()
        .to_string();
    assert!(
        doc.contains("cargo run --release -p rocklake\n"),
        "step 1 must still start the server with no arguments"
    );

    let dir = tempfile::tempdir().expect("tempdir");
    let port = free_port().expect("port");
    let mut server = Command::new(rocklake_bin().expect("binary"))
        .args(["--listen", &format!("127.0.0.1:{port}")])
        .current_dir(dir.path())
        .env(
            "ROCKLAKE_CORE",
            std::env::var("ROCKLAKE_CORE").unwrap_or_else(|_| "native".into()),
        )
        .env("RUST_LOG", "warn")
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("start rocklake");
    let mut attach = String::new();
    BufReader::new(server.stdout.take().expect("stdout"))
        .read_line(&mut attach)
        .expect("ATTACH line");
    assert!(attach.starts_with("ATTACH 'ducklake:postgres:"), "{attach}");
    assert!(
        attach.contains(&format!("{}/rocklake-data/files/", dir.path().display())),
        "default DATA_PATH under the working directory: {attach}"
    );
    let demo = dir.path().join("demo.py");
    std::fs::write(&demo, script).expect("write demo.py");
    let out = Command::new(venv_python("155").expect("venv"))
        .arg(&demo)
        .arg(attach.trim())
        .current_dir(dir.path())
        .output()
        .expect("run demo.py");
    let _ = server.kill();
    let _ = server.wait();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "demo.py failed: {stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(stdout.trim(), expected, "the documented output");
    assert!(
        dir.path().join("rocklake-data/catalog").is_dir(),
        "the catalog lives in ./rocklake-data/catalog"
    );
}
