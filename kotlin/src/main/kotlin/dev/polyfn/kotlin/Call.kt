package dev.polyfn.kotlin

import dev.polyfn.MapFunction
import dev.polyfn.Outputs

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
 * The pairs as an argument map in their order; a name given twice is an [IllegalArgumentException]
 * rather than a silently dropped argument.
 */
private fun argumentMap(args: Array<out Pair<String, Any>>): Map<String, Any> {
    val map = LinkedHashMap<String, Any>(args.size * 2)
    for ((name, value) in args) {
        require(map.put(name, value) == null) { "argument '$name' is given twice" }
    }
    return map
}
