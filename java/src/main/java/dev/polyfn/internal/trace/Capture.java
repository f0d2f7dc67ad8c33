package dev.polyfn.internal.trace;

import dev.polyfn.Variable;
import dev.polyfn.internal.EagerResource;
import java.util.function.Supplier;
import org.tensorflow.types.family.TType;

/**
 * A value the body reads from outside, fed to the function as a hidden input at every call: a
 * supplier re-read each call (by-reference capture), a variable's handle, or the handle of another
 * resource (a lookup table restored from a SavedModel). Fixed by the first trace, like the parameters.
 *
 * @param name the capture's name (in signatures and messages)
 * @param supplier the value's source, re-read at every call (null for a variable)
 * @param variable the captured variable (null for a supplier)
 * @param resource the captured resource (null for a supplier or variable)
 */
public record Capture(String name, Supplier<? extends TType> supplier, Variable<?> variable, EagerResource resource) {
  public static Capture of(String name, Supplier<? extends TType> supplier) {
    return new Capture(name, supplier, null, null);
  }

  public static Capture of(Variable<?> variable) {
    return new Capture("variable_" + variable.id(), null, variable, null);
  }

  public static Capture of(String name, EagerResource resource) {
    return new Capture(name, null, null, resource);
  }

  /** The current value: the supplier's result, the variable or the resource. */
  public Object value() {
    if (variable != null) {
      return variable;
    }
    if (resource != null) {
      return resource;
    }
    TType t = supplier.get();
    if (t == null) {
      throw new IllegalArgumentException("capture '" + name + "': the supplier returned null; expected a tensor");
    }
    return t;
  }
}
