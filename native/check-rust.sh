#!/usr/bin/env bash
# Run by Maven (java/pom.xml, phase validate) before it calls cargo: a build on a machine without
# Rust, or with one too old, stops at once saying what to install, instead of failing later with
# a bare `Cannot run program "cargo"`. The minimum is the workspace's rust-version (Cargo.toml).
min_major=1
min_minor=85
install="Install Rust ${min_major}.${min_minor} or later with rustup (https://rustup.rs):
    curl --proto '=https' --tlsv1.2 -sSf https://sh.rustup.rs | sh -s -- -y
    . \"\$HOME/.cargo/env\"        # puts cargo on the PATH of this shell
or, with rustup already installed:  rustup update stable
Polyfn's build compiles its Rust native library (native/) and packs it into the jar."
if ! command -v cargo >/dev/null 2>&1; then
  echo "ERROR: Polyfn's build needs Rust (cargo), and no 'cargo' is on the PATH." >&2
  if [ -x "$HOME/.cargo/bin/cargo" ]; then
    echo "A Rust toolchain is installed in $HOME/.cargo/bin but not on the PATH: run . \"\$HOME/.cargo/env\" and build again." >&2
  else
    echo "$install" >&2
  fi
  exit 1
fi
version=$(cargo --version 2>/dev/null | sed -n 's/^cargo \([0-9][0-9]*\)\.\([0-9][0-9]*\).*/\1 \2/p')
if [ -z "$version" ]; then
  echo "ERROR: 'cargo --version' did not answer with a version (it printed: $(cargo --version 2>&1 | head -1))." >&2
  echo "$install" >&2
  exit 1
fi
set -- $version
if [ "$1" -lt "$min_major" ] || { [ "$1" -eq "$min_major" ] && [ "$2" -lt "$min_minor" ]; }; then
  echo "ERROR: Polyfn's build needs Rust ${min_major}.${min_minor} or later; the cargo on the PATH is $1.$2 ($(command -v cargo))." >&2
  echo "$install" >&2
  exit 1
fi
