package dev.polyfn.internal.structure;

import dev.polyfn.CompositeSpec;
import dev.polyfn.CompositeType;
import java.util.List;
import java.util.Objects;
import org.tensorflow.Operand;
import org.tensorflow.Tensor;

/**
 * Calls into a {@link CompositeType} (user code behind a public SPI) and checks what comes back,
 * so that a type's bug is reported as one, naming the type's class and the method, instead of a
 * NullPointerException or a class-cast message deep inside Polyfn.
 */
public final class CompositeContract {
  private CompositeContract() {}

  /**
   * {@code value} as a call hands it to TensorFlow ({@link CompositeType#forCall}): a value of the
   * type's class. A refusal of the data ({@link IllegalArgumentException}, or a path error of a
   * built-in type) is the caller's, said as the type words it; anything else is the type's bug.
   */
  public static Object forCall(CompositeType<Object, ?> t, Object value, java.util.function.Consumer<Tensor> owner) {
    Object r;
    try {
      r = t.forCall(value, owner);
    } catch (Nests.PathError e) {
      throw e;
    } catch (IllegalArgumentException e) {
      throw new Nests.PathError("the " + t.name() + "'s data does not hold: " + e.getMessage(), e);
    } catch (IllegalStateException e) {
      // Most often a component the caller closed: say so rather than blame the type alone.
      throw threw(t, "forCall(value, owner) (is one of the argument's tensors closed?)", e);
    } catch (RuntimeException e) {
      throw threw(t, "forCall(value, owner)", e);
    }
    if (!t.valueClass().isInstance(r)) {
      throw broken(t, "forCall(value, owner) returned " + (r == null ? "null" : "a " + r.getClass().getName())
          + "; it must return a " + t.valueClass().getName());
    }
    return r;
  }

  /** Component {@code i} of {@code value}: a tensor. */
  public static Tensor component(CompositeType<Object, ?> t, Object value, int i) {
    Tensor r;
    try {
      r = t.component(value, i);
    } catch (RuntimeException e) {
      throw threw(t, "component(value, " + i + ")", e);
    }
    if (r == null) {
      throw broken(t, "component(value, " + i + ") returned null; it must return the tensor of component " + i);
    }
    return r;
  }

  /** The body's view of a value of type {@code spec}: an instance of the type's view class. */
  public static Object view(CompositeType<Object, ?> t, CompositeSpec spec, List<Operand<?>> components) {
    Object r;
    try {
      r = t.view(spec, components);
    } catch (RuntimeException e) {
      throw threw(t, "view(spec, components)", e);
    }
    if (!t.viewClass().isInstance(r)) {
      throw broken(t, "view(spec, components) returned " + what(r) + "; it must return a "
          + t.viewClass().getName() + " (its viewClass())");
    }
    return r;
  }

  /** The operands an output view is made of: a list with no null element. */
  public static List<Operand<?>> components(CompositeType<?, Object> t, Object view) {
    List<Operand<?>> r;
    try {
      r = t.components(view);
    } catch (RuntimeException e) {
      throw threw(t, "components(view)", e);
    }
    if (r == null || r.isEmpty() || r.stream().anyMatch(Objects::isNull)) {
      throw broken(t, "components(view) returned " + (r == null ? "null" : r.isEmpty() ? "no operand" : "a null operand")
          + "; it must return the view's operands, one per component");
    }
    return r;
  }

  /** A value from its components' tensors: an instance of the type's value class. */
  public static Object fromComponents(CompositeType<Object, ?> t, List<Tensor> tensors) {
    Object r;
    try {
      r = t.fromComponents(tensors);
    } catch (RuntimeException e) {
      throw threw(t, "fromComponents(tensors)", e);
    }
    if (!t.valueClass().isInstance(r)) {
      throw broken(t, "fromComponents(tensors) returned " + what(r) + "; it must return a "
          + t.valueClass().getName() + " (its valueClass())");
    }
    return r;
  }

  private static String what(Object r) {
    return r == null ? "null" : "a " + r.getClass().getName();
  }

  private static IllegalStateException broken(CompositeType<?, ?> t, String what) {
    return new IllegalStateException("composite type '" + t.name() + "' (" + t.getClass().getName() + "): " + what);
  }

  private static IllegalStateException threw(CompositeType<?, ?> t, String method, RuntimeException e) {
    return new IllegalStateException("composite type '" + t.name() + "' (" + t.getClass().getName() + "): "
        + method + " threw " + e, e);
  }
}
