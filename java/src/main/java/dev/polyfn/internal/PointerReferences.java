package dev.polyfn.internal;

import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.lang.invoke.VarHandle;
import java.util.concurrent.atomic.AtomicInteger;
import org.bytedeco.javacpp.Pointer;

/**
 * Polyfn's own references to native memory that a call reads, so that another thread closing an
 * argument tensor while the call runs cannot free it under TensorFlow's feet: the memory goes only
 * when the last reference, the user's or Polyfn's, is released.
 *
 * <p>TensorFlow Java frees a tensor by releasing JavaCPP's reference count on its {@code
 * TF_Tensor} pointer. JavaCPP's own {@code retainReference()} increments even a count that already
 * reached zero (a tensor being freed), so Polyfn increments only a positive count, with a
 * compare-and-set on JavaCPP's counter.
 */
public final class PointerReferences {
  private static final MethodHandle DEALLOCATOR;
  private static final VarHandle COUNT;

  static {
    try {
      MethodHandles.Lookup pointer = MethodHandles.privateLookupIn(Pointer.class, MethodHandles.lookup());
      DEALLOCATOR = pointer.findVirtual(Pointer.class, "deallocator",
              MethodType.methodType(Class.forName("org.bytedeco.javacpp.Pointer$Deallocator")))
          .asType(MethodType.methodType(Object.class, Pointer.class));
      Class<?> reference = Class.forName("org.bytedeco.javacpp.Pointer$DeallocatorReference");
      COUNT = MethodHandles.privateLookupIn(reference, MethodHandles.lookup())
          .findVarHandle(reference, "count", AtomicInteger.class);
    } catch (ReflectiveOperationException | RuntimeException e) {
      throw new IllegalStateException("Polyfn cannot reach JavaCPP's reference counts: " + e, e);
    }
  }

  private PointerReferences() {}

  /**
   * Takes a reference to {@code p}'s memory if it is still alive; false if it is freed or being
   * freed. A true result must be matched by {@link #release}.
   */
  public static boolean tryRetain(Pointer p) {
    AtomicInteger count = count(p);
    if (count == null) {
      return false;
    }
    for (int c = count.get(); c > 0; c = count.get()) {
      if (count.compareAndSet(c, c + 1)) {
        if (p.address() != 0) {
          return true;
        }
        p.releaseReference();
        return false;
      }
    }
    return false;
  }

  /** Releases a reference taken by {@link #tryRetain}, freeing the memory if it was the last. */
  public static void release(Pointer p) {
    p.releaseReference();
  }

  private static AtomicInteger count(Pointer p) {
    try {
      Object reference = DEALLOCATOR.invokeExact(p);
      return reference == null ? null : (AtomicInteger) COUNT.get(reference);
    } catch (Throwable t) {
      throw new IllegalStateException("reading JavaCPP's reference count", t);
    }
  }
}
