"""BENCHMARKS.md's notes on this run: first calls, promotions, signature inference, control flow
and trace cost, written from bench/summary.json's keys at every assembly, so that no number in
them is older than the run (bench/comparisons.md keeps only what was measured by hand, dated)."""


def _f(v, digits=3):
    """A number with `digits` significant digits and thousands separators, or '?' when missing."""
    if v is None:
        return "?"
    if abs(v) >= 10 ** digits:
        return "{:,.0f}".format(v)
    return "{:,.{p}g}".format(v, p=digits)


def _ratio(a, b):
    return None if a is None or not b else a / b


def run_notes_markdown(summary, workloads):
    """The notes' markdown lines (a list of strings)."""
    s = summary.get
    L = ["## Notes on this run\n",
         "Written from this run's `bench/summary.json` (keys in parentheses) when the results are assembled.\n"]
    L.append("- **First call of a new signature** (trace, build, first execution of `add2`): Polyfn %s ms "
             "(`polyfn_first_call_ms`), TensorFlow Java's `ConcreteFunction.create` and first call %s ms (no "
             "Grappler), Python's `tf.function` %s ms. Right after it, the same graph built, converted, registered and "
             "run once in Rust with no JVM (`native/tf/examples/first_call.rs`): %s ms with Grappler configured as "
             "Python's (`floor_first_call_ms`), %s ms with Grappler off: Polyfn took %s× that floor."
             % (_f(s("polyfn_first_call_ms")), _f(s("tfjava_concrete_first_call_ms")), _f(s("python_first_call_ms")),
                _f(s("floor_first_call_ms")), _f(s("floor_first_call_nograppler_ms")),
                _f(_ratio(s("polyfn_first_call_ms"), s("floor_first_call_ms")))))
    promo = [(w, s("polyfn_tf_promotion_ms_" + w)) for w in ("add2", "mlp", "matmul512", "args16", "list100")]
    L.append("- **Promotion.** The call that moves a function to its session path (the 64th: it builds the session and "
             "runs it the first time), in Rust (`polyfn_tf_promotion_ms_*`): %s ms; the first session of the process "
             "(`add2`'s) pays TensorFlow's one-time set-up too."
             % ", ".join("`%s` %s" % (w, _f(v)) for w, v in promo))
    L.append("")
    unc, inf = s("polyfn_infer_unconstrained_ms"), s("polyfn_infer_inferred_ms")
    L.append("**Signature inference** (`InferenceBench`, `bench_infer.py`): a dense layer `tanh(x·W + 0.5)`, x "
             "`[n, 16]`, 1,000 calls over 50 batch sizes, from the definition to the last call:\n")
    L.append("| variant | traces | total (ms) |\n|---|---|---|")
    for label, key in (("Polyfn, unconstrained", "polyfn_infer_unconstrained"),
                       ("Polyfn, inferred from 3 examples", "polyfn_infer_inferred"),
                       ("Polyfn, from the profile of the unconstrained run", "polyfn_infer_profile"),
                       ("Polyfn, `withReduceRetracing(true)`", "polyfn_infer_reduce_retracing"),
                       ("Python `tf.function`", "python_infer_tf_function"),
                       ("Python `tf.function(reduce_retracing=True)`", "python_infer_reduce_retracing")):
        total = s(key + "_ms")
        note = " (%s× less)" % _f(_ratio(unc, inf), 2) if key == "polyfn_infer_inferred" else ""
        L.append("| %s (`%s_ms`) | %s | %s%s |" % (label, key, _f(s(key + "_traces")), _f(total), note))
    L.append("")
    L.append("**Control flow** (`WhileBench`, `bench_while.py`): a scalar update repeated 1,000 times, in µs. In-graph "
             "`Flow.whileLoop` %s (`polyfn_while1000_us`), the same as 1,000 Polyfn calls %s (`polyfn_calls1000_us`), "
             "Python `tf.function` with `tf.while_loop` %s (`python_while1000_us`). Polyfn marks its loops for lowering "
             "to Switch/Merge, as Python does.\n"
             % (_f(s("polyfn_while1000_us")), _f(s("polyfn_calls1000_us")), _f(s("python_while1000_us"))))
    first, last = s("polyfn_trace_ms_first_tenth"), s("polyfn_trace_ms_last_tenth")
    n = s("trace_cost_signatures")
    L.append("**Trace cost** (`TraceCostMain`, %s new signatures of `x + 2`): %s ms per trace in the first tenth and "
             "%s ms in the last (`polyfn_trace_ms_first_tenth`/`_last_tenth`, %s×). Most of a trace is TensorFlow's: "
             "Grappler optimizes each new concrete function at its first call, as in Python."
             % ("?" if n is None else "{:,}".format(n), _f(first), _f(last), _f(_ratio(last, first), 2)))
    py = (workloads.get("hit_10k") or {}).get("python_tf_function") or {}
    tenths = py.get("ms_per_trace_by_tenth")
    if tenths:
        L.append("Python's traces went from %s to %s ms per trace over %s signatures (`hit_10k` in "
                 "`bench/results.json`)." % (_f(tenths[0]), _f(tenths[-1]), "{:,}".format(py.get("signatures", 0))))
    L.append("")
    return L
