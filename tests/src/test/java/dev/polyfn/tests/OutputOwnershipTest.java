package dev.polyfn.tests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.polyfn.Function;
import dev.polyfn.Outputs;
import dev.polyfn.SingleFunction;
import dev.polyfn.internal.OutputReferences;
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
 * closes, or after garbage collection if the program forgets it. Their phantom references are
 * held by Polyfn ({@link OutputReferences}), not in JavaCPP's global list, so the counts below
 * add both.
 */
class OutputOwnershipTest {

  /** Pointers registered with JavaCPP's list plus Polyfn's outputs not yet freed. */
  private static long totalCount() {
    return Pointer.totalCount() + OutputReferences.registered();
  }

  private static SingleFunction twice() {
    return Function.defineSingle((tf, in) -> tf.math.mul(in.input("x", TFloat32.class), tf.constant(2f)));
  }

  /** JavaCPP's count of registered pointers, after letting its deallocator thread catch up. */
  private static long settledCount(long target) throws InterruptedException {
    long deadline = System.nanoTime() + 20_000_000_000L;
    long count = totalCount();
    while (count > target && System.nanoTime() < deadline) {
      System.gc();
      Thread.sleep(20);
      count = totalCount();
    }
    return count;
  }

  /** JavaCPP's count of registered pointers once garbage collection no longer changes it. */
  private static long stableCount() throws InterruptedException {
    long count = -1;
    for (int i = 0; i < 100 && count != totalCount(); i++) {
      count = totalCount();
      System.gc();
      Thread.sleep(20);
    }
    return totalCount();
  }

  @Test
  void closedOutputsAreReleasedAndReadable() throws InterruptedException {
    try (SingleFunction f = twice(); TFloat32 x = TFloat32.vectorOf(1f, 2f, 3f)) {
      f.call(x).close();
      long before = totalCount();
      for (int i = 0; i < 20_000; i++) {
        try (TType y = f.call(x)) {
          assertEquals(6f, ((TFloat32) y).getFloat(2), 0f);
        }
      }
      assertTrue(settledCount(before) <= before, "outputs stay registered: " + totalCount() + " > " + before);
    }
  }

  /**
   * JavaCPP's list is one process-wide lock taken when an output is registered and again when it
   * is freed; Polyfn's outputs stay out of it (two threads calling one function would meet there).
   */
  @Test
  void outputsStayOutOfJavaCppsGlobalList() {
    try (SingleFunction f = twice(); TFloat32 x = TFloat32.vectorOf(1f)) {
      f.call(x).close();
      long listed = Pointer.totalCount();
      long held = OutputReferences.registered();
      List<TType> kept = new ArrayList<>();
      try {
        for (int i = 0; i < 100; i++) {
          kept.add(f.call(x));
        }
        // At most what it was: a garbage collection meanwhile may free pointers others left.
        assertTrue(Pointer.totalCount() <= listed, "outputs were linked into JavaCPP's list: " + Pointer.totalCount() + " > " + listed);
        assertTrue(OutputReferences.registered() >= held + 100, "outputs are not held: " + OutputReferences.registered());
      } finally {
        kept.forEach(TType::close);
      }
      assertTrue(OutputReferences.registered() <= held, "closed outputs are still held: " + OutputReferences.registered());
    }
  }

  /**
   * Threads adopting, closing and forgetting outputs at once (12 threads: with fewer than 6 cores
   * some share a stripe): no output stays registered once closed or collected.
   */
  @Test
  void outputsOfManyThreadsAreEachFreedOnce() throws Exception {
    try (SingleFunction f = twice(); TFloat32 x = TFloat32.vectorOf(3f)) {
      f.call(x).close();
      long before = stableCount();
      int threads = 12;
      List<Thread> workers = new ArrayList<>();
      List<Throwable> failures = java.util.Collections.synchronizedList(new ArrayList<>());
      for (int t = 0; t < threads; t++) {
        boolean forget = t % 3 == 0;
        Thread w = new Thread(() -> {
          try {
            for (int i = 0; i < 3_000; i++) {
              TType y = f.call(x);
              assertEquals(6f, ((TFloat32) y).getFloat(0), 0f);
              if (!forget) {
                y.close();
              }
            }
          } catch (Throwable e) {
            failures.add(e);
          }
        });
        workers.add(w);
        w.start();
      }
      for (Thread w : workers) {
        w.join();
      }
      assertTrue(failures.isEmpty(), () -> "a thread failed: " + failures.get(0));
      assertTrue(settledCount(before) <= before, "outputs were not all freed: " + (totalCount() - before) + " left");
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
      assertTrue(totalCount() >= before + 2_000, "each output is registered: " + totalCount() + " < " + before + " + 2000");
      forgotten = null;
      assertTrue(settledCount(before) <= before, "forgotten outputs were not freed: " + totalCount());
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
      long before = totalCount();
      try (PointerScope outer = new PointerScope()) {
        for (int round = 0; round < 20; round++) {
          try (PointerScope inner = new PointerScope()) {
            for (int i = 0; i < 5; i++) {
              assertEquals(8f, ((TFloat32) f.call(x)).getFloat(0), 0f);
            }
          }
        }
        assertTrue(settledCount(before) <= before,
            "outputs outlived their inner scope: " + (totalCount() - before) + " still registered");
      }
    }
  }

  @Test
  void anOpenPointerScopeOwnsOutputsAsItOwnsTensorFlowJavasTensors() throws InterruptedException {
    try (SingleFunction f = twice(); TFloat32 x = TFloat32.vectorOf(4f)) {
      f.call(x).close();
      long before = totalCount();
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
      assertTrue(settledCount(before) <= before, "outputs outlived their scope: " + totalCount());
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
