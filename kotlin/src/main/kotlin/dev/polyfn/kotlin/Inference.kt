package dev.polyfn.kotlin

import dev.polyfn.FunctionOptions
import dev.polyfn.TensorSpec
import org.tensorflow.ndarray.Shape
import org.tensorflow.types.family.TType

/**
 * A [TensorSpec] of the concrete tensor type [T] and these dims (`-1`: any size), for example
 * inputs and `getConcreteFunction`: `tensorSpec<TFloat32>(2, 3)`.
 */
public inline fun <reified T : TType> tensorSpec(vararg dims: Long): TensorSpec =
    TensorSpec.of(T::class.java, Shape.of(*dims))

/**
 * [FunctionOptions.withExampleInputs] with each example argument set written as pairs:
 *
 * ```kotlin
 * val options = FunctionOptions.defaults().withExamples(
 *     listOf("x" to tensorSpec<TFloat32>(2, 3)),
 *     listOf("x" to tensorSpec<TFloat32>(5, 3)),
 * )   // x: TensorSpec(FLOAT, [-1, 3]), traced once when the function is defined
 * ```
 */
public fun FunctionOptions.withExamples(vararg examples: List<Pair<String, Any>>): FunctionOptions =
    withExampleInputs(examples.map { it.toMap() })
