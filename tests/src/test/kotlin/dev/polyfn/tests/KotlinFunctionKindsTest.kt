package dev.polyfn.tests

import dev.polyfn.Function
import dev.polyfn.FunctionOptions
import dev.polyfn.ListOutputs
import dev.polyfn.kotlin.ListBodyFn
import dev.polyfn.kotlin.SingleBodyFn
import dev.polyfn.kotlin.asListBody
import dev.polyfn.kotlin.asSingleBody
import dev.polyfn.kotlin.call
import dev.polyfn.kotlin.get
import dev.polyfn.kotlin.input
import dev.polyfn.kotlin.invoke
import dev.polyfn.kotlin.polyfn
import dev.polyfn.kotlin.polyfnList
import dev.polyfn.kotlin.polyfnSingle
import dev.polyfn.kotlin.polyfnUnary
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertSame
import org.junit.jupiter.api.Assertions.assertThrows
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Test
import org.tensorflow.Operand
import org.tensorflow.types.TFloat32
import org.tensorflow.types.TFloat64
import org.tensorflow.types.TInt32
import org.tensorflow.types.family.TFloating

/** The list, single and unary function kinds from Kotlin: builders, calls and closing. */
class KotlinFunctionKindsTest {

    private fun assertMessage(e: Throwable, vararg parts: String) {
        for (p in parts) assertTrue(e.message!!.contains(p), "'${e.message}' should contain '$p'")
    }

    @Test
    fun polyfnListReturnsTheOutputsInOrder() {
        val bodyRuns = IntArray(1)
        polyfnList("sumAndMax") { tf, inputs ->
            bodyRuns[0]++
            val x = inputs.input<TFloat32>("x")
            listOf(tf.sum(x, tf.constant(0)), tf.max(x, tf.constant(0)), tf.size(x))
        }.use { f ->
            TFloat32.vectorOf(1f, 5f, 3f).use { x ->
                f("x" to x).use { out ->
                    assertEquals(3, out.size)
                    assertEquals(9f, out.get<TFloat32>(0).getFloat(), 0f)
                    assertEquals(5f, out.get<TFloat32>(1).getFloat(), 0f)
                    assertEquals(3, out.get<TInt32>(2).getInt())
                    assertSame(out.get<TFloat32>(1), out[1])
                    val (sum, max) = out
                    assertSame(out[0], sum)
                    assertSame(out[1], max)
                    assertMessage(assertThrows(IllegalArgumentException::class.java) { out.get<TFloat32>(2) }, "TInt32", "TFloat32")
                }
                assertEquals(5f, f.call("x" to x).use { it.get<TFloat32>(1).getFloat() }, 0f)
                assertEquals(9f, f(mapOf("x" to x)).use { it.get<TFloat32>(0).getFloat() }, 0f)
                assertEquals(5f, f("x" to x) { it.get<TFloat32>(1).getFloat() }, 0f)
            }
            TFloat32.vectorOf(2f, 4f, 6f).use { x -> assertEquals(12f, f("x" to x) { it.get<TFloat32>(0).getFloat() }, 0f) }
            assertEquals(1, f.traceCount())
            assertEquals(1, bodyRuns[0])
            assertEquals("sumAndMax", f.name())
        }
    }

    @Test
    fun polyfnSingleReturnsTheOutputTensor() {
        val bodyRuns = IntArray(1)
        polyfnSingle("add") { tf, inputs ->
            bodyRuns[0]++
            tf.math.add(inputs.input<TFloat32>("a"), inputs.input<TFloat32>("b"))
        }.use { add ->
            TFloat32.scalarOf(40f).use { a ->
                TFloat32.scalarOf(2f).use { b ->
                    (add("a" to a, "b" to b) as TFloat32).use { y -> assertEquals(42f, y.getFloat(), 0f) }
                    add.call("a" to b, "b" to b).use { y -> assertEquals(4f, (y as TFloat32).getFloat(), 0f) }
                    add(mapOf("a" to a, "b" to a)).use { y -> assertEquals(80f, (y as TFloat32).getFloat(), 0f) }
                    assertEquals(42f, add("a" to a, "b" to b) { y -> (y as TFloat32).getFloat() }, 0f)
                    assertEquals(1, add.traceCount())
                    TFloat32.vectorOf(1f, 2f).use { v ->
                        assertEquals(4f, add("a" to v, "b" to b) { y -> (y as TFloat32).getFloat(1) }, 0f)
                    }
                    assertEquals(2, add.traceCount())
                    assertEquals(2, bodyRuns[0])
                }
            }
        }
    }

    @Test
    fun polyfnUnaryTakesAndReturnsTypedTensors() {
        val bodyRuns = IntArray(1)
        polyfnUnary("square") { tf, x: Operand<TFloat32> ->
            bodyRuns[0]++
            tf.math.square(x)
        }.use { square ->
            TFloat32.scalarOf(3f).use { x ->
                square(x).use { y: TFloat32 -> assertEquals(9f, y.getFloat(), 0f) }
                assertEquals(9f, square(x) { y -> y.getFloat() }, 0f)
            }
            TFloat32.vectorOf(1f, 2f).use { x -> assertEquals(4f, square(x) { it.getFloat(1) }, 0f) }
            assertEquals(2, square.traceCount())
            assertEquals(2, bodyRuns[0])
            assertEquals("square", square.name())
        }
        // a family input type traces once per dtype; the output type comes from the body
        polyfnUnary { tf, x: Operand<TFloating> -> tf.math.mul(x, x) }.use { f ->
            TFloat32.scalarOf(3f).use { x -> assertEquals(9f, f(x) { (it as TFloat32).getFloat() }, 0f) }
            TFloat64.scalarOf(4.0).use { x -> assertEquals(16.0, f(x) { (it as TFloat64).getDouble() }, 0.0) }
            assertEquals(2, f.traceCount())
            assertEquals("function", f.name())
        }
    }

    @Test
    fun aBareTensorCallBindsTheOnlyParameter() {
        TFloat32.vectorOf(1f, -2f).use { x ->
            polyfnSingle { tf, inputs -> tf.math.neg(inputs.input<TFloat32>("x")) }.use { neg ->
                neg(x).use { y -> assertEquals(2f, (y as TFloat32).getFloat(1), 0f) }
                assertEquals(-1f, neg(x) { (it as TFloat32).getFloat(0) }, 0f)
                assertEquals(2f, neg("x" to x) { (it as TFloat32).getFloat(1) }, 0f)
                assertEquals(1, neg.traceCount())
            }
            polyfnList { tf, inputs ->
                val v = inputs.input<TFloat32>("v")
                listOf(tf.math.abs(v), tf.math.neg(v))
            }.use { f ->
                f(x).use { (abs, neg) ->
                    assertEquals(2f, (abs as TFloat32).getFloat(1), 0f)
                    assertEquals(-1f, (neg as TFloat32).getFloat(0), 0f)
                }
                assertEquals(2f, f(x) { it.get<TFloat32>(1).getFloat(1) }, 0f)
                assertEquals(1, f.traceCount())
            }
            polyfn { tf, inputs -> mapOf("y" to tf.math.abs(inputs.input<TFloat32>("x"))) }.use { f ->
                f(x).use { out -> assertEquals(2f, out.get<TFloat32>("y").getFloat(1), 0f) }
                assertEquals(1f, f(x) { it.get<TFloat32>("y").getFloat(0) }, 0f)
                assertEquals(1, f.traceCount())
            }
            polyfnSingle { tf, inputs -> tf.math.add(inputs.input<TFloat32>("a"), inputs.input<TFloat32>("b")) }.use { add ->
                add("a" to x, "b" to x).close()
                assertMessage(assertThrows(IllegalArgumentException::class.java) { add(x) }, "2 parameters")
                assertEquals(1, add.traceCount())
            }
        }
    }

    @Test
    fun useAndTheBlockFormCloseListOutputs() {
        polyfnList { tf, inputs -> listOf(tf.math.neg(inputs.input<TFloat32>("x"))) }.use { f ->
            TFloat32.scalarOf(2f).use { x ->
                val out = f(x)
                assertEquals(-2f, out.use { it.get<TFloat32>(0).getFloat() }, 0f)
                assertMessage(assertThrows(IllegalStateException::class.java) { out.get<TFloat32>(0) }, "closed")

                lateinit var seen: ListOutputs
                assertEquals(-2f, f("x" to x) { seen = it; it.get<TFloat32>(0).getFloat() }, 0f)
                assertMessage(assertThrows(IllegalStateException::class.java) { seen[0] }, "closed")

                val thrown = f(x)
                assertThrows(ArithmeticException::class.java) { thrown.use { throw ArithmeticException("boom") } }
                assertMessage(assertThrows(IllegalStateException::class.java) { thrown.get<TFloat32>(0) }, "closed")
            }
        }
    }

    @Test
    fun optionsReachEveryKind() {
        val bounded = FunctionOptions.defaults().withName("bounded").withMaxConcreteFunctions(1)
        polyfnSingle(bounded) { tf, inputs -> tf.math.neg(inputs.input<TFloat32>("x")) }.use { f ->
            TFloat32.scalarOf(1f).use { s ->
                TFloat32.vectorOf(1f, 2f).use { v ->
                    for (x in listOf(s, v, s)) f(x).close()
                }
            }
            assertEquals("bounded", f.name())
            assertEquals(3, f.traceCount())            // the scalar's function was evicted by the vector's
            assertEquals(1, f.concreteFunctions().size)
        }
        polyfnList(FunctionOptions.defaults().withName("pair")) { tf, inputs ->
            val x = inputs.input<TFloat32>("x")
            listOf(x, tf.math.neg(x))
        }.use { f -> assertEquals("pair", f.name()) }
        polyfnUnary(FunctionOptions.defaults().withName("neg")) { tf, x: Operand<TFloat32> -> tf.math.neg(x) }.use { f ->
            TFloat32.scalarOf(5f).use { x -> assertEquals(-5f, f(x) { it.getFloat() }, 0f) }
            assertEquals("neg", f.name())
        }
    }

    @Test
    fun aNameGivenTwiceIsRejectedByEveryKind() {
        polyfnList { tf, inputs -> listOf(tf.math.neg(inputs.input<TFloat32>("x"))) }.use { list ->
            polyfnSingle { tf, inputs -> tf.math.neg(inputs.input<TFloat32>("x")) }.use { single ->
                TFloat32.scalarOf(1f).use { one ->
                    assertMessage(assertThrows(IllegalArgumentException::class.java) { list("x" to one, "x" to one) }, "'x'", "twice")
                    assertMessage(assertThrows(IllegalArgumentException::class.java) { single.call("x" to one, "x" to one) }, "'x'", "twice")
                    assertEquals(0, list.traceCount())
                    assertEquals(0, single.traceCount())
                }
            }
        }
    }

    @Test
    fun kotlinBodiesWorkWithTheJavaApi() {
        val listBody: ListBodyFn = { tf, inputs -> listOf(tf.math.neg(inputs.input<TFloat32>("x"))) }
        val singleBody: SingleBodyFn = { tf, inputs -> tf.math.abs(inputs.input<TFloat32>("x")) }
        Function.defineList(listBody.asListBody()).use { f ->
            TFloat32.scalarOf(3f).use { x -> assertEquals(-3f, f(x) { it.get<TFloat32>(0).getFloat() }, 0f) }
        }
        Function.defineSingle(singleBody.asSingleBody()).use { f ->
            TFloat32.scalarOf(-3f).use { x -> assertEquals(3f, f(x) { (it as TFloat32).getFloat() }, 0f) }
        }
    }
}
