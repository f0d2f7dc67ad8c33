package dev.polyfn.internal.trace;

import dev.polyfn.ConcreteFunctionInfo;
import dev.polyfn.internal.CallBuffer;
import dev.polyfn.internal.Native;
import java.util.Map;

/** {@code getConcreteFunction}: the concrete function that accepts some arguments or specs, traced if none does. */
final class ConcreteLookup {
  private ConcreteLookup() {}

  /** Under {@code f}'s trace lock: the concrete function for {@code argsOrSpecs}, traced now if none accepts them. */
  static ConcreteFunctionInfo findOrTrace(FunctionCore f, Map<String, ?> argsOrSpecs) {
    f.traceLock().lock();
    try {
      long fn = f.address();
      // clearCache takes the trace lock too, and evictions happen only in traces: the function
      // found here stays cached until this returns.
      int id = find(f, fn, argsOrSpecs);
      if (id < 0) {
        f.traceLocked(fn, Arguments.Lookup.of(argsOrSpecs), f.describeForTrace(argsOrSpecs), false, false, null);
        id = find(f, fn, argsOrSpecs);
      }
      for (ConcreteFunctionInfo c : f.concreteFunctions()) {
        if (c.id() == id) {
          return c;
        }
      }
      throw new IllegalStateException("the trace of '" + f.name() + "' does not accept its arguments");
    } finally {
      f.traceLock().unlock();
    }
  }

  private static int find(FunctionCore f, long fn, Map<String, ?> args) {
    CallBuffer buf = f.describeForTrace(args); // released: it holds only the facts now
    return buf == null ? -1 : Native.find(fn, buf.facts(), buf.factCount());
  }
}
