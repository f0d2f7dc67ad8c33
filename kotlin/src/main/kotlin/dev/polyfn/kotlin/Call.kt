package dev.polyfn.kotlin

import dev.polyfn.ListFunction
import dev.polyfn.ListOutputs
import dev.polyfn.MapFunction
import dev.polyfn.Outputs
import dev.polyfn.SingleFunction
import dev.polyfn.UnaryFunction
import org.tensorflow.Tensor
import org.tensorflow.types.family.TType

/**
 * Calls the function with its arguments as `name to value` pairs.
 *
 * ```kotlin
 * f("x" to x, "scale" to s).use { out -> println(out.get<TFloat32>("y").getFloat()) }
 * ```
 *
 * @return the outputs, which the caller must close (`use { }`)
 * @throws IllegalArgumentException for a name given twice, or a missing, unexpected or mistyped
 *     argument (the message names the parameter)
 * @throws IllegalStateException if the function is closed
 */
public operator fun MapFunction.invoke(vararg args: Pair<String, Any>): Outputs = call(argumentMap(args))

/**
 * Calls the function with its arguments by name.
 *
 * ```kotlin
 * f(mapOf("x" to x)).use { out -> out.get<TFloat32>("y") }
 * ```
 *
 * @return the outputs, which the caller must close (`use { }`)
 */
public operator fun MapFunction.invoke(args: Map<String, Any>): Outputs = call(args)

/**
 * Calls the function with its arguments as `name to value` pairs; the same as
 * [invoke][MapFunction.invoke], spelled as a method.
 *
 * ```kotlin
 * f.call("x" to x).use { out -> out.get<TFloat32>("y") }
 * ```
 *
 * @return the outputs, which the caller must close (`use { }`)
 * @throws IllegalArgumentException for a name given twice, or a missing, unexpected or mistyped
 *     argument (the message names the parameter)
 */
public fun MapFunction.call(vararg args: Pair<String, Any>): Outputs = call(argumentMap(args))

/**
 * Calls the function, passes the outputs to [block] and closes them afterwards, whatever happens.
 * Read what you need inside [block]: the output tensors are closed when it returns.
 *
 * ```kotlin
 * val y: Float = f("x" to x) { out -> out.get<TFloat32>("y").getFloat() }
 * ```
 *
 * @return what [block] returns
 */
public inline operator fun <R> MapFunction.invoke(vararg args: Pair<String, Any>, block: (Outputs) -> R): R =
    call(*args).use(block)

/**
 * Calls a one-parameter function with its argument alone, without its name.
 *
 * ```kotlin
 * f(x).use { out -> out.get<TFloat32>("y") }
 * ```
 *
 * @return the outputs, which the caller must close (`use { }`)
 * @throws IllegalArgumentException if the function has more than one parameter, or for a
 *     mistyped argument
 */
public operator fun MapFunction.invoke(x: Tensor): Outputs = call(x)

/**
 * Calls a one-parameter function with its argument alone, passes the outputs to [block] and closes
 * them afterwards.
 *
 * ```kotlin
 * val y: Float = f(x) { out -> out.get<TFloat32>("y").getFloat() }
 * ```
 *
 * @return what [block] returns
 */
public inline operator fun <R> MapFunction.invoke(x: Tensor, block: (Outputs) -> R): R = call(x).use(block)

// ---- ListFunction: outputs by position ----

/**
 * Calls the function with its arguments as `name to value` pairs.
 *
 * ```kotlin
 * f("x" to x).use { out -> println(out.get<TFloat32>(0).getFloat()) }
 * ```
 *
 * @return the outputs in the order the body returned them, which the caller must close (`use { }`)
 * @throws IllegalArgumentException for a name given twice, or a missing, unexpected or mistyped
 *     argument (the message names the parameter)
 * @throws IllegalStateException if the function is closed
 */
public operator fun ListFunction.invoke(vararg args: Pair<String, Any>): ListOutputs = call(argumentMap(args))

/**
 * Calls the function with its arguments by name.
 *
 * ```kotlin
 * f(mapOf("x" to x)).use { out -> out.get<TFloat32>(0) }
 * ```
 *
 * @return the outputs, which the caller must close (`use { }`)
 */
public operator fun ListFunction.invoke(args: Map<String, Any>): ListOutputs = call(args)

/**
 * Calls a one-parameter function with its argument alone, without its name.
 *
 * ```kotlin
 * f(x).use { (sum, max) -> println("$sum $max") }
 * ```
 *
 * @return the outputs, which the caller must close (`use { }`)
 * @throws IllegalArgumentException if the function has more than one parameter, or for a
 *     mistyped argument
 */
public operator fun ListFunction.invoke(x: Tensor): ListOutputs = call(x)

/**
 * Calls the function with its arguments as `name to value` pairs; the same as
 * [invoke][ListFunction.invoke], spelled as a method.
 *
 * ```kotlin
 * f.call("x" to x).use { out -> out.get<TFloat32>(1) }
 * ```
 *
 * @return the outputs, which the caller must close (`use { }`)
 * @throws IllegalArgumentException for a name given twice, or a missing, unexpected or mistyped
 *     argument
 */
public fun ListFunction.call(vararg args: Pair<String, Any>): ListOutputs = call(argumentMap(args))

/**
 * Calls the function, passes the outputs to [block] and closes them afterwards, whatever happens.
 * Read what you need inside [block]: the output tensors are closed when it returns.
 *
 * ```kotlin
 * val total: Float = f("xs" to listOf(a, b)) { out -> out.get<TFloat32>(0).getFloat() }
 * ```
 *
 * @return what [block] returns
 */
public inline operator fun <R> ListFunction.invoke(vararg args: Pair<String, Any>, block: (ListOutputs) -> R): R =
    call(*args).use(block)

/**
 * Calls a one-parameter function with its argument alone, passes the outputs to [block] and closes
 * them afterwards.
 *
 * ```kotlin
 * val max: Float = f(x) { out -> out.get<TFloat32>(1).getFloat() }
 * ```
 *
 * @return what [block] returns
 */
public inline operator fun <R> ListFunction.invoke(x: Tensor, block: (ListOutputs) -> R): R = call(x).use(block)

// ---- SingleFunction: one output tensor ----

/**
 * Calls the function with its arguments as `name to value` pairs.
 *
 * ```kotlin
 * (f("a" to a, "b" to b) as TFloat32).use { y -> println(y.getFloat()) }
 * ```
 *
 * @return the output tensor, which the caller must close (`use { }`)
 * @throws IllegalArgumentException for a name given twice, or a missing, unexpected or mistyped
 *     argument (the message names the parameter)
 * @throws IllegalStateException if the function is closed
 */
public operator fun SingleFunction.invoke(vararg args: Pair<String, Any>): TType = call(argumentMap(args))

/**
 * Calls the function with its arguments by name.
 *
 * ```kotlin
 * f(mapOf("x" to x)).use { y -> println(y.shape()) }
 * ```
 *
 * @return the output tensor, which the caller must close (`use { }`)
 */
public operator fun SingleFunction.invoke(args: Map<String, Any>): TType = call(args)

/**
 * Calls a one-parameter function with its argument alone, without its name.
 *
 * ```kotlin
 * f(x).use { y -> println(y.shape()) }
 * ```
 *
 * @return the output tensor, which the caller must close (`use { }`)
 * @throws IllegalArgumentException if the function has more than one parameter, or for a
 *     mistyped argument
 */
public operator fun SingleFunction.invoke(x: Tensor): TType = call(x)

/**
 * Calls the function with its arguments as `name to value` pairs; the same as
 * [invoke][SingleFunction.invoke], spelled as a method.
 *
 * ```kotlin
 * f.call("x" to x).use { y -> println(y.shape()) }
 * ```
 *
 * @return the output tensor, which the caller must close (`use { }`)
 * @throws IllegalArgumentException for a name given twice, or a missing, unexpected or mistyped
 *     argument
 */
public fun SingleFunction.call(vararg args: Pair<String, Any>): TType = call(argumentMap(args))

/**
 * Calls the function, passes the output tensor to [block] and closes it afterwards, whatever
 * happens. Read what you need inside [block]: the tensor is closed when it returns.
 *
 * ```kotlin
 * val y: Float = f("a" to a, "b" to b) { y -> (y as TFloat32).getFloat() }
 * ```
 *
 * @return what [block] returns
 */
public inline operator fun <R> SingleFunction.invoke(vararg args: Pair<String, Any>, block: (TType) -> R): R =
    call(*args).use(block)

/**
 * Calls a one-parameter function with its argument alone, passes the output tensor to [block] and
 * closes it afterwards.
 *
 * ```kotlin
 * val n: Long = f(x) { y -> (y as TInt64).getLong() }
 * ```
 *
 * @return what [block] returns
 */
public inline operator fun <R> SingleFunction.invoke(x: Tensor, block: (TType) -> R): R = call(x).use(block)

// ---- UnaryFunction: one typed tensor in, one out ----

/**
 * Calls the function with its one tensor.
 *
 * ```kotlin
 * val square = polyfnUnary { tf, x: Operand<TFloat32> -> tf.math.square(x) }
 * square(x).use { y -> println(y.getFloat()) }   // y is a TFloat32
 * ```
 *
 * @return the output tensor, which the caller must close (`use { }`)
 * @throws IllegalArgumentException if [x]'s dtype is not the function's input type
 * @throws IllegalStateException if the function is closed
 */
public operator fun <I : TType, O : TType> UnaryFunction<I, O>.invoke(x: I): O = call(x)

/**
 * Calls the function with its one tensor, passes the output to [block] and closes it afterwards,
 * whatever happens.
 *
 * ```kotlin
 * val y: Float = square(x) { y -> y.getFloat() }
 * ```
 *
 * @return what [block] returns
 */
public inline operator fun <I : TType, O : TType, R> UnaryFunction<I, O>.invoke(x: I, block: (O) -> R): R =
    call(x).use(block)
