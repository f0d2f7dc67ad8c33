package dev.polyfn.internal.trace;

import org.tensorflow.types.family.TType;

/** The output tensors of one call, which the caller owns. */
public record Result(String[] names, TType[] tensors) {}
