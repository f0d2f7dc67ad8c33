package dev.polyfn;

import org.tensorflow.Operand;
import org.tensorflow.types.TInt64;
import org.tensorflow.types.family.TType;

/**
 * A sparse tensor in a function's body: the three operands TensorFlow's sparse ops take. A
 * parameter declared with {@link Inputs#sparse} is one; return one (alone or in a nest) and the
 * caller gets an {@code org.tensorflow.SparseTensor}.
 *
 * <pre>{@code
 * SparseOperand<TFloat32> s = in.sparse("s", TFloat32.class);
 * Operand<TFloat32> rowSums = tf.sparse.sparseReduceSum(s.indices(), s.values(), s.denseShape(), tf.constant(1));
 * }</pre>
 *
 * @param indices the {@code [nnz, rank]} indices of the non-zero values
 * @param values the {@code [nnz]} non-zero values
 * @param denseShape the {@code [rank]} dense shape
 * @param <T> the values' type
 */
public record SparseOperand<T extends TType>(Operand<TInt64> indices, Operand<T> values, Operand<TInt64> denseShape) {}
