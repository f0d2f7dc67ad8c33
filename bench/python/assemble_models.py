"""The real-model rows of BENCHMARKS.md (bench/run.sh's "Real models" block): Keras 3 models written
by make_bench_models.py, per call through Polyfn's Function.load and TensorFlow Java's
SavedModelBundle (ModelBench, alternating in one JVM) and Python's tf.saved_model.load
(bench_models.py), and the time from process start to first result (ModelStartupMain,
bench_model_startup.py). assemble.py calls add_model_rows once.
"""
import os

from bench_out import OUT, jsonl

ROWS = ["mobilenet_v2_b1", "mobilenet_v2_b32", "lstm_b1", "transformer_b1"]
NOTES = {
    "mobilenet_v2": "`keras.applications.MobileNetV2(weights=None, classifier_activation=None)` (alpha 1.0, 1,000 "
                    "logits; BatchNorm statistics set from a batch so that activations do not fade), on %s images",
    "lstm": "`LSTM(128)` over 32 steps of 32 features, then `Dense(10)`",
    "transformer": "an encoder block on 64 tokens of width 128: `MultiHeadAttention` (4 heads of 32), residual + "
                   "`LayerNormalization`, FFN (`Dense(512, relu)`, `Dense(128)`), residual + `LayerNormalization`",
}




def _median(xs):
    s = sorted(xs)
    return None if not s else (s[len(s) // 2] if len(s) % 2 else (s[len(s) // 2 - 1] + s[len(s) // 2]) / 2)


def _ratio(x, y):
    return None if x is None or y is None or y == 0 else x / y


def _target(summary, name, val, op, bound):
    met = None if val is None else (val <= bound if op == "≤" else val < bound)
    summary.setdefault("targets", {})[name] = {"value": None if val is None else round(val, 3),
                                               "bound": "%s %s" % (op, bound), "met": met}


def _by_row(records):
    """The per-call records of each row, in the order they were written."""
    out = {}
    for r in records:
        out.setdefault(r["row"], []).append(r)
    return out


def _turns(records):
    """One row's per-call result from its turns (bench/run.sh runs ModelBench, then Python, MB_REPEATS
    times): each contender's median over the turns, and each ratio the median of the turns' own
    ratios (a JVM run and the Python run right after it saw the same machine load). Samples are
    those of every turn."""
    jvm = [r for r in records if "polyfn_us" in r]
    py = [r for r in records if "python_us" in r]
    out = dict(jvm[-1]) if jvm else {}
    if py:
        out.update({k: v for k, v in py[-1].items() if k not in out or k.startswith("python")})
        out["samples_us"] = [v for r in py for v in r["samples_us"]]
        out["python_us"] = _median([r["python_us"] for r in py])
    if jvm:
        for k in ("polyfn_us", "bundle_us", "polyfn_over_bundle"):
            out[k] = _median([r[k] for r in jvm])
        out["polyfn_samples_us"] = [v for r in jvm for v in r["polyfn_samples_us"]]
        out["bundle_samples_us"] = [v for r in jvm for v in r["bundle_samples_us"]]
        out["max_abs_diff"] = {k: max(r["max_abs_diff"][k] for r in jvm) for k in jvm[0]["max_abs_diff"]}
    pairs = [_ratio(j["polyfn_us"], p["python_us"]) for j, p in zip(jvm, py)]
    out["polyfn_over_python"] = _median([x for x in pairs if x is not None]) if pairs else None
    out["turns"] = min(len(jvm), len(py)) if py else len(jvm)
    return out


def add_model_rows(res, summary):
    """Adds the rows to results (res), the keys and targets to summary; returns the BENCHMARKS.md section."""
    per_call = {row: _turns(rs) for row, rs in _by_row(jsonl("models-percall.jsonl")).items()}
    startup = {}
    for r in jsonl("models-startup.jsonl"):
        startup.setdefault(r["row"], {}).setdefault(r["contender"], []).append(r)
    if not per_call and not startup:
        return []
    for row in ROWS:
        r = per_call.get(row)
        if not r:
            continue
        entry = res.setdefault("model_" + row, {})
        if "polyfn_us" in r:
            entry["polyfn"] = {"us": r["polyfn_us"], "samples": r["polyfn_samples_us"], "rounds": r["rounds"],
                               "source": "bench ModelBench (Function.load, alternating with SavedModelBundle)"}
            entry["tfjava_savedmodelbundle"] = {"us": r["bundle_us"], "samples": r["bundle_samples_us"], "rounds": r["rounds"],
                                                "source": "bench ModelBench (SavedModelBundle serving_default)"}
            entry["polyfn_over_bundle_rounds_median"] = r["polyfn_over_bundle"]
            entry["max_abs_diff"] = r["max_abs_diff"]
        if "python_us" in r:
            entry["python_saved_model"] = {"us": r["python_us"], "samples": r["samples_us"], "rounds": r["rounds"],
                                           "source": "bench/python/bench_models.py (tf.saved_model.load, restored serve)"}
        summary["polyfn_model_%s_us" % row] = r.get("polyfn_us")
        summary["tfjava_bundle_model_%s_us" % row] = r.get("bundle_us")
        summary["python_model_%s_us" % row] = r.get("python_us")
        _target(summary, "%s: Polyfn per call ≤ 1.0× SavedModelBundle (median of alternating rounds)" % row,
                r.get("polyfn_over_bundle"), "≤", 1.0)
        _target(summary, "%s: Polyfn per call below Python's tf.saved_model.load (median of the turns' ratios)" % row,
                r.get("polyfn_over_python"), "<", 1)
    st = {}
    for row, cs in startup.items():
        st[row] = {c: {"first_ms": _median([r["first_ms"] for r in rs]), "runs": len(rs),
                       "load_ms": _median([r["load_ms"] for r in rs]),
                       "first_call_ms": _median([r["first_call_ms"] for r in rs])} for c, rs in cs.items()}
        p, q = st[row].get("polyfn", {}).get("first_ms"), st[row].get("python", {}).get("first_ms")
        summary["polyfn_model_%s_first_ms" % row] = p
        summary["python_model_%s_first_ms" % row] = q
        _target(summary, "%s: start to first result (Function.load) below Python's" % row.rsplit("_b", 1)[0], _ratio(p, q), "<", 1)
    if st:
        res["model_startup"] = st
    fmt = lambda v: "–" if v is None else ("%.0f" % v if v >= 100 else "%.2f" % v if v < 10 else "%.1f" % v)
    L = ["## Real Keras models: per call and time to first result\n",
         "Keras 3 models written by Python (TensorFlow 2.21, `model.export`, `bench/python/make_bench_models.py`): "
         "the same SavedModel through Polyfn's `Function.load(dir, \"serve\")`, TensorFlow Java's `SavedModelBundle` "
         "(`serving_default`) and Python's `tf.saved_model.load` (its restored `serve`). Each row's results are "
         "compared before anything is timed (max abs diff below).\n",
         "| row | Polyfn (ms) | SavedModelBundle (ms) | Python (ms) | Polyfn / SavedModelBundle | Polyfn / Python | max abs diff Polyfn–SMB, Polyfn–Python |",
         "|---|---|---|---|---|---|---|"]
    for row in ROWS:
        r = per_call.get(row)
        if not r:
            continue
        ms = lambda k: None if r.get(k) is None else r[k] / 1e3
        d = r.get("max_abs_diff", {})
        L.append("| `%s` | %s | %s | %s | %s | %s | %s |" % (
            row, fmt(ms("polyfn_us")), fmt(ms("bundle_us")), fmt(ms("python_us")),
            "–" if r.get("polyfn_over_bundle") is None else "%.2f×" % r["polyfn_over_bundle"],
            "–" if r.get("polyfn_over_python") is None else "%.2f×" % r["polyfn_over_python"],
            "%.2g, %.2g" % (d.get("polyfn_bundle", float("nan")), d.get("polyfn_python", float("nan"))) if d else "–"))
    any_row = next(iter(per_call.values()), {})
    L.append("")
    L.append("Per call: the median of %s samples per contender; a sample is a batch of calls lasting about %s ms "
             "(at least one call), after a warm-up of at least 96 calls and %s ms "
             "(Polyfn's session-path promotion and trial included where the function can take that path). Polyfn and SavedModelBundle run in one JVM in "
             "alternating rounds (the order flips every round), and their ratio is the median of the rounds' ratios; "
             "Python runs in its own process right after the JVM. The JVM and Python take %s turns per row, so that "
             "both see the same spells of machine load: each contender's time is the median over the turns, and "
             "Polyfn over Python the median of the turns' ratios.\n"
             % (any_row.get("rounds", "?"), any_row.get("sample_ms", "?"), any_row.get("warmup_ms", "?"),
                any_row.get("turns", "?")))
    mdims = None
    rows_txt = os.path.join(OUT, "models", "rows.txt")
    if os.path.exists(rows_txt):
        for line in open(rows_txt):
            p = line.split()
            if len(p) == 3 and p[1] == "mobilenet_v2":
                d = p[2].split(",")
                mdims = "%s×%s" % (d[1], d[2])
    L.append("Models: " + "; ".join("`%s`: %s" % (m, n % (mdims or "?") if "%s" in n else n) for m, n in NOTES.items())
             + ". Batch 1 unless the row says `b32`.\n")
    if st:
        L.append("Time to first result in a fresh process (ms, median of fresh processes run interleaved, batch 1): "
                 "from the process's start (JVM or interpreter start-up, TensorFlow's initialization and `import "
                 "tensorflow` count) until the first call returned.\n")
        L.append("| model | Polyfn `Function.load` | its load | its first call | Python `tf.saved_model.load` | its load | its first call | runs |")
        L.append("|---|---|---|---|---|---|---|---|")
        for row, cs in st.items():
            p, q = cs.get("polyfn", {}), cs.get("python", {})
            L.append("| `%s` | %s | %s | %s | %s | %s | %s | %s, %s |" % (
                row.rsplit("_b", 1)[0], fmt(p.get("first_ms")), fmt(p.get("load_ms")), fmt(p.get("first_call_ms")),
                fmt(q.get("first_ms")), fmt(q.get("load_ms")), fmt(q.get("first_call_ms")), p.get("runs", 0), q.get("runs", 0)))
        L.append("")
    return L
