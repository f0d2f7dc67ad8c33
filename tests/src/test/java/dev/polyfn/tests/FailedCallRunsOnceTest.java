package dev.polyfn.tests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.polyfn.Function;
import dev.polyfn.FunctionOptions;
import dev.polyfn.MapFunction;
import dev.polyfn.Variable;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.tensorflow.Operand;
import org.tensorflow.types.TFloat32;

/**
 * A call whose body fails with TensorFlow's NOT_FOUND after an effect ran is run once: its error
 * reaches the caller and the effect happened once. (A failed caller-thread call is run again only
 * when it met a purge of TensorFlow's wrapper function, which runs nothing; a body's own
 * NOT_FOUND, whose message names the wrapper too, was taken for one: the effect ran twice.)
 */
class FailedCallRunsOnceTest {

  @Test
  void aBodyFailingWithNotFoundAfterAnEffectRunsItOnce(@TempDir Path dir) {
    for (boolean grappler : new boolean[] {false, true}) {
      try (TFloat32 zero = TFloat32.scalarOf(0f);
          Variable<TFloat32> counter = Variable.create(zero);
          // Grappler off lets a function with effects take the caller-thread path.
          MapFunction f = Function.define((tf, in) -> {
            Operand<TFloat32> next = tf.math.add(counter.read(tf), tf.constant(1f));
            counter.assign(tf, next);
            // Read after the write (ordered by the variable): a file that does not exist.
            Operand<org.tensorflow.types.TString> path = tf.strings.join(List.of(
                tf.constant(dir.resolve("missing-").toString()), tf.dtypes.asString(counter.read(tf))));
            return Map.of("n", tf.strings.stringLength(tf.io.readFile(path)));
          }, FunctionOptions.defaults().withGrappler(grappler))) {
        for (int call = 1; call <= 3; call++) {
          RuntimeException e = assertThrows(RuntimeException.class, () -> f.call(Map.of()));
          String message = String.valueOf(e.getMessage());
          assertEquals(true, message.contains("missing-"), message);
          try (TFloat32 now = counter.value()) {
            assertEquals(call, now.getFloat(), 0f, "grappler " + grappler + ", call " + call + ": " + message);
          }
        }
      }
    }
  }
}
