#!/usr/bin/env bash
# Polyfn benchmark suite: every contender on the same workloads, in one run.
#
#   bash bench/run.sh            full run (about 20 minutes on 2 cores)
#   bash bench/run.sh --quick    quick run (under 5 minutes on 2 cores; fewer iterations,
#                                1,000 instead of 10,000 cached signatures, 200,000 calls for RSS)
#   bash bench/run.sh --only startup,firstcall
#                                re-runs only those blocks (with either mode) and assembles again
#                                with the other blocks' results of the last run, saying so in
#                                BENCHMARKS.md. Blocks: core, tracecost, controlflow, startup,
#                                callpaths, structured, models, firstcall.
#
# Environment: PY_TF_VERSION (default 2.21.0), the tensorflow-cpu version for the Python contenders.
#
# Writes bench/results.json, bench/summary.json, BENCHMARKS.md and bench/plot.png; raw outputs
# and logs go to bench/out/ (git-ignored). Needs Java 17, Maven, cargo, python3 (3.9-3.12) and
# network access on the first run (JMH from Maven Central; tensorflow-cpu and matplotlib from
# PyPI into bench/.venv).
set -euo pipefail

MODE=full
ONLY=""
BLOCKS=",core,tracecost,controlflow,startup,callpaths,structured,models,firstcall,"
while [ $# -gt 0 ]; do
  case "$1" in
    --quick) MODE=quick ;;
    --only) ONLY="${2:-}"; shift
      for b in ${ONLY//,/ }; do
        [[ "$BLOCKS" == *",$b,"* ]] || { echo "unknown block: $b (blocks: ${BLOCKS:1:-1})" >&2; exit 2; }
      done ;;
    -h|--help) sed -n '2,17p' "$0"; exit 0 ;;
    *) echo "unknown argument: $1 (use --quick or --only BLOCKS)" >&2; exit 2 ;;
  esac
  shift
done
# Whether block $1 runs (all of them without --only).
want() { [ -z "$ONLY" ] || [[ ",$ONLY," == *",$1,"* ]]; }

BENCH="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$BENCH/.." && pwd)"
OUT="$BENCH/out"
mkdir -p "$OUT"
cd "$ROOT"
PY_TF_VERSION="${PY_TF_VERSION:-2.21.0}"
T0=$(date +%s)
step() {
  echo "[bench $(( $(date +%s) - T0 ))s] $*" >&2
  # Background load when each step starts (2-core machine shared with other builds).
  echo "$(cut -d' ' -f1-3 /proc/loadavg) | $*" >> "$OUT/load.log"
}
: > "$OUT/load.log"

if [ "$MODE" = quick ]; then
  JMH_CALL=(-f 1 -wi 1 -w 500ms -i 3 -r 500ms)
  JMH_HIT=(-f 1 -wi 1 -w 500ms -i 3 -r 500ms -p signatures=1,1000)
  JMH_FIRST=(-f 1 -wi 5 -i 15)
  RSS_CALLS=200000; RSS_WARMUP=20000
  HIT_N=1000; PY_HIT_N=1000
else
  JMH_CALL=(-f 2 -wi 3 -w 1s -i 5 -r 1s)
  # Five seconds of warm-up: after tracing 10,000 signatures the JIT takes about 2 s of hits to
  # settle (5.1, 5.4, 5.9 µs per call in the first half-seconds, then 3.4, as with 1 signature).
  JMH_HIT=(-f 1 -wi 5 -w 1s -i 8 -r 1s -p signatures=1,10000)
  JMH_FIRST=(-f 2 -wi 10 -i 40)
  RSS_CALLS=1000000; RSS_WARMUP=100000
  HIT_N=10000
  # tf.function's tracing slows down as its cache grows: 10,000 traces took over 10 minutes in a
  # trial run, so Python's hit workload caches 1,000 signatures in both modes (BENCHMARKS.md says so).
  PY_HIT_N=1000
fi
HEAD_SHA=$(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo unknown)
[ -n "$(git -C "$ROOT" status --porcelain --untracked-files=no 2>/dev/null)" ] && HEAD_SHA="$HEAD_SHA +uncommitted changes" || true
if [ -n "$ONLY" ]; then
  # The other rows stay those of the last run: BENCHMARKS.md names both builds.
  PREVIOUS=$(head -1 "$OUT/git.txt" 2>/dev/null | sed 's/;.*//' || true)
  echo "${PREVIOUS:-unknown}; the blocks $ONLY re-run at $HEAD_SHA" > "$OUT/git.txt"
else
  echo "$HEAD_SHA" > "$OUT/git.txt"
fi

# 1. Build Polyfn and the JMH benchmarks.
step "building polyfn and bench (maven)"
mvn -B -q install -DskipTests -pl java -am > "$OUT/mvn-install.log" 2>&1 || { cat "$OUT/mvn-install.log"; exit 1; }
mvn -B -q -Pbench -pl bench package -DskipTests > "$OUT/mvn-bench.log" 2>&1 || { cat "$OUT/mvn-bench.log"; exit 1; }
CP="$BENCH/target/classes:$(cat "$BENCH/target/classpath.txt")"

# 2. Python virtual environment (once; the tests' interop step builds its own with the same script).
step "python environment bench/.venv (tensorflow-cpu==$PY_TF_VERSION, matplotlib)"
bash "$BENCH/python/ensure_venv.sh" "$BENCH/.venv" "$PY_TF_VERSION" matplotlib 2> "$OUT/pip.log" \
  || { cat "$OUT/pip.log"; exit 1; }
PY="$BENCH/.venv/bin/python"

# 3. The C API floor (Rust), on the libtensorflow_cc.so.2 of the TensorFlow Java version Polyfn builds against.
TFJ_VERSION=$(sed -n 's:.*<tensorflow-java.version>\(.*\)</tensorflow-java.version>.*:\1:p' pom.xml | head -1)
NATIVE_JAR="$HOME/.m2/repository/org/tensorflow/tensorflow-core-native/$TFJ_VERSION/tensorflow-core-native-$TFJ_VERSION-linux-x86_64.jar"
TF_DIR="$OUT/tf-runtime-$TFJ_VERSION"
if [ ! -f "$TF_DIR/libtensorflow_cc.so.2" ]; then
  mkdir -p "$TF_DIR"
  unzip -o -j -q "$NATIVE_JAR" 'org/tensorflow/internal/c_api/linux-x86_64/libtensorflow_*' -d "$TF_DIR"
fi
FLOOR_ARGS=(); [ "$MODE" = quick ] && FLOOR_ARGS=(--quick)
JMH=(java -cp "$CP" org.openjdk.jmh.Main)
if want core; then
step "building and running the C API floor (cargo example polyfn-tf/floor)"
cargo build -q --release -p polyfn-tf --example floor
POLYFN_TF_LIB="$TF_DIR/libtensorflow_cc.so.2" TF_CPP_MIN_LOG_LEVEL=2 \
  "$ROOT/target/release/examples/floor" "${FLOOR_ARGS[@]}" > "$OUT/floor.json" 2> "$OUT/floor.log"

# 4. Python tf.function / ConcreteFunction.
step "running Python tf.function (tensorflow-cpu $PY_TF_VERSION)"
PY_ARGS=(--hit-signatures "$PY_HIT_N"); [ "$MODE" = quick ] && PY_ARGS+=(--quick)
"$PY" "$BENCH/python/bench_tf.py" "${PY_ARGS[@]}" > "$OUT/python.json" 2> "$OUT/python.log"

# 5. JVM contenders with JMH.
step "JMH: cached calls (Polyfn, TF Java ConcreteFunction, TF Java Session)"
"${JMH[@]}" '^dev.polyfn.bench.CallBench\.' "${JMH_CALL[@]}" -rf json -rff "$OUT/jmh-call.json" > "$OUT/jmh-call.log" 2>&1
step "JMH: cache hits with 1 vs N signatures"
"${JMH[@]}" '^dev.polyfn.bench.HitBench\.' "${JMH_HIT[@]}" -rf json -rff "$OUT/jmh-hit.json" > "$OUT/jmh-hit.log" 2>&1
step "JMH: first call of a new signature"
"${JMH[@]}" '^dev.polyfn.bench.FirstCallBench\.' "${JMH_FIRST[@]}" -rf json -rff "$OUT/jmh-first.json" > "$OUT/jmh-first.log" 2>&1
step "first call of a new signature without the JVM (cargo example polyfn-tf/first_call)"
cargo build -q --release -p polyfn-tf --example first_call
POLYFN_TF_LIB="$TF_DIR/libtensorflow_cc.so.2" TF_CPP_MIN_LOG_LEVEL=2 \
  "$ROOT/target/release/examples/first_call" > "$OUT/first-call-floor.json" 2> "$OUT/first-call-floor.log"

# 6. RSS over many add2 calls (fixed, pre-touched heap).
step "RSS growth over $RSS_CALLS Polyfn add2 calls"
java -Xms256m -Xmx256m -XX:+AlwaysPreTouch -cp "$CP" dev.polyfn.bench.RssMain "$RSS_CALLS" "$RSS_WARMUP" \
  2> "$OUT/rss.log" | grep '^{' > "$OUT/rss.json"

# 7. Assemble results.json, summary.json, BENCHMARKS.md, plot.png.
step "assembling results"
"$PY" "$BENCH/python/assemble.py" --mode "$MODE" --tfjava-version "$TFJ_VERSION" --seconds $(( $(date +%s) - T0 ))
step "done: bench/results.json bench/summary.json BENCHMARKS.md bench/plot.png"
fi

### BEGIN trace cost and signature inference (issue 12 part 4, issue 15) #########################
if want tracecost; then
# Trace cost per tenth of 10,000 new signatures (1,000 in quick mode), and the signature-inference
# workload (1,000 calls, 50 batch sizes) in Polyfn and Python; then assemble again with these rows.
if [ "$MODE" = quick ]; then TC_ARGS=(1000 500); INF_ROUNDS=1; else TC_ARGS=(10000 2000); INF_ROUNDS=3; fi
step "trace cost per tenth of ${TC_ARGS[0]} signatures (TraceCostMain)"
java -cp "$CP" dev.polyfn.bench.TraceCostMain "${TC_ARGS[@]}" 2> "$OUT/trace-cost.log" | grep '^{' > "$OUT/trace-cost.json"
step "signature inference: Polyfn (InferenceBench) and Python tf.function (bench_infer.py)"
java -cp "$CP" dev.polyfn.bench.InferenceBench "$INF_ROUNDS" 2> "$OUT/inference.log" | grep '^{' > "$OUT/inference.json"
"$PY" "$BENCH/python/bench_infer.py" "$INF_ROUNDS" 2> "$OUT/python-inference.log" | grep '^{' > "$OUT/python-inference.json"
step "assembling results again with the trace cost and inference rows"
"$PY" "$BENCH/python/assemble.py" --mode "$MODE" --tfjava-version "$TFJ_VERSION" --seconds $(( $(date +%s) - T0 ))
fi
### END trace cost and signature inference #######################################################

# ---- Control flow: a 1,000-iteration while loop in one call vs 1,000 calls vs Python ----
if want controlflow; then
# Keys polyfn_while1000_us, polyfn_calls1000_us, python_while1000_us (assemble.py's
# control_flow_summary); results are re-assembled to include them.
step "JMH: while loop of 1,000 iterations in one call vs 1,000 calls"
"${JMH[@]}" '^dev.polyfn.bench.WhileBench\.' "${JMH_CALL[@]}" -rf json -rff "$OUT/jmh-while.json" > "$OUT/jmh-while.log" 2>&1
step "Python tf.function with tf.while_loop of 1,000 iterations"
PYW_ARGS=(); [ "$MODE" = quick ] && PYW_ARGS=(--quick)
"$PY" "$BENCH/python/bench_while.py" "${PYW_ARGS[@]}" > "$OUT/python-while.json" 2> "$OUT/python-while.log"
"$PY" "$BENCH/python/assemble.py" --mode "$MODE" --tfjava-version "$TFJ_VERSION" --seconds $(( $(date +%s) - T0 ))
fi
# ---- end of control flow ----

# ---- Issue 11 (save, load, warm start): time to first result in a fresh process ----------------
if want startup; then
# A 10-signature function: cold (traces), warm start (trace cache), Function.load (SavedModel),
# Python's tf.saved_model.load of the same SavedModel and TensorFlow's own floor (restore_floor);
# fresh processes, interleaved. Then the
# results are assembled again with these rows.
STARTUP_RUNS=7; [ "$MODE" = quick ] && STARTUP_RUNS=3
step "start-up: time to first result, 10 signatures, $STARTUP_RUNS fresh processes per contender"
SDIR="$OUT/startup"; rm -rf "$SDIR"; mkdir -p "$SDIR"
java -cp "$CP" dev.polyfn.bench.StartupMain prepare "$SDIR" 2> "$OUT/startup.log"
# TensorFlow's own floor for a warm start or load: the same SavedModel's functions restored and
# run once from Rust, without the JVM.
cargo build -q --release -p polyfn-tf --example restore_floor
: > "$OUT/startup-runs.jsonl"
for _ in $(seq "$STARTUP_RUNS"); do
  for m in cold warm load; do
    java -cp "$CP" dev.polyfn.bench.StartupMain "$m" "$SDIR" 2>> "$OUT/startup.log" | grep '^{' >> "$OUT/startup-runs.jsonl"
  done
  POLYFN_TF_LIB="$TF_DIR/libtensorflow_cc.so.2" TF_CPP_MIN_LOG_LEVEL=2 "$ROOT/target/release/examples/restore_floor" \
    "$SDIR/saved" 2>> "$OUT/startup.log" | grep '^{' >> "$OUT/startup-runs.jsonl"
  TF_CPP_MIN_LOG_LEVEL=2 "$PY" "$BENCH/python/bench_startup.py" "$SDIR/saved" 2>> "$OUT/startup.log" \
    | grep '^{' >> "$OUT/startup-runs.jsonl"
done
"$PY" "$BENCH/python/assemble.py" --mode "$MODE" --tfjava-version "$TFJ_VERSION" --seconds $(( $(date +%s) - T0 ))
fi
# ---- end of the issue 11 block -------------------------------------------------------------------

# ---- Call paths (caller-thread floors, Grappler, XLA, two threads) ----------------------------
if want callpaths; then
# Appends bench/out/fast-floor.json (Rust, polyfn-tf/examples/floors_inline.rs), jmh-fast.json
# (FastPathBench) and python-fast.json (bench_fast.py), then re-runs the assembly so that
# assemble.py's fast_paths() adds their rows and keys.
step "call paths: caller-thread C API floors (cargo example polyfn-tf/floors_inline)"
cargo build -q --release -p polyfn-tf --example floors_inline
POLYFN_TF_LIB="$TF_DIR/libtensorflow_cc.so.2" TF_CPP_MIN_LOG_LEVEL=2 \
  "$ROOT/target/release/examples/floors_inline" "${FLOOR_ARGS[@]}" > "$OUT/fast-floor.json" 2> "$OUT/fast-floor.log"
step "call paths: Python tf.function with and without jit_compile"
(cd "$BENCH/python" && "$PY" bench_fast.py "${FLOOR_ARGS[@]}") > "$OUT/python-fast.json" 2> "$OUT/python-fast.log"
step "call paths: JMH FastPathBench (paths, Grappler, XLA, two threads)"
if [ "$MODE" = quick ]; then JMH_FAST=(-f 1 -wi 1 -w 500ms -i 3 -r 500ms); else JMH_FAST=(-f 1 -wi 3 -w 1s -i 5 -r 1s); fi
"${JMH[@]}" '^dev.polyfn.bench.FastPathBench\.' "${JMH_FAST[@]}" -rf json -rff "$OUT/jmh-fast.json" > "$OUT/jmh-fast.log" 2>&1
# JMH's variants of one workload run minutes apart; the default against the thread pool is also
# measured alternating in one JVM (PathsMain), which the target "the default is the faster path" reads.
step "call paths: the default against the thread pool, alternating in one process (PathsMain)"
if [ "$MODE" = quick ]; then PATHS_ARGS=(5 200); else PATHS_ARGS=(15 200); fi
java -cp "$CP" dev.polyfn.bench.PathsMain "${PATHS_ARGS[@]}" 2> "$OUT/paths.log" | grep '^{' > "$OUT/paths.jsonl" \
  || echo "PathsMain failed: see bench/out/paths.log" >&2
step "call paths: two threads against one, alternating in one process (ThreadScalingMain)"
if [ "$MODE" = quick ]; then TS_ARGS=(5 200); else TS_ARGS=(21 400); fi
java -cp "$CP" dev.polyfn.bench.ThreadScalingMain "${TS_ARGS[@]}" 2> "$OUT/thread-scaling.log" | grep '^{' > "$OUT/thread-scaling.json"
step "call paths: the same two-thread measurement on the C API floor and polyfn-tf (cargo example polyfn-tf/thread_scaling)"
cargo build -q --release -p polyfn-tf --example thread_scaling
POLYFN_TF_LIB="$TF_DIR/libtensorflow_cc.so.2" TF_CPP_MIN_LOG_LEVEL=2 \
  "$ROOT/target/release/examples/thread_scaling" "${TS_ARGS[@]}" > "$OUT/thread-floor.json" 2> "$OUT/thread-floor.log"
# The machine's speed drifts by up to 2x over minutes, and the floor and JMH's add2 run minutes
# apart: pairs of short processes, one right after the other, compare one thread's add2 calls on
# the caller-thread session floor (Rust) and through Polyfn (JVM) under the same load.
step "call paths: add2 on the session floor and through Polyfn, interleaved processes"
if [ "$MODE" = quick ]; then PAIRS=3; else PAIRS=7; fi
: > "$OUT/add2-pairs.jsonl"
for _ in $(seq "$PAIRS"); do
  FLOOR_ONE=$(POLYFN_TF_LIB="$TF_DIR/libtensorflow_cc.so.2" TF_CPP_MIN_LOG_LEVEL=2 \
    "$ROOT/target/release/examples/thread_scaling" 3 300 2>> "$OUT/add2-pairs.log")
  POLYFN_ONE=$(java -cp "$CP" dev.polyfn.bench.ThreadScalingMain 3 300 4000 2>> "$OUT/add2-pairs.log" | grep '^{')
  echo "{\"floor\": $FLOOR_ONE, \"polyfn\": $POLYFN_ONE}" >> "$OUT/add2-pairs.jsonl"
done
step "call paths: assembling results again with the call-path rows"
"$PY" "$BENCH/python/assemble.py" --mode "$MODE" --tfjava-version "$TFJ_VERSION" --seconds $(( $(date +%s) - T0 ))

fi
# ---- Structured values: a record of 3 tensors and a nest of 100 leaves, Polyfn vs Python ----
if want structured; then
step "JMH: structured arguments (record of 3 tensors, nest of 100 leaves)"
"${JMH[@]}" '^dev.polyfn.bench.StructBench\.' "${JMH_CALL[@]}" -rf json -rff "$OUT/jmh-struct.json" > "$OUT/jmh-struct.log" 2>&1
step "Python tf.function on the same structures"
PYS_ARGS=(); [ "$MODE" = quick ] && PYS_ARGS+=(--quick)
(cd "$BENCH/python" && "$PY" bench_struct.py "${PYS_ARGS[@]}") > "$OUT/python-struct.json" 2> "$OUT/python-struct.log"
step "assembling results again, with the structured rows"
"$PY" "$BENCH/python/assemble.py" --mode "$MODE" --tfjava-version "$TFJ_VERSION" --seconds $(( $(date +%s) - T0 ))
fi
# ---- end of structured values ----

# ---- Real models (issue 24, issue 27 item 1) ----
if want models; then
# Keras 3 models written by Python (make_bench_models.py): MobileNetV2 (weights=None) on
# MODEL_IMAGE x MODEL_IMAGE images at batch 1 and 32, an LSTM, a Transformer encoder block. Per
# call: Polyfn's Function.load and SavedModelBundle alternating in one JVM (ModelBench), then
# Python's tf.saved_model.load (bench_models.py), row by row; then the time from process start to
# first result, Function.load against Python, in fresh processes run interleaved. Results are
# checked (max abs diff) before timing. assemble_models.py makes the rows and targets.
MODEL_IMAGE=128
# MB_REPEATS: the JVM (ModelBench) and Python run in turn this many times per row, so that both see
# the same spells of machine load; the rows take the medians and the median of each turn's ratio.
if [ "$MODE" = quick ]; then MB_ARGS=(5 100 1500); MB_REPEATS=1; MS_RUNS=1; else MB_ARGS=(10 200 3000); MB_REPEATS=3; MS_RUNS=3; fi
MDIR="$OUT/models"
step "real models: writing MobileNetV2 (${MODEL_IMAGE}x${MODEL_IMAGE}), LSTM, Transformer block (make_bench_models.py)"
rm -rf "$MDIR"; mkdir -p "$MDIR"
TF_CPP_MIN_LOG_LEVEL=2 "$PY" "$BENCH/python/make_bench_models.py" "$MDIR" "$MODEL_IMAGE" > "$OUT/models-make.log" 2>&1 \
  || { cat "$OUT/models-make.log"; exit 1; }
: > "$OUT/models-percall.jsonl"; : > "$OUT/models.log"
for row in $(cut -d' ' -f1 "$MDIR/rows.txt"); do
  step "real models: $row per call, Polyfn and SavedModelBundle alternating (ModelBench), then Python, $MB_REPEATS turns"
  for _ in $(seq "$MB_REPEATS"); do
    java -cp "$CP" dev.polyfn.bench.ModelBench "$MDIR" "$row" "${MB_ARGS[@]}" 2>> "$OUT/models.log" \
      | grep '^{' >> "$OUT/models-percall.jsonl" || echo "ModelBench $row failed: see bench/out/models.log" >&2
    TF_CPP_MIN_LOG_LEVEL=2 "$PY" "$BENCH/python/bench_models.py" "$MDIR" "$row" "${MB_ARGS[@]}" 2>> "$OUT/models.log" \
      | grep '^{' >> "$OUT/models-percall.jsonl" || echo "bench_models.py $row failed: see bench/out/models.log" >&2
  done
done
step "real models: time to first result, $MS_RUNS fresh processes per model and contender, interleaved"
: > "$OUT/models-startup.jsonl"
for _ in $(seq "$MS_RUNS"); do
  for row in mobilenet_v2_b1 lstm_b1 transformer_b1; do
    java -cp "$CP" dev.polyfn.bench.ModelStartupMain "$MDIR" "$row" 2>> "$OUT/models.log" \
      | grep '^{' >> "$OUT/models-startup.jsonl" || echo "ModelStartupMain $row failed: see bench/out/models.log" >&2
    TF_CPP_MIN_LOG_LEVEL=2 "$PY" "$BENCH/python/bench_model_startup.py" "$MDIR" "$row" 2>> "$OUT/models.log" \
      | grep '^{' >> "$OUT/models-startup.jsonl" || echo "bench_model_startup.py $row failed: see bench/out/models.log" >&2
  done
done
step "real models: assembling results again with the model rows"
"$PY" "$BENCH/python/assemble.py" --mode "$MODE" --tfjava-version "$TFJ_VERSION" --seconds $(( $(date +%s) - T0 ))
fi
# ---- end of real models ----

# ---- first call and large bodies ----
if want firstcall; then
# A new signature's first call, Polyfn (FirstCallMain, as FirstCallBench without JMH) against the
# Rust floor (first_call), in pairs of short processes run back to back; then a large body (a chain
# of element-wise ops, and one with matmuls) traced and called first in Polyfn (LargeBodyMain) and
# Python (bench_large.py), alternating fresh processes. Then the results are assembled again.
# FirstCallMain measures two windows: rounds right after a short warm-up (the JIT still compiling
# Polyfn's side of a trace) and rounds after many (a process that has traced for a while).
if [ "$MODE" = quick ]; then FC_PAIRS=3; FC_ARGS=(5 15 150); LB_OPS=1000; LB_ROUNDS=2; else FC_PAIRS=7; FC_ARGS=(10 40 400); LB_OPS=6000; LB_ROUNDS=3; fi
step "first call: Polyfn and the Rust floor, $FC_PAIRS pairs of processes back to back"
cargo build -q --release -p polyfn-tf --example first_call
: > "$OUT/first-call-pairs.jsonl"
for _ in $(seq "$FC_PAIRS"); do
  FLOOR_FC=$(POLYFN_TF_LIB="$TF_DIR/libtensorflow_cc.so.2" TF_CPP_MIN_LOG_LEVEL=2 \
    "$ROOT/target/release/examples/first_call" 2>> "$OUT/first-call-pairs.log")
  POLYFN_FC=$(java -cp "$CP" dev.polyfn.bench.FirstCallMain "${FC_ARGS[@]}" 2>> "$OUT/first-call-pairs.log" | grep '^{')
  echo "{\"floor\": $FLOOR_FC, \"polyfn\": $POLYFN_FC}" >> "$OUT/first-call-pairs.jsonl"
done
step "large bodies: $LB_OPS ops, Polyfn and Python tf.function, $LB_ROUNDS rounds of fresh processes"
: > "$OUT/large-body.jsonl"
for _ in $(seq "$LB_ROUNDS"); do
  for kind in ew matmul; do
    TF_CPP_MIN_LOG_LEVEL=2 "$PY" "$BENCH/python/bench_large.py" "$kind" "$LB_OPS" 2>> "$OUT/large-body.log" \
      | grep '^{' >> "$OUT/large-body.jsonl"
    java -cp "$CP" dev.polyfn.bench.LargeBodyMain "$kind" "$LB_OPS" 2>> "$OUT/large-body.log" \
      | grep '^{' >> "$OUT/large-body.jsonl"
  done
done
"$PY" "$BENCH/python/assemble.py" --mode "$MODE" --tfjava-version "$TFJ_VERSION" --seconds $(( $(date +%s) - T0 ))
fi
# ---- end of first call and large bodies ----
