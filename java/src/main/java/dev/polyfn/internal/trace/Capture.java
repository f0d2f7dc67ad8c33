package dev.polyfn.internal.trace;

import dev.polyfn.Variable;
import java.util.function.Supplier;
import org.tensorflow.types.family.TType;

/**
 * A value the body reads from outside, fed to the function as a hidden input at every call: a
 * supplier re-read each call (by-reference capture) or a variable's handle. Fixed by the first
 * trace, like the parameters.
 *
 * @param name the capture's name (in signatures and messages)
 * @param supplier the value's source, re-read at every call (null for a variable)
 * @param variable the captured variable (null for a supplier)
 */
public record Capture(String name, Supplier<? extends TType> supplier, Variable<?> variable) {
  public static Capture of(String name, Supplier<? extends TType> supplier) {
    return new Capture(name, supplier, null);
  }

  public static Capture of(Variable<?> variable) {
    return new Capture("variable_" + variable.id(), null, variable);
  }

  /** The current value: the supplier's result or the variable. */
  public Object value() {
    if (variable != null) {
      return variable;
    }
    TType t = supplier.get();
    if (t == null) {
      throw new IllegalArgumentException("capture '" + name + "': the supplier returned null; expected a tensor");
    }
    return t;
  }
}
