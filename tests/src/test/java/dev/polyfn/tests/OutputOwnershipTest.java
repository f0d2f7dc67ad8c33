package dev.polyfn.tests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.polyfn.Function;
import dev.polyfn.Outputs;
import dev.polyfn.SingleFunction;
import java.util.ArrayList;
import java.util.List;
import org.bytedeco.javacpp.Pointer;
import org.bytedeco.javacpp.PointerScope;
import org.junit.jupiter.api.Test;
import org.tensorflow.op.Ops;
import org.tensorflow.types.TFloat32;
import org.tensorflow.types.family.TType;

/**
 * Output tensors handed to TensorFlow Java are registered with JavaCPP as TensorFlow Java
 * registers its own: each is freed exactly once, when closed, when an enclosing PointerScope
 * closes, or after garbage collection if the program forgets it.
 */
class OutputOwnershipTest {

  private static SingleFunction twice() {
    return Function.defineSingle((tf, in) -> tf.math.mul(in.input("x", TFloat32.class), tf.constant(2f)));
  }

  /** JavaCPP's count of registered pointers, after letting its deallocator thread catch up. */
  private static long settledCount(long target) throws InterruptedException {
    long deadline = System.nanoTime() + 20_000_000_000L;
    long count = Pointer.totalCount();
    while (count > target && System.nanoTime() < deadline) {
      System.gc();
      Thread.sleep(20);
      count = Pointer.totalCount();
    }
    return count;
  }

  /** JavaCPP's count of registered pointers once garbage collection no longer changes it. */
  private static long stableCount() throws InterruptedException {
    long count = -1;
    for (int i = 0; i < 100 && count != Pointer.totalCount(); i++) {
      count = Pointer.totalCount();
      System.gc();
      Thread.sleep(20);
    }
    return Pointer.totalCount();
  }

  @Test
  void closedOutputsAreReleasedAndReadable() throws InterruptedException {
    try (SingleFunction f = twice(); TFloat32 x = TFloat32.vectorOf(1f, 2f, 3f)) {
      f.call(x).close();
      long before = Pointer.totalCount();
      for (int i = 0; i < 20_000; i++) {
        try (TType y = f.call(x)) {
          assertEquals(6f, ((TFloat32) y).getFloat(2), 0f);
        }
      }
      assertTrue(settledCount(before) <= before, "outputs stay registered: " + Pointer.totalCount() + " > " + before);
    }
  }

  @Test
  void forgottenOutputsAreFreedAfterGarbageCollection() throws InterruptedException {
    try (SingleFunction f = twice(); TFloat32 x = TFloat32.vectorOf(1f, 2f)) {
      f.call(x).close();
      // Pointers other tests left for the collector are freed first, so the count below
      // changes only by this loop's outputs.
      long before = stableCount();
      // Held until counted (a garbage collection during the loop would free some already).
      List<TType> forgotten = new ArrayList<>();
      for (int i = 0; i < 2_000; i++) {
        forgotten.add(f.call(x)); // never closed
      }
      assertTrue(Pointer.totalCount() >= before + 2_000, "each output is registered: " + Pointer.totalCount() + " < " + before + " + 2000");
      forgotten = null;
      assertTrue(settledCount(before) <= before, "forgotten outputs were not freed: " + Pointer.totalCount());
    }
  }

  /**
   * With scopes nested, an output belongs to the innermost one (as JavaCPP attaches a pointer to
   * the innermost scope that accepts it): closing the inner scope frees it while the outer one
   * stays open, so a loop of inner scopes inside a long-lived outer one does not pile outputs up.
   */
  @Test
  void anOutputBelongsToTheInnermostOpenScope() throws InterruptedException {
    try (SingleFunction f = twice(); TFloat32 x = TFloat32.vectorOf(4f)) {
      f.call(x).close();
      long before = Pointer.totalCount();
      try (PointerScope outer = new PointerScope()) {
        for (int round = 0; round < 20; round++) {
          try (PointerScope inner = new PointerScope()) {
            for (int i = 0; i < 5; i++) {
              assertEquals(8f, ((TFloat32) f.call(x)).getFloat(0), 0f);
            }
          }
        }
        assertTrue(settledCount(before) <= before,
            "outputs outlived their inner scope: " + (Pointer.totalCount() - before) + " still registered");
      }
    }
  }

  @Test
  void anOpenPointerScopeOwnsOutputsAsItOwnsTensorFlowJavasTensors() throws InterruptedException {
    try (SingleFunction f = twice(); TFloat32 x = TFloat32.vectorOf(4f)) {
      f.call(x).close();
      long before = Pointer.totalCount();
      List<TType> kept = new ArrayList<>();
      try (PointerScope scope = new PointerScope()) {
        for (int i = 0; i < 100; i++) {
          kept.add(f.call(x));
        }
        assertEquals(8f, ((TFloat32) kept.get(99)).getFloat(0), 0f);
        kept.get(0).close(); // closing one inside the scope, then the scope: freed once
      }
      for (TType t : kept) {
        t.close(); // already released by the scope: closing again is a no-op, not a double free
      }
      assertTrue(settledCount(before) <= before, "outputs outlived their scope: " + Pointer.totalCount());
    }
  }

  @Test
  void outputsOfEveryPathAndEagerTensorsMixFreely() {
    try (SingleFunction f = twice(); TFloat32 x = TFloat32.vectorOf(1f, 2f)) {
      Ops tf = Ops.create();
      try (TType y = f.call(x)) {
        // An output fed back to TensorFlow Java's own eager ops and to another call.
        TFloat32 sum = tf.math.add(tf.constantOf((TFloat32) y), tf.constant(1f)).asTensor();
        assertEquals(5f, sum.getFloat(1), 0f);
        try (TType z = f.call((TFloat32) y)) {
          assertEquals(8f, ((TFloat32) z).getFloat(1), 0f);
        }
      }
    }
  }
}
