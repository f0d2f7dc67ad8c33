package dev.polyfn.spark;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.AbstractList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.tensorflow.Tensor;

/** Batches of array columns too wide for one Java array are refused naming the column. */
class ColumnTypeTest {
  /** An array value of {@code size} zeros that holds no memory (a real row this wide would not fit a test). */
  private static List<Object> zeros(int size) {
    return new AbstractList<>() {
      @Override
      public Object get(int index) {
        return 0f;
      }

      @Override
      public int size() {
        return size;
      }
    };
  }

  @Test
  void aBatchOfArraysWhoseElementCountOverflowsAnIntIsRefusedNamingTheColumn() {
    int width = 1 << 30;
    for (ColumnType type : List.of(ColumnType.FLOAT_ARRAY, ColumnType.DOUBLE_ARRAY)) {
      // 3 * 2^30 wraps to a negative int, 4 * 2^30 to 0: both must be refused, not allocated.
      for (int rows : new int[] {3, 4}) {
        List<Object> values = java.util.Collections.nCopies(rows, zeros(width));
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
            () -> type.toTensor("wide", values, width).close());
        assertTrue(e.getMessage().contains("column 'wide': a batch of " + rows + " arrays of " + width
            + " elements has " + (long) rows * width + " elements"), e.getMessage());
        assertTrue(e.getMessage().contains("lower batchSize to at most 1 rows"), e.getMessage());
      }
    }
  }

  @Test
  void aBatchThatFitsStillBecomesOneMatrix() {
    try (Tensor t = ColumnType.FLOAT_ARRAY.toTensor("narrow", List.of(zeros(3), zeros(3)), 3)) {
      assertEquals(org.tensorflow.ndarray.Shape.of(2, 3), t.shape());
    }
  }
}
