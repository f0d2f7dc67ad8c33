// The guide's Kotlin quickstart (docs/kotlin.md and the README), compiled so that it cannot drift
// (DocsTest checks that the guide's copy is this file's).
package dev.polyfn.tests.guide

import dev.polyfn.kotlin.*
import org.tensorflow.ndarray.Shape
import org.tensorflow.types.TFloat32
import org.tensorflow.types.TFloat64
import org.tensorflow.types.family.TFloating

fun main() {
    // Traced once per input signature (dtype and shape), cached, run natively afterwards.
    polyfn("half") { tf, inputs ->
        val x = inputs.input<TFloating>("x", Shape.of(-1))   // any float dtype, any length
        mapOf("y" to tf.math.div(x, tf.dtypes.cast(tf.constant(2f), x.type())))
    }.use { half ->
        TFloat32.vectorOf(1f, 2f, 3f).use { x ->
            half("x" to x).use { out ->                      // Outputs are AutoCloseable
                println(out.get<TFloat32>("y").getFloat(2))   // 1.5
            }
        }
        TFloat64.vectorOf(5.0).use { x ->
            val y = half("x" to x) { out -> out.get<TFloat64>("y").getDouble(0) }  // closes the outputs
            println(y)                                                              // 2.5
        }
        println(half.traceCount())                            // 2: one per dtype
    }
}
