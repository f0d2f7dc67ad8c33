package dev.polyfn.tests

import dev.polyfn.FunctionOptions
import dev.polyfn.kotlin.get
import dev.polyfn.kotlin.input
import dev.polyfn.kotlin.invoke
import dev.polyfn.kotlin.polyfn
import dev.polyfn.kotlin.tensorSpec
import dev.polyfn.kotlin.withExamples
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertThrows
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.io.TempDir
import org.tensorflow.ndarray.Shape
import org.tensorflow.types.TFloat32
import java.nio.file.Path

/** Signature inference from Kotlin: examples as pairs, reified specs, the profile round trip. */
class KotlinSignatureInferenceTest {

    private fun rowCount(options: FunctionOptions) = polyfn(options) { tf, inputs ->
        val x = inputs.input<TFloat32>("x")
        mapOf("rows" to tf.shape(x))
    }

    private fun rows(f: dev.polyfn.MapFunction, n: Long, k: Long = 3): Int =
        TFloat32.tensorOf(Shape.of(n, k)).use { x -> f("x" to x) { out -> out.get<org.tensorflow.types.TInt32>("rows").getInt(0) } }

    @Test
    fun examplesAsPairsTraceOnceAndEveryBatchSizeHits() {
        val options = FunctionOptions.defaults().withExamples(
            listOf("x" to tensorSpec<TFloat32>(2, 3)),
            listOf("x" to tensorSpec<TFloat32>(5, 3)),
        )
        rowCount(options).use { f ->
            assertEquals(1, f.traceCount())
            assertEquals(listOf("x: TensorSpec(FLOAT, [-1, 3]) (inferred from 2 examples)"), f.inferenceReport())
            for (n in 1L..12L) assertEquals(n.toInt(), rows(f, n))
            assertEquals(1, f.traceCount())
            val e = assertThrows(IllegalArgumentException::class.java) { rows(f, 2, 4) }
            assertEquals(
                "argument 'x': expected TensorSpec(FLOAT, [-1, 3]) (inferred from 2 examples), got TensorSpec(FLOAT, [2, 4])",
                e.message,
            )
        }
    }

    @Test
    fun anExampleGivingAParameterTwiceIsRefusedNamingTheParameterAndTheExample() {
        // As a map the pairs would keep the second x: [5, 4] instead of the [5, 3] also written.
        val e = assertThrows(IllegalArgumentException::class.java) {
            FunctionOptions.defaults().withExamples(
                listOf("x" to tensorSpec<TFloat32>(2, 3)),
                listOf("x" to tensorSpec<TFloat32>(5, 3), "k" to 1, "x" to tensorSpec<TFloat32>(5, 4)),
            )
        }
        assertEquals("example 2: parameter 'x' is given twice (an example gives each parameter once)", e.message)
    }

    @Test
    fun theSuggestionPrintsKotlinLinesAndTheProfileRoundTrips(@TempDir dir: Path) {
        val file = dir.resolve("profile.json")
        rowCount(FunctionOptions.defaults()).use { f ->
            for (i in 0 until 30) rows(f, 1L + i % 5)
            val s = f.suggestedSignature()
            assertEquals(5, s.tracesBefore())
            assertEquals(1, s.tracesAfter())
            assertEquals(listOf("val x = inputs.input<TFloat32>(\"x\", Shape.of(-1, 3))"), s.kotlinLines())
            f.writeSignatureProfile(file)
        }
        rowCount(FunctionOptions.defaults().withSignatureProfile(file)).use { f ->
            assertEquals(1, f.traceCount())
            assertEquals(7, rows(f, 7))
            assertEquals(1, f.traceCount())
        }
    }
}
