"""Writes a SavedModel whose function looks keys up in a large MutableHashTable, for Polyfn's
memory test (closing a loaded function must free its table).

Usage: python make_big_table.py OUT_DIR ENTRIES

OUT_DIR: a tf.lookup.experimental.MutableHashTable int64 -> int64 holding k -> 2k for k in
    [0, ENTRIES) (its contents live in the checkpoint); lookup(keys) returns {"ids": ...}.
Prints "ok".
"""
import sys

import tensorflow as tf


class Big(tf.Module):
    def __init__(self, entries):
        super().__init__()
        self.table = tf.lookup.experimental.MutableHashTable(tf.int64, tf.int64, default_value=-1)
        keys = tf.range(entries, dtype=tf.int64)
        self.table.insert(keys, keys * 2)

    @tf.function(input_signature=[tf.TensorSpec([None], tf.int64)])
    def lookup(self, keys):
        return {"ids": self.table.lookup(keys)}


if __name__ == "__main__":
    m = Big(int(sys.argv[2]))
    tf.saved_model.save(m, sys.argv[1])
    print("ok")
