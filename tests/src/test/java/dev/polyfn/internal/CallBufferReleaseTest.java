package dev.polyfn.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * A release that fails, with an exception or an Error (a stack overflow in a resource's release),
 * still gives back every other pin and frees the thread's buffer: before, an Error left the
 * buffer busy and the later pins unreleased, so each later call on the thread made a fresh buffer
 * and the pinned resources leaked.
 */
class CallBufferReleaseTest {
  @Test
  void aReleaseThatThrowsAnErrorReleasesTheRestAndFreesTheBuffer() {
    CallBuffer buf = CallBuffer.get();
    AtomicInteger released = new AtomicInteger();
    buf.variable(1, new long[0], -1, 1, () -> {
      throw new StackOverflowError("in a release");
    });
    buf.variable(1, new long[0], -1, 2, released::incrementAndGet);
    StackOverflowError e = assertThrows(StackOverflowError.class, buf::release);
    assertEquals("in a release", e.getMessage());
    assertEquals(1, released.get(), "the pin after the failing one is released");
    assertSame(buf, CallBuffer.get(), "the thread's buffer is free again");
    buf.release();
  }
}
