package dev.polyfn.tests

import dev.polyfn.Flow
import dev.polyfn.kotlin.cond
import dev.polyfn.kotlin.flowGradients
import dev.polyfn.kotlin.get
import dev.polyfn.kotlin.input
import dev.polyfn.kotlin.invoke
import dev.polyfn.kotlin.mapFn
import dev.polyfn.kotlin.polyfn
import dev.polyfn.kotlin.typed
import dev.polyfn.kotlin.whileLoop
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Test
import org.tensorflow.ndarray.StdArrays
import org.tensorflow.types.TFloat32
import org.tensorflow.types.TInt32

/** cond, whileLoop, mapFn and their gradients from Kotlin, written with trailing lambdas. */
class KotlinControlFlowTest {

    @Test
    fun condAndWhileReadLikeOrdinaryCode() {
        polyfn { tf, inputs ->
            val x = inputs.input<TFloat32>("x")
            val n = inputs.input<TInt32>("n")
            val scaled = tf.cond(tf.math.greater(tf.sum(x, tf.constant(0)), tf.constant(0f)), { tf.math.mul(x, tf.constant(10f)) }) {
                tf.math.neg(x)
            }
            val (_, total) = tf.whileLoop(listOf(tf.constant(0), tf.constant(0f)), cond = { (i, _) -> tf.math.less(i.typed(), n) }) {
                (i, acc) -> listOf(tf.math.add(i.typed<TInt32>(), tf.constant(1)), tf.math.add(acc.typed<TFloat32>(), tf.constant(0.5f)))
            }
            val bounded = tf.whileLoop(listOf(tf.constant(1f)), Flow.loop().maximumIterations(3), { tf.constant(true) }) {
                (v) -> listOf(tf.math.mul(v.typed<TFloat32>(), tf.constant(2f)))
            }
            mapOf("scaled" to scaled, "total" to total, "bounded" to bounded[0])
        }.use { f ->
            for ((xs, n) in listOf(floatArrayOf(1f, 2f) to 4, floatArrayOf(-1f, -2f) to 0)) {
                TFloat32.vectorOf(*xs).use { x ->
                    TInt32.scalarOf(n).use { nt ->
                        f("x" to x, "n" to nt).use { out ->
                            val sign = if (xs.sum() > 0) 10f else -1f
                            assertEquals(xs[1] * sign, out.get<TFloat32>("scaled").getFloat(1), 0f)
                            assertEquals(0.5f * n, out.get<TFloat32>("total").getFloat(), 0f)
                            assertEquals(8f, out.get<TFloat32>("bounded").getFloat(), 0f)
                        }
                    }
                }
            }
            assertEquals(1, f.traceCount())
        }
    }

    @Test
    fun theReadmeExampleRuns() {
        val f = polyfn { tf, inputs ->
            val x = inputs.input<TFloat32>("x")
            val y = tf.cond(tf.math.greater(tf.sum(x, tf.constant(0)), tf.constant(0f)), { tf.math.mul(x, tf.constant(10f)) }) {
                tf.math.neg(x)
            }
            val (halved) = tf.whileLoop(listOf(y), Flow.loop().maximumIterations(100), { (v) -> tf.math.greater(tf.max(v.typed(), tf.constant(0)), tf.constant(1f)) }) {
                (v) -> listOf(tf.math.div(v.typed<TFloat32>(), tf.constant(2f)))
            }
            mapOf("y" to halved)
        }
        f.use {
            TFloat32.vectorOf(1f, 3f).use { x ->
                f("x" to x).use { out -> assertEquals(30f / 32, out.get<TFloat32>("y").getFloat(1), 0f) }
            }
        }
    }

    @Test
    fun mapFnAndGradients() {
        polyfn { tf, inputs ->
            val rows = inputs.input<TFloat32>("rows")
            val w = inputs.input<TFloat32>("w")
            val sums = tf.mapFn(rows) { row -> tf.sum(tf.math.square(row), tf.constant(0)) }
            val y = tf.cond(tf.math.greater(w, tf.constant(0f)), { tf.math.square(w) }) { tf.math.neg(w) }
            mapOf("sums" to sums, "dy" to tf.flowGradients(y, listOf(w))[0])
        }.use { f ->
            TFloat32.tensorOf(StdArrays.ndCopyOf(arrayOf(floatArrayOf(1f, 2f), floatArrayOf(3f, 4f)))).use { rows ->
                TFloat32.scalarOf(3f).use { w ->
                    f("rows" to rows, "w" to w).use { out ->
                        assertEquals(25f, out.get<TFloat32>("sums").getFloat(1), 0f)
                        assertEquals(6f, out.get<TFloat32>("dy").getFloat(), 0f)
                    }
                }
            }
        }
    }
}
