#!/usr/bin/env bash
# The whole test suite and the CI gate. First the static checks, which fail fastest: formatting,
# clippy on every target and the documentation, both with warnings denied (release profile, so they
# reuse the test build's dependencies). Then every unit, integration and exhaustive check (optimized:
# the exhaustive brute-force comparisons need it), and apart the tests that need root (they mount a
# tmpfs; `#[ignore = "needs root"]` in modules named `needs_root`, so a plain `cargo test` skips them
# and this runs them). Then the README's own commands run verbatim, the grpcurl smoke tests and the
# kill -9 crash test against the real binary. Tools the tests need are installed by the scripts
# themselves (scripts/lib.sh: grpcurl in the project-local venv .venv), and this installs the
# system programs the tests start (redis-server, systemd-analyze) with apt-get when they are missing,
# so that the command works on a machine that has only Rust and Python.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib.sh
install_system_tools
cargo fmt --check
cargo clippy --release --all-targets --locked -- -D warnings
RUSTDOCFLAGS="-D warnings" cargo doc --release --no-deps --locked
cargo test --release --locked
cargo test --release --locked --tests -- --ignored needs_root::
scripts/readme-commands.sh
scripts/grpcurl-smoke.sh
scripts/jobs-smoke.sh
scripts/crash-test.sh
