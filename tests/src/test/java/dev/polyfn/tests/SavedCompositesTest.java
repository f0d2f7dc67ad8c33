package dev.polyfn.tests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.polyfn.Composites;
import dev.polyfn.Function;
import dev.polyfn.FunctionOptions;
import dev.polyfn.MapFunction;
import dev.polyfn.NestFunction;
import dev.polyfn.NestOutputs;
import dev.polyfn.Outputs;
import dev.polyfn.tests.ragged.Ragged;
import dev.polyfn.tests.ragged.RaggedOperand;
import dev.polyfn.tests.ragged.RaggedType;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.tensorflow.types.TFloat32;
import org.tensorflow.types.TInt64;

/**
 * A function taking or returning a user composite type saves flattened (its components), and
 * loads in another JVM (a child JVM: the type registry is per JVM) where the type is registered,
 * with the same results; where it is not, the load fails naming the type and how to register it,
 * rather than loading a function that fails every call.
 */
class SavedCompositesTest {
  @Test
  void aUserCompositeLoadsInAnotherJvmWhereItIsRegistered(@TempDir Path dir) throws Exception {
    CompositeValuesTest.register();
    String expected;
    try (MapFunction sums = Function.define((tf, in) -> Map.of("sums",
            CompositeValuesTest.rowSums(tf, in.composite("r", RaggedType.INSTANCE))), FunctionOptions.defaults().withName("sums"));
         NestFunction doubled = Function.defineNested((tf, in) -> {
           RaggedOperand r = in.composite("r", RaggedType.INSTANCE);
           return new RaggedOperand(tf.math.mul(r.values(), tf.constant(2f)), r.rowSplits());
         }, FunctionOptions.defaults().withName("doubled"))) {
      expected = Child.run(sums, doubled);
      sums.save(dir.resolve("sums"));
      doubled.save(dir.resolve("doubled"));
    }
    assertEquals("sums [1.0, 5.0]\ndoubled [2.0, 4.0, 6.0] [0, 1, 3]\n", expected);
    String out = ChildJvm.run(Child.class, dir.toString(), "register");
    assertTrue(out.endsWith(expected), out);
    out = ChildJvm.run(Child.class, dir.toString(), "none");
    for (String f : List.of("sums", "doubled")) {
      assertTrue(out.contains("refused " + f + ": " + dir.resolve(f).resolve("assets.extra/polyfn.json"))
          && out.contains("composite type 'Ragged', which is not registered in this JVM: register it with Composites.register"),
          out);
    }
  }

  /** The child JVM: loads both functions (registering Ragged first or not) and prints their results. */
  public static final class Child {
    private Child() {}

    /** Calls both functions on one ragged value: "sums [...]", "doubled [values] [row splits]". */
    static String run(MapFunction sums, NestFunction doubled) {
      StringBuilder b = new StringBuilder();
      try (TFloat32 v = TFloat32.vectorOf(1f, 2f, 3f);
           TInt64 s = TInt64.vectorOf(0, 1, 3);
           Outputs o = sums.call(Map.of("r", new Ragged(v, s)));
           NestOutputs n = doubled.call(Map.of("r", new Ragged(v, s)))) {
        b.append("sums ").append(floats(o.get("sums", TFloat32.class))).append('\n');
        Ragged r = (Ragged) n.value();
        List<Long> splits = new ArrayList<>();
        r.rowSplits().scalars().forEach(x -> splits.add(x.getLong()));
        b.append("doubled ").append(floats(r.values())).append(' ').append(splits).append('\n');
      }
      return b.toString();
    }

    private static List<Float> floats(TFloat32 t) {
      List<Float> out = new ArrayList<>();
      t.scalars().forEach(x -> out.add(x.getFloat()));
      return out;
    }

    public static void main(String[] args) {
      Path dir = Path.of(args[0]);
      if (args[1].equals("register")) {
        Composites.register(RaggedType.INSTANCE);
      }
      MapFunction sums = null;
      NestFunction doubled = null;
      try {
        sums = (MapFunction) Function.load(dir.resolve("sums"));
      } catch (IllegalArgumentException e) {
        System.out.println("refused sums: " + e.getMessage());
      }
      try {
        doubled = (NestFunction) Function.load(dir.resolve("doubled"));
      } catch (IllegalArgumentException e) {
        System.out.println("refused doubled: " + e.getMessage());
      }
      if (sums != null && doubled != null) {
        System.out.print(run(sums, doubled));
        sums.close();
        doubled.close();
      }
    }
  }
}
