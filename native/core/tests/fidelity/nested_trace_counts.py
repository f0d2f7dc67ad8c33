"""Records tf.function's trace counts for call sequences of nested list/dict arguments.

Run with TensorFlow 2.21 (`python nested_trace_counts.py > nested_trace_counts.json`); the Rust
test `nested_fidelity.rs` replays the same sequences through Polyfn's dispatch and expects the
same counts. A scenario is a list of calls; a call is one argument `xs`, a nest in which
{"t": [dims], "d": dtype} is a tensor of that shape and {"v": n} a Python int.
"""
import json
import sys

import tensorflow as tf

SCENARIOS = {
    # Same structure and leaf specs: one trace.
    "same_structure": [
        [{"k": {"t": [2]}}, {"k": {"t": [3]}}],
        [{"k": {"t": [2]}}, {"k": {"t": [3]}}],
    ],
    # One leaf's dim changes, then changes again: exact tracing traces each, reduce-retracing
    # generalizes that leaf to [None] on the second change and serves the third from it.
    "leaf_dim_changes": [
        [{"k": {"t": [1]}}, {"k": {"t": [2]}}],
        [{"k": {"t": [1]}}, {"k": {"t": [3]}}],
        [{"k": {"t": [1]}}, {"k": {"t": [4]}}],
        [{"k": {"t": [1]}}, {"k": {"t": [3]}}],
    ],
    # Structure changes always retrace: list length, key set, nesting, dtype.
    "structure_changes": [
        [{"k": {"t": [2]}}],
        [{"k": {"t": [2]}}, {"k": {"t": [2]}}],
        [{"j": {"t": [2]}}],
        [{"k": [{"t": [2]}]}],
        [{"k": {"t": [2], "d": "int32"}}],
        [{"k": {"t": [2]}}],
    ],
    # Python ints are part of the signature by value.
    "nested_values": [
        {"a": [{"t": [2]}, {"v": 1}]},
        {"a": [{"t": [2]}, {"v": 2}]},
        {"a": [{"t": [2]}, {"v": 1}]},
        {"a": [{"t": [5]}, {"v": 1}]},
        {"a": [{"t": [6]}, {"v": 1}]},
    ],
    # Depth 3: a map of lists of maps, two leaves changing rank and size independently.
    "depth_three": [
        {"m": [{"x": {"t": [2, 2]}, "y": {"t": []}}]},
        {"m": [{"x": {"t": [3, 2]}, "y": {"t": []}}]},
        {"m": [{"x": {"t": [4, 2]}, "y": {"t": [1]}}]},
        {"m": [{"x": {"t": [5, 2]}, "y": {"t": [1]}}]},
        {"m": [{"x": {"t": [5, 2]}, "y": {"t": [2]}}]},
    ],
}


def build(node):
    if isinstance(node, list):
        return [build(n) for n in node]
    if "t" in node:
        return tf.zeros(node["t"], dtype=getattr(tf, node.get("d", "float32")))
    if "v" in node:
        return node["v"]
    return {k: build(v) for k, v in node.items()}


def count(calls, reduce_retracing):
    traces = []

    @tf.function(reduce_retracing=reduce_retracing)
    def f(xs):
        traces.append(1)
        return tf.constant(0.0)

    counts = []
    for c in calls:
        f(build(c))
        counts.append(len(traces))
    return counts


def main():
    out = {"tensorflow": tf.__version__, "scenarios": {}}
    for name, calls in SCENARIOS.items():
        out["scenarios"][name] = {
            "calls": calls,
            "exact": count(calls, False),
            "reduce_retracing": count(calls, True),
        }
    json.dump(out, sys.stdout, indent=1, sort_keys=True)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
