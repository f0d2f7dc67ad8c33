package dev.polyfn.tests.guide;

import dev.polyfn.Composites;
import dev.polyfn.Function;
import dev.polyfn.FunctionOptions;
import dev.polyfn.MapBody;
import dev.polyfn.MapFunction;
import dev.polyfn.NestFunction;
import dev.polyfn.NestOutputs;
import dev.polyfn.Outputs;
import dev.polyfn.RecordInput;
import dev.polyfn.SignatureSuggestion;
import dev.polyfn.TensorSpec;
import dev.polyfn.Variable;
import dev.polyfn.tests.ragged.RaggedOperand;
import dev.polyfn.tests.ragged.RaggedType;
import java.nio.file.Path;
import java.util.Map;
import org.tensorflow.Operand;
import org.tensorflow.ndarray.Shape;
import org.tensorflow.types.TFloat32;
import org.tensorflow.types.TInt64;

/**
 * The snippets of docs/structured-values.md, signatures.md and save-load.md, compiled so that they
 * cannot drift (DocsTest checks that each is copied from here).
 */
final class ValuesAndFiles {
  private ValuesAndFiles() {}

  static void records(Operand<TFloat32> w, TFloat32 features, TInt64 labels) {
    record Batch(TFloat32 features, TInt64 labels, int size) {}   // the caller's type
    record Heads<T>(T logits, T probs) {}                           // generic in its leaves

    NestFunction classify = Function.defineNested((tf, in) -> {
      RecordInput<Batch> b = in.record("batch", Batch.class);
      Operand<TFloat32> x = b.get(Batch::features);                 // typed by the component
      int size = b.value(Batch::size);                               // a Java value: in the signature
      Operand<TFloat32> logits = tf.linalg.matMul(tf.reshape(x, tf.constant(new long[] {size, -1})), w);
      return new Heads<>(logits, tf.nn.softmax(logits));
    });
    try (NestOutputs out = classify.call(Map.of("batch", new Batch(features, labels, 32)))) {
      Heads<TFloat32> h = out.value();                               // the same record, of tensors
    }
  }

  static MapFunction ragged() {
    Composites.register(RaggedType.INSTANCE);
    MapFunction rowSums = Function.define((tf, in) -> {
      RaggedOperand r = in.composite("r", RaggedType.INSTANCE);
      return Map.of("total", tf.sum(r.values(), tf.constant(0)));   // elided in the guide
    }, FunctionOptions.defaults().withReduceRetracing(true));
    // values [5], rows 2 → traced; values [3], rows 2 → traced, values generalize to [-1];
    // values [6], rows 2 → reused; rows 3 → traced once more: Ragged(FLOAT, [-1, -1]; values: [-1], row_splits: [-1])
    return rowSums;
  }

  static MapFunction examples(TFloat32 batchOf17x3, TFloat32 a2x4) {
    MapFunction rowSum = Function.define((tf, in) -> {
      Operand<TFloat32> x = in.input("x", TFloat32.class);          // no shape declared
      return Map.of("s", tf.sum(x, tf.constant(new int[] {0, 1})));
    }, FunctionOptions.defaults().withExampleInputs(
        Map.of("x", TensorSpec.of(TFloat32.class, Shape.of(2, 3))),
        Map.of("x", TensorSpec.of(TFloat32.class, Shape.of(5, 3))),
        Map.of("x", TensorSpec.of(TFloat32.class, Shape.of(1, 3)))));

    rowSum.traceCount();        // 1, before any call: (x: TensorSpec(FLOAT, [-1, 3]))
    rowSum.inferenceReport();   // [x: TensorSpec(FLOAT, [-1, 3]) (inferred from 3 examples)]
    rowSum.call(Map.of("x", batchOf17x3));   // hits the inferred trace, as does every [n, 3]
    rowSum.call(Map.of("x", a2x4));          // IllegalArgumentException:
    // argument 'x': expected TensorSpec(FLOAT, [-1, 3]) (inferred from 3 examples), got TensorSpec(FLOAT, [2, 4])
    return rowSum;
  }

  static void profile(MapFunction rowSum) throws Exception {
    SignatureSuggestion s = rowSum.suggestedSignature();
    System.out.print(s);
    // 1000 calls recorded: 50 traces as declared, 1 with these declarations
    // Java:
    //   Operand<TFloat32> x = in.input("x", TFloat32.class, Shape.of(-1, 3));
    // Kotlin:
    //   val x = inputs.input<TFloat32>("x", Shape.of(-1, 3))
    rowSum.writeSignatureProfile(Path.of("rowsum-profile.json"));
  }

  static MapFunction fromProfile(MapBody body) {
    MapFunction rowSum = Function.define(body,
        FunctionOptions.defaults().withSignatureProfile(Path.of("rowsum-profile.json")));
    return rowSum;
  }

  static void saveAndLoad() {
    try (Variable<TFloat32> w = Variable.create(TFloat32.vectorOf(1f, 2f, 3f));
         MapFunction scale = Function.define((tf, in) -> {
           Operand<TFloat32> x = in.input("x", TFloat32.class);
           return Map.of("y", tf.math.add(tf.math.mul(x, w.read(tf)), tf.constant(1f)));
         }, FunctionOptions.defaults().withName("scale"))) {
      scale.getConcreteFunction(Map.of("x", TensorSpec.of(TFloat32.class, Shape.of(3))));
      scale.getConcreteFunction(Map.of("x", TensorSpec.of(TFloat32.class, Shape.of(-1, 3))));
      scale.save(Path.of("/models/scale"));                       // or save(dir, SaveOptions...)
    }

    // Any JVM, later: the saved concrete functions and dispatch, no body, no tracing.
    try (MapFunction scale = (MapFunction) Function.load(Path.of("/models/scale"));
         TFloat32 x = TFloat32.vectorOf(1f, 1f, 2f);
         Outputs out = scale.call(Map.of("x", x))) {
      TFloat32 y = out.get("y", TFloat32.class);                  // traceCount() stays 2: the saved ones
    }
  }

  static void loadPython() {
    MapFunction scale = (MapFunction) Function.load(Path.of("/models/py"));   // its one tf.function
    MapFunction add = Function.load(Path.of("/models/module"), "add");          // a tf.Module's function by name
  }

  static MapFunction traceCache(MapBody body) {
    MapFunction f = Function.define(body, FunctionOptions.defaults()
        .withName("score")
        .withTraceCache(Path.of("/var/cache/myapp/polyfn"), "2"));   // the version is optional
    return f;
  }
}
