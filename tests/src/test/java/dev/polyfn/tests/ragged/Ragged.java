package dev.polyfn.tests.ragged;

import org.tensorflow.types.TFloat32;
import org.tensorflow.types.TInt64;

/**
 * A ragged matrix of floats, the example of a user composite type: row {@code i} is {@code
 * values[rowSplits[i] .. rowSplits[i + 1])}.
 *
 * @param values every row's values, concatenated
 * @param rowSplits where each row starts, then the number of values ({@code rows + 1} entries)
 */
public record Ragged(TFloat32 values, TInt64 rowSplits) {}
