//! TLS for the PostgreSQL front (rustls): certificate and key from PEM files, negotiated the
//! way PostgreSQL does it — the client's SSLRequest is answered `S` and the handshake follows
//! on the same socket; `N` when TLS is not configured.

use std::path::Path;
use std::sync::Arc;

use anyhow::Context;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use tokio_rustls::TlsAcceptor;

/// What the server offers.
#[derive(Clone)]
pub struct TlsSettings {
    pub acceptor: TlsAcceptor,
    /// Refuse unencrypted connections (PostgreSQL's `hostssl`-only pg_hba), with 28000.
    pub required: bool,
}

impl std::fmt::Debug for TlsSettings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TlsSettings")
            .field("required", &self.required)
            .finish_non_exhaustive()
    }
}

impl TlsSettings {
    /// Loads a certificate chain and its private key (PEM; PKCS#8, PKCS#1 or SEC1).
    pub fn load(cert: &Path, key: &Path, required: bool) -> anyhow::Result<TlsSettings> {
        let certs: Vec<CertificateDer<'static>> = CertificateDer::pem_file_iter(cert)
            .with_context(|| format!("cannot read TLS certificate {}", cert.display()))?
            .collect::<Result<_, _>>()
            .with_context(|| format!("invalid PEM in {}", cert.display()))?;
        if certs.is_empty() {
            anyhow::bail!("no certificate found in {}", cert.display());
        }
        let key = PrivateKeyDer::from_pem_file(key)
            .with_context(|| format!("cannot read TLS private key {}", key.display()))?;
        let provider = Arc::new(rustls::crypto::aws_lc_rs::default_provider());
        let config = rustls::ServerConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .context("TLS protocol versions")?
            .with_no_client_auth()
            .with_single_cert(certs, key)
            .context("the TLS certificate and key do not form a usable pair")?;
        Ok(TlsSettings {
            acceptor: TlsAcceptor::from(Arc::new(config)),
            required,
        })
    }
}
