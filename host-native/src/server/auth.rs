//! Authentication configuration and the server side of SCRAM-SHA-256, MD5 and cleartext.
//!
//! The SCRAM state machine itself is pgwire's (`ScramServerAuth`), fed with a verifier computed
//! once at start-up so the cleartext password is not needed per connection.

use std::fmt;

use pgwire::api::auth::sasl::scram::{gen_salted_password, ScramSecret, ScramServerAuth};

/// How clients prove who they are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AuthMethod {
    /// SASL SCRAM-SHA-256 (PostgreSQL's default since 14).
    Scram,
    /// `AuthenticationMD5Password`.
    Md5,
    /// `AuthenticationCleartextPassword`.
    Password,
    /// No password at all; only ever enabled explicitly and only on loopback (checked by the CLI).
    Trust,
}

impl std::str::FromStr for AuthMethod {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s.to_ascii_lowercase().as_str() {
            "scram" | "scram-sha-256" => Ok(AuthMethod::Scram),
            "md5" => Ok(AuthMethod::Md5),
            "password" | "cleartext" => Ok(AuthMethod::Password),
            "trust" => Ok(AuthMethod::Trust),
            other => Err(format!(
                "unknown auth method {other:?} (scram, md5, password, trust)"
            )),
        }
    }
}

/// PostgreSQL's default `scram_iterations`.
const SCRAM_ITERATIONS: usize = 4096;

/// The single role RockLake accepts, and how it authenticates.
#[derive(Clone)]
pub struct AuthConfig {
    pub method: AuthMethod,
    pub user: String,
    password: String,
    scram: ScramVerifier,
}

/// `SCRAM-SHA-256$<iter>:<salt>$<StoredKey>:<ServerKey>` in parts.
#[derive(Clone)]
struct ScramVerifier {
    salt: Vec<u8>,
    stored_key: Vec<u8>,
    server_key: Vec<u8>,
}

impl ScramVerifier {
    fn new(password: &str) -> anyhow::Result<Self> {
        let salt = random_bytes::<16>()?.to_vec();
        let salted = gen_salted_password(password, &salt, SCRAM_ITERATIONS);
        match ScramSecret::verifier_from_salted_password(salt, salted, SCRAM_ITERATIONS) {
            ScramSecret::Verifier {
                salt,
                stored_key,
                server_key,
                ..
            } => Ok(ScramVerifier {
                salt,
                stored_key,
                server_key,
            }),
            ScramSecret::SaltedPassword { .. } => {
                anyhow::bail!("pgwire returned a salted password instead of a SCRAM verifier")
            }
        }
    }

    /// A verifier no password matches, used for unknown users so that the exchange looks the
    /// same as for a wrong password (PostgreSQL's "mock authentication").
    fn mock(salt: &[u8]) -> anyhow::Result<Self> {
        Ok(ScramVerifier {
            salt: salt.to_vec(),
            stored_key: random_bytes::<32>()?.to_vec(),
            server_key: random_bytes::<32>()?.to_vec(),
        })
    }

    fn secret(&self) -> ScramSecret {
        ScramSecret::Verifier {
            salt: self.salt.clone(),
            iterations: SCRAM_ITERATIONS,
            stored_key: self.stored_key.clone(),
            server_key: self.server_key.clone(),
        }
    }
}

impl fmt::Debug for AuthConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Never print the password or key material.
        f.debug_struct("AuthConfig")
            .field("method", &self.method)
            .field("user", &self.user)
            .finish_non_exhaustive()
    }
}

impl AuthConfig {
    pub fn new(
        method: AuthMethod,
        user: impl Into<String>,
        password: impl Into<String>,
    ) -> anyhow::Result<Self> {
        let password = password.into();
        let scram = ScramVerifier::new(&password)?;
        Ok(AuthConfig {
            method,
            user: user.into(),
            password,
            scram,
        })
    }

    pub fn password(&self) -> &str {
        &self.password
    }

    /// Server state for one SCRAM exchange with `user`: the configured verifier for our user, a
    /// mock one otherwise.
    pub(crate) fn scram_secret_for(&self, user: &str) -> anyhow::Result<ScramSecret> {
        if user == self.user {
            Ok(self.scram.secret())
        } else {
            Ok(ScramVerifier::mock(&self.scram.salt)?.secret())
        }
    }

    pub(crate) fn scram_server() -> ScramServerAuth {
        ScramServerAuth::new()
    }

    /// Check an MD5 response (`md5` + md5(md5(password || user) || salt)).
    pub(crate) fn check_md5(&self, user: &str, salt: &[u8; 4], response: &str) -> bool {
        let expected =
            pgwire::api::auth::md5pass::hash_md5_password(&self.user, &self.password, salt);
        user == self.user && constant_time_eq(expected.as_bytes(), response.as_bytes())
    }

    pub(crate) fn check_cleartext(&self, user: &str, response: &str) -> bool {
        user == self.user && constant_time_eq(self.password.as_bytes(), response.as_bytes())
    }
}

/// Comparison whose time does not depend on where the inputs differ.
fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// Bytes from the OS CSPRNG.
pub fn random_bytes<const N: usize>() -> anyhow::Result<[u8; N]> {
    let mut b = [0u8; N];
    getrandom::fill(&mut b)
        .map_err(|e| anyhow::anyhow!("OS random number generator failed: {e}"))?;
    Ok(b)
}

/// A random password of `len` alphanumeric characters (no characters that need quoting in a
/// libpq connection string or SQL literal).
pub fn random_password(len: usize) -> anyhow::Result<String> {
    const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
    let mut out = String::with_capacity(len);
    while out.len() < len {
        for b in random_bytes::<32>()? {
            // Rejection sampling keeps the distribution uniform: 62 * 4 = 248.
            if usize::from(b) < ALPHABET.len() * 4 && out.len() < len {
                out.push(char::from(ALPHABET[usize::from(b) % ALPHABET.len()]));
            }
        }
    }
    Ok(out)
}
