"""Records Python tf.function's outputs for GrapplerParityTest (tests/src/test/resources/...).

Each program is one whose result Grappler (on by default in tf.function) changes in the last
bits compared with running its ops one by one. The script checks that, for each program, the
default tf.function output differs from the op-by-op one, and stores the float32 bit patterns of
both, so the Java test compares bitwise.

Run: /path/to/python tests/python/record_grappler.py  (tensorflow-cpu 2.21 here)
"""
import json
import os
import numpy as np
import tensorflow as tf

OUT = os.path.join(os.path.dirname(__file__), "..", "src", "test", "resources", "dev", "polyfn", "tests",
                   "grappler_python_outputs.json")

x = np.linspace(-3.0, 3.0, 64).astype(np.float32)


def add_twice(x):
    return (x + tf.constant(0.1, tf.float32)) + tf.constant(0.2, tf.float32)


def mul_twice(x):
    return (x * tf.constant(1.1, tf.float32)) * tf.constant(0.7, tf.float32)


def sub_chain(x):
    # Three constants pushed together: x - 0.3 + 0.7 - 0.1
    return ((x - tf.constant(0.3, tf.float32)) + tf.constant(0.7, tf.float32)) - tf.constant(0.1, tf.float32)


PROGRAMS = {"add_twice": add_twice, "mul_twice": mul_twice, "sub_chain": sub_chain}


def bits(a):
    return [int(v) for v in np.asarray(a, np.float32).view(np.uint32)]


def main():
    out = {"tensorflow": tf.__version__, "input": bits(x), "programs": {}}
    for name, body in PROGRAMS.items():
        optimized = tf.function(body)(tf.constant(x)).numpy()
        op_by_op = body(tf.constant(x)).numpy()
        differing = sum(a != b for a, b in zip(bits(optimized), bits(op_by_op)))
        assert differing > 0, f"{name}: Grappler changes nothing here"
        out["programs"][name] = {"tf_function": bits(optimized), "op_by_op": bits(op_by_op),
                                 "differing_elements": differing}
        print(name, "differs in", differing, "of", len(x), "elements")
    with open(OUT, "w") as f:
        json.dump(out, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
