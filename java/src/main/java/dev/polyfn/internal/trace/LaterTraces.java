package dev.polyfn.internal.trace;

import java.util.Objects;
import org.tensorflow.types.family.TType;

/**
 * What a later trace must declare as the first did, beyond the names and kinds the native side
 * checks: the same parameter defaults and the same captured values. A function keeps the first
 * trace's (its calls feed them whichever concrete function serves them), so a later trace that
 * declared another default or captured another value under the same name would be served the
 * first one's silently; it is refused instead, before its concrete function is cached.
 *
 * <p>The values compared (a supplier's tensor, a default tensor) are the caller's, as at every
 * call: nothing here closes them, refused or equal, since the caller may still hold and use them.
 */
final class LaterTraces {
  private LaterTraces() {}

  /**
   * Refuses {@code later} (a trace after the first) when a default or a captured value differs
   * from the first trace's {@code params} and {@code captures}.
   */
  static void requireSameAsFirst(String function, Param[] params, Capture[] captures, TracingInputs later) {
    Param[] declared = later.declared();
    for (int i = 0; i < Math.min(params.length, declared.length); i++) {
      Object first = params[i].defaultValue();
      Object now = declared[i].defaultValue();
      if (first != now && !sameValue(first, now)) {
        throw new IllegalArgumentException("function '" + function + "': parameter '" + params[i].name()
            + "' declared another default on a later trace than on its first; a parameter's default is fixed by the"
            + " first trace (declare the same default on every trace, or pass the value as an argument)");
      }
    }
    for (Capture c : later.captures()) {
      for (Capture f : captures) {
        if (f.name().equals(c.name()) && f.supplier() != null && c.supplier() != null && f.supplier() != c.supplier()
            && f.supplier().get() != c.supplier().get()) {
          throw new IllegalArgumentException("function '" + function + "': capture '" + c.name() + "' supplies another"
              + " value on a later trace than on its first; captures are fixed by the first trace and read again at"
              + " every call (pass a value that changes between traces as an argument, or capture it under a name"
              + " of its own)");
        }
      }
    }
  }

  /** Equal defaults: Java values by {@code equals}, tensors by dtype, shape and elements. */
  private static boolean sameValue(Object a, Object b) {
    if (a instanceof TType x && b instanceof TType y) {
      return x.dataType() == y.dataType() && x.shape().equals(y.shape()) && x.equals(y);
    }
    return Objects.equals(a, b);
  }
}
