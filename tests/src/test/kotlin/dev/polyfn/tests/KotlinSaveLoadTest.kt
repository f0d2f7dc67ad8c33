package dev.polyfn.tests

import dev.polyfn.Function
import dev.polyfn.FunctionOptions
import dev.polyfn.MapFunction
import dev.polyfn.kotlin.get
import dev.polyfn.kotlin.input
import dev.polyfn.kotlin.invoke
import dev.polyfn.kotlin.polyfn
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertThrows
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.io.TempDir
import org.tensorflow.types.TFloat32
import java.nio.file.Path

/** Save and load from Kotlin: a saved function loads with its dispatch, a miss is refused. */
class KotlinSaveLoadTest {

    @Test
    fun savedFunctionLoadsWithItsDispatch(@TempDir dir: Path) {
        val double = polyfn(FunctionOptions.defaults().withName("double")) { tf, inputs ->
            val x = inputs.input<TFloat32>("x")
            mapOf("y" to tf.math.mul(x, tf.constant(2f)))
        }
        double.use { f ->
            TFloat32.vectorOf(1f, 2f).use { x -> f("x" to x) { } }
            f.save(dir)
        }
        (Function.load(dir) as MapFunction).use { g ->
            val y = TFloat32.vectorOf(3f, 4f).use { x -> g("x" to x) { out -> out.get<TFloat32>("y").getFloat(1) } }
            assertEquals(8f, y)
            assertEquals(1, g.traceCount()) // the saved concrete function; the call traced nothing
            assertEquals(1, g.concreteFunctions().size)
            assertThrows(IllegalArgumentException::class.java) {
                TFloat32.vectorOf(1f).use { x -> g("x" to x) { } }
            }
        }
    }
}
