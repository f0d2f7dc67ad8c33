package dev.polyfn.tests

import dev.polyfn.FunctionOptions
import dev.polyfn.MapFunction
import dev.polyfn.kotlin.call
import dev.polyfn.kotlin.get
import dev.polyfn.kotlin.input
import dev.polyfn.kotlin.polyfn
import java.nio.file.Path
import org.junit.jupiter.api.Assertions.assertFalse
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.io.TempDir
import org.tensorflow.types.TFloat32

/**
 * Two Kotlin lambdas of one class under one name, each at its own `polyfn { }`: the trace cache
 * tells them apart by that place (their classes are numbered per run), whatever the order.
 */
class KotlinTraceCacheKeyTest {
    companion object {
        /** Child JVM: args = cache dir, which is defined first ("add" or "mul"). */
        @JvmStatic
        fun main(args: Array<String>) {
            val twin = FunctionOptions.defaults().withTraceCache(Path.of(args[0])).withName("twin")
            val defined = mutableMapOf<String, MapFunction>()
            for (which in if (args[1] == "add") listOf("add", "mul") else listOf("mul", "add")) {
                defined[which] = if (which == "add") {
                    polyfn(twin) { tf, inputs ->
                        val x = inputs.input<TFloat32>("x")
                        mapOf("y" to tf.math.add(x, x))
                    }
                } else {
                    polyfn(twin) { tf, inputs ->
                        val x = inputs.input<TFloat32>("x")
                        mapOf("y" to tf.math.mul(x, x))
                    }
                }
            }
            for ((which, f) in defined.toSortedMap()) {
                f.use {
                    TFloat32.scalarOf(3f).use { x ->
                        f.call("x" to x).use { out -> println("$which ${out.get<TFloat32>("y").getFloat()} traces ${f.traceCount()}") }
                    }
                }
            }
        }
    }

    @Test
    fun kotlinLambdasDefinedAtTwoPlacesAreToldApartInEitherOrder(@TempDir dir: Path) {
        val first = ChildJvm.run(KotlinTraceCacheKeyTest::class.java, dir.toString(), "add")
        assertTrue(first.contains("add 6.0 traces 1") && first.contains("mul 9.0 traces 1"), first)
        val second = ChildJvm.run(KotlinTraceCacheKeyTest::class.java, dir.toString(), "mul")
        // Used to give mul, defined first, the key add had written under: mul 6.0 with no trace.
        assertTrue(second.contains("add 6.0 traces 0") && second.contains("mul 9.0 traces 0"), second)
        assertFalse(first.contains("is not trace-cached"), first)
    }
}
