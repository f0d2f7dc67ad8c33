package dev.polyfn.kotlin

import dev.polyfn.Function
import dev.polyfn.FunctionOptions
import dev.polyfn.Inputs
import dev.polyfn.NestBody
import dev.polyfn.NestFunction
import dev.polyfn.RaggedOperand
import dev.polyfn.RecordInput
import dev.polyfn.SparseOperand
import org.tensorflow.Operand
import org.tensorflow.op.Ops
import org.tensorflow.types.family.TType
import kotlin.reflect.KProperty1

/**
 * A record parameter of record class [R]: in Kotlin a `@JvmRecord data class`, whose properties
 * are tensors, Java values or nests. Read its tensor components by property:
 *
 * ```kotlin
 * @JvmRecord data class Batch(val features: TFloat32, val labels: TInt64, val size: Int)
 *
 * polyfn { tf, inputs ->
 *     val b = inputs.record<Batch>("batch")
 *     mapOf("y" to tf.math.mul(b[Batch::features], tf.constant(b.value(Batch::size).toFloat())))
 * }
 * ```
 */
public inline fun <reified R : Record> Inputs.record(name: String): RecordInput<R> = record(name, R::class.java)

/** The operand of a tensor component, by its property: `batch[Batch::features]`. */
public operator fun <R : Record, T : TType> RecordInput<R>.get(component: KProperty1<R, T>): Operand<T> =
    get(java.util.function.Function { r: R -> component.get(r) })

/** The value of a Java-value component, by its property: `batch.value(Batch::size)`. */
public fun <R : Record, V> RecordInput<R>.value(component: KProperty1<R, V>): V =
    value(java.util.function.Function { r: R -> component.get(r) })

/** The body of a function whose outputs are a nest (lists, maps, records of operands). */
public typealias NestBodyFn = (tf: Ops, inputs: Inputs) -> Any

/**
 * Defines a polymorphic function whose outputs are a nest; a call returns the same nest of
 * tensors in a [dev.polyfn.NestOutputs].
 *
 * ```kotlin
 * @JvmRecord data class Heads<T>(val sum: T, val max: T)
 * polyfnNested { tf, inputs ->
 *     val x = inputs.input<TFloat32>("x")
 *     Heads(tf.sum(x, tf.constant(0)), tf.max(x, tf.constant(0)))
 * }.use { f -> f.call(x).use { out -> out.value<Heads<TFloat32>>().sum.getFloat() } }
 * ```
 */
public fun polyfnNested(name: String? = null, body: NestBodyFn): NestFunction =
    polyfnNested(optionsNamed(name), body)

/** Defines a polymorphic function whose outputs are a nest, with [options]. */
public fun polyfnNested(options: FunctionOptions, body: NestBodyFn): NestFunction =
    Function.defineNested(NestBody { tf, inputs -> body(tf, inputs) }, options)

/**
 * A sparse tensor parameter whose values are of type [T]: its indices, values and dense shape
 * are three graph inputs; the values' dtype and the dense shape are the signature.
 *
 * ```kotlin
 * polyfn { tf, inputs ->
 *     val s = inputs.sparse<TFloat32>("s")
 *     mapOf("rows" to tf.sparse.sparseReduceSum(s.indices(), s.values(), s.denseShape(), tf.constant(1)))
 * }
 * ```
 */
public inline fun <reified T : TType> Inputs.sparse(name: String): SparseOperand<T> = sparse(name, T::class.java)

/**
 * A ragged tensor parameter whose flat values are of type [T]: its flat values and each ragged
 * dimension's row splits are graph inputs, as Python flattens a `tf.RaggedTensor`; see
 * [dev.polyfn.RaggedTensor] for its signature and the checks of every call.
 */
public inline fun <reified T : TType> Inputs.ragged(name: String): RaggedOperand<T> = ragged(name, T::class.java)
