#!/usr/bin/env bash
# Mutation testing of polyfn-core (cargo-mutants) on what a change touches: the mutants of the
# lines that differ from the merge base with main (on main itself: from the previous commit, or
# from MUTANTS_BASE). A surviving ("missed") mutant fails the step: a test should notice that
# change of behaviour. Skipped, saying so, when cargo-mutants is not installed
# (`cargo install cargo-mutants --locked`).
#
#   bash native/core/mutants.sh               # what this branch changes in native/core
#   MUTANTS_BASE=<commit> bash native/core/mutants.sh
#
# The full run, sharded (one tenth of polyfn-core's ~1,200 mutants takes ~30 min on 2 cores):
#   PROPTEST_CASES=64 cargo mutants -p polyfn-core --shard 3/10 -j 1 --profile mutants --cargo-arg=--lib
#
# Only the crate's unit tests are built and run per mutant (`--cargo-arg=--lib`, given to both the
# build and the test run: `-- --lib` would reach only the test run, and each mutant would still
# build every integration test): they are the ones written against these
# functions, and they build in seconds (the `mutants` profile, Cargo.toml, leaves out debug info);
# 15-35 s per mutant on 2 shared cores.
set -euo pipefail
cd "$(dirname "$0")/../.."

if ! cargo mutants --version >/dev/null 2>&1; then
  echo "mutants: cargo-mutants is not installed; skipped (cargo install cargo-mutants --locked)"
  exit 0
fi

base="${MUTANTS_BASE:-}"
if [ -z "$base" ]; then
  for main in origin/main main; do
    if git rev-parse -q --verify "$main^{commit}" >/dev/null; then
      base="$(git merge-base HEAD "$main")"
      break
    fi
  done
  # On main (CI checks out the submitted main): the change is the last commit.
  if [ -z "$base" ] || [ "$base" = "$(git rev-parse HEAD)" ]; then
    base="$(git rev-parse -q --verify HEAD~1 || true)"
  fi
fi
if [ -z "$base" ]; then
  echo "mutants: no base commit to compare with; skipped"
  exit 0
fi

out="${MUTANTS_OUT:-target/mutants}"
mkdir -p "$out"
diff="$out/in.diff"
git diff "$base" -- native/core/src >"$diff"
if [ ! -s "$diff" ]; then
  echo "mutants: native/core/src unchanged since ${base:0:12}; nothing to test"
  exit 0
fi

echo "mutants: testing the mutants of native/core/src changed since ${base:0:12}"
# Exit codes: 0 all caught, 2 some missed, 3 some timed out, 4 the tests fail unmutated.
set +e
PROPTEST_CASES="${PROPTEST_CASES:-64}" cargo mutants -p polyfn-core --in-diff "$diff" -j 1 --timeout 120 \
  --profile mutants --cargo-arg=--lib --output "$out"
status=$?
set -e
if [ -s "$out/mutants.out/missed.txt" ]; then
  echo "mutants: missed (no test noticed these changes):"
  cat "$out/mutants.out/missed.txt"
fi
exit "$status"
