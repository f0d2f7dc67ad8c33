package dev.polyfn.tests.ragged;

import org.tensorflow.Operand;
import org.tensorflow.types.TFloat32;
import org.tensorflow.types.TInt64;

/** A {@link Ragged} in a function's body. */
public record RaggedOperand(Operand<TFloat32> values, Operand<TInt64> rowSplits) {}
