#!/usr/bin/env bash
# Runs the Gradle example's JUnit 5 test against Polyfn from the local Maven repository.
#   mvn -B -DskipTests install        # once: puts Polyfn into ~/.m2
#   examples/gradle/run.sh            # or: POLYFN_REPO=file:/dir/laid/out/as/a/maven/repo run.sh
# Exits 0 with a "skipped" line when gradle is not installed (apt-get install gradle).
set -euo pipefail
cd "$(dirname "$0")"
if ! command -v gradle >/dev/null 2>&1; then
  echo "skipped: gradle is not installed (Debian: apt-get install -y gradle)"
  exit 0
fi
args=(--no-daemon --console=plain -q)
if [ -n "${POLYFN_REPO:-}" ]; then
  args+=("-PpolyfnRepo=$POLYFN_REPO")
fi
# Gradle's per-project cache goes to a scratch directory; its outputs to build/ (ignored by git).
scratch="${GRADLE_SCRATCH:-$(mktemp -d)}"
exec gradle "${args[@]}" --project-cache-dir "$scratch/project-cache" clean check
