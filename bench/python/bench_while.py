"""Python's side of WhileBench: tf.function with a tf.while_loop of 1,000 iterations of
x = x * 0.999 + 0.001 (maximum_iterations, as Polyfn's bounded loop), per call. Prints JSON."""
import json
import statistics
import sys
import time

import tensorflow as tf

ITERATIONS = 1000


@tf.function
def loop(x):
    return tf.while_loop(lambda v: True, lambda v: (v * 0.999 + 0.001,), (x,), maximum_iterations=ITERATIONS)[0]


def main():
    quick = "--quick" in sys.argv
    x = tf.constant(1.0)
    loop(x).numpy()  # trace
    batches, per_batch = (5, 50) if quick else (15, 100)
    samples = []
    for _ in range(batches):
        t0 = time.perf_counter()
        for _ in range(per_batch):
            loop(x).numpy()
        samples.append((time.perf_counter() - t0) / per_batch * 1e6)
    print(json.dumps({"tf_version": tf.__version__, "python_while1000_us": statistics.median(samples),
                      "samples_us": samples}))


if __name__ == "__main__":
    main()
