#!/usr/bin/env bash
# Native-memory leak check (issue 23, item 12): RSS over many cycles of what used to keep native
# memory after close(). Each workload must grow by less than 2 % after its warm-up.
#
#   bash bench/leak.sh            full: 10,000 define/close, load/close, save/load and closed
#                                 variables, 100,000 evictions (about 40 minutes on 2 cores)
#   bash bench/leak.sh --quick    1,000 cycles and 5,000 evictions (about 5 minutes)
#
# Builds Polyfn and the bench module in one reactor (nothing is installed), then runs
# dev.polyfn.bench.LeakCheckMain with a fixed, pre-touched heap and one malloc arena. Prints one JSON line per
# workload (also in bench/out/leak.json); exits 1 if a workload grew by 2 % or more.
set -euo pipefail

CYCLES=10000; EVICTIONS=100000
for arg in "$@"; do
  case "$arg" in
    --quick) CYCLES=1000; EVICTIONS=5000 ;;
    -h|--help) sed -n '2,12p' "$0"; exit 0 ;;
    *) echo "unknown argument: $arg (use --quick)" >&2; exit 2 ;;
  esac
done

BENCH="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$BENCH/.." && pwd)"
OUT="$BENCH/out"
mkdir -p "$OUT"
cd "$ROOT"
mvn -B -q -Pbench -pl java,bench -am package -DskipTests > "$OUT/leak-build.log" 2>&1 \
  || { cat "$OUT/leak-build.log"; exit 1; }
CP="$BENCH/target/classes:$(cat "$BENCH/target/classpath.txt")"
# One glibc malloc arena: memory freed on another thread than the one that allocated it (the
# Cleaner's, JavaCPP's deallocator's) otherwise stays in per-thread arenas, whose RSS grows in
# steps of megabytes that are the allocator's retention, not leaks (measured: 3.6 % over 10,000
# define/close cycles with the default arenas, 0.2 % over 6,000 with one).
export MALLOC_ARENA_MAX="${MALLOC_ARENA_MAX:-1}"
java -Xms256m -Xmx256m -XX:+AlwaysPreTouch -cp "$CP" dev.polyfn.bench.LeakCheckMain "$CYCLES" "$EVICTIONS" 2 \
  2> "$OUT/leak.log" | tee "$OUT/leak.json"
