package dev.polyfn.internal.structure;

import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.lang.reflect.Method;
import java.lang.reflect.RecordComponent;

/**
 * What Polyfn knows of a record class: its components' names, types and accessors, and its
 * canonical constructor. Read once per class (reflection is slow and allocates), then shared.
 */
public final class Records {
  private Records() {}

  /** One record class, its components in declaration order. */
  public record Info(Class<?> type, String[] names, Class<?>[] types, MethodHandle[] accessors, MethodHandle constructor) {
    public int size() {
      return names.length;
    }

    /** Component {@code i} of {@code record}. */
    public Object get(Object record, int i) {
      try {
        // Each accessor was adapted to (Object)Object once: an exact call, no per-call adaptation.
        return (Object) accessors[i].invokeExact(record);
      } catch (RuntimeException | Error e) {
        throw e;
      } catch (Throwable t) {
        throw new IllegalStateException("reading component '" + names[i] + "' of " + type.getName() + " failed", t);
      }
    }

    /** A new record from its components, through the canonical constructor. */
    public Object make(Object[] components) {
      try {
        return constructor.invokeWithArguments(components);
      } catch (RuntimeException | Error e) {
        throw e;
      } catch (Throwable t) {
        throw new IllegalStateException("the constructor of " + type.getName() + " failed", t);
      }
    }
  }

  private static final ClassValue<Info> INFO = new ClassValue<>() {
    @Override
    protected Info computeValue(Class<?> type) {
      return read(type);
    }
  };

  /**
   * Whether {@code type} looks like a Kotlin data class that holds tensors but is not a record: as
   * a Java value it would be keyed by the identity of its tensors, tracing at every call. Read
   * once per class.
   */
  public static boolean isUnmarkedDataClass(Class<?> type) {
    return DATA_CLASS.get(type);
  }

  private static final ClassValue<Boolean> DATA_CLASS = new ClassValue<>() {
    @Override
    protected Boolean computeValue(Class<?> type) {
      if (type.isRecord()) {
        return false;
      }
      for (Method m : type.getMethods()) {
        if (m.getName().matches("component[0-9]+") && m.getParameterCount() == 0
            && (org.tensorflow.Tensor.class.isAssignableFrom(m.getReturnType())
                || java.util.Collection.class.isAssignableFrom(m.getReturnType())
                || java.util.Map.class.isAssignableFrom(m.getReturnType()))) {
          return true;
        }
      }
      return false;
    }
  };

  /** The record class {@code type}'s description; an IllegalArgumentException if it cannot be used. */
  public static Info of(Class<?> type) {
    return INFO.get(type);
  }

  private static Info read(Class<?> type) {
    if (!type.isRecord()) {
      throw new IllegalArgumentException(type.getName() + " is not a record class");
    }
    RecordComponent[] cs = type.getRecordComponents();
    String[] names = new String[cs.length];
    Class<?>[] types = new Class<?>[cs.length];
    MethodHandle[] accessors = new MethodHandle[cs.length];
    MethodHandles.Lookup lookup = MethodHandles.lookup();
    try {
      for (int i = 0; i < cs.length; i++) {
        names[i] = cs[i].getName();
        types[i] = cs[i].getType();
        Method m = cs[i].getAccessor();
        m.setAccessible(true);
        accessors[i] = lookup.unreflect(m).asType(MethodType.methodType(Object.class, Object.class));
      }
      var ctor = type.getDeclaredConstructor(types);
      ctor.setAccessible(true);
      MethodHandle constructor = lookup.unreflectConstructor(ctor);
      return new Info(type, names, types, accessors, constructor);
    } catch (ReflectiveOperationException | RuntimeException e) {
      // Records in a named module must be open to dev.polyfn for their accessors to be read.
      throw new IllegalArgumentException("record class " + type.getName() + " cannot be read by Polyfn (" + e
          + "): make it public, or open its package to module dev.polyfn", e);
    }
  }
}
