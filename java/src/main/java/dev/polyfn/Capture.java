package dev.polyfn;

import java.util.function.Supplier;
import org.tensorflow.types.family.TType;

/**
 * A value the body reads from outside, fed to the function as a hidden input at every call: a
 * supplier re-read each call (by-reference capture) or a variable's handle. Fixed by the first
 * trace, like the parameters.
 */
final class Capture {
  final String name;
  final Supplier<? extends TType> supplier;
  final Variable<?> variable;

  private Capture(String name, Supplier<? extends TType> supplier, Variable<?> variable) {
    this.name = name;
    this.supplier = supplier;
    this.variable = variable;
  }

  static Capture of(String name, Supplier<? extends TType> supplier) {
    return new Capture(name, supplier, null);
  }

  static Capture of(Variable<?> variable) {
    return new Capture("variable_" + variable.id(), null, variable);
  }

  /** The current value: the supplier's result or the variable. */
  Object value() {
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
