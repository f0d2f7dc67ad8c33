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

/**
 * An optional tensor parameter typed by [T]: omitted from a call, it takes [default]. Only the
 * default's dtype and shape are part of the signature, so omitting the argument and passing a
 * tensor of the same dtype and shape share one trace. [default] stays owned by the caller and must
 * stay open while the function is used.
 *
 * ```kotlin
 * val bias = TFloat32.scalarOf(1f)
 * polyfn { tf, inputs ->
 *     mapOf("y" to tf.math.add(inputs.input<TFloat32>("x"), inputs.input("b", bias)))
 * }
 * ```
 *
 * @param name the parameter's name, the key of its argument in a call (`f("b" to t)`)
 */
public inline fun <reified T : TType> Inputs.input(name: String, default: T): Operand<T> =
    input(name, T::class.java, default)

/**
 * An optional tensor parameter typed by [T] and constrained to [shape], with a [default] taken
 * when the call omits it.
 *
 * ```kotlin
 * val zeros = TFloat32.vectorOf(0f, 0f)
 * polyfn { tf, inputs ->
 *     val offset = inputs.input("offset", Shape.of(-1), zeros)
 *     mapOf("y" to tf.math.add(inputs.input<TFloat32>("x", Shape.of(-1)), offset))
 * }
 * ```
 *
 * @param name the parameter's name, the key of its argument in a call (`f("offset" to t)`)
 */
public inline fun <reified T : TType> Inputs.input(name: String, shape: Shape, default: T): Operand<T> =
    input(name, T::class.java, shape, default)

/**
 * A list of tensors of type [T] (a concrete type or a family), passed as a `List` of tensors. Its
 * length and each element's dtype and shape are part of the signature: a new length retraces, the
 * same length and specs reuse the trace. (Without a type argument, `inputs.list("xs")` is the Java
 * method, for tensors of any dtypes.)
 *
 * ```kotlin
 * polyfn { tf, inputs ->
 *     mapOf("sum" to tf.math.addN(inputs.list<TFloat32>("xs")))
 * }   // called as f("xs" to listOf(a, b))
 * ```
 *
 * @param name the parameter's name, the key of its argument in a call
 */
@Suppress("EXTENSION_SHADOWED_BY_MEMBER") // only for calls without a type argument
public inline fun <reified T : TType> Inputs.list(name: String): List<Operand<T>> = list(name, T::class.java)

/**
 * A map of named tensors of type [T] (a concrete type or a family), passed as a
 * `Map<String, Tensor>`. Its key set (order ignored) and each value's dtype and shape are part of
 * the signature; the returned map iterates in sorted key order. (Without a type argument,
 * `inputs.map("m")` is the Java method, for tensors of any dtypes.)
 *
 * ```kotlin
 * polyfn { tf, inputs ->
 *     val m = inputs.map<TFloat32>("m")
 *     mapOf("diff" to tf.math.sub(m.getValue("a"), m.getValue("b")))
 * }   // called as f("m" to mapOf("a" to a, "b" to b))
 * ```
 *
 * @param name the parameter's name, the key of its argument in a call
 */
@Suppress("EXTENSION_SHADOWED_BY_MEMBER") // only for calls without a type argument
public inline fun <reified T : TType> Inputs.map(name: String): Map<String, Operand<T>> = map(name, T::class.java)

/**
 * A Java value of type [V], returned as is while tracing so the body can branch on it. Keyed by
 * `equals`/`hashCode`: an equal value reuses its trace, a new value traces again. Kotlin's
 * primitive types are asked for boxed (`javaInput<Int>` is `Integer.class`), as a call passes them.
 *
 * ```kotlin
 * polyfn { tf, inputs ->
 *     val n = inputs.javaInput<Int>("n")
 *     mapOf("y" to tf.math.mul(inputs.input<TFloat32>("x"), tf.constant(n.toFloat())))
 * }   // called as f("x" to x, "n" to 3)
 * ```
 *
 * @param name the parameter's name, the key of its argument in a call
 */
public inline fun <reified V : Any> Inputs.javaInput(name: String): V = javaInput(name, V::class.javaObjectType)

/**
 * An optional Java value of type [V]: omitted from a call, it is [default], and shares the trace
 * of a call that passes a value equal to [default].
 *
 * ```kotlin
 * polyfn { tf, inputs ->
 *     val scale = inputs.javaInput("scale", 2f)
 *     mapOf("y" to tf.math.mul(inputs.input<TFloat32>("x"), tf.constant(scale)))
 * }   // f("x" to x) and f("x" to x, "scale" to 2f) share one trace
 * ```
 *
 * @param name the parameter's name, the key of its argument in a call
 */
public inline fun <reified V : Any> Inputs.javaInput(name: String, default: V): V =
    javaInput(name, V::class.javaObjectType, default)
