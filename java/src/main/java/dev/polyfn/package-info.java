/**
 * Polyfn: Python's {@code tf.function} for TensorFlow Java. A body written once over {@code Ops}
 * is traced into a TensorFlow function once per input signature, cached, and run natively on
 * every later call.
 *
 * <p>Start with {@link dev.polyfn.Function}: {@code define} (named outputs), {@code defineList},
 * {@code defineSingle}, {@code defineNested}, {@code unary}, and {@code load} for a SavedModel.
 * This package is the whole API: every type in it is public, and what the functions do is in
 * Polyfn's internal packages, which are not API.
 */
package dev.polyfn;
