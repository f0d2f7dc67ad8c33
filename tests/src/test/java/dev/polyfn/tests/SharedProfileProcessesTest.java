package dev.polyfn.tests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.polyfn.Function;
import dev.polyfn.FunctionOptions;
import dev.polyfn.MapBody;
import dev.polyfn.MapFunction;
import dev.polyfn.Outputs;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.tensorflow.ndarray.Shape;
import org.tensorflow.types.TFloat32;

/**
 * A signature profile rewritten by two JVMs while two others define functions from it, as a
 * fleet whose workers each write the profile they recorded to one shared file: every definition
 * reads a whole profile (old or new; half of one would fail the definition), and every call's
 * result is checked against the value computed here.
 */
class SharedProfileProcessesTest {
  private static final MapBody DOUBLE = (tf, in) -> Map.of("y", tf.math.mul(in.input("x", TFloat32.class), tf.constant(2f)));

  /**
   * Child JVM. {@code write file seed millis}: calls with random shapes and writes its profile to
   * file after each call. {@code read file seed millis}: defines from the profile and calls, over
   * and over; prints the outcome line.
   */
  public static void main(String[] args) throws Exception {
    Path file = Path.of(args[1]);
    Random random = new Random(Long.parseLong(args[2]));
    long end = System.currentTimeMillis() + Long.parseLong(args[3]);
    SharedFilesHarness.Counts counts = new SharedFilesHarness.Counts();
    int done = 0;
    if (args[0].equals("write")) {
      try (MapFunction f = Function.define(DOUBLE, FunctionOptions.defaults().withName("doubled"))) {
        // The first call fixes the parameter list and is not recorded; two batch sizes recorded
        // make every profile written suggest [-1, 3], which the readers' calls all fit.
        for (int n : new int[] {1, 1, 2}) {
          call(f, n, random, counts);
        }
        do {
          call(f, 1 + random.nextInt(6), random, counts);
          f.writeSignatureProfile(file);
          done++;
        } while (System.currentTimeMillis() < end || done < 30); // rewrites while the readers run, on a busy machine too
      }
    } else {
      do {
        try (MapFunction f = Function.define(DOUBLE, FunctionOptions.defaults().withName("doubled")
            .withSignatureProfile(file))) {
          call(f, 1 + random.nextInt(6), random, counts);
        } catch (RuntimeException e) {
          counts.error(e);
        }
        done++;
      } while (System.currentTimeMillis() < end || done < 30);
    }
    System.out.println(counts.line("done=" + done));
  }

  /** One call with an [n, 3] tensor of small integers; checks y = 2x. */
  private static void call(MapFunction f, int n, Random random, SharedFilesHarness.Counts counts) {
    float[] a = new float[n * 3];
    for (int i = 0; i < a.length; i++) {
      a[i] = random.nextInt(41) - 20;
    }
    try (TFloat32 x = TFloat32.tensorOf(Shape.of(n, 3), d -> {
          for (int i = 0; i < a.length; i++) {
            d.setFloat(a[i], i / 3, i % 3);
          }
        });
         Outputs out = f.call(Map.of("x", x))) {
      TFloat32 y = out.get("y", TFloat32.class);
      for (int i = 0; i < a.length; i++) {
        if (y.getFloat(i / 3, i % 3) != 2f * a[i]) {
          counts.wrong("[" + n + ", 3] element " + i + ": " + y.getFloat(i / 3, i % 3) + ", expected " + 2f * a[i]);
          return;
        }
      }
      counts.right.incrementAndGet();
    } catch (RuntimeException e) {
      counts.error(e);
    }
  }

  @Test
  void definitionsReadAWholeProfileWhileOtherJvmsRewriteIt(@TempDir Path dir, @TempDir Path logs) throws Exception {
    Path profile = dir.resolve("doubled-profile.json");
    ChildJvm.run(SharedProfileProcessesTest.class, "write", profile.toString(), "1", "1"); // there before the reads
    List<String[]> children = new ArrayList<>();
    children.add(new String[] {"write", profile.toString(), "2", "6000"});
    children.add(new String[] {"write", profile.toString(), "3", "6000"});
    children.add(new String[] {"read", profile.toString(), "4", "6000"});
    children.add(new String[] {"read", profile.toString(), "5", "6000"});
    List<String> out = SharedFilesHarness.runAll(logs, SharedProfileProcessesTest.class, children);
    SharedFilesHarness.Counts total = SharedFilesHarness.sum(out);
    String all = String.join("\n----\n", out);
    assertEquals(0, total.wrong.get(), all);
    assertEquals(0, total.errors.get(), "a definition read half a profile, or a call failed:\n" + all);
    assertTrue(total.right.get() > 0, all);
    try (var files = java.nio.file.Files.list(dir)) {
      assertEquals(List.of(profile), files.toList(), "temporary profile files left");
    }
  }
}
