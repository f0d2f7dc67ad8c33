/**
 * The bridge to Rust and to TensorFlow Java: the wire contract ({@code Wire}), the per-thread
 * call buffer, the native methods ({@code Native}) and their loader, native function handles,
 * and the one place that touches TensorFlow Java's internals ({@code org.tensorflow.internal},
 * JavaCPP pointers: {@code TensorFlowInternals}, {@code TensorOwnership}, {@code DataTypes}).
 * Not API: public only for Polyfn's own packages.
 */
package dev.polyfn.internal;
