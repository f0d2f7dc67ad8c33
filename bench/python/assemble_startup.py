"""Issue 27 item 4: the start-up rows broken down into their parts, and the start-up targets.

bench/run.sh's start-up block writes bench/out/startup-runs.jsonl, one JSON object per fresh
process (StartupMain: cold, warm, load; bench_startup.py: python; the Rust example restore_floor:
floor, TensorFlow's own work for a warm start or load, without the JVM). `add` takes the median of each
part over the runs of a mode, stores it under results["startup"]["breakdown"] (summary.json shows
the same dict) and adds the start-up targets; `markdown` renders the breakdown table.
"""
import json
import os

OUT = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "out")
MODES = ("cold", "warm", "load", "python", "floor")
HEADS = {"cold": "cold (traces)", "warm": "warm start (trace cache)", "load": "`Function.load`",
         "python": "Python `tf.saved_model.load`",
         "floor": "floor: TensorFlow alone (Rust, no JVM: read the SavedModel, register and run the 10 functions)"}


def _median(xs):
    xs = sorted(x for x in xs if x is not None)
    if not xs:
        return None
    n = len(xs)
    return xs[n // 2] if n % 2 else (xs[n // 2 - 1] + xs[n // 2]) / 2


def _parts(r):
    """One run's parts (ms), by row key; None where the mode has no such part."""
    if r["mode"] == "python":
        return {"runtime": r.get("interpreter_ms"), "tf_init": r.get("import_ms"), "files": r.get("load_ms"),
                "calls": r.get("calls_ms"), "after_init": r.get("after_import_ms"), "total": r.get("all_ms")}
    if r["mode"] == "floor":
        return {"files": r.get("read_ms"), "restore": r.get("register_ms"), "first_runs": r.get("first_runs_ms"),
                "after_init": r.get("after_init_ms")}
    if "define_ms" not in r:
        return {}
    define, prepare, runs, calls = r["define_ms"], r["prepare_ms"], r["first_runs_ms"], r["calls_ms"]
    traced = r["mode"] == "cold"
    return {
        "runtime": r["jvm_ms"], "tf_init": r["tf_init_ms"], "polyfn_init": r.get("polyfn_init_ms"),
        # Cold: define only makes the function; warm and load read, check and restore here.
        "files": None if traced else max(define - prepare, 0.0),
        "restore": None if traced else prepare,
        "trace": prepare if traced else None,
        "first_runs": runs,
        # The calls beyond their first runs (and, cold, the traces they started): Java's part of a
        # call (arguments, outputs, class loading on first use).
        "rest": max(calls - runs - (prepare if traced else 0.0), 0.0) + (define if traced else 0.0),
        "after_init": r["after_init_ms"], "total": r["all_ms"],
    }


ROWS = [
    ("runtime", "runtime start: process start to `main` (JVM; Python interpreter)"),
    ("tf_init", "TensorFlow's start-up: library and eager context, a first op (Python: `import tensorflow`)"),
    ("polyfn_init", "Polyfn's start-up: its native library found, loaded and bound (part of the time after TensorFlow's start-up)"),
    ("files", "reading and checking the cache entries / SavedModel files, Java's side of restoring (Python: all of `tf.saved_model.load`)"),
    ("restore", "restoring the 10 functions: Polyfn's checks of each definition, registering it (`preparationTime` summed)"),
    ("trace", "tracing the 10 signatures: body to graph, graph to registered function (`preparationTime` summed)"),
    ("first_runs", "first runs: TensorFlow's preparation of each function (instantiation, Grappler, kernels) and the run (`firstRunTime` summed)"),
    ("calls", "the 10 first calls (TensorFlow's preparation of each function, then the run)"),
    ("rest", "the rest: Java's part of the calls (arguments, outputs, classes loaded on first use)"),
    ("after_init", "**after TensorFlow's start-up**"),
    ("total", "**from the process's start** (all 10 results)"),
]


def breakdown():
    """{mode: {part: median ms}} from startup-runs.jsonl, or None without it."""
    path = os.path.join(OUT, "startup-runs.jsonl")
    if not os.path.exists(path):
        return None
    runs = {}
    with open(path) as f:
        for line in f:
            line = line.strip()
            if line.startswith("{"):
                r = json.loads(line)
                runs.setdefault(r["mode"], []).append(_parts(r))
    out = {}
    for mode, parts in runs.items():
        keys = {k for p in parts for k, v in p.items() if v is not None}
        out[mode] = {k: _median([p.get(k) for p in parts]) for k in sorted(keys)}
        out[mode]["runs"] = len(parts)
    return out


def add(results, summary):
    """Adds the breakdown to results["startup"] and the start-up targets to summary["targets"]."""
    b = breakdown()
    if not b or "startup" not in results:
        return
    results["startup"]["breakdown"] = b

    def get(mode, part):
        return b.get(mode, {}).get(part)

    def ratio(x, y):
        return None if x is None or y is None or y == 0 else x / y

    cold, py = get("cold", "after_init"), get("python", "after_init")
    targets = []
    for mode, label in (("warm", "warm start"), ("load", "Function.load")):
        targets.append(("start-up: %s ≤ 0.5× cold, after TensorFlow's start-up" % label,
                        ratio(get(mode, "after_init"), cold), "≤", 0.5))
        targets.append(("start-up: %s below Python's tf.saved_model.load, after TensorFlow's start-up (× Python)" % label,
                        ratio(get(mode, "after_init"), py), "<", 1))
        targets.append(("start-up: %s ≥ 2× faster than Python's, from the process's start" % label,
                        ratio(get("python", "total"), get(mode, "total")), "≥", 2))
    # Whether TensorFlow leaves room for the 0.5x goal: its own restore and first runs of the
    # same 10 functions (restore_floor), against the cold time.
    targets.append(("start-up: TensorFlow's own floor for a warm start or load (restore and first runs, Rust) ≤ 0.5× cold",
                    ratio(get("floor", "after_init"), cold), "≤", 0.5))
    t = summary.setdefault("targets", {})
    for name, val, op, bound in targets:
        met = None if val is None else (val <= bound if op == "≤" else val >= bound if op == "≥" else val < bound)
        t[name] = {"value": None if val is None else round(val, 3), "bound": "%s %s" % (op, bound), "met": met}


def markdown(st):
    """The breakdown table for BENCHMARKS.md's start-up section (empty without a breakdown)."""
    b = (st or {}).get("breakdown")
    if not b:
        return []
    modes = [m for m in MODES if m in b]
    L = ["### Where the time goes (ms, median of each part over the runs)\n",
         "Each part is the median over the fresh processes above, so the parts need not add up exactly. "
         "Polyfn's parts come from `StartupMain` (`ConcreteFunctionInfo.preparationTime` and `firstRunTime` "
         "summed over the 10 concrete functions, the rest timed around `Function.define`/`Function.load` and the calls), "
         "Python's from `bench_startup.py` (`import tensorflow`, `tf.saved_model.load`, the calls), "
         "the floor's from `native/tf/examples/restore_floor.rs` (after the library, a context and a first op: "
         "reading `saved_model.pb`, registering the 10 concrete functions, running each once; TensorFlow's part "
         "of a warm start or load, which Polyfn's Java, class loading and checks come on top of).\n",
         "| part | " + " | ".join(HEADS[m] for m in modes) + " |",
         "|---" * (len(modes) + 1) + "|"]
    for key, label in ROWS:
        cells = [get_cell(b[m].get(key)) for m in modes]
        if any(c != "" for c in cells):
            L.append("| %s | %s |" % (label, " | ".join(cells)))
    L.append("")
    return L


def get_cell(v):
    return "" if v is None else "%.0f" % v
