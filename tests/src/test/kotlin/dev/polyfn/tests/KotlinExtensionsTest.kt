package dev.polyfn.tests

import dev.polyfn.Function
import dev.polyfn.MapFunction
import dev.polyfn.kotlin.MapBodyFn
import dev.polyfn.kotlin.asMapBody
import dev.polyfn.kotlin.call
import dev.polyfn.kotlin.contains
import dev.polyfn.kotlin.get
import dev.polyfn.kotlin.input
import dev.polyfn.kotlin.invoke
import dev.polyfn.kotlin.polyfn
import dev.polyfn.kotlin.toMap
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertFalse
import org.junit.jupiter.api.Assertions.assertSame
import org.junit.jupiter.api.Assertions.assertThrows
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Test
import org.tensorflow.ndarray.Shape
import org.tensorflow.types.TFloat32
import org.tensorflow.types.TFloat64
import org.tensorflow.types.TInt32
import org.tensorflow.types.family.TFloating
import org.tensorflow.types.family.TNumber

/** The Kotlin extensions of polyfn-kotlin: `polyfn { }`, calls with pairs, reified tensor types. */
class KotlinExtensionsTest {

    private fun addTwo(bodyRuns: IntArray, name: String? = null): MapFunction = polyfn(name) { tf, inputs ->
        bodyRuns[0]++
        mapOf("y" to tf.math.add(inputs.input<TFloat32>("x"), tf.constant(2f)))
    }

    private fun assertMessage(e: Throwable, vararg parts: String) {
        for (p in parts) assertTrue(e.message!!.contains(p), "'${e.message}' should contain '$p'")
    }

    @Test
    fun polyfnDefinesAFunctionCalledWithPairs() {
        addTwo(IntArray(1)).use { f ->
            TFloat32.scalarOf(40f).use { x ->
                f("x" to x).use { out ->
                    assertEquals(42f, out.get<TFloat32>("y").getFloat(), 0f)
                    assertSame(out.get<TFloat32>("y"), out["y"])
                }
                f.call("x" to x).use { out -> assertEquals(42f, out.get<TFloat32>("y").getFloat(), 0f) }
                f(mapOf("x" to x)).use { out -> assertEquals(42f, out.get<TFloat32>("y").getFloat(), 0f) }
            }
            assertEquals("function", f.name())
            assertEquals(1, f.traceCount())
        }
    }

    @Test
    fun invokeWithABlockReturnsItsResultAndClosesTheOutputs() {
        addTwo(IntArray(1)).use { f ->
            TFloat32.vectorOf(1f, 2f).use { x ->
                lateinit var seen: dev.polyfn.Outputs
                val y = f("x" to x) { out ->
                    seen = out
                    out.get<TFloat32>("y").getFloat(1)
                }
                assertEquals(4f, y, 0f)
                assertThrows(IllegalStateException::class.java) { seen.get("y") }
            }
        }
    }

    @Test
    fun useClosesTheOutputsEvenWhenTheBlockThrows() {
        addTwo(IntArray(1)).use { f ->
            TFloat32.scalarOf(1f).use { x ->
                val out = f("x" to x)
                assertThrows(ArithmeticException::class.java) { out.use { throw ArithmeticException("boom") } }
                assertMessage(assertThrows(IllegalStateException::class.java) { out.get<TFloat32>("y") }, "closed")
            }
        }
    }

    @Test
    fun sameShapeReusesTheTraceAndANewShapeRetraces() {
        val bodyRuns = IntArray(1)
        addTwo(bodyRuns).use { f ->
            TFloat32.scalarOf(1f).use { s ->
                TFloat32.vectorOf(1f, 2f).use { v2 ->
                    TFloat32.vectorOf(1f, 2f, 3f).use { v3 ->
                        for (i in 0 until 3) {
                            for (x in listOf(s, v2, v3)) {
                                f("x" to x) { out -> assertEquals(x.shape(), out.get<TFloat32>("y").shape()) }
                            }
                        }
                    }
                }
            }
            assertEquals(3, f.traceCount())
            assertEquals(3, bodyRuns[0])
            assertEquals(
                listOf("(x: TensorSpec(FLOAT, []))", "(x: TensorSpec(FLOAT, [2]))", "(x: TensorSpec(FLOAT, [3]))"),
                f.concreteFunctions().map { it.functionType().toString() },
            )
        }
    }

    @Test
    fun aReifiedFamilyTypeWithAShapeTracesOncePerDtype() {
        val bodyRuns = IntArray(1)
        polyfn("half") { tf, inputs ->
            bodyRuns[0]++
            val x = inputs.input<TFloating>("x", Shape.of(-1))
            mapOf("y" to tf.math.div(x, tf.dtypes.cast(tf.constant(2f), x.type())))
        }.use { half ->
            TFloat32.vectorOf(4f, 6f).use { f1 ->
                TFloat32.vectorOf(1f, 2f, 3f).use { f2 ->
                    TFloat64.vectorOf(3.0).use { d ->
                        assertEquals(3f, half("x" to f1) { it.get<TFloat32>("y").getFloat(1) }, 0f)
                        assertEquals(1.5f, half("x" to f2) { it.get<TFloat32>("y").getFloat(2) }, 0f)
                        assertEquals(1.5, half("x" to d) { it.get<TFloat64>("y").getDouble(0) }, 0.0)
                        half("x" to d).close()
                    }
                }
            }
            assertEquals(2, half.traceCount())
            assertEquals(2, bodyRuns[0])
            assertEquals("half", half.name())
            assertTrue(half.concreteFunctions()[0].name().startsWith("polyfn_half_"), half.concreteFunctions()[0].name())
        }
    }

    @Test
    fun aShapeConstraintRejectsWhatDoesNotFit() {
        polyfn { tf, inputs -> mapOf("sum" to tf.sum(inputs.input<TFloat32>("v", Shape.of(-1)), tf.constant(0))) }.use { sum ->
            TFloat32.vectorOf(1f, 2f, 3f).use { v ->
                TFloat32.tensorOf(Shape.of(2, 2)).use { matrix ->
                    assertEquals(6f, sum("v" to v) { it.get<TFloat32>("sum").getFloat() }, 0f)
                    assertMessage(assertThrows(IllegalArgumentException::class.java) { sum("v" to matrix) }, "'v'", "[-1]")
                    assertEquals(1, sum.traceCount())
                }
            }
        }
    }

    @Test
    fun aMissingArgumentIsAnIllegalArgumentExceptionNamingTheParameter() {
        polyfn("add") { tf, inputs ->
            mapOf("sum" to tf.math.add(inputs.input<TFloat32>("a"), inputs.input<TFloat32>("b")))
        }.use { add ->
            TFloat32.scalarOf(1f).use { one ->
                TFloat32.scalarOf(2f).use { two ->
                    // before the first trace, then once the parameters are known
                    assertMessage(assertThrows(IllegalArgumentException::class.java) { add("a" to one) }, "'b'")
                    assertEquals(0, add.traceCount())
                    assertEquals(3f, add("a" to one, "b" to two) { it.get<TFloat32>("sum").getFloat() }, 0f)
                    assertMessage(assertThrows(IllegalArgumentException::class.java) { add.call("b" to one) }, "missing", "'a'")
                    assertEquals(1, add.traceCount())
                }
            }
        }
    }

    @Test
    fun aNameGivenTwiceIsRejectedAndTheFunctionStillWorks() {
        addTwo(IntArray(1)).use { f ->
            TFloat32.scalarOf(1f).use { one ->
                TFloat32.scalarOf(5f).use { five ->
                    assertMessage(assertThrows(IllegalArgumentException::class.java) { f("x" to one, "x" to five) }, "'x'", "twice")
                    assertEquals(7f, f("x" to five) { it.get<TFloat32>("y").getFloat() }, 0f)
                }
            }
        }
    }

    @Test
    fun aNonTensorArgumentNamesTheParameter() {
        addTwo(IntArray(1)).use { f ->
            TFloat32.scalarOf(1f).use { one ->
                f("x" to one).close()
                assertMessage(assertThrows(IllegalArgumentException::class.java) { f("x" to "1.5") }, "'x'", "tensor")
            }
        }
    }

    @Test
    fun reifiedOutputsCheckTheTypeAndOffersContainsAndToMap() {
        polyfn { tf, inputs ->
            val x = inputs.input<TNumber>("x")
            mapOf("square" to tf.math.mul(x, x), "n" to tf.size(x))
        }.use { f ->
            TInt32.vectorOf(-3, 4).use { x ->
                f("x" to x).use { out ->
                    assertEquals(16, out.get<TInt32>("square").getInt(1))
                    assertEquals(2, out.get<TInt32>("n").getInt())
                    assertTrue("n" in out)
                    assertFalse("m" in out)
                    assertEquals(setOf("square", "n"), out.toMap().keys)
                    assertSame(out.get<TInt32>("n"), out.toMap()["n"])
                    assertMessage(assertThrows(IllegalArgumentException::class.java) { out.get<TFloat32>("n") }, "TInt32", "TFloat32")
                    assertMessage(assertThrows(IllegalArgumentException::class.java) { out.get<TInt32>("m") }, "'m'")
                }
            }
        }
    }

    @Test
    fun aKotlinBodyWorksWithTheJavaApiThroughAsMapBody() {
        val body: MapBodyFn = { tf, inputs -> mapOf("y" to tf.math.neg(inputs.input<TFloat32>("x"))) }
        Function.define(body.asMapBody()).use { f ->
            TFloat32.scalarOf(3f).use { x -> assertEquals(-3f, f("x" to x) { it.get<TFloat32>("y").getFloat() }, 0f) }
        }
    }
}
