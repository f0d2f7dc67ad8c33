package dev.polyfn.tests

import dev.polyfn.kotlin.get
import dev.polyfn.kotlin.input
import dev.polyfn.kotlin.invoke
import dev.polyfn.kotlin.javaInput
import dev.polyfn.kotlin.list
import dev.polyfn.kotlin.map
import dev.polyfn.kotlin.polyfn
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertThrows
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Test
import org.tensorflow.ndarray.Shape
import org.tensorflow.types.TFloat32

/** The reified parameter kinds of polyfn-kotlin: lists, maps, Java values and defaults. */
class KotlinParameterKindsTest {

    private fun assertMessage(e: Throwable, vararg parts: String) {
        for (p in parts) assertTrue(e.message!!.contains(p), "'${e.message}' should contain '$p'")
    }

    @Test
    fun aListRetracesOnANewLengthAndReusesTheSameLength() {
        val lengths = mutableListOf<Int>()
        polyfn { tf, inputs ->
            val xs = inputs.list<TFloat32>("xs")
            lengths += xs.size
            mapOf("sum" to tf.math.addN(xs))
        }.use { sum ->
            TFloat32.scalarOf(1f).use { a ->
                TFloat32.scalarOf(2f).use { b ->
                    TFloat32.scalarOf(4f).use { c ->
                        TFloat32.vectorOf(1f, 2f).use { v ->
                            assertEquals(3f, sum("xs" to listOf(a, b)) { it.get<TFloat32>("sum").getFloat() }, 0f)
                            assertEquals(6f, sum("xs" to listOf(b, c)) { it.get<TFloat32>("sum").getFloat() }, 0f)
                            assertEquals(1, sum.traceCount())
                            assertEquals(7f, sum("xs" to listOf(a, b, c)) { it.get<TFloat32>("sum").getFloat() }, 0f)
                            assertEquals(2, sum.traceCount())
                            assertEquals(5f, sum("xs" to listOf(c, a)) { it.get<TFloat32>("sum").getFloat() }, 0f)
                            assertEquals(2, sum.traceCount())
                            // the same length with another element shape traces again
                            assertEquals(4f, sum("xs" to listOf(v, v)) { it.get<TFloat32>("sum").getFloat(1) }, 0f)
                            assertEquals(3, sum.traceCount())
                        }
                    }
                }
            }
            assertEquals(listOf(2, 3, 2), lengths)
        }
    }

    @Test
    fun aMapWithReorderedKeysReusesItsTrace() {
        val keyOrders = mutableListOf<List<String>>()
        polyfn { tf, inputs ->
            val m = inputs.map<TFloat32>("m")
            keyOrders += m.keys.toList()
            mapOf("diff" to tf.math.sub(m.getValue("a"), m.getValue("b")))
        }.use { f ->
            TFloat32.scalarOf(10f).use { a ->
                TFloat32.scalarOf(3f).use { b ->
                    assertEquals(7f, f("m" to mapOf("b" to b, "a" to a)) { it.get<TFloat32>("diff").getFloat() }, 0f)
                    assertEquals(7f, f("m" to mapOf("a" to a, "b" to b)) { it.get<TFloat32>("diff").getFloat() }, 0f)
                    assertEquals(-7f, f("m" to mapOf("b" to a, "a" to b)) { it.get<TFloat32>("diff").getFloat() }, 0f)
                    assertEquals(1, f.traceCount())
                    // another key set is another signature
                    assertEquals(7f, f("m" to mapOf("a" to a, "b" to b, "c" to b)) { it.get<TFloat32>("diff").getFloat() }, 0f)
                    assertEquals(2, f.traceCount())
                }
            }
            assertEquals(listOf(listOf("a", "b"), listOf("a", "b", "c")), keyOrders)
        }
    }

    @Test
    fun aJavaIntInputRetracesOnANewValueOnly() {
        val traced = mutableListOf<Int>()
        polyfn { tf, inputs ->
            val n: Int = inputs.javaInput<Int>("n")
            traced += n
            mapOf("y" to tf.math.mul(inputs.input<TFloat32>("x"), tf.constant(n.toFloat())))
        }.use { f ->
            TFloat32.scalarOf(1.5f).use { x ->
                for ((n, expected) in listOf(2 to 3f, 2 to 3f, 3 to 4.5f, 2 to 3f, 3 to 4.5f)) {
                    assertEquals(expected, f("x" to x, "n" to n) { it.get<TFloat32>("y").getFloat() }, 0f)
                }
                assertEquals(2, f.traceCount())
                assertEquals(listOf(2, 3), traced)
                // javaInput<Int> asks for an Integer: a Long is a mistyped argument
                assertMessage(assertThrows(IllegalArgumentException::class.java) { f("x" to x, "n" to 2L) }, "'n'", "java.lang.Integer")
                assertEquals(2, f.traceCount())
            }
        }
    }

    @Test
    fun aJavaDefaultOmittedOrPassedSharesOneTrace() {
        val bodyRuns = IntArray(1)
        polyfn { tf, inputs ->
            bodyRuns[0]++
            val scale: Float = inputs.javaInput("scale", 2f)
            mapOf("y" to tf.math.mul(inputs.input<TFloat32>("x"), tf.constant(scale)))
        }.use { f ->
            TFloat32.scalarOf(5f).use { x ->
                assertEquals(10f, f("x" to x) { it.get<TFloat32>("y").getFloat() }, 0f)
                assertEquals(10f, f("x" to x, "scale" to 2f) { it.get<TFloat32>("y").getFloat() }, 0f)
                assertEquals(1, f.traceCount())
                assertEquals(15f, f("x" to x, "scale" to 3f) { it.get<TFloat32>("y").getFloat() }, 0f)
                assertEquals(10f, f("x" to x) { it.get<TFloat32>("y").getFloat() }, 0f)
                assertEquals(2, f.traceCount())
                assertEquals(2, bodyRuns[0])
            }
        }
    }

    @Test
    fun aTensorDefaultOmittedOrPassedSharesOneTrace() {
        TFloat32.scalarOf(1f).use { bias ->
            TFloat32.vectorOf(0f, 0f).use { zeros ->
                polyfn { tf, inputs ->
                    val x = inputs.input<TFloat32>("x", Shape.of(-1))
                    val b = inputs.input("b", bias)                      // T inferred: TFloat32
                    val offset = inputs.input("offset", Shape.of(-1), zeros)
                    mapOf("y" to tf.math.add(tf.math.add(x, b), offset))
                }.use { f ->
                    TFloat32.vectorOf(1f, 2f).use { x ->
                        TFloat32.scalarOf(10f).use { ten ->
                            TFloat32.vectorOf(100f, 200f).use { hundreds ->
                                assertEquals(3f, f("x" to x) { it.get<TFloat32>("y").getFloat(1) }, 0f)
                                assertEquals(12f, f("x" to x, "b" to ten) { it.get<TFloat32>("y").getFloat(1) }, 0f)
                                assertEquals(
                                    212f,
                                    f("x" to x, "b" to ten, "offset" to hundreds) { it.get<TFloat32>("y").getFloat(1) },
                                    0f,
                                )
                                assertEquals(1, f.traceCount())
                            }
                        }
                    }
                }
            }
        }
    }
}
