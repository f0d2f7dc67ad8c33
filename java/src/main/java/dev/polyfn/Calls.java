package dev.polyfn;

import dev.polyfn.PolymorphicFunction.Result;
import dev.polyfn.internal.CallBuffer;
import dev.polyfn.internal.Native;
import java.lang.ref.Reference;
import java.util.Arrays;
import java.util.Collections;
import java.util.Map;
import java.util.Objects;
import java.util.stream.Collectors;

/**
 * A call of a polymorphic function: the cached path (describe the arguments, one native call, no
 * lock) and, on a miss, the trace under the function's trace lock followed by a run of what it
 * traced.
 */
final class Calls {
  private Calls() {}

  /** Calls {@code f} with named arguments. */
  static Result invoke(PolymorphicFunction f, Map<String, ?> args) {
    Objects.requireNonNull(args, "args");
    try {
      Param[] ps = f.params();
      if (ps != null) {
        Result r = tryCall(f, f.address(), ps, args);
        if (r != null) {
          return r;
        }
      }
      return traceAndCall(f, Arguments.Lookup.ofCall(args), args);
    } finally {
      Reference.reachabilityFence(f);
    }
  }

  /** Calls a single-parameter function with its one argument. */
  static Result invokeSingle(PolymorphicFunction f, Object value) {
    Objects.requireNonNull(value, "argument");
    Param[] ps = f.params();
    if (ps == null) {
      try {
        // The first call fixes the parameter list: trace it with the value bound to the one
        // parameter the body declares, and run it.
        Result r = traceAndCall(f, Arguments.Lookup.single(value), null);
        if (r != null) {
          return r;
        }
      } finally {
        Reference.reachabilityFence(f);
      }
      ps = f.params();
    }
    if (ps.length != 1) {
      throw new IllegalArgumentException("function '" + f.name() + "' has " + ps.length + " parameters "
          + Arrays.stream(ps).map(p -> p.name()).collect(Collectors.joining(", ", "(", ")"))
          + "; call it with a map of arguments");
    }
    return invoke(f, Collections.singletonMap(ps[0].name(), value));
  }

  /** The fast path: describe, one native call; null when the call must trace first. */
  private static Result tryCall(PolymorphicFunction f, long fn, Param[] ps, Map<String, ?> args) {
    CallBuffer buf = CallBuffer.get();
    try {
      if (!Arguments.describe(ps, f.captures(), args, buf, f.interner(), true)) {
        return null;
      }
      long[] r = Native.call(fn, buf.facts(), buf.factCount(), buf.tensors(), buf.tensorCount(), buf.result());
      if (r == null) {
        return null;
      }
      buf.keepResult(r);
      return f.result(r);
    } finally {
      buf.release(); // the buffer held the arguments until here
    }
  }

  /**
   * Traces the call's signature (unless another thread did while this one waited) and runs the
   * concrete function it produced. {@code args} is null for a single value before the first trace
   * (then the bound value is used); returns null if that value does not bind to one parameter.
   */
  private static Result traceAndCall(PolymorphicFunction f, Arguments.Lookup lookup, Map<String, ?> args) {
    synchronized (f.traceLock) {
      long fn = f.address();
      Param[] ps = f.params();
      if (ps != null && args == null) {
        return null; // a single value, and another thread fixed the parameter list meanwhile
      }
      if (ps != null) {
        // Another thread may have traced this signature while we waited: then it is this call's hit.
        Result r = tryCall(f, fn, ps, args);
        if (r != null) {
          return r;
        }
      }
      return f.traceLocked(fn, lookup, args == null ? null : f.describeForTrace(args), true, true);
    }
  }

  /** Runs the concrete function {@code trace} just produced on the call's arguments. */
  static Result runTraced(PolymorphicFunction f, long trace, Map<String, ?> args) {
    CallBuffer buf = CallBuffer.get();
    try {
      if (!Arguments.describe(f.params(), f.captures(), args, buf, f.interner(), true)) {
        return null;
      }
      return f.result(Native.callTraced(trace, buf.tensors(), buf.tensorCount()));
    } finally {
      buf.release();
    }
  }
}
