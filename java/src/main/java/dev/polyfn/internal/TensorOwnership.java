package dev.polyfn.internal;

import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.lang.invoke.VarHandle;
import java.lang.ref.Reference;
import java.lang.ref.ReferenceQueue;
import java.util.Iterator;
import org.bytedeco.javacpp.Pointer;
import org.bytedeco.javacpp.PointerScope;
import org.tensorflow.internal.c_api.AbstractTF_Tensor;
import org.tensorflow.internal.c_api.TF_Tensor;

/**
 * Gives an output {@code TF_Tensor} its deallocator, as TensorFlow Java's {@code
 * TF_Tensor.withDeallocator()} does, without the two costs that call pays on every tensor.
 *
 * <p>{@code withDeallocator()} goes through JavaCPP's {@code Pointer.deallocator(Deallocator)},
 * which, under one process-wide lock, measures the process's physical memory (a read of {@code
 * /proc}, several microseconds) to decide whether to run the garbage collector, then links the
 * pointer's phantom reference into JavaCPP's list under a second process-wide lock, taken again
 * when the tensor is freed. The memory check exists for pointers the program may leak; Polyfn's
 * outputs are freed when the outputs object holding them ({@code Outputs}, {@code ListOutputs},
 * {@code NestOutputs}) is closed. The list only keeps the phantom reference reachable, which
 * {@link OutputReferences} does with a lock per few threads instead of one per process.
 * Everything else is done exactly as JavaCPP does it: the same deallocator object (TensorFlow
 * Java's {@code TF_DeleteTensor} wrapper), the same phantom reference on JavaCPP's queue (so an
 * output the program forgets is still freed after garbage collection), the registration in the
 * innermost open {@link PointerScope} of the thread that accepts it. Releasing the tensor goes
 * through the tensor's scope, which {@code TensorFlowInternals.adoptTensor} makes an {@link
 * OwnedScope} ({@code close()} releases the reference count to zero, which deallocates once,
 * however many threads close it). JavaCPP's {@code Pointer.totalCount()} does not count these outputs; {@link
 * OutputReferences#registered()} does (on the fallback below, the other way round).
 *
 * <p>If any of JavaCPP's or TensorFlow Java's members moved (another version), the lookups
 * fail once and every tensor takes {@code withDeallocator()}, with the same result.
 */
final class TensorOwnership {
  private static final MethodHandle NEW_DELETER;
  private static final MethodHandle NEW_REFERENCE;
  private static final VarHandle DEALLOCATOR;
  private static final VarHandle ADDRESS;
  /** Whether JavaCPP tracks pointers for garbage collection (its reference queue exists). */
  private static final boolean QUEUED;
  /** Whether every member was found; otherwise withDeallocator() is used. */
  private static final boolean DIRECT;

  static {
    MethodHandle newDeleter = null;
    MethodHandle newReference = null;
    VarHandle deallocator = null;
    VarHandle address = null;
    boolean queued = false;
    boolean direct = false;
    try {
      Class<?> deleter = Class.forName("org.tensorflow.internal.c_api.AbstractTF_Tensor$DeleteDeallocator");
      Class<?> reference = Class.forName("org.bytedeco.javacpp.Pointer$DeallocatorReference");
      Class<?> deallocatorType = Class.forName("org.bytedeco.javacpp.Pointer$Deallocator");
      MethodHandles.Lookup tf = MethodHandles.privateLookupIn(deleter, MethodHandles.lookup());
      newDeleter = tf.findConstructor(deleter, MethodType.methodType(void.class, TF_Tensor.class))
          .asType(MethodType.methodType(Object.class, TF_Tensor.class));
      MethodHandles.Lookup ref = MethodHandles.privateLookupIn(reference, MethodHandles.lookup());
      newReference = ref.findConstructor(reference, MethodType.methodType(void.class, Pointer.class, deallocatorType))
          .asType(MethodType.methodType(Object.class, Pointer.class, Object.class));
      MethodHandles.Lookup pointer = MethodHandles.privateLookupIn(Pointer.class, MethodHandles.lookup());
      deallocator = pointer.findVarHandle(Pointer.class, "deallocator", deallocatorType);
      address = pointer.findVarHandle(Pointer.class, "address", long.class);
      queued = pointer.findStaticVarHandle(Pointer.class, "referenceQueue", ReferenceQueue.class).get() != null;
      direct = AbstractTF_Tensor.class.isAssignableFrom(deleter);
    } catch (ReflectiveOperationException | RuntimeException e) {
      direct = false;
    }
    NEW_DELETER = newDeleter;
    NEW_REFERENCE = newReference;
    DEALLOCATOR = deallocator;
    ADDRESS = address;
    QUEUED = queued;
    DIRECT = direct;
  }

  private TensorOwnership() {}

  /**
   * A {@code TF_Tensor} pointer at {@code address} that owns the tensor: released when its
   * reference count drops to 0.
   */
  static TF_Tensor own(long address) {
    if (!DIRECT) {
      return new TF_Tensor(new Address(address)).withDeallocator();
    }
    TF_Tensor t = new TF_Tensor();
    ADDRESS.set((Pointer) t, address);
    try {
      Object reference = NEW_REFERENCE.invokeExact((Pointer) t, NEW_DELETER.invokeExact(t));
      DEALLOCATOR.set((Pointer) t, reference);
      if (QUEUED) {
        OutputReferences.hold((Reference<?>) reference);
      }
    } catch (Throwable e) {
      throw new IllegalStateException("registering an output tensor with JavaCPP", e);
    }
    // Like JavaCPP: attached to the innermost open scope that accepts it, and to that one only
    // (attached to every scope, an output would live until the outermost one closes).
    Iterator<PointerScope> scopes = PointerScope.getScopeIterator();
    if (scopes != null) {
      while (scopes.hasNext()) {
        try {
          scopes.next().attach(t);
          break;
        } catch (IllegalArgumentException e) {
          // A scope limited to other pointer classes: JavaCPP skips it the same way.
        }
      }
    }
    return t;
  }

  /** A JavaCPP pointer at a raw address (to copy into a {@code TF_Tensor} when the fields cannot be reached). */
  private static final class Address extends Pointer {
    Address(long address) {
      this.address = address;
    }
  }
}
