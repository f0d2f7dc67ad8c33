package dev.polyfn.kotlin

import dev.polyfn.Inputs
import org.tensorflow.Operand
import org.tensorflow.ndarray.Shape
import org.tensorflow.types.family.TType

/**
 * A tensor parameter of any shape, typed by [T]: a concrete tensor class (`TFloat32`) or a family
 * (`TFloating`, `TNumber`, `TType`) that accepts every member dtype, tracing once per dtype. Each
 * new shape traces a new concrete function.
 *
 * ```kotlin
 * polyfn { tf, inputs ->
 *     val x = inputs.input<TFloat32>("x")
 *     mapOf("y" to tf.math.mul(x, x))
 * }
 * ```
 *
 * @param name the parameter's name, the key of its argument in a call (`f("x" to t)`)
 */
public inline fun <reified T : TType> Inputs.input(name: String): Operand<T> = input(name, T::class.java)

/**
 * A tensor parameter typed by [T] and constrained to [shape]: `-1` is any size for a dim,
 * [Shape.unknown] any rank. Calls that fit share one trace; calls that do not fit fail with
 * [IllegalArgumentException].
 *
 * ```kotlin
 * polyfn { tf, inputs ->
 *     val v = inputs.input<TFloating>("v", Shape.of(-1))   // any float dtype, any length
 *     mapOf("sum" to tf.sum(v, tf.constant(0)))
 * }
 * ```
 *
 * @param name the parameter's name, the key of its argument in a call (`f("v" to t)`)
 */
public inline fun <reified T : TType> Inputs.input(name: String, shape: Shape): Operand<T> =
    input(name, T::class.java, shape)
