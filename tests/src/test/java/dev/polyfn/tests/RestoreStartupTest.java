package dev.polyfn.tests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.polyfn.Function;
import dev.polyfn.FunctionOptions;
import dev.polyfn.MapBody;
import dev.polyfn.MapFunction;
import dev.polyfn.Outputs;
import dev.polyfn.PolymorphicFunction;
import dev.polyfn.TensorSpec;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.tensorflow.ndarray.Shape;
import org.tensorflow.types.TFloat32;

/**
 * What a fresh JVM pays to restore signatures instead of tracing them (issue 27): a warm start
 * and a {@code Function.load} of a function whose definitions call no other function never load
 * protobuf's generated message classes (their first use cost more than the whole restore) nor
 * bootstrap a record's generated {@code equals} (a second restored signature's parameters are
 * compared with the first's); starting Polyfn hashes nothing with Java's SHA-256 nor reads its
 * native library from the jar (the children share one cache directory: the first start fills it).
 * Eleven signatures, so that one concrete function's name ({@code
 * _1}) is a prefix of two others' ({@code _10}, {@code _11}).
 */
class RestoreStartupTest {
  static final int SIGNATURES = 11;

  static final MapBody BODY = (tf, in) -> {
    var x = in.input("x", TFloat32.class);
    return Map.of("y", tf.math.add(tf.math.mul(x, tf.constant(2f)), tf.constant(1f)));
  };

  /** Child JVM: args = mode ("prepare", "warm", "load"), directory. Prints results and counts. */
  public static void main(String[] args) throws Exception {
    Path dir = Path.of(args[1]);
    FunctionOptions options = FunctionOptions.defaults().withName("restored").withTraceCache(dir.resolve("cache"));
    if (args[0].equals("prepare")) {
      try (MapFunction f = Function.define(BODY, options)) {
        for (int k = 1; k <= SIGNATURES; k++) {
          f.getConcreteFunction(Map.of("x", TensorSpec.of(TFloat32.class, Shape.of(k))));
        }
        f.save(dir.resolve("saved"));
      }
      return;
    }
    try (PolymorphicFunction f = args[0].equals("warm") ? Function.define(BODY, options) : Function.load(dir.resolve("saved"))) {
      float sum = 0;
      for (int k = 1; k <= SIGNATURES; k++) {
        try (TFloat32 x = TFloat32.tensorOf(Shape.of(k), d -> d.scalars().forEach(s -> s.setFloat(3f)));
             Outputs out = ((MapFunction) f).call(Map.of("x", x))) {
          sum += out.get("y", TFloat32.class).getFloat(k - 1);
        }
      }
      System.out.println("sum " + sum);
      System.out.println("concrete " + f.concreteFunctions().size());
      System.out.println("traceCount " + f.traceCount());
    }
  }

  @Test
  void restoredSignaturesLoadNoProtobufMessageClassesNorRecordMethods(@TempDir Path dir) throws Exception {
    ChildJvm.run(RestoreStartupTest.class, "prepare", dir.toString());
    for (String mode : List.of("warm", "load")) {
      String out = ChildJvm.runWith(List.of("-Xlog:class+load=info:stdout"), RestoreStartupTest.class, mode, dir.toString());
      assertTrue(out.contains("sum " + (7f * SIGNATURES)), mode + ": " + out);
      assertTrue(out.contains("concrete " + SIGNATURES), mode + ": " + out);
      // Warm start restores without tracing; a loaded function counts its saved traces.
      assertTrue(out.contains("traceCount " + (mode.equals("warm") ? 0 : SIGNATURES)), mode + ": " + out);
      // Nor protobuf's CodedInputStream (the wire walk is Polyfn's own, WireReader), nor a stream
      // of longs (a saved signature's dimensions), whose first use costs more than what they do.
      for (String cls : List.of("org.tensorflow.proto.FunctionDef ", "org.tensorflow.proto.NodeDef ",
          "java.lang.runtime.ObjectMethods ", "com.google.protobuf.CodedInputStream ", "java.util.stream.LongPipeline ")) {
        assertFalse(out.contains(cls), mode + " loaded " + cls);
      }
      // Nothing hashes with Java's SHA-256: the native library's place in the cache is named by
      // native checksums (hashing its 2.5 MB took 150-450 ms of each start), and the trace cache
      // hashes its key and entries natively (MessageDigest's first use costs 30-40 ms).
      assertFalse(out.contains("sun.security.provider.SHA2 "), mode + " hashed with Java's SHA-256");
      // Nor is Polyfn's native library read from the jar: a later start finds its file in the
      // cache by the fingerprint the jar ships.
      assertFalse(out.contains("dev.polyfn.internal.NativeLibraryCopy "), mode + " read the library from the jar");
      // A warm start that restores every signature writes no entry: the cache's writer (its
      // thread pool's queue, shutdown hook, lambdas) is never made.
      assertFalse(out.contains("java.util.concurrent.LinkedBlockingQueue "), mode + " made the cache's writer");
    }
    try (var entries = java.nio.file.Files.list(dir.resolve("cache"))) {
      assertEquals(SIGNATURES, entries.count());
    }
  }
}
