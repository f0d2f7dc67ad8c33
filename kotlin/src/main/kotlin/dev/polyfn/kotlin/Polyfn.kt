package dev.polyfn.kotlin

import dev.polyfn.Function
import dev.polyfn.FunctionOptions
import dev.polyfn.Inputs
import dev.polyfn.MapBody
import dev.polyfn.MapFunction
import org.tensorflow.Operand
import org.tensorflow.op.Ops

/**
 * The body of a function with named outputs, as a Kotlin lambda: builds the graph with `tf`,
 * declares parameters through `inputs` and returns the outputs by name. The Kotlin form of
 * [MapBody]; like it, it runs only while Polyfn traces, never on calls that hit the cache.
 *
 * ```kotlin
 * val addTwo: MapBodyFn = { tf, inputs ->
 *     mapOf("y" to tf.math.add(inputs.input<TFloat32>("x"), tf.constant(2f)))
 * }
 * ```
 */
public typealias MapBodyFn = (tf: Ops, inputs: Inputs) -> Map<String, Operand<*>>

/**
 * Defines a polymorphic function with named outputs from a Kotlin lambda: Polyfn's `tf.function`.
 * The body is traced once per input signature (dtype and shape of each tensor) and cached.
 *
 * ```kotlin
 * polyfn("addTwo") { tf, inputs ->
 *     mapOf("y" to tf.math.add(inputs.input<TFloat32>("x"), tf.constant(2f)))
 * }.use { f ->
 *     TFloat32.scalarOf(40f).use { x ->
 *         f("x" to x).use { out -> out.get<TFloat32>("y").getFloat() }  // 42.0
 *     }
 * }
 * ```
 *
 * @param name the function's name, used in its concrete functions' names, errors and logs;
 *     `null` keeps the default name (`"function"`)
 * @param body builds the traced graph and returns the outputs by name
 * @return the function, which the caller must close
 */
public fun polyfn(name: String? = null, body: MapBodyFn): MapFunction {
    val options = FunctionOptions.defaults()
    return polyfn(if (name == null) options else options.withName(name), body)
}

/**
 * Defines a polymorphic function with named outputs from a Kotlin lambda, with [options].
 *
 * ```kotlin
 * val f = polyfn(FunctionOptions.defaults().withName("negate")) { tf, inputs ->
 *     mapOf("y" to tf.math.neg(inputs.input<TFloat32>("x")))
 * }
 * ```
 *
 * @return the function, which the caller must close
 */
public fun polyfn(options: FunctionOptions, body: MapBodyFn): MapFunction =
    Function.define(body.asMapBody(), options)

/**
 * This lambda as the Java API's [MapBody], for [Function.define].
 *
 * ```kotlin
 * val body: MapBodyFn = { tf, inputs -> mapOf("y" to tf.math.neg(inputs.input<TFloat32>("x"))) }
 * val f = Function.define(body.asMapBody())
 * ```
 */
public fun MapBodyFn.asMapBody(): MapBody = MapBody { tf, inputs -> this(tf, inputs) }
