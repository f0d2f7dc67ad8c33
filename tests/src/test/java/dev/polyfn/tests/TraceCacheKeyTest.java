package dev.polyfn.tests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.polyfn.Function;
import dev.polyfn.FunctionOptions;
import dev.polyfn.Inputs;
import dev.polyfn.MapBody;
import dev.polyfn.MapFunction;
import dev.polyfn.TensorSpec;
import java.io.Serializable;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import javax.tools.JavaCompiler;
import javax.tools.ToolProvider;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.tensorflow.Operand;
import org.tensorflow.ndarray.Shape;
import org.tensorflow.op.Ops;
import org.tensorflow.types.TFloat32;

/**
 * What the trace cache's key must tell apart, each over two JVMs sharing one directory: a value an
 * anonymous body inherits from its superclass, two lambdas of one class (by their method when
 * serializable, else by the place they are defined at), and this run's example inputs. In each
 * case the second JVM must return what a JVM with an empty cache returns.
 */
class TraceCacheKeyTest {
  /** A body holding a value in a superclass field: not in any class file, so not in the key. */
  abstract static class Scaled implements MapBody {
    final float k;

    Scaled(float k) {
      this.k = k;
    }
  }

  /** A class with one lambda of {@code MapBody}: that lambda is known wherever it is defined. */
  static final class Sole {
    static final MapBody CUBE = (tf, in) -> {
      var x = in.input("x", TFloat32.class);
      return Map.of("y", tf.math.mul(x, tf.math.mul(x, x)));
    };
  }

  private static final MapBody ADD = (tf, in) -> {
    var x = in.input("x", TFloat32.class);
    return Map.of("y", tf.math.add(x, x));
  };

  private static final MapBody MUL = (tf, in) -> {
    var x = in.input("x", TFloat32.class);
    return Map.of("y", tf.math.mul(x, x));
  };

  private static final MapBody ADD_SERIALIZABLE = (MapBody & Serializable) (tf, in) -> {
    var x = in.input("x", TFloat32.class);
    return Map.of("y", tf.math.add(x, x));
  };

  private static final MapBody MUL_SERIALIZABLE = (MapBody & Serializable) (tf, in) -> {
    var x = in.input("x", TFloat32.class);
    return Map.of("y", tf.math.mul(x, x));
  };

  private static final MapBody SUM = (tf, in) -> Map.of("y", tf.reduceSum(in.input("x", TFloat32.class),
      tf.constant(new int[] {0, 1})));

  /**
   * A user's class whose name holds "$Proxy" (as {@code Gateway$ProxyRoutes} does) but is no JDK
   * proxy: its frames are part of the place, so its two defines are told apart.
   */
  static final class ProxyRoutes {
    static MapFunction define(String which, FunctionOptions options) {
      if (which.equals("add")) {
        return Function.define((tf, in) -> {
          var x = in.input("x", TFloat32.class);
          return Map.of("y", tf.math.add(x, x));
        }, options);
      }
      return Function.define((tf, in) -> {
        var x = in.input("x", TFloat32.class);
        return Map.of("y", tf.math.mul(x, x));
      }, options);
    }
  }

  /**
   * Compiles a caller class that defines {@code CacheBodies.<field>} under the name "twin" (both
   * versions put the define at the same bytecode index: only the field differs), loads it in a
   * class loader of its own and runs it: an edit of the caller between two runs.
   */
  private static void runEditedCaller(Path dir, FunctionOptions options, String field) throws Exception {
    Path src = Files.createDirectories(dir.resolveSibling("src-" + field)); // beside the cache, in the test's directory
    Files.writeString(src.resolve("EditedCaller.java"), String.join("\n",
        "public class EditedCaller {",
        "  public static void run(dev.polyfn.FunctionOptions options) {",
        "    try (dev.polyfn.MapFunction f = dev.polyfn.Function.define(dev.polyfn.tests.CacheBodies." + field
            + ", options.withName(\"twin\"));",
        "         org.tensorflow.types.TFloat32 x = org.tensorflow.types.TFloat32.scalarOf(3f);",
        "         dev.polyfn.Outputs out = f.call(java.util.Map.of(\"x\", x))) {",
        "      float y = out.get(\"y\", org.tensorflow.types.TFloat32.class).getFloat();",
        "      System.out.println(\"result \" + y + \" traces \" + f.traceCount());",
        "    }",
        "  }",
        "}"));
    JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
    int rc = javac.run(null, null, null, "-cp", System.getProperty("java.class.path"), "-d", src.toString(),
        src.resolve("EditedCaller.java").toString());
    if (rc != 0) {
      throw new IllegalStateException("javac failed: " + rc);
    }
    try (URLClassLoader loader = new URLClassLoader(new URL[] {src.toUri().toURL()}, TraceCacheKeyTest.class.getClassLoader())) {
      loader.loadClass("EditedCaller").getMethod("run", FunctionOptions.class).invoke(null, options);
    }
  }

  /** Child JVM: args = mode, cache dir, then the mode's own. Prints results and trace counts. */
  public static void main(String[] args) throws Exception {
    Path dir = Path.of(args[1]);
    FunctionOptions cached = FunctionOptions.defaults().withTraceCache(dir);
    switch (args[0]) {
      case "inherited" -> {
        MapBody body = new Scaled(Float.parseFloat(args[2])) {
          @Override
          public Map<String, Operand<?>> define(Ops tf, Inputs in) {
            return Map.of("y", tf.math.mul(in.input("x", TFloat32.class), tf.constant(k)));
          }
        };
        try (MapFunction f = Function.define(body, cached.withName("scaled"))) {
          System.out.println("scaled " + call(f, 2f) + " traces " + f.traceCount());
        }
      }
      case "unnamed", "same-place", "serializable" -> {
        // args[2]: which is defined first ("add" or "mul"); both by the one define below
        FunctionOptions options = args[0].equals("unnamed") ? cached : cached.withName("twin");
        boolean serializable = args[0].equals("serializable");
        MapBody addBody = serializable ? ADD_SERIALIZABLE : ADD;
        MapBody mulBody = serializable ? MUL_SERIALIZABLE : MUL;
        boolean addFirst = args[2].equals("add");
        List<MapFunction> defined = new ArrayList<>();
        try {
          for (MapBody body : addFirst ? List.of(addBody, mulBody) : List.of(mulBody, addBody)) {
            defined.add(Function.define(body, options));
          }
          printBoth(defined.get(addFirst ? 0 : 1), defined.get(addFirst ? 1 : 0));
        } finally {
          defined.forEach(MapFunction::close);
        }
      }
      case "proxy-named" -> {
        // args[2]: which is defined first, each by its own define in ProxyRoutes, called from here
        List<MapFunction> defined = new ArrayList<>();
        List<String> order = args[2].equals("add") ? List.of("add", "mul") : List.of("mul", "add");
        try {
          for (String which : order) {
            defined.add(ProxyRoutes.define(which, cached.withName("twin")));
          }
          int add = order.indexOf("add");
          printBoth(defined.get(add), defined.get(1 - add));
        } finally {
          defined.forEach(MapFunction::close);
        }
      }
      case "edited-caller" -> runEditedCaller(dir, cached, args[2]); // args[2]: ADD or MUL
      case "two-places" -> {
        // args[2]: which is defined first; each lambda is written at its own define
        FunctionOptions twin = cached.withName("twin");
        MapFunction add = null;
        MapFunction mul = null;
        try {
          for (String which : args[2].equals("add") ? List.of("add", "mul") : List.of("mul", "add")) {
            if (which.equals("add")) {
              add = Function.define((tf, in) -> {
                var x = in.input("x", TFloat32.class);
                return Map.of("y", tf.math.add(x, x));
              }, twin);
            } else {
              mul = Function.define((tf, in) -> {
                var x = in.input("x", TFloat32.class);
                return Map.of("y", tf.math.mul(x, x));
              }, twin);
            }
          }
          printBoth(add, mul);
        } finally {
          for (MapFunction f : new MapFunction[] {add, mul}) {
            if (f != null) {
              f.close();
            }
          }
        }
      }
      case "sole" -> {
        // args[2]: "write" or "read", each defining Sole.CUBE at a place of its own
        try (MapFunction f = args[2].equals("write") ? Function.define(Sole.CUBE, cached.withName("cube"))
            : Function.define(Sole.CUBE, cached.withName("cube"))) {
          System.out.println("cube " + call(f, 2f) + " traces " + f.traceCount());
        }
      }
      default -> {
        // examples: args[2..] are shapes "2x3"
        List<Map<String, ?>> examples = new ArrayList<>();
        for (int i = 2; i < args.length; i++) {
          String[] dims = args[i].split("x");
          examples.add(Map.of("x", TensorSpec.of(TFloat32.class,
              Shape.of(Long.parseLong(dims[0]), Long.parseLong(dims[1])))));
        }
        try (MapFunction f = Function.define(SUM, cached.withName("sum").withExampleInputs(examples));
             TFloat32 x = TFloat32.tensorOf(Shape.of(4, 7), d -> d.scalars().forEach(s -> s.setFloat(1f)));
             var out = f.call(Map.of("x", x))) {
          System.out.println("sum " + out.get("y", TFloat32.class).getFloat() + " traces " + f.traceCount());
        } catch (IllegalArgumentException e) {
          System.out.println("refused " + e.getMessage());
        }
      }
    }
  }

  private static void printBoth(MapFunction add, MapFunction mul) {
    System.out.println("add " + call(add, 3f) + " traces " + add.traceCount());
    System.out.println("mul " + call(mul, 3f) + " traces " + mul.traceCount());
  }

  private static float call(MapFunction f, float x) {
    try (TFloat32 t = TFloat32.scalarOf(x); var out = f.call(Map.of("x", t))) {
      return out.get("y", TFloat32.class).getFloat();
    }
  }

  private static String run(Path dir, String mode, String... rest) throws Exception {
    String[] args = new String[rest.length + 2];
    args[0] = mode;
    args[1] = dir.toString();
    System.arraycopy(rest, 0, args, 2, rest.length);
    return ChildJvm.run(TraceCacheKeyTest.class, args);
  }

  @Test
  void aValueInheritedFromASuperclassIsNotBakedIntoTheCache(@TempDir Path dir) throws Exception {
    String first = run(dir, "inherited", "2");
    assertTrue(first.contains("scaled 4.0 traces 1"), first);
    String second = run(dir, "inherited", "5");
    // Used to restore the first JVM's graph, k = 2 in it: 4.0 with no trace.
    assertTrue(second.contains("scaled 10.0 traces 1"), second);
  }

  @Test
  void unnamedFunctionsAreNotCachedAndSayWhy(@TempDir Path dir) throws Exception {
    String first = run(dir, "unnamed", "add");
    assertTrue(first.contains("add 6.0 traces 1") && first.contains("mul 9.0 traces 1"), first);
    String second = run(dir, "unnamed", "add");
    // Both used to share the default name's entries: add served mul's graph (9.0).
    assertTrue(second.contains("add 6.0 traces 1") && second.contains("mul 9.0 traces 1"), second);
    assertTrue(first.contains("is not trace-cached: it has no name of its own"), first);
  }

  @Test
  void lambdasOfOneClassDefinedAtTwoPlacesAreToldApartInEitherOrder(@TempDir Path dir) throws Exception {
    String first = run(dir, "two-places", "add");
    assertTrue(first.contains("add 6.0 traces 1") && first.contains("mul 9.0 traces 1"), first);
    String second = run(dir, "two-places", "mul");
    // Used to give mul, defined first, the key add had written under: mul 6.0 with no trace.
    assertTrue(second.contains("add 6.0 traces 0") && second.contains("mul 9.0 traces 0"), second);
    assertFalse(first.contains("is not trace-cached"), first); // each place has a key of its own
  }

  @Test
  void aClassesOnlyLambdaOfItsInterfaceSharesItsEntriesAcrossPlaces(@TempDir Path dir) throws Exception {
    String first = run(dir, "sole", "write");
    assertTrue(first.contains("cube 8.0 traces 1"), first);
    String second = run(dir, "sole", "read");
    assertTrue(second.contains("cube 8.0 traces 0"), second); // its place is not in its key
  }

  @Test
  void lambdasDefinedInAClassNamedLikeAProxyAreToldApartByTheirPlace(@TempDir Path dir) throws Exception {
    String first = run(dir, "proxy-named", "add");
    assertTrue(first.contains("add 6.0 traces 1") && first.contains("mul 9.0 traces 1"), first);
    String second = run(dir, "proxy-named", "mul");
    // ProxyRoutes' frames used to be skipped as a JDK proxy's: both defines had one place, and
    // mul, defined first, restored add's entry (mul 6.0 with no trace).
    assertTrue(second.contains("add 6.0 traces 0") && second.contains("mul 9.0 traces 0"), second);
    assertFalse(first.contains("is not trace-cached"), first);
  }

  @Test
  void aCallerEditedToDefineAnotherBodyAtTheSameBytecodeIndexIsAnotherKey(@TempDir Path dir) throws Exception {
    Path cache = dir.resolve("cache");
    String first = run(cache, "edited-caller", "ADD");
    assertTrue(first.contains("result 6.0 traces 1"), first);
    String second = run(cache, "edited-caller", "MUL");
    // Used to have add's key (same class, same place), and MUL restored add's entry: 6.0, no trace.
    assertTrue(second.contains("result 9.0 traces 1"), second);
    String again = run(cache, "edited-caller", "MUL");
    assertTrue(again.contains("result 9.0 traces 0"), again); // the edited caller's own entries are found
  }

  @Test
  void aSecondBodyUnderTheSameNameClassAndPlaceIsNotCached(@TempDir Path dir) throws Exception {
    String first = run(dir, "same-place", "add");
    assertTrue(first.contains("add 6.0 traces 1") && first.contains("mul 9.0 traces 1"), first);
    String second = run(dir, "same-place", "add");
    // add (defined first) owns the key and restores its own entry; mul traces again.
    assertTrue(second.contains("add 6.0 traces 0") && second.contains("mul 9.0 traces 1"), second);
    assertTrue(first.contains("'twin' is not trace-cached: another body"), first);
  }

  @Test
  void serializableLambdasOfOneClassAreToldApartByTheirMethod(@TempDir Path dir) throws Exception {
    String first = run(dir, "serializable", "add");
    assertTrue(first.contains("add 6.0 traces 1") && first.contains("mul 9.0 traces 1"), first);
    assertFalse(first.contains("is not trace-cached"), first);
    // Defined in the other order: each still restores its own entry.
    String second = run(dir, "serializable", "mul");
    assertTrue(second.contains("add 6.0 traces 0") && second.contains("mul 9.0 traces 0"), second);
  }

  @Test
  void changedExampleInputsAreNotOverriddenByTheCachedDeclaration(@TempDir Path dir) throws Exception {
    String first = run(dir, "examples", "2x3", "5x3");
    assertTrue(first.contains("refused"), first); // [4, 7] is outside FLOAT[-1, 3]
    String second = run(dir, "examples", "2x3", "5x3", "4x7");
    // Used to restore the first JVM's declaration FLOAT[-1, 3] and refuse [4, 7].
    assertFalse(second.contains("refused"), second);
    assertTrue(second.contains("sum 28.0"), second);
    String third = run(dir, "examples", "2x3", "5x3", "4x7");
    assertTrue(third.contains("sum 28.0 traces 0"), third); // this run's examples: its own entries
  }

  /** The string values of a map parameter's entries, summed as lengths (a nest of Java values). */
  private static final MapBody LENGTHS = (MapBody & Serializable) (tf, in) -> {
    float total = 0;
    for (dev.polyfn.Nest e : in.nest("n").entries().values()) {
      total += e.value(String.class).length();
    }
    return Map.of("y", tf.constant(total));
  };

  /** The prefix (key hash) of the first entry the cache's writer thread writes to {@code dir}. */
  private static String firstPrefix(Path dir) throws Exception {
    for (int i = 0; i < 400; i++) {
      List<Path> written = Files.isDirectory(dir) ? FileFixtures.entries(dir) : List.of();
      if (!written.isEmpty()) {
        String name = written.get(0).getFileName().toString();
        return name.substring(0, name.indexOf('-'));
      }
      Thread.sleep(25);
    }
    throw new AssertionError("no entry written to " + dir);
  }

  /** The prefix (key hash) of the entries a definition with {@code example} writes to {@code dir}. */
  private static String prefixFor(Map<String, ?> example, Path dir) throws Exception {
    try (dev.polyfn.MapFunction f = dev.polyfn.Function.define(LENGTHS, dev.polyfn.FunctionOptions.defaults()
        .withName("lengths").withTraceCache(dir).withExampleInputs(List.of(example)))) {
      assertEquals(1, f.traceCount());
    }
    return firstPrefix(dir);
  }

  /**
   * Example inputs that differ only where a key's text could run together: a value holding the
   * separators of two entries ({"a": "1,b=java.lang.String:2"}) against two entries ({"a": "1",
   * "b": "2"}). Before, both described as {a=java.lang.String:1,b=java.lang.String:2}: one key,
   * so each run restored the other's entries and the declarations they carry.
   */
  @Test
  void exampleInputsWhoseTextsRunTogetherHaveKeysOfTheirOwn(@TempDir Path dir) throws Exception {
    String one = prefixFor(Map.of("n", Map.of("a", "1,b=java.lang.String:2")), dir.resolve("one"));
    String two = prefixFor(Map.of("n", Map.of("a", "1", "b", "2")), dir.resolve("two"));
    assertFalse(one.equals(two), "one key for two example sets: " + one);
  }

  private static final MapBody DOUBLED = (MapBody & Serializable) (tf, in) ->
      Map.of("y", tf.math.mul(in.input("x", TFloat32.class), tf.constant(2f)));

  /** The prefix of the entries a definition with example {@code x} (a Java array) writes to {@code dir}. */
  private static String arrayPrefix(float[] x, Path dir) throws Exception {
    try (MapFunction f = Function.define(DOUBLED, FunctionOptions.defaults().withName("doubled").withTraceCache(dir)
        .withExampleInputs(List.of(Map.of("x", x))))) {
      assertEquals(1, f.traceCount());
    }
    return firstPrefix(dir);
  }

  /**
   * A Java array example is keyed by its values: the same values in another array (the next run's)
   * share the key, other values do not. Before, its identity hash was the key's text: a warm start
   * never found its entries, and a hash repeating across runs could give float[2] float[3]'s.
   */
  @Test
  void javaArrayExamplesAreKeyedByTheirValues(@TempDir Path dir) throws Exception {
    String a = arrayPrefix(new float[] {1f, 2f}, dir.resolve("a"));
    String b = arrayPrefix(new float[] {1f, 2f}, dir.resolve("b"));
    String c = arrayPrefix(new float[] {1f, 2f, 3f}, dir.resolve("c"));
    assertEquals(a, b, "equal values, one key");
    assertFalse(a.equals(c), "other values, another key");
  }
}
