package dev.polyfn.kotlin

import dev.polyfn.Function
import dev.polyfn.FunctionOptions
import dev.polyfn.Inputs
import dev.polyfn.ListBody
import dev.polyfn.ListFunction
import dev.polyfn.MapBody
import dev.polyfn.MapFunction
import dev.polyfn.SingleBody
import dev.polyfn.SingleFunction
import dev.polyfn.UnaryBody
import dev.polyfn.UnaryFunction
import org.tensorflow.Operand
import org.tensorflow.op.Ops
import org.tensorflow.types.family.TType

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
public fun polyfn(name: String? = null, body: MapBodyFn): MapFunction = polyfn(optionsNamed(name), body)

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

/**
 * The body of a function with outputs by position, as a Kotlin lambda: the Kotlin form of
 * [ListBody].
 *
 * ```kotlin
 * val sumAndMax: ListBodyFn = { tf, inputs ->
 *     val x = inputs.input<TFloat32>("x")
 *     listOf(tf.sum(x, tf.constant(0)), tf.max(x, tf.constant(0)))
 * }
 * ```
 */
public typealias ListBodyFn = (tf: Ops, inputs: Inputs) -> List<Operand<*>>

/**
 * Defines a polymorphic function whose body returns its outputs as a list; a call gives them
 * back as a [dev.polyfn.ListOutputs], a closeable `List<Tensor>` in the same order.
 *
 * ```kotlin
 * polyfnList("sumAndMax") { tf, inputs ->
 *     val x = inputs.input<TFloat32>("x")
 *     listOf(tf.sum(x, tf.constant(0)), tf.max(x, tf.constant(0)))
 * }.use { f ->
 *     f(x).use { out -> println("${out.get<TFloat32>(0).getFloat()} ${out.get<TFloat32>(1).getFloat()}") }
 * }
 * ```
 *
 * @param name the function's name; `null` keeps the default name (`"function"`)
 * @param body builds the traced graph and returns the outputs in order
 * @return the function, which the caller must close
 */
public fun polyfnList(name: String? = null, body: ListBodyFn): ListFunction = polyfnList(optionsNamed(name), body)

/**
 * Defines a polymorphic function with outputs by position, with [options].
 *
 * ```kotlin
 * val f = polyfnList(FunctionOptions.defaults().withName("split").withMaxConcreteFunctions(8)) { tf, inputs ->
 *     val x = inputs.input<TFloat32>("x")
 *     listOf(tf.math.neg(x), tf.math.abs(x))
 * }
 * ```
 *
 * @return the function, which the caller must close
 */
public fun polyfnList(options: FunctionOptions, body: ListBodyFn): ListFunction =
    Function.defineList(body.asListBody(), options)

/**
 * This lambda as the Java API's [ListBody], for [Function.defineList].
 *
 * ```kotlin
 * val body: ListBodyFn = { tf, inputs -> listOf(tf.math.neg(inputs.input<TFloat32>("x"))) }
 * val f = Function.defineList(body.asListBody())
 * ```
 */
public fun ListBodyFn.asListBody(): ListBody = ListBody { tf, inputs -> this(tf, inputs) }

/**
 * The body of a function with one output, as a Kotlin lambda: the Kotlin form of [SingleBody].
 *
 * ```kotlin
 * val add: SingleBodyFn = { tf, inputs ->
 *     tf.math.add(inputs.input<TFloat32>("a"), inputs.input<TFloat32>("b"))
 * }
 * ```
 */
public typealias SingleBodyFn = (tf: Ops, inputs: Inputs) -> Operand<*>

/**
 * Defines a polymorphic function with one output: a call returns the output tensor itself.
 *
 * ```kotlin
 * polyfnSingle("add") { tf, inputs ->
 *     tf.math.add(inputs.input<TFloat32>("a"), inputs.input<TFloat32>("b"))
 * }.use { add ->
 *     val sum: Float = add("a" to a, "b" to b) { y -> (y as TFloat32).getFloat() }
 * }
 * ```
 *
 * @param name the function's name; `null` keeps the default name (`"function"`)
 * @param body builds the traced graph and returns the output
 * @return the function, which the caller must close
 */
public fun polyfnSingle(name: String? = null, body: SingleBodyFn): SingleFunction =
    polyfnSingle(optionsNamed(name), body)

/**
 * Defines a polymorphic function with one output, with [options].
 *
 * ```kotlin
 * val f = polyfnSingle(FunctionOptions.defaults().withReduceRetracing(true)) { tf, inputs ->
 *     tf.math.square(inputs.input<TFloat32>("x"))
 * }
 * ```
 *
 * @return the function, which the caller must close
 */
public fun polyfnSingle(options: FunctionOptions, body: SingleBodyFn): SingleFunction =
    Function.defineSingle(body.asSingleBody(), options)

/**
 * This lambda as the Java API's [SingleBody], for [Function.defineSingle].
 *
 * ```kotlin
 * val body: SingleBodyFn = { tf, inputs -> tf.math.neg(inputs.input<TFloat32>("x")) }
 * val f = Function.defineSingle(body.asSingleBody())
 * ```
 */
public fun SingleBodyFn.asSingleBody(): SingleBody = SingleBody { tf, inputs -> this(tf, inputs) }

/**
 * Defines a polymorphic function of one tensor of type [I] (its parameter is called `x`) with one
 * output of type [O]: a call takes an [I] and returns an [O]. Give [I] through the lambda's
 * parameter type, and [O] is inferred from what the body returns:
 *
 * ```kotlin
 * polyfnUnary("square") { tf, x: Operand<TFloat32> -> tf.math.square(x) }.use { square ->
 *     square(TFloat32.scalarOf(3f)).use { y -> println(y.getFloat()) }   // 9.0
 * }
 * ```
 *
 * [I] may be a family (`TFloating`, `TNumber`), tracing once per dtype.
 *
 * @param name the function's name; `null` keeps the default name (`"function"`)
 * @param body builds the traced graph from the input and returns the output
 * @return the function, which the caller must close
 */
public inline fun <reified I : TType, O : TType> polyfnUnary(
    name: String? = null,
    noinline body: (tf: Ops, x: Operand<I>) -> Operand<O>,
): UnaryFunction<I, O> = polyfnUnary(optionsNamed(name), body)

/**
 * Defines a polymorphic function of one tensor of type [I] with one output of type [O], with
 * [options].
 *
 * ```kotlin
 * val f = polyfnUnary(FunctionOptions.defaults().withName("neg")) { tf, x: Operand<TFloat32> -> tf.math.neg(x) }
 * ```
 *
 * @return the function, which the caller must close
 */
public inline fun <reified I : TType, O : TType> polyfnUnary(
    options: FunctionOptions,
    noinline body: (tf: Ops, x: Operand<I>) -> Operand<O>,
): UnaryFunction<I, O> = Function.unary(I::class.java, UnaryBody { tf, x -> body(tf, x) }, options)
