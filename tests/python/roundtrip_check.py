"""Loads the SavedModels SavedModelRoundTripFuzzTest saved and checks them against Python's own tf.function.

Usage: python roundtrip_check.py CASES_JSON

CASES_JSON: a list of cases, one per seed: {"seed", "dir", "name", "count" (concrete functions
saved), "python" (the source of `make(V, D)` returning the same body as a tf.function),
"variables" and "default" (tensors), "calls": [{"index" (the concrete function traced for it, in
saved order), "args" (as called: may omit the default), "full" (the default filled in), "spec"
(what was traced: TensorSpecs), "outputs" (Polyfn's)}], "nomatch" (arguments no signature takes)}.
Tensors are {"__t__": dtype, "shape", "values"}, specs {"__s__": dtype, "shape": dims or null},
maps {"__m__": {...}}, records {"__r__": {...}} (passed as the namedtuple the load made), lists arrays.

For each case: tf.saved_model.load(dir); `m.<name>(**args)` must return Polyfn's outputs (dtype,
shape, values: floats within 1e-5, the rest exact) and raise for "nomatch"; `m.<name>` must list
`count` concrete functions; the signature of each call's concrete function must serve its flat
inputs; and the same body as Python's own tf.function, traced for each call's spec, must return
Polyfn's outputs with the dtypes and static shapes of the saved signature's outputs.
Prints "FAIL seed N <what>" or "PYERROR seed N <error>" per problem, "COUNT <category>=<n>" at the end.
"""
import collections
import json
import re
import sys
import traceback

import numpy as np
import tensorflow as tf

from check_saved import namedtuple_classes


def _sum(t):
    if t.dtype == tf.string:
        t = tf.strings.length(t)
    return tf.reduce_sum(tf.cast(tf.reshape(t, [-1]), tf.float64), 0)


# The Python of RoundTripBody.apply, op by op.
OPS = {
    "sq": tf.math.square,
    "abs": tf.math.abs,
    "affine": lambda x: x * tf.cast(3, x.dtype) + tf.cast(1, x.dtype),
    "sum": lambda x: tf.reduce_sum(tf.reshape(x, [-1]), 0),
    "mean": lambda x: tf.reduce_mean(tf.reshape(x, [-1]), 0),
    "tanh": tf.math.tanh,
    "floordiv": lambda x: tf.math.floordiv(x, tf.cast(2, x.dtype)),
    "not": tf.math.logical_not,
    "any": lambda x: tf.reduce_any(tf.reshape(x, [-1]), 0),
    "len": tf.strings.length,
    "join": lambda x: tf.strings.join([x, "!"]),
}

Feat = collections.namedtuple("Feat", ["dense", "ids"])
COUNTS = collections.Counter()


def tensor(v):
    dtype = "object" if v["__t__"] == "string" else v["__t__"]
    values = [s.encode("utf-8") for s in v["values"]] if v["__t__"] == "string" else v["values"]
    return tf.constant(np.array(values, dtype=dtype).reshape(v["shape"]), dtype=tf.as_dtype(v["__t__"]))


def structure(v, record):
    """A case's value as Python passes it; a record as `record` (a namedtuple class)."""
    if isinstance(v, dict) and "__t__" in v:
        return tensor(v)
    if isinstance(v, dict) and "__s__" in v:
        return tf.TensorSpec(v["shape"], tf.as_dtype(v["__s__"]))
    if isinstance(v, dict) and "__m__" in v:
        return {k: structure(x, record) for k, x in v["__m__"].items()}
    if isinstance(v, dict) and "__r__" in v:
        return record(**{k: structure(x, record) for k, x in v["__r__"].items()})
    if isinstance(v, list):
        return [structure(x, record) for x in v]
    return v


def arguments(args, record):
    """A call's keyword arguments."""
    return {k: structure(v, record) for k, v in args.items()}


def flat(name, v, out):
    """The signature inputs of a value, keyed as Polyfn names them (SavedSignatures)."""
    if isinstance(v, dict) and "__t__" in v:
        out[name] = tensor(v)
    elif isinstance(v, dict) and ("__m__" in v or "__r__" in v):
        items = v.get("__m__", v.get("__r__"))
        keys = sorted(items) if "__m__" in v else ["dense", "ids"]
        for k in keys:
            flat(name + "_" + re.sub(r"[^A-Za-z0-9_]", "_", k), items[k], out)
    elif isinstance(v, list):
        for i, x in enumerate(v):
            flat(f"{name}_{i}", x, out)
    return out


def loaded_record(function):
    """The namedtuple class Python's load made for the Feat record, else Feat itself."""
    return namedtuple_classes(function).get("Feat", Feat)


def differs(got, want):
    """None when tensor `got` is Polyfn's `want` (dtype, shape, values), else what differs."""
    if got.dtype.name != want["__t__"] or list(got.shape) != want["shape"]:
        return f"{got.dtype.name}{list(got.shape)} where Polyfn gave {want['__t__']}{want['shape']}"
    g = np.asarray(got.numpy()).reshape(-1)
    if want["__t__"] == "string":
        same = [x.decode("utf-8") for x in g] == want["values"]
    elif want["__t__"].startswith("float"):
        w = np.array(want["values"], dtype=np.float64)
        same = np.allclose(g.astype(np.float64), w, rtol=0, atol=1e-5, equal_nan=True)
    else:
        same = g.tolist() == want["values"]
    return None if same else f"{g.tolist()} where Polyfn gave {want['values']}"


def compare(seed, where, got, outputs):
    ok = True
    if sorted(got) != sorted(outputs):
        print(f"FAIL seed {seed} {where}: outputs {sorted(got)}, Polyfn's {sorted(outputs)}")
        return False
    for name, want in outputs.items():
        d = differs(got[name], want)
        if d:
            print(f"FAIL seed {seed} {where}: output {name} is {d}")
            ok = False
    return ok


def spec_of(t):
    return (t.dtype.name, t.shape.as_list() if t.shape.rank is not None else None)


def check(case):
    seed = case["seed"]
    m = tf.saved_model.load(case["dir"])
    fn = getattr(m, case["name"])
    with open(case["dir"] + "/assets.extra/polyfn.json") as f:
        names = [c["signature"] for c in json.load(f)["concrete_functions"]]
    if len(fn.concrete_functions) != case["count"] or sorted(m.signatures) != sorted(names):
        print(f"FAIL seed {seed} concrete functions: {len(fn.concrete_functions)} listed, signatures {sorted(m.signatures)}, "
              f"saved {case['count']}: {names}")
    else:
        COUNTS["concrete functions listed"] += 1
    record = loaded_record(fn)
    scope = {"tf": tf, "OPS": OPS, "SUM": _sum}
    exec(case["python"], scope)
    variables = [tf.Variable(tensor(v)) for v in case["variables"]]
    own = scope["make"](variables, tensor(case["default"]) if case["default"] else None)
    for k, call in enumerate(case["calls"]):
        if compare(seed, f"call {k} m.{case['name']}(...)", fn(**arguments(call["args"], record)), call["outputs"]):
            COUNTS["restored function matched"] += 1
        signature = m.signatures[names[call["index"]]]
        inputs = {}
        for p, v in call["full"].items():
            flat(p, v, inputs)
        if compare(seed, f"call {k} m.signatures['{names[call['index']]}']", signature(**inputs), call["outputs"]):
            COUNTS["signature matched"] += 1
        if compare(seed, f"call {k} Python's own tf.function", own(**arguments(call["args"], Feat)), call["outputs"]):
            COUNTS["own tf.function matched"] += 1
        traced = own.get_concrete_function(**arguments(call["spec"], Feat)).structured_outputs
        saved = signature.structured_outputs
        restored = fn.concrete_functions[call["index"]].structured_outputs
        bad = [n for n in traced if spec_of(traced[n]) != spec_of(saved[n]) or spec_of(traced[n]) != spec_of(restored[n])]
        if bad:
            print(f"FAIL seed {seed} call {k} static output specs: " + "; ".join(
                f"{n}: tf.function {spec_of(traced[n])}, signature {spec_of(saved[n])}, restored {spec_of(restored[n])}"
                for n in bad))
        else:
            COUNTS["static output specs matched"] += 1
    try:
        fn(**arguments(case["nomatch"], record))
        print(f"FAIL seed {seed} m.{case['name']}(...) served arguments no saved signature takes")
    except (TypeError, ValueError):
        COUNTS["unmatched input raised"] += 1


def main(cases_file):
    with open(cases_file, encoding="utf-8") as f:
        cases = json.load(f)
    for case in cases:
        try:
            check(case)
            COUNTS["seeds checked"] += 1
        except Exception:  # noqa: BLE001 - every error is reported with its seed
            error = sys.exc_info()[1]
            where = traceback.extract_tb(sys.exc_info()[2])
            line = next((f.line for f in reversed(where) if f.filename == __file__), "")
            print(f"PYERROR seed {case['seed']} at `{line}`: {type(error).__name__}: " + str(error)[:600].replace("\n", " | "))
    for k, n in sorted(COUNTS.items()):
        print(f"COUNT {k}={n}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
