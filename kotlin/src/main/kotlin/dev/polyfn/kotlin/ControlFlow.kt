package dev.polyfn.kotlin

import dev.polyfn.Flow
import dev.polyfn.LoopOptions
import java.util.function.Supplier
import org.tensorflow.Operand
import org.tensorflow.op.Ops
import org.tensorflow.types.TBool
import org.tensorflow.types.family.TType

/**
 * TensorFlow's `cond` inside a body ([Flow.cond]): only the branch [pred] selects at run time runs.
 * Both lambdas are traced once, with the body's trace, and may use any operand of the body.
 *
 * ```kotlin
 * val y = tf.cond(tf.math.greater(x, zero), { tf.math.mul(x, two) }) { tf.math.neg(x) }
 * ```
 *
 * @throws IllegalArgumentException if the branches return different dtypes
 */
public fun <T : TType> Ops.cond(pred: Operand<TBool>, then: () -> Operand<T>, otherwise: () -> Operand<T>): Operand<T> =
    Flow.cond(this, pred, Supplier { then() }, Supplier { otherwise() })

/** [cond] for branches returning several values ([Flow.condList]). */
public fun Ops.condList(
    pred: Operand<TBool>,
    then: () -> List<Operand<*>>,
    otherwise: () -> List<Operand<*>>,
): List<Operand<*>> = Flow.condList(this, pred, Supplier { then() }, Supplier { otherwise() })

/**
 * TensorFlow's `while_loop` inside a body ([Flow.whileLoop]): `vars = body(vars)` while
 * `cond(vars)` holds, the number of iterations decided at run time. Lists destructure, so loop
 * variables read by name:
 *
 * ```kotlin
 * val (_, total) = tf.whileLoop(listOf(tf.constant(0), tf.constant(0f)), { (i, _) -> tf.math.less(i.typed(), n) }) {
 *     (i, acc) -> listOf(tf.math.add(i.typed<TInt32>(), one), tf.math.add(acc.typed<TFloat32>(), step))
 * }
 * ```
 */
public fun Ops.whileLoop(
    loopVars: List<Operand<*>>,
    options: LoopOptions = Flow.loop(),
    cond: (List<Operand<*>>) -> Operand<TBool>,
    body: (List<Operand<*>>) -> List<Operand<*>>,
): List<Operand<*>> = Flow.whileLoop(this, loopVars, options, { cond(it) }, { body(it) })

/**
 * [whileLoop] over named loop variables ([Flow.whileLoop] with a map): the body returns a map
 * with the same keys; the result's keys are sorted.
 *
 * ```kotlin
 * val out = tf.whileLoop(mapOf("i" to tf.constant(0), "acc" to tf.constant(0f)), cond = { v -> tf.math.less(v["i"]!!.typed(), n) }) {
 *     v -> mapOf("i" to tf.math.add(v["i"]!!.typed<TInt32>(), one), "acc" to tf.math.add(v["acc"]!!.typed<TFloat32>(), step))
 * }
 * ```
 */
public fun Ops.whileLoop(
    loopVars: Map<String, Operand<*>>,
    options: LoopOptions = Flow.loop(),
    cond: (Map<String, Operand<*>>) -> Operand<TBool>,
    body: (Map<String, Operand<*>>) -> Map<String, Operand<*>>,
): Map<String, Operand<*>> = Flow.whileLoop(this, loopVars, options, { cond(it) }, { body(it) })

/**
 * [whileLoop] over a record of loop variables ([Flow.whileLoop] with a record): a `@JvmRecord`
 * data class whose properties are all `Operand`s, typed, so no casts are needed:
 *
 * ```kotlin
 * @JvmRecord data class State(val i: Operand<TInt32>, val acc: Operand<TFloat32>)
 * val end = tf.whileLoop(State(tf.constant(0), tf.constant(1f)), cond = { s -> tf.math.less(s.i, n) }) {
 *     s -> State(tf.math.add(s.i, one), tf.math.mul(s.acc, w))
 * }
 * ```
 */
public fun <R : Record> Ops.whileLoop(
    loopVars: R,
    options: LoopOptions = Flow.loop(),
    cond: (R) -> Operand<TBool>,
    body: (R) -> R,
): R = Flow.whileLoop(this, loopVars, options, { cond(it) }, { body(it) })

/** [cond] for branches returning maps with the same keys ([Flow.condMap]). */
public fun Ops.condMap(
    pred: Operand<TBool>,
    then: () -> Map<String, Operand<*>>,
    otherwise: () -> Map<String, Operand<*>>,
): Map<String, Operand<*>> = Flow.condMap(this, pred, Supplier { then() }, Supplier { otherwise() })

/** [cond] for branches returning a record of operands of one class ([Flow.condRecord]). */
public fun <R : Record> Ops.condRecord(pred: Operand<TBool>, then: () -> R, otherwise: () -> R): R =
    Flow.condRecord(this, pred, Supplier { then() }, Supplier { otherwise() })

/**
 * TensorFlow's `map_fn` inside a body ([Flow.mapFn]): [fn] applied to each element along the
 * first dimension, results stacked.
 *
 * ```kotlin
 * val norms = tf.mapFn(rows) { row -> tf.sum(tf.math.square(row), tf.constant(0)) }
 * ```
 */
public fun <T : TType> Ops.mapFn(elems: Operand<T>, fn: (Operand<T>) -> Operand<T>): Operand<T> =
    Flow.mapFn(this, elems) { fn(it) }

/**
 * Gradients of [y] with respect to [xs] through [cond] and [whileLoop] ([Flow.gradients]); named
 * apart from `Ops.gradients` (TensorFlow's own, which cannot go through control flow).
 */
public fun Ops.flowGradients(y: Operand<*>, xs: List<Operand<*>>): List<Operand<*>> = Flow.gradients(this, y, xs)

/** This operand as an `Operand<T>` (loop variables come back untyped): `v.typed<TFloat32>()`. */
@Suppress("UNCHECKED_CAST")
public fun <T : TType> Operand<*>.typed(): Operand<T> = this as Operand<T>
