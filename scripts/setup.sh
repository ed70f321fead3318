#!/usr/bin/env bash
# Installs everything the test suites need on a fresh machine of this kind.
# Idempotent: each step checks first and does nothing when already satisfied.
#   - the wasm32-unknown-unknown Rust target (the core component)
#   - PostgreSQL 15 from Debian (the differential oracle)
#   - two Python venvs with DuckDB 1.5.5 and 1.4.4 and their ducklake/postgres extensions
#   - a venv with moto's S3 server (object-storage suites)
set -euo pipefail
CACHE=${ROCKLAKE_CACHE:-$HOME/.cache/rocklake}
mkdir -p "$CACHE"
log() { printf '[setup] %s\n' "$*" >&2; }

# --- Rust wasm target -------------------------------------------------------
if ! rustup target list --installed 2>/dev/null | grep -qx wasm32-unknown-unknown; then
  log "adding rust target wasm32-unknown-unknown"
  rustup target add wasm32-unknown-unknown || log "rustup target add failed (the component build will report it)"
fi

# --- PostgreSQL 15 ----------------------------------------------------------
PGBIN=/usr/lib/postgresql/15/bin
if [ ! -x "$PGBIN/postgres" ]; then
  log "installing postgresql from Debian"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq postgresql >/dev/null
fi
[ -x "$PGBIN/postgres" ] || { echo "PostgreSQL 15 not found at $PGBIN after install" >&2; exit 1; }

# --- Python venvs with DuckDB ------------------------------------------------
make_venv() { # name packages...
  local dir="$CACHE/$1"; shift
  local stamp="$dir/.rocklake-$(printf '%s ' "$@" | sha256sum | cut -c1-16)"
  if [ -f "$stamp" ]; then return; fi
  log "creating venv $dir"
  rm -rf "$dir"
  python3 -m venv "$dir"
  "$dir/bin/pip" install -q --disable-pip-version-check "$@"
  touch "$stamp"
}
make_venv venv-155 duckdb==1.5.5 duckdb-extension-ducklake==1.5.5 duckdb-extension-postgres==1.5.5 pytz 'psycopg[binary]'
make_venv venv-144 duckdb==1.4.4 duckdb-ext-ducklake==1.4.4.20260205 duckdb-ext-postgres==1.4.4.20260205 pytz 'psycopg[binary]'
# a real S3-compatible server for the object-storage suites (moto honours If-None-Match and
# If-Match on PUT, which SlateDB's manifest fencing relies on)
make_venv venv-s3 'moto[server]==5.2.5' boto3
log "ready: venvs in $CACHE"
