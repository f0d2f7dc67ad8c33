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
 *
 * @throws IllegalArgumentException if no example is given, or if an example gives a parameter
 *     twice (`example 2: parameter 'x' is given twice`; examples count from 1, as in the
 *     inference's own errors)
 */
public fun FunctionOptions.withExamples(vararg examples: List<Pair<String, Any>>): FunctionOptions =
    withExampleInputs(examples.mapIndexed { i, pairs -> exampleArguments(i + 1, pairs) })

/**
 * The pairs of example [number] as a map. `toMap` would keep the last of two pairs with the same
 * name and silently infer from a different example than the one written, so that is refused.
 */
private fun exampleArguments(number: Int, pairs: List<Pair<String, Any>>): Map<String, Any> {
    val arguments = LinkedHashMap<String, Any>()
    for ((name, value) in pairs) {
        require(name !in arguments) { "example $number: parameter '$name' is given twice (an example gives each parameter once)" }
        arguments[name] = value
    }
    return arguments
}
