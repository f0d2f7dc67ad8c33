package dev.polyfn.tests

import dev.polyfn.FunctionOptions
import dev.polyfn.kotlin.MapBodyFn
import dev.polyfn.kotlin.call
import dev.polyfn.kotlin.get
import dev.polyfn.kotlin.input
import dev.polyfn.kotlin.polyfn
import dev.polyfn.kotlin.polyfnUnary
import java.nio.file.Path
import java.util.concurrent.atomic.AtomicInteger
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.io.TempDir
import org.tensorflow.Operand
import org.tensorflow.types.TFloat32

private val bodyRuns = AtomicInteger()

/** A top-level lambda: it captures nothing, so its class file is all the key needs. */
private val triple: MapBodyFn = { tf, inputs ->
    bodyRuns.incrementAndGet()
    mapOf("y" to tf.math.mul(inputs.input<TFloat32>("x"), tf.constant(3f)))
}

/**
 * The trace cache with Kotlin bodies: polyfn-kotlin's wrappers hold the user's lambda, which the
 * key follows (it used to refuse every Kotlin body as one holding a value).
 */
class KotlinWarmStartTest {
    companion object {
        /** Child JVM: args = cache dir, the factor a capturing lambda multiplies by. */
        @JvmStatic
        fun main(args: Array<String>) {
            val cached = FunctionOptions.defaults().withTraceCache(Path.of(args[0]))
            val k = args[1].toFloat()
            polyfn(cached.withName("triple"), triple).use { f ->
                TFloat32.scalarOf(2f).use { x ->
                    f.call("x" to x).use { out -> println("triple ${out.get<TFloat32>("y").getFloat()} traces ${f.traceCount()}") }
                }
            }
            polyfnUnary(cached.withName("neg")) { tf, x: Operand<TFloat32> -> tf.math.neg(x) }.use { f ->
                TFloat32.scalarOf(2f).use { x ->
                    f.call(x).use { y -> println("neg ${y.getFloat()} traces ${f.traceCount()}") }
                }
            }
            // Captures k: a value no class file shows, so never cached.
            polyfn(cached.withName("scaled")) { tf, inputs ->
                mapOf("y" to tf.math.mul(inputs.input<TFloat32>("x"), tf.constant(k)))
            }.use { f ->
                TFloat32.scalarOf(2f).use { x ->
                    f.call("x" to x).use { out -> println("scaled ${out.get<TFloat32>("y").getFloat()} traces ${f.traceCount()}") }
                }
            }
            println("bodyRuns ${bodyRuns.get()}")
        }
    }

    @Test
    fun kotlinBodiesWarmStartAndCapturedValuesAreNotCached(@TempDir dir: Path) {
        val first = ChildJvm.run(KotlinWarmStartTest::class.java, dir.toString(), "2")
        assertTrue(first.contains("triple 6.0 traces 1") && first.contains("neg -2.0 traces 1"), first)
        assertTrue(first.contains("scaled 4.0 traces 1"), first)
        val second = ChildJvm.run(KotlinWarmStartTest::class.java, dir.toString(), "5")
        assertTrue(second.contains("triple 6.0 traces 0") && second.contains("bodyRuns 0"), second)
        assertTrue(second.contains("neg -2.0 traces 0"), second)
        assertTrue(second.contains("scaled 10.0 traces 1"), second)
    }
}
