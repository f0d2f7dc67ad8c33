package dev.polyfn.tests

import dev.polyfn.kotlin.get
import dev.polyfn.kotlin.input
import dev.polyfn.kotlin.invoke
import dev.polyfn.kotlin.polyfn
import dev.polyfn.kotlin.polyfnNested
import dev.polyfn.kotlin.record
import dev.polyfn.kotlin.sparse
import dev.polyfn.Composites
import dev.polyfn.tests.ragged.Ragged
import dev.polyfn.tests.ragged.RaggedOperand
import dev.polyfn.tests.ragged.RaggedType
import org.tensorflow.SparseTensor
import org.tensorflow.ndarray.StdArrays
import dev.polyfn.kotlin.value
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertThrows
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Test
import org.tensorflow.types.TFloat32
import org.tensorflow.types.TInt64

@JvmRecord
data class KBatch(val features: TFloat32, val labels: TInt64, val size: Int)

@JvmRecord
data class KHeads<T>(val sum: T, val max: T)

/** Not a record: refused in a nest, rather than traced as a Java value at every call. */
data class KPlain(val x: TFloat32)

/** Nests, records (`@JvmRecord` data classes) and nested outputs from Kotlin. */
class KotlinStructuredValuesTest {

    @Test
    fun aDataClassRecordIsReadByProperty() {
        polyfn { tf, inputs ->
            val b = inputs.record<KBatch>("batch")
            mapOf(
                "y" to tf.math.mul(b[KBatch::features], tf.constant(b.value(KBatch::size).toFloat())),
                "n" to tf.math.add(b[KBatch::labels], tf.constant(1L)),
            )
        }.use { f ->
            TFloat32.vectorOf(1f, 2f).use { x ->
                TInt64.vectorOf(5L, 6L).use { l ->
                    assertEquals(4f, f("batch" to KBatch(x, l, 2)) { it.get<TFloat32>("y").getFloat(1) }, 0f)
                    assertEquals(7L, f("batch" to KBatch(x, l, 2)) { it.get<TInt64>("n").getLong(1) })
                    assertEquals(1, f.traceCount())
                    val e = assertThrows(IllegalArgumentException::class.java) {
                        f("batch" to mapOf("features" to x)) { }
                    }
                    assertTrue(e.message!!.startsWith("argument 'batch': expected a record"), e.message)
                }
            }
        }
    }

    @Test
    fun aDataClassThatIsNotARecordIsRefusedWithAHint() {
        polyfn { tf, inputs -> mapOf("n" to tf.constant(inputs.nest("xs").size())) }.use { f ->
            TFloat32.scalarOf(1f).use { x ->
                val e = assertThrows(IllegalArgumentException::class.java) { f("xs" to listOf(KPlain(x))) { } }
                assertTrue(e.message!!.startsWith("argument 'xs[0]': got a dev.polyfn.tests.KPlain") &&
                    e.message!!.contains("@JvmRecord"), e.message)
            }
        }
    }

    @Test
    fun nestedListsAndMapsAndARecordOutput() {
        polyfnNested { tf, inputs ->
            val xs = inputs.nest("xs")
            val first = xs.get(0).get("v").operand(TFloat32::class.java)
            val second = xs.get(1).get("v").operand(TFloat32::class.java)
            val both = tf.concat(listOf(first, second), tf.constant(0))
            KHeads(tf.sum(both, tf.constant(0)), tf.max(both, tf.constant(0)))
        }.use { f ->
            TFloat32.vectorOf(1f, 5f).use { a ->
                TFloat32.vectorOf(2f).use { b ->
                    f.call(mapOf("xs" to listOf(mapOf("v" to a), mapOf("v" to b)))).use { out ->
                        val h = out.value<KHeads<TFloat32>>()
                        assertEquals(8f, h.sum.getFloat(), 0f)
                        assertEquals(5f, h.max.getFloat(), 0f)
                    }
                }
            }
        }
    }

    @Test
    fun aSparseTensorAndARaggedTensor() {
        polyfn { tf, inputs ->
            val s = inputs.sparse<TFloat32>("s")
            mapOf("rows" to tf.sparse.sparseReduceSum(s.indices(), s.values(), s.denseShape(), tf.constant(1)))
        }.use { f ->
            TInt64.tensorOf(StdArrays.ndCopyOf(arrayOf(longArrayOf(0, 1), longArrayOf(1, 1)))).use { idx ->
                TFloat32.vectorOf(2f, 5f).use { v ->
                    TInt64.vectorOf(2L, 3L).use { d ->
                        assertEquals(5f, f("s" to SparseTensor.of(idx, v, d)) { it.get<TFloat32>("rows").getFloat(1) }, 0f)
                    }
                }
            }
        }
        try {
            Composites.register(RaggedType.INSTANCE)
        } catch (alreadyRegistered: IllegalArgumentException) {
        }
        polyfnNested { tf, inputs ->
            val r = inputs.composite("r", RaggedType.INSTANCE)
            RaggedOperand(tf.math.neg(r.values()), r.rowSplits())
        }.use { f ->
            TFloat32.vectorOf(1f, 2f).use { v ->
                TInt64.vectorOf(0L, 2L).use { s ->
                    f.call(mapOf("r" to Ragged(v, s))).use { out ->
                        assertEquals(-2f, out.value<Ragged>().values().getFloat(1), 0f)
                    }
                    // A nest function takes the same call extensions as every other kind.
                    assertEquals(-1f, f("r" to Ragged(v, s)) { out -> out.value<Ragged>().values().getFloat(0) }, 0f)
                }
            }
        }
    }
}
