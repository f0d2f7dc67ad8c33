package dev.polyfn.tests

import dev.polyfn.kotlin.get
import dev.polyfn.kotlin.input
import dev.polyfn.kotlin.invoke
import dev.polyfn.kotlin.polyfn
import dev.polyfn.kotlin.polyfnNested
import dev.polyfn.kotlin.record
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
}
