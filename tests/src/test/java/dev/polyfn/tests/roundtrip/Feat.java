package dev.polyfn.tests.roundtrip;

import org.tensorflow.types.TFloat32;
import org.tensorflow.types.TInt64;

/** The record parameter the round-trip fuzzer generates: Python's load makes it a namedtuple. */
public record Feat(TFloat32 dense, TInt64 ids) {}
