// The guide's other Kotlin snippets (docs/kotlin.md, signatures.md, structured-values.md),
// compiled so that they cannot drift (DocsTest checks that each is copied from here).
package dev.polyfn.tests.guide

import dev.polyfn.FunctionOptions
import dev.polyfn.kotlin.*
import org.tensorflow.Operand
import org.tensorflow.types.TFloat32
import org.tensorflow.types.TInt64

@Suppress("UNUSED_VARIABLE")
internal fun functionKinds(a: TFloat32, b: TFloat32, bias: TFloat32, x: TFloat32) {
    polyfnSingle("weightedSum") { tf, inputs ->
        val xs = inputs.list<TFloat32>("xs")              // a List of tensors: a new length retraces
        val w = inputs.map<TFloat32>("w")                 // a Map<String, Tensor>: key order ignored
        val scale = inputs.javaInput("scale", 2f)         // a Java value with a default: traced per value
        tf.math.mul(tf.math.add(tf.math.addN(xs), w.getValue("bias")), tf.constant(scale))
    }.use { f ->
        val y = f("xs" to listOf(a, b), "w" to mapOf("bias" to bias)) { y -> (y as TFloat32).getFloat() }
    }

    polyfnUnary("square") { tf, x: Operand<TFloat32> -> tf.math.square(x) }.use { square ->
        square(x).use { y -> println(y.getFloat()) }      // TFloat32 in, TFloat32 out
    }

    polyfnList { tf, inputs ->
        val x = inputs.input<TFloat32>("x")
        listOf(tf.sum(x, tf.constant(0)), tf.max(x, tf.constant(0)))
    }.use { f ->
        f(x).use { out -> println(out.get<TFloat32>(1).getFloat()) }   // a bare tensor for the one parameter
    }
}

internal fun inferredSignature() {
    val f = polyfn(FunctionOptions.defaults().withExamples(
        listOf("x" to tensorSpec<TFloat32>(2, 3)),
        listOf("x" to tensorSpec<TFloat32>(5, 3)),
    )) { tf, inputs -> mapOf("rows" to tf.shape(inputs.input<TFloat32>("x"))) }
    println(f.suggestedSignature().kotlinLines())
}

@JvmRecord data class Batch(val features: TFloat32, val labels: TInt64, val size: Int)

fun scaleBySize() = polyfn { tf, inputs ->
    val b = inputs.record<Batch>("batch")
    mapOf("y" to tf.math.mul(b[Batch::features], tf.constant(b.value(Batch::size).toFloat())))
}
