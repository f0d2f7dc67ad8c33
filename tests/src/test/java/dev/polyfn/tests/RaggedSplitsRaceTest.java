package dev.polyfn.tests;

import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.polyfn.Function;
import dev.polyfn.MapFunction;
import dev.polyfn.Outputs;
import dev.polyfn.RaggedOperand;
import dev.polyfn.RaggedTensor;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;
import org.tensorflow.ndarray.index.Indices;
import org.tensorflow.types.TFloat32;
import org.tensorflow.types.TInt64;

/**
 * A caller's thread rewrites a ragged argument's row splits while other calls pass it: Polyfn
 * checks the splits, then TensorFlow must see exactly what was checked. Before the fix, the
 * caller's own tensor went to TensorFlow after the check, so a split rewritten in between reached
 * a kernel unchecked (here a gather, which then failed with TensorFlow's own error; a kernel that
 * trusts ragged splits would read out of bounds). Run in a child JVM; outcomes are counted.
 */
class RaggedSplitsRaceTest {

  @Test
  void rowSplitsRewrittenDuringCallsAreCheckedAsTensorFlowSeesThem() throws Exception {
    String out = ChildJvm.run(RaggedSplitsRaceTest.class, "3000");
    System.out.println(out);
    assertTrue(out.contains("unexpected=0"), out);
    assertTrue(out.matches("(?s).*\\bok=[1-9].*"), "no call answered:\n" + out);
    assertTrue(out.matches("(?s).*\\brefused=[1-9].*"), "the rewritten splits were never seen:\n" + out);
  }

  public static void main(String[] args) throws Exception {
    int calls = Integer.parseInt(args[0]);
    Map<String, Integer> counts = new TreeMap<>();
    AtomicBoolean done = new AtomicBoolean();
    // The first value of each row: a gather at the row starts [splits[0], splits[1]).
    try (MapFunction f = Function.define((tf, in) -> {
           RaggedOperand<TFloat32> r = in.ragged("r", TFloat32.class);
           return Map.of("firsts", tf.gather(r.flatValues(), tf.stridedSlice(r.rowSplits(), Indices.sliceTo(-1)),
               tf.constant(0)));
         });
         TFloat32 values = TFloat32.vectorOf(1f, 2f, 3f, 4f);
         TInt64 splits = TInt64.vectorOf(0, 2, 4)) {
      Thread writer = new Thread(() -> {
        // Each value stays for a few microseconds, so calls see both and some see the rewrite
        // between Polyfn's check and TensorFlow's run.
        long k = 0;
        while (!done.get()) {
          splits.setLong(++k % 2 == 0 ? 2L : 1_000_000L, 1);
          long until = System.nanoTime() + 1_000 + k % 7 * 700;
          while (System.nanoTime() < until) {
            Thread.onSpinWait();
          }
        }
      });
      writer.start();
      RaggedTensor<TFloat32> r = RaggedTensor.of(values, splits);
      for (int i = 0; i < calls; i++) {
        try (Outputs o = f.call(Map.of("r", r))) {
          TFloat32 y = o.get("firsts", TFloat32.class);
          counts.merge(y.getFloat(0) == 1f && y.getFloat(1) == 3f ? "ok" : "wrong", 1, Integer::sum);
        } catch (IllegalArgumentException e) {
          boolean ours = String.valueOf(e.getMessage()).startsWith("argument 'r': a RaggedTensor's row_splits_0 must not decrease");
          counts.merge(ours ? "refused" : "unexpected", 1, Integer::sum);
          if (!ours && counts.get("unexpected") == 1) {
            System.out.println("first unexpected: " + e);
          }
        } catch (RuntimeException e) {
          counts.merge("unexpected", 1, Integer::sum);
          if (counts.get("unexpected") == 1) {
            System.out.println("first unexpected: " + e);
          }
        }
      }
      done.set(true);
      writer.join();
      // The function still answers a good call.
      try (TInt64 good = TInt64.vectorOf(0, 2, 4); Outputs o = f.call(Map.of("r", RaggedTensor.of(values, good)))) {
        counts.merge(o.get("firsts", TFloat32.class).getFloat(1) == 3f ? "ok" : "wrong", 1, Integer::sum);
      }
    }
    counts.putIfAbsent("unexpected", 0);
    counts.putIfAbsent("wrong", 0);
    System.out.println(counts);
    System.out.println("unexpected=" + (counts.get("unexpected") + counts.get("wrong")));
  }
}
