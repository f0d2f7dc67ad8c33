/**
 * Polyfn's API: polymorphic, traced, cached functions for TensorFlow Java, the counterpart of
 * Python's {@code tf.function}.
 *
 * <p>{@link dev.polyfn.Function} defines a function from a body over TensorFlow Java's
 * {@link org.tensorflow.op.Ops}; the body declares its parameters through {@link
 * dev.polyfn.Inputs} and returns {@link org.tensorflow.Operand}s. Each call is bound to the
 * parameters, typed (the dtype and shape of each tensor, the value of each Java value), and served
 * by a cached concrete function of a matching type, or traced anew. The kinds of function follow
 * the body's outputs: {@link dev.polyfn.MapFunction} (named outputs, {@link dev.polyfn.Outputs}),
 * {@link dev.polyfn.ListFunction}, {@link dev.polyfn.SingleFunction}, {@link
 * dev.polyfn.UnaryFunction} and {@link dev.polyfn.NestFunction} (nests, records, sparse, ragged
 * ({@link dev.polyfn.RaggedTensor}) and composite values).
 *
 * <ul>
 *   <li>Options: {@link dev.polyfn.FunctionOptions} (names, retracing, the cache bound, Grappler,
 *       XLA, example inputs, signature profiles, a trace cache on disk).
 *   <li>Types: {@link dev.polyfn.TensorSpec}, {@link dev.polyfn.FunctionType}, {@link
 *       dev.polyfn.ConcreteFunctionInfo}, {@link dev.polyfn.FunctionStatistics}.
 *   <li>Control flow in the graph: {@link dev.polyfn.Flow} ({@code cond}, {@code whileLoop},
 *       {@code mapFn}, gradients through them).
 *   <li>State: {@link dev.polyfn.Variable}.
 *   <li>Deployment: {@link dev.polyfn.PolymorphicFunction#save}, {@link
 *       dev.polyfn.Function#load(java.nio.file.Path)}, {@link dev.polyfn.SaveOptions}.
 *   <li>Your own composite types: {@link dev.polyfn.CompositeType}, {@link
 *       dev.polyfn.Composites}.
 * </ul>
 *
 * <p>Every tensor a call returns is the caller's to close. The guide (docs/ in the repository, one
 * page per topic) explains each of these; the packages under {@code dev.polyfn.internal} are
 * Polyfn's own machinery, not API.
 */
package dev.polyfn;
