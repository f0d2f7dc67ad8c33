package dev.polyfn.tests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.polyfn.internal.EagerResource;
import org.junit.jupiter.api.Test;
import org.tensorflow.EagerSession;
import org.tensorflow.Operand;
import org.tensorflow.exceptions.TensorFlowException;
import org.tensorflow.op.Ops;
import org.tensorflow.op.core.HashTable;
import org.tensorflow.types.TInt64;
import org.tensorflow.types.TString;

/**
 * The life of a restored resource (a lookup table, {@link EagerResource}): closing it destroys the
 * table, but not while a call that fed its handle still runs; that call's release destroys it.
 */
class EagerResourceTest {
  private static int tables;

  private static Operand<?> table(Ops tf) {
    return tf.hashTable(TString.class, TInt64.class, HashTable.sharedName("eager_resource_test_" + ++tables)).tableHandle();
  }

  private static long size(Ops tf, Operand<?> handle) {
    @SuppressWarnings("unchecked")
    Operand<TInt64> size = tf.lookupTableSize((Operand<? extends org.tensorflow.types.family.TType>) handle);
    return size.asTensor().getLong();
  }

  @Test
  void closingDestroysTheTable() {
    Ops tf = Ops.create(EagerSession.getDefault());
    Operand<?> handle = table(tf);
    EagerResource r = new EagerResource("'table'", handle);
    assertEquals(0, size(tf, handle));
    r.close();
    r.close(); // idempotent
    assertThrows(TensorFlowException.class, () -> size(tf, handle), "destroyed");
    IllegalStateException e = assertThrows(IllegalStateException.class, r::retain);
    assertEquals("resource 'table' is closed (its function was closed)", e.getMessage());
  }

  @Test
  void aCallInFlightKeepsTheTableUntilItIsOver() {
    Ops tf = Ops.create(EagerSession.getDefault());
    Operand<?> handle = table(tf);
    EagerResource r = new EagerResource("'table'", handle);
    r.retain(); // a call feeds it
    r.close();
    assertEquals(0, size(tf, handle), "still there for the call");
    r.releaser().run(); // the call is over
    assertThrows(TensorFlowException.class, () -> size(tf, handle), "destroyed by the last use");
  }
}
