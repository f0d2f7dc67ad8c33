package dev.polyfn.tests

import dev.polyfn.Function
import dev.polyfn.FunctionOptions
import dev.polyfn.MapFunction
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertThrows
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Test
import org.tensorflow.ndarray.Shape
import org.tensorflow.types.TFloat32
import org.tensorflow.types.TFloat64
import org.tensorflow.types.family.TFloating

/** The plain Java API from Kotlin: bodies are Kotlin lambdas through SAM conversion, no extensions. */
class KotlinJavaApiTest {

    private fun addTwo(bodyRuns: IntArray): MapFunction = Function.define { tf, inputs ->
        bodyRuns[0]++
        val x = inputs.input("x", TFloat32::class.java)
        mapOf("y" to tf.math.add(x, tf.constant(2f)))
    }

    @Test
    fun aSamConvertedLambdaAddsTwo() {
        addTwo(IntArray(1)).use { f ->
            TFloat32.scalarOf(40f).use { x ->
                f.call(mapOf("x" to x)).use { out ->
                    assertEquals(42f, out.get("y", TFloat32::class.java).getFloat(), 0f)
                    assertEquals(listOf("y"), out.names())
                }
            }
        }
    }

    @Test
    fun sameShapeReusesTheTraceAndANewShapeRetraces() {
        val bodyRuns = IntArray(1)
        addTwo(bodyRuns).use { f ->
            for (i in 0 until 4) {
                TFloat32.vectorOf(i.toFloat(), 2f * i).use { x ->
                    f.call(mapOf("x" to x)).use { out ->
                        assertEquals(i + 2f, out.get("y", TFloat32::class.java).getFloat(0), 0f)
                    }
                }
            }
            assertEquals(1, f.traceCount())
            TFloat32.tensorOf(Shape.of(2, 3)).use { m -> f.call(mapOf("x" to m)).use { } }
            assertEquals(2, f.traceCount())
            assertEquals(2, bodyRuns[0])
        }
    }

    @Test
    fun aFamilyDtypeTracesOncePerDtype() {
        Function.define({ tf, inputs ->
            val x = inputs.input("x", TFloating::class.java, Shape.of(-1))
            mapOf("y" to tf.math.div(x, tf.dtypes.cast(tf.constant(2f), x.type())))
        }, FunctionOptions.defaults().withName("half")).use { half ->
            TFloat32.vectorOf(4f, 6f).use { f1 ->
                TFloat32.vectorOf(1f, 2f, 3f).use { f2 ->
                    TFloat64.vectorOf(3.0).use { d ->
                        half.call(mapOf("x" to f1)).use { assertEquals(3f, it.get("y", TFloat32::class.java).getFloat(1), 0f) }
                        half.call(mapOf("x" to f2)).use { assertEquals(1.5f, it.get("y", TFloat32::class.java).getFloat(2), 0f) }
                        half.call(mapOf("x" to d)).use { assertEquals(1.5, it.get("y", TFloat64::class.java).getDouble(0), 0.0) }
                    }
                }
            }
            assertEquals(2, half.traceCount())
            assertEquals("half", half.name())
        }
    }

    @Test
    fun aMissingArgumentIsAnIllegalArgumentExceptionNamingTheParameter() {
        Function.define { tf, inputs ->
            mapOf("sum" to tf.math.add(inputs.input("a", TFloat32::class.java), inputs.input("b", TFloat32::class.java)))
        }.use { add ->
            TFloat32.scalarOf(1f).use { one ->
                val e = assertThrows(IllegalArgumentException::class.java) { add.call(mapOf("a" to one)) }
                assertTrue(e.message!!.contains("'b'"), e.message)
                add.call(mapOf("a" to one, "b" to one)).use { assertEquals(2f, it.get("sum", TFloat32::class.java).getFloat(), 0f) }
            }
        }
    }

    @Test
    fun useClosesTheOutputs() {
        addTwo(IntArray(1)).use { f ->
            TFloat32.scalarOf(1f).use { x ->
                val out = f.call(mapOf("x" to x))
                out.use { assertEquals(3f, it.get("y", TFloat32::class.java).getFloat(), 0f) }
                val e = assertThrows(IllegalStateException::class.java) { out.get("y") }
                assertTrue(e.message!!.contains("closed"), e.message)
            }
        }
    }
}
