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
 * doubles when more than half of it is still held).
 */
public final class OutputReferences {
  /** A power of two: enough that the threads of a busy server rarely share a stripe. */
  static final int STRIPES =
      Math.min(64, Integer.highestOneBit(Math.max(1, 2 * Runtime.getRuntime().availableProcessors() - 1)) << 1);

  private static final Stripe[] STRIPE = new Stripe[STRIPES];
  private static final AtomicInteger NEXT = new AtomicInteger();
  private static final ThreadLocal<Stripe> MINE =
      ThreadLocal.withInitial(() -> STRIPE[NEXT.getAndIncrement() & (STRIPES - 1)]);

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
   * garbage collector found stops counting when it is queued for JavaCPP's deallocator thread.
   */
  public static long registered() {
    long n = 0;
    for (Stripe s : STRIPE) {
      n += s.live();
    }
    return n;
  }

  /** Fields before the stripe's own, so two stripes' locks and counts never share a cache line. */
  @SuppressWarnings("unused")
  private static class Padding {
    long p0, p1, p2, p3, p4, p5, p6, p7;
  }

  private static class Fields extends Padding {
    static final int MIN_LENGTH = 64;
    Reference<?>[] held = new Reference<?>[MIN_LENGTH];
    int size;
  }

  /** One stripe: an array of references, locked only by the threads given this stripe. */
  @SuppressWarnings("unused")
  private static final class Stripe extends Fields {
    long q0, q1, q2, q3, q4, q5, q6, q7;

    synchronized void add(Reference<?> r) {
      if (size == held.length) {
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
