package dev.polyfn.internal;

import java.lang.ref.Reference;
import java.util.Arrays;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Keeps the phantom references of Polyfn's output tensors reachable, in place of JavaCPP's
 * process-wide list, so that threads adopting outputs at the same time share no lock.
 *
 * <p>JavaCPP frees a pointer the program forgot when the garbage collector enqueues the
 * pointer's phantom reference ({@code DeallocatorReference}); a phantom reference that is itself
 * unreachable is never enqueued, so something must hold it. JavaCPP holds every one in a linked
 * list under one global lock, taken when a pointer is registered and again when it is freed: two
 * threads calling one function contended on it twice per output. Here each thread holds its
 * outputs' references in one of a few stripes (a thread keeps to the stripe it was given first,
 * so up to {@link #STRIPES} threads never meet), and a reference is dropped once it was cleared:
 * by {@code close()} (JavaCPP clears it right after freeing the tensor) or by the garbage
 * collector (which clears a phantom reference when it enqueues it; JavaCPP's queue then holds it
 * until its deallocator thread frees the tensor). A reference JavaCPP never listed is also
 * skipped, without its lock, when the tensor is freed.
 *
 * <p>Dropping cleared references happens when a stripe's array is full, so a stripe costs one
 * array store per output and a pass over the array now and then (amortized constant: the array
 * doubles when more than half of it is still held, and shrinks when a pass finds it mostly
 * empty). Cleared references are dropped lazily: a stripe whose threads stop calling keeps up to
 * its array's length of them (small Java objects; their tensors are freed) until it is used again
 * or {@link #registered()} runs.
 *
 * <p>This relies on JavaCPP 1.5's {@code DeallocatorReference.remove()} returning at once for a
 * reference it never listed (its {@code prev} and {@code next} start as the reference itself).
 */
public final class OutputReferences {
  /** A power of two: enough that the threads of a busy server rarely share a stripe. */
  static final int STRIPES =
      Math.min(64, Integer.highestOneBit(Math.max(1, 2 * Runtime.getRuntime().availableProcessors() - 1)) << 1);

  private static final Stripe[] STRIPE = new Stripe[STRIPES];
  private static final AtomicInteger NEXT = new AtomicInteger();
  /** A subclass, not {@code withInitial} and a lambda, whose first bootstrap costs a first call. */
  private static final ThreadLocal<Stripe> MINE = new ThreadLocal<>() {
    @Override
    protected Stripe initialValue() {
      return STRIPE[NEXT.getAndIncrement() & (STRIPES - 1)];
    }
  };

  static {
    for (int i = 0; i < STRIPES; i++) {
      STRIPE[i] = new Stripe();
    }
  }

  private OutputReferences() {}

  /** Holds {@code reference} until it is cleared. */
  static void hold(Reference<?> reference) {
    MINE.get().add(reference);
  }

  /**
   * How many output tensors Polyfn registered that are neither closed nor collected (for tests
   * and leak checks: JavaCPP's {@code Pointer.totalCount()} does not count them). An output the
   * program forgot stops counting when the garbage collector clears its reference, just before
   * JavaCPP's deallocator thread frees it. Outputs registered through JavaCPP's own list (when
   * Polyfn cannot reach JavaCPP's members, see {@code TensorOwnership}) are counted by {@code
   * Pointer.totalCount()} instead, and with {@code org.bytedeco.javacpp.nopointergc} by neither.
   */
  public static long registered() {
    long n = 0;
    for (Stripe s : STRIPE) {
      n += s.live();
    }
    return n;
  }

  /**
   * Fields before the stripe's own, so that two stripes' hot fields never share a cache line.
   * The int fills the gap after the object header, where the JVM would otherwise put the
   * subclass's {@code size} (next to whatever object precedes the stripe).
   */
  @SuppressWarnings("unused")
  private static class Padding {
    int gap;
    long p0, p1, p2, p3, p4, p5, p6, p7;
  }

  private static class Fields extends Padding {
    static final int MIN_LENGTH = 64;
    /** Made by the first thread to use the stripe, in its own allocation buffer. */
    Reference<?>[] held;
    int size;
  }

  /** One stripe: an array of references, locked only by the threads given this stripe. */
  @SuppressWarnings("unused")
  private static final class Stripe extends Fields {
    long q0, q1, q2, q3, q4, q5, q6, q7;

    synchronized void add(Reference<?> r) {
      if (held == null) {
        held = new Reference<?>[MIN_LENGTH];
      } else if (size == held.length) {
        sweep();
        if (size > held.length / 2) {
          held = Arrays.copyOf(held, held.length * 2);
        }
      }
      held[size++] = r;
    }

    synchronized int live() {
      sweep();
      return size;
    }

    /** Drops the cleared references, keeping the others in order; gives back an array a burst grew. */
    private void sweep() {
      if (held == null) {
        return;
      }
      int kept = 0;
      for (int i = 0; i < size; i++) {
        Reference<?> r = held[i];
        if (!r.refersTo(null)) {
          held[kept++] = r;
        }
      }
      Arrays.fill(held, kept, size, null);
      size = kept;
      if (held.length > MIN_LENGTH && kept < held.length / 8) {
        held = Arrays.copyOf(held, Math.max(MIN_LENGTH, held.length / 4));
      }
    }
  }
}
