package dev.polyfn.tests;

import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.polyfn.Function;
import dev.polyfn.ListFunction;
import dev.polyfn.MapFunction;
import dev.polyfn.NestFunction;
import dev.polyfn.NestOutputs;
import dev.polyfn.Outputs;
import dev.polyfn.ListOutputs;
import dev.polyfn.internal.OutputReferences;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.tensorflow.Tensor;
import org.tensorflow.types.TFloat32;
import org.tensorflow.types.family.TType;

/**
 * Closing is idempotent and thread-safe across the outputs family and the tensors they own: 8
 * threads closing one {@code Outputs}, {@code ListOutputs} or {@code NestOutputs} at once, or some
 * closing its single tensors while the others close the outputs object, free every tensor exactly
 * once (it was "double free or corruption", or a SIGSEGV in {@code TF_DeleteTensor}). Run in a
 * child JVM, so that a crash fails the test instead of ending the suite.
 */
class OutputsCloseRaceTest {
  private static final int THREADS = 8;
  private static final int ROUNDS = 400;

  /** Runs every race {@code ROUNDS} times; prints "ok" and exits 0, or throws. */
  public static void main(String[] args) throws Exception {
    try (TFloat32 x = TFloat32.vectorOf(1f, 2f, 3f);
         MapFunction map = Function.define((tf, in) -> {
           var v = in.input("x", TFloat32.class);
           return Map.of("a", tf.math.add(v, tf.constant(1f)), "b", tf.math.mul(v, tf.constant(2f)),
               "c", tf.math.neg(v), "d", tf.math.square(v));
         });
         ListFunction list = Function.defineList((tf, in) -> {
           var v = in.input("x", TFloat32.class);
           return List.of(tf.math.add(v, tf.constant(1f)), tf.math.neg(v), tf.math.square(v));
         });
         NestFunction nest = Function.defineNested((tf, in) -> {
           var v = in.input("x", TFloat32.class);
           return Map.of("p", List.of(tf.math.neg(v), tf.math.square(v)), "q", tf.math.add(v, tf.constant(1f)));
         })) {
      long before = OutputReferences.registered();
      for (int round = 0; round < ROUNDS; round++) {
        Outputs o = map.call(Map.of("x", x));
        if (round == 0 && OutputReferences.registered() != before + 4) { // else the check below compares nothing
          throw new AssertionError("4 outputs, " + (OutputReferences.registered() - before) + " registered");
        }
        race(o::close, tensors(o), false);
        Outputs p = map.call(Map.of("x", x));
        race(p::close, tensors(p), true);
        ListOutputs l = list.call(Map.of("x", x));
        race(l::close, new ArrayList<>(l), round % 2 == 0);
        NestOutputs n = nest.call(Map.of("x", x));
        race(n::close, new ArrayList<Tensor>(n.tensors()), round % 2 == 1);
      }
      // Every output was freed: none is left registered (a double release would have crashed,
      // a lost one would be counted here).
      long after = OutputReferences.registered();
      if (after != before) {
        throw new AssertionError("outputs still registered: " + before + " before, " + after + " after");
      }
    }
    System.out.println("ok");
  }

  /** The tensors of {@code o}, read before the race (later reads throw once it is closed). */
  private static List<Tensor> tensors(Outputs o) {
    List<Tensor> ts = new ArrayList<>();
    for (String name : o) {
      ts.add(o.get(name));
    }
    return ts;
  }

  /**
   * {@code THREADS} threads released together: each closes the outputs object, or, with {@code
   * singles}, every other thread closes the tensors one by one instead. Fails on any exception.
   */
  private static void race(Runnable closeAll, List<Tensor> tensors, boolean singles) throws Exception {
    CyclicBarrier start = new CyclicBarrier(THREADS);
    AtomicReference<Throwable> failure = new AtomicReference<>();
    List<Thread> threads = new ArrayList<>();
    for (int t = 0; t < THREADS; t++) {
      boolean single = singles && t % 2 == 1;
      Thread thread = new Thread(() -> {
        try {
          start.await();
          if (single) {
            for (Tensor tensor : tensors) {
              tensor.close();
            }
          } else {
            closeAll.run();
          }
        } catch (Throwable e) {
          failure.compareAndSet(null, e);
        }
      });
      threads.add(thread);
      thread.start();
    }
    for (Thread thread : threads) {
      thread.join();
    }
    if (failure.get() != null) {
      throw new AssertionError("a close failed", failure.get());
    }
    closeAll.run(); // idempotent
    for (Tensor tensor : tensors) {
      tensor.close(); // idempotent too
      try {
        ((TType) tensor).shape();
        tensor.asRawTensor().data();
        throw new AssertionError("a closed output is still readable");
      } catch (IllegalStateException expected) {
        // closed, as it should be
      }
    }
  }

  @Test
  void closingOneOutputsObjectFromManyThreadsFreesEachTensorOnce() throws Exception {
    String out = ChildJvm.run(OutputsCloseRaceTest.class);
    assertTrue(out.contains("ok"), out);
  }
}
