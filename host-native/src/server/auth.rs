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

/// The roles RockLake accepts, and how they authenticate.
#[derive(Clone)]
pub struct AuthConfig {
    pub method: AuthMethod,
    /// The first role: read-write, named in the printed ATTACH string.
    pub user: String,
    users: Vec<Role>,
}

/// One role that may log in.
#[derive(Clone)]
struct Role {
    name: String,
    password: String,
    scram: ScramVerifier,
    read_only: bool,
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
        let roles: Vec<(&str, bool)> = self
            .users
            .iter()
            .map(|r| (r.name.as_str(), r.read_only))
            .collect();
        f.debug_struct("AuthConfig")
            .field("method", &self.method)
            .field("roles (name, read_only)", &roles)
            .finish_non_exhaustive()
    }
}

impl AuthConfig {
    pub fn new(
        method: AuthMethod,
        user: impl Into<String>,
        password: impl Into<String>,
    ) -> anyhow::Result<Self> {
        let user = user.into();
        let config = AuthConfig {
            method,
            user: user.clone(),
            users: Vec::new(),
        };
        config.with_role(user, password, false)
    }

    /// Adds a role that may log in (`read_only`: its sessions may only read).
    pub fn with_role(
        mut self,
        name: impl Into<String>,
        password: impl Into<String>,
        read_only: bool,
    ) -> anyhow::Result<Self> {
        let name = name.into();
        if self.users.iter().any(|r| r.name == name) {
            anyhow::bail!("role {name:?} is configured twice");
        }
        let password = password.into();
        let scram = ScramVerifier::new(&password)?;
        self.users.push(Role {
            name,
            password,
            scram,
            read_only,
        });
        Ok(self)
    }

    /// The first role's password (the one the printed ATTACH string uses).
    pub fn password(&self) -> &str {
        self.users.first().map_or("", |r| r.password.as_str())
    }

    fn role(&self, user: &str) -> Option<&Role> {
        self.users.iter().find(|r| r.name == user)
    }

    /// True when `user` is configured as read-only.
    pub fn is_read_only(&self, user: &str) -> bool {
        self.role(user).is_some_and(|r| r.read_only)
    }

    /// True when `user` may log in (trust mode checks only this).
    pub fn knows(&self, user: &str) -> bool {
        self.role(user).is_some()
    }

    /// Server state for one SCRAM exchange with `user`: the role's verifier, or a mock one
    /// for an unknown user.
    pub(crate) fn scram_secret_for(&self, user: &str) -> anyhow::Result<ScramSecret> {
        match self.role(user) {
            Some(r) => Ok(r.scram.secret()),
            None => {
                let salt = self.users.first().map_or(&[][..], |r| &r.scram.salt[..]);
                Ok(ScramVerifier::mock(salt)?.secret())
            }
        }
    }

    pub(crate) fn scram_server() -> ScramServerAuth {
        ScramServerAuth::new()
    }

    /// Check an MD5 response (`md5` + md5(md5(password || user) || salt)).
    pub(crate) fn check_md5(&self, user: &str, salt: &[u8; 4], response: &str) -> bool {
        let Some(r) = self.role(user) else {
            return false;
        };
        let expected = pgwire::api::auth::md5pass::hash_md5_password(&r.name, &r.password, salt);
        constant_time_eq(expected.as_bytes(), response.as_bytes())
    }

    pub(crate) fn check_cleartext(&self, user: &str, response: &str) -> bool {
        self.role(user)
            .is_some_and(|r| constant_time_eq(r.password.as_bytes(), response.as_bytes()))
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
