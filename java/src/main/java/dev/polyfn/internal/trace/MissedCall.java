package dev.polyfn.internal.trace;

import dev.polyfn.internal.CallBuffer;
import dev.polyfn.internal.Native;
import java.util.Map;

/** A call no cached concrete function accepted: traced under the function's trace lock, then run. */
final class MissedCall {
  private MissedCall() {}

  /**
   * Traces {@code f} for the call and runs the new concrete function on it (null when a single
   * value's function got its parameter list from another thread meanwhile: the caller calls
   * again by name); once more after giving its trace up to another thread ({@link TraceLock}).
   */
  static Result traceAndCall(FunctionCore f, Arguments.Lookup lookup, Map<String, ?> args) {
    return TraceLock.retrying(() -> once(f, lookup, args));
  }

  /**
   * The first call traced before a parameter list existed to type it: recorded in the profile
   * now, so that a profile of one call, or of a first call unlike the others, holds it. Best
   * effort, after the call ran: an argument closed meanwhile by another thread, a close of the
   * function, or a capture's supplier failing leaves the call unrecorded, never failed.
   */
  private static void recordFirstCall(FunctionCore f, long fn, Arguments.Lookup lookup) {
    try {
      CallBuffer first = f.describeForTrace(lookup.asMap());
      if (first != null) {
        Native.recordFirstCall(fn, first.facts(), first.factCount());
      }
    } catch (RuntimeException e) {
      // the profile misses this one call, as it missed every first call before
    }
  }

  private static Result once(FunctionCore f, Arguments.Lookup lookup, Map<String, ?> args) {
    f.traceLock().lock();
    try {
      long fn = f.address();
      Param[] ps = f.params();
      if (ps != null && args == null) {
        return null; // a single value, and another thread fixed the parameter list meanwhile
      }
      if (ps != null) {
        // Another thread may have traced this signature while we waited: then it is this call's hit.
        Result r = f.tryCall(fn, ps, args);
        if (r != null) {
          return r;
        }
      }
      Result r = f.traceLocked(fn, lookup, args == null ? null : f.describeForTrace(args), true, true, null);
      if (ps == null) {
        recordFirstCall(f, fn, lookup);
      }
      return r;
    } finally {
      f.traceLock().unlock();
    }
  }
}
