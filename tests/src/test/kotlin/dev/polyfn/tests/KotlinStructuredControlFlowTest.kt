package dev.polyfn.tests

import dev.polyfn.kotlin.condMap
import dev.polyfn.kotlin.condRecord
import dev.polyfn.kotlin.get
import dev.polyfn.kotlin.input
import dev.polyfn.kotlin.invoke
import dev.polyfn.kotlin.polyfn
import dev.polyfn.kotlin.typed
import dev.polyfn.kotlin.whileLoop
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Test
import org.tensorflow.Operand
import org.tensorflow.types.TFloat32
import org.tensorflow.types.TInt32

/** A loop state as a typed record: its properties are read without casts. */
@JvmRecord
data class KLoopState(val i: Operand<TInt32>, val acc: Operand<TFloat32>)

@JvmRecord
data class KSplit(val lo: Operand<TFloat32>, val hi: Operand<TFloat32>)

/** whileLoop and cond over records and maps from Kotlin, with trailing lambdas. */
class KotlinStructuredControlFlowTest {

    @Test
    fun recordAndMapStatesReadLikeOrdinaryCode() {
        polyfn { tf, inputs ->
            val n = inputs.input<TInt32>("n")
            val w = inputs.input<TFloat32>("w")
            val end = tf.whileLoop(KLoopState(tf.constant(0), tf.constant(1f)), cond = { s -> tf.math.less(s.i, n) }) { s ->
                KLoopState(tf.math.add(s.i, tf.constant(1)), tf.math.mul(s.acc, w))
            }
            val counted = tf.whileLoop(mapOf("i" to tf.constant(0), "sum" to tf.constant(0)), cond = { v -> tf.math.less(v["i"]!!.typed(), n) }) { v ->
                mapOf("i" to tf.math.add(v["i"]!!.typed<TInt32>(), tf.constant(1)), "sum" to tf.math.add(v["sum"]!!.typed<TInt32>(), v["i"]!!.typed()))
            }
            val split = tf.condRecord(tf.math.greater(w, tf.constant(0f)), { KSplit(tf.math.neg(w), w) }) { KSplit(w, tf.math.neg(w)) }
            val signs = tf.condMap(tf.math.greater(w, tf.constant(0f)), { mapOf("sign" to tf.constant(1f)) }) { mapOf("sign" to tf.constant(-1f)) }
            mapOf("power" to end.acc, "sum" to counted["sum"]!!, "lo" to split.lo, "hi" to split.hi, "sign" to signs["sign"]!!)
        }.use { f ->
            // w^n; 0 + 1 + ... + (n - 1); (lo, hi) = (-|w|, |w|); the sign of w.
            for ((w, n) in listOf(3f to 4, -2f to 3)) {
                TFloat32.scalarOf(w).use { wt ->
                    TInt32.scalarOf(n).use { nt ->
                        f("w" to wt, "n" to nt).use { out ->
                            assertEquals(if (w > 0) 81f else -8f, out.get<TFloat32>("power").getFloat(), 0f)
                            assertEquals(if (n == 4) 6 else 3, out.get<TInt32>("sum").getInt())
                            assertEquals(-Math.abs(w), out.get<TFloat32>("lo").getFloat(), 0f)
                            assertEquals(Math.abs(w), out.get<TFloat32>("hi").getFloat(), 0f)
                            assertEquals(Math.signum(w), out.get<TFloat32>("sign").getFloat(), 0f)
                        }
                    }
                }
            }
            assertEquals(1, f.traceCount())
        }
    }
}
