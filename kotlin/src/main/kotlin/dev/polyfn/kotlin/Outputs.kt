package dev.polyfn.kotlin

import dev.polyfn.ListOutputs
import dev.polyfn.Outputs
import org.tensorflow.Tensor
import org.tensorflow.types.family.TType

/**
 * The output called [name] as a [T], given explicitly: `out.get<TFloat32>("y")`. (Without a type
 * argument, `out.get("y")` and `out["y"]` are the Java method that gives a plain [Tensor].)
 *
 * ```kotlin
 * f("x" to x).use { out ->
 *     val y = out.get<TFloat32>("y")
 *     println(y.getFloat())
 * }
 * ```
 *
 * @throws IllegalArgumentException if there is no such output or it is not a [T]
 * @throws IllegalStateException if the outputs are closed
 */
@Suppress("EXTENSION_SHADOWED_BY_MEMBER") // only for calls without a type argument
public inline fun <reified T : TType> Outputs.get(name: String): T = get(name, T::class.java)

/**
 * Whether there is an output called [name].
 *
 * ```kotlin
 * f("x" to x).use { out -> if ("loss" in out) println(out.get<TFloat32>("loss").getFloat()) }
 * ```
 */
public operator fun Outputs.contains(name: String): Boolean = name in names()

/**
 * The outputs by name, in the order the body returned them. The tensors still belong to these
 * outputs: closing them closes the tensors in the map too.
 *
 * ```kotlin
 * f("x" to x).use { out -> out.toMap().forEach { (name, t) -> println("$name: ${t.shape()}") } }
 * ```
 *
 * @throws IllegalStateException if the outputs are closed
 */
public fun Outputs.toMap(): Map<String, Tensor> = names().associateWith { get(it) }

/**
 * The output at [index] as a [T], given explicitly: `out.get<TFloat32>(0)`. (Without a type
 * argument, `out.get(0)` and `out[0]` are the list's method that gives a plain [Tensor].)
 *
 * ```kotlin
 * f("x" to x).use { out ->
 *     val sum = out.get<TFloat32>(0)
 *     println(sum.getFloat())
 * }
 * ```
 *
 * @throws IllegalArgumentException if the output is not a [T]
 * @throws IndexOutOfBoundsException if there is no output at [index]
 * @throws IllegalStateException if the outputs are closed
 */
@Suppress("EXTENSION_SHADOWED_BY_MEMBER") // only for calls without a type argument
public inline fun <reified T : TType> ListOutputs.get(index: Int): T = get(index, T::class.java)
