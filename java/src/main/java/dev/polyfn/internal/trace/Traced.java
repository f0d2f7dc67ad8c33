package dev.polyfn.internal.trace;

import org.tensorflow.Operand;

/** A body's outputs: names and operands, in output order. */
public record Traced(String[] names, Operand<?>[] operands) {}
