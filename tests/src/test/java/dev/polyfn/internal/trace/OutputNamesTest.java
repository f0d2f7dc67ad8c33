package dev.polyfn.internal.trace;

import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.polyfn.internal.Wire;
import org.junit.jupiter.api.Test;

/**
 * A call's result is read only as far as the call wrote it: its head counts the outputs, and
 * recorded names that do not match that count are refused before any address is read (the
 * reused result array's tail holds earlier calls' addresses).
 */
class OutputNamesTest {
  private static final long STALE = 0xdead_beefL;

  private static long head(int key, long count) {
    return (count << Wire.RESULT_COUNT_SHIFT) | (key & 0xffff_ffffL);
  }

  @Test
  void namesThatDoNotMatchTheOutputCountAreRefusedWithoutReadingStaleAddresses() {
    OutputNames names = new OutputNames("f");
    int key = names.record(new String[] {"y", "extra"});
    // The call wrote no output (count 0); a stale address follows in the reused array.
    IllegalStateException e = assertThrows(IllegalStateException.class,
        () -> names.adopt(new long[] {head(key, 0), STALE, STALE}));
    assertTrue(e.getMessage().contains("function 'f': its concrete function returned 0 outputs, but 2 output names"
        + " are recorded for it [y, extra]"), e.getMessage());
  }

  @Test
  void aCountBeyondTheResultArrayIsRefused() {
    OutputNames names = new OutputNames("f");
    int key = names.record(new String[] {"y"});
    IllegalStateException e = assertThrows(IllegalStateException.class, () -> names.adopt(new long[] {head(key, 5), STALE}));
    assertTrue(e.getMessage().contains("reported 5 outputs in a result of 1"), e.getMessage());
  }
}
