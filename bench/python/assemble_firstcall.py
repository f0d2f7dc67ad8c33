"""bench/run.sh's "first call and large bodies" block, assembled: the first call of a new signature
against the Rust floor in pairs of processes run back to back (first-call-pairs.jsonl), and a
large body's trace and first call in Polyfn and Python (large-body.jsonl). Adds workload entries,
summary keys and targets; returns the BENCHMARKS.md section's lines."""
import statistics

from bench_out import jsonl




def _median(xs):
    return statistics.median(xs) if xs else None


def _target(summary, name, val, bound):
    summary["targets"][name] = {"value": None if val is None else round(val, 3), "bound": "≤ %s" % bound,
                                "met": None if val is None else val <= bound}


def add(res, summary):
    L = []
    pairs = [p for p in jsonl("first-call-pairs.jsonl") if "floor" in p and "polyfn" in p]
    ratios = [p["polyfn"]["first_call_ms"] / p["floor"]["first_call_ms"] for p in pairs]
    inproc = [p["polyfn"]["ratio"] for p in pairs if "ratio" in p["polyfn"]]
    warm = [p["polyfn"]["warm_ratio"] for p in pairs if "warm_ratio" in p["polyfn"]]
    paired, same, same_warm = _median(ratios), _median(inproc), _median(warm)
    summary["polyfn_first_call_over_floor_paired"] = None if paired is None else round(paired, 3)
    summary["polyfn_first_call_over_capi_same_process"] = None if same is None else round(same, 3)
    summary["polyfn_first_call_over_capi_same_process_jit_warm"] = None if same_warm is None else round(same_warm, 3)
    summary["polyfn_first_call_ms_paired"] = _median([p["polyfn"]["first_call_ms"] for p in pairs])
    summary["floor_first_call_ms_paired"] = _median([p["floor"]["first_call_ms"] for p in pairs])
    summary["capi_first_call_ms_same_process"] = _median([p["polyfn"]["capi_first_call_ms"] for p in pairs
                                                          if "capi_first_call_ms" in p["polyfn"]])
    summary["polyfn_first_call_ms_jit_warm"] = _median([p["polyfn"]["warm_first_call_ms"] for p in pairs
                                                        if "warm_first_call_ms" in p["polyfn"]])
    summary["capi_first_call_ms_jit_warm"] = _median([p["polyfn"]["warm_capi_first_call_ms"] for p in pairs
                                                      if "warm_capi_first_call_ms" in p["polyfn"]])
    # The goal is the cost of a new signature in a process that traces; the window right after
    # start-up is shown beside it (its excess is the JIT compiling Polyfn's side of a trace).
    warm_rounds = pairs[0]["polyfn"].get("warm_after_rounds") if pairs else None
    _target(summary, "first call of a new signature: Polyfn within 1.2× of the C API floor in the same process, "
            "after %s rounds (JIT warm)" % warm_rounds, same_warm, 1.2)
    summary["targets"]["first call of a new signature, rounds right after start-up (JIT still compiling): "
                       "Polyfn over the C API floor in the same process (shown)"] = {
        "value": None if same is None else round(same, 3), "bound": "shown", "met": None}
    if pairs:
        res.setdefault("first_call", {})["polyfn_paired"] = {
            "ms": summary["polyfn_first_call_ms_paired"], "floor_ms": summary["floor_first_call_ms_paired"],
            "capi_same_process_ms": summary["capi_first_call_ms_same_process"],
            "jit_warm_ms": summary["polyfn_first_call_ms_jit_warm"],
            "capi_jit_warm_ms": summary["capi_first_call_ms_jit_warm"],
            "ratios_to_rust_floor": [round(r, 3) for r in ratios], "ratios_same_process": [round(r, 3) for r in inproc],
            "ratios_same_process_jit_warm": [round(r, 3) for r in warm],
            "source": "bench FirstCallMain (+ CApiFirstCall) and native/tf/examples/first_call.rs"}
        nan = float("nan")
        L.append("## First call against its floor, measured together\n")
        L.append("`FirstCallMain` (`FirstCallBench.polyfnFirstCall` without JMH) alternates, in one JVM, a fresh "
                 "function's first call of `add2` with the same work done through TensorFlow's C API "
                 "(`CApiFirstCall`: the graph, the function, its registration and first run with Grappler as "
                 "Python's, as `native/tf/examples/first_call.rs` does in Rust); each process runs right after the "
                 "Rust floor, %d such pairs (medians of the processes' medians of per-round ratios).\n" % len(pairs))
        L.append("| window | Polyfn (ms) | C API from the JVM (ms) | Polyfn / C API | range over the processes |\n"
                 "|---|---|---|---|---|")
        L.append("| %d rounds after %d (the JIT still compiling Polyfn's Java side of a trace) | %.2f | %.2f | %.2f× | "
                 "%.2f–%.2f× |" % (pairs[0]["polyfn"]["measured"], pairs[0]["polyfn"]["warmup"],
                                   summary["polyfn_first_call_ms_paired"], summary["capi_first_call_ms_same_process"] or nan,
                                   same or nan, min(inproc or [nan]), max(inproc or [nan])))
        if warm:
            L.append("| %d rounds after %d (a process that has traced for a while) | %.2f | %.2f | **%.2f×** | "
                     "%.2f–%.2f× |" % (pairs[0]["polyfn"]["measured"], warm_rounds,
                                       summary["polyfn_first_call_ms_jit_warm"], summary["capi_first_call_ms_jit_warm"],
                                       same_warm, min(warm), max(warm)))
        L.append("\nThe Rust floor in the process before: %.2f ms (the first window's Polyfn time over it, by the "
                 "pairs' ratios: %.2f×). The C API contender's side of the work is almost all native code; Polyfn's "
                 "trace runs Java (the body, TensorFlow Java's op builders, Polyfn's bookkeeping), which the JIT "
                 "compiles over the first few hundred traces.\n" % (summary["floor_first_call_ms_paired"], paired))

    runs = jsonl("large-body.jsonl")
    kinds = sorted({r["kind"] for r in runs})
    if runs:
        L.append("## Large bodies: time to trace and to first result (ms, median of fresh processes)\n")
        L.append("| body | ops | contender | trace | first call | first result |\n|---|---|---|---|---|---|")
    for kind in kinds:
        row = {}
        for who in ("polyfn", "python"):
            rs = [r for r in runs if r["kind"] == kind and r["contender"] == who]
            if not rs:
                continue
            row[who] = {k: _median([r[k] for r in rs]) for k in ("trace_ms", "first_call_ms", "first_result_ms")}
            row[who].update(ops=rs[0]["ops"], rounds=len(rs), source="bench LargeBodyMain" if who == "polyfn"
                            else "bench/python/bench_large.py")
            L.append("| `%s` | %s | %s | %.0f | %.0f | %.0f |" % (
                kind, "{:,}".format(rs[0]["ops"]), "Polyfn" if who == "polyfn" else "Python tf.function",
                row[who]["trace_ms"], row[who]["first_call_ms"], row[who]["first_result_ms"]))
            for k in ("trace_ms", "first_call_ms", "first_result_ms"):
                summary["%s_large_%s_%s" % (who, kind, k)] = row[who][k]
        res["large_body_" + kind] = row
        p, q = row.get("polyfn"), row.get("python")
        val = None if not (p and q) else p["first_result_ms"] / q["first_result_ms"]
        _target(summary, "large body (%s): Polyfn's time to first result within 1.2× of Python's" % kind, val, 1.2)
    if runs:
        L.append("\n`ew`: a chain of element-wise ops on x of shape [4] (multiply, add, tanh, subtract in turn); "
                 "`matmul`: x·W, add, tanh in turn on x of shape [8, 8]; each op with a constant operand has its "
                 "own constant, as Python's `x * 0.999` makes. Each process first traces and calls a 10-op "
                 "function (start-up not counted); trace = `getConcreteFunction` / `get_concrete_function`, first "
                 "call = the call after it (TensorFlow's instantiation, Grappler, kernels, the run). Python and "
                 "Polyfn processes alternate.\n")
    return L
