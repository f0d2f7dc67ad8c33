package dev.polyfn.kotlin

import dev.polyfn.CallableFunction
import dev.polyfn.ListOutputs
import dev.polyfn.NestOutputs
import dev.polyfn.Outputs
import dev.polyfn.UnaryFunction
import org.tensorflow.Tensor
import org.tensorflow.types.family.TType

// One set of extensions for every function called by name or with its one argument
// (MapFunction, ListFunction, SingleFunction, NestFunction): O is what a call returns.

/**
 * Calls the function with its arguments as `name to value` pairs.
 *
 * ```kotlin
 * f("x" to x, "scale" to s).use { out -> println(out.get<TFloat32>("y").getFloat()) }  // a MapFunction
 * g("x" to x).use { out -> println(out.get<TFloat32>(0).getFloat()) }                 // a ListFunction
 * ```
 *
 * @return the outputs ([Outputs], [ListOutputs], one tensor or [NestOutputs]), which the caller
 *     must close (`use { }`)
 * @throws IllegalArgumentException for a name given twice, or a missing, unexpected or mistyped
 *     argument (the message names the parameter)
 * @throws IllegalStateException if the function is closed
 */
public operator fun <O : AutoCloseable> CallableFunction<O>.invoke(vararg args: Pair<String, Any>): O =
    call(argumentMap(args))

/**
 * Calls the function with its arguments by name.
 *
 * ```kotlin
 * f(mapOf("x" to x)).use { out -> out.get<TFloat32>("y") }
 * ```
 *
 * @return the outputs, which the caller must close (`use { }`)
 */
public operator fun <O : AutoCloseable> CallableFunction<O>.invoke(args: Map<String, Any>): O = call(args)

/**
 * Calls the function with its arguments as `name to value` pairs; the same as
 * [invoke][CallableFunction.invoke], spelled as a method.
 *
 * ```kotlin
 * f.call("x" to x).use { out -> out.get<TFloat32>("y") }
 * ```
 *
 * @return the outputs, which the caller must close (`use { }`)
 * @throws IllegalArgumentException for a name given twice, or a missing, unexpected or mistyped
 *     argument (the message names the parameter)
 */
public fun <O : AutoCloseable> CallableFunction<O>.call(vararg args: Pair<String, Any>): O = call(argumentMap(args))

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
public inline operator fun <O : AutoCloseable, R> CallableFunction<O>.invoke(
    vararg args: Pair<String, Any>,
    block: (O) -> R,
): R = call(*args).use(block)

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
public operator fun <O : AutoCloseable> CallableFunction<O>.invoke(x: Tensor): O = call(x)

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
public inline operator fun <O : AutoCloseable, R> CallableFunction<O>.invoke(x: Tensor, block: (O) -> R): R =
    call(x).use(block)

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
