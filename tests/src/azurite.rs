//! Azurite, Microsoft's Azure Storage emulator (npm package `azurite`, installed by
//! `scripts/setup.sh` into `$CACHE/azurite`), as a real Azure Blob endpoint for the
//! object-storage suites: `azurite-blob` on a free loopback port with its data in a temporary
//! directory, one container, stopped on drop.

use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};

use crate::{cache_dir, free_port};

/// Azurite's well-known development account (the same in every Azurite and in object_store).
pub const ACCOUNT: &str = "devstoreaccount1";
pub const ACCOUNT_KEY: &str =
    "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==";

/// Creates a container with a SharedKey-signed `PUT ?restype=container` (node is there: Azurite
/// runs on it). 201 Created and 409 (exists) both succeed.
const CREATE_CONTAINER_JS: &str = r#"
const crypto = require('crypto'), http = require('http');
const [endpoint, account, key64, container] = process.argv.slice(1);
const url = new URL(`${endpoint}/${account}/${container}?restype=container`);
const date = new Date().toUTCString(), version = '2021-08-06';
const toSign = ['PUT', '', '', '', '', '', '', '', '', '', '', '',
  `x-ms-date:${date}`, `x-ms-version:${version}`,
  `/${account}${url.pathname}\nrestype:container`].join('\n');
const sig = crypto.createHmac('sha256', Buffer.from(key64, 'base64')).update(toSign, 'utf8').digest('base64');
const req = http.request(url, { method: 'PUT', headers: {
  'x-ms-date': date, 'x-ms-version': version, 'Content-Length': 0,
  Authorization: `SharedKey ${account}:${sig}` } }, (res) => {
  let body = '';
  res.on('data', (d) => body += d);
  res.on('end', () => {
    if (res.statusCode !== 201 && res.statusCode !== 409) {
      console.error(`create container ${container}: HTTP ${res.statusCode} ${body}`);
      process.exit(1);
    }
  });
});
req.on('error', (e) => { console.error(`create container: ${e.message}`); process.exit(1); });
req.end();
"#;

/// The `azurite-blob` executable `scripts/setup.sh` installs.
pub fn azurite_blob_bin() -> Result<PathBuf> {
    let p = cache_dir().join("azurite/node_modules/.bin/azurite-blob");
    if !p.exists() {
        bail!(
            "Azurite is missing ({}): run `bash scripts/setup.sh` (or `cargo xtask ci`) first",
            p.display()
        );
    }
    Ok(p)
}

pub struct AzuriteServer {
    child: Child,
    /// `http://127.0.0.1:PORT` (the account is the first path segment, as in Azurite).
    pub endpoint: String,
    pub container: String,
    _data: tempfile::TempDir,
}

impl AzuriteServer {
    pub fn start() -> Result<AzuriteServer> {
        let bin = azurite_blob_bin()?;
        let data = tempfile::tempdir().context("tempdir")?;
        let port = free_port()?;
        let endpoint = format!("http://127.0.0.1:{port}");
        let child = Command::new(&bin)
            .args(["--blobHost", "127.0.0.1", "--blobPort", &port.to_string()])
            .arg("--location")
            .arg(data.path())
            // No telemetry: the test traffic stays on loopback.
            .args(["--silent", "--disableTelemetry", "--skipApiVersionCheck"])
            .arg("--disableProductStyleUrl")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .with_context(|| format!("start {}", bin.display()))?;
        let server = AzuriteServer {
            child,
            endpoint,
            container: "lake".into(),
            _data: data,
        };
        let deadline = Instant::now() + Duration::from_secs(60);
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            if Instant::now() > deadline {
                bail!("azurite-blob did not listen on {port} within 60 s");
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        let made = Command::new("node")
            .args(["-e", CREATE_CONTAINER_JS])
            .args([&server.endpoint, ACCOUNT, ACCOUNT_KEY, &server.container])
            .status()
            .context("run node to create the container")?;
        if !made.success() {
            bail!("could not create container {} on Azurite", server.container);
        }
        Ok(server)
    }

    /// The environment `object_store`'s Azure client reads for this server: the emulator mode
    /// with its account and key, and the emulator's URL (`AZURITE_BLOB_STORAGE_URL`, read by
    /// object_store from the process environment).
    pub fn env(&self) -> Vec<(String, String)> {
        [
            ("AZURE_STORAGE_USE_EMULATOR", "true"),
            ("AZURITE_BLOB_STORAGE_URL", self.endpoint.as_str()),
            ("AZURE_STORAGE_ACCOUNT_NAME", ACCOUNT),
            ("AZURE_STORAGE_ACCOUNT_KEY", ACCOUNT_KEY),
            ("AZURE_ALLOW_HTTP", "true"),
        ]
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
    }

    /// `az://container/prefix`.
    pub fn url(&self, prefix: &str) -> String {
        format!("az://{}/{prefix}", self.container)
    }
}

impl Drop for AzuriteServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
