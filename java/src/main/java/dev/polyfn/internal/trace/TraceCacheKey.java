package dev.polyfn.internal.trace;

import dev.polyfn.FunctionOptions;
import dev.polyfn.TensorSpec;
import dev.polyfn.internal.Native;
import dev.polyfn.internal.NativeLog;
import dev.polyfn.internal.PolyfnVersion;
import java.io.IOException;
import java.io.InputStream;
import java.lang.System.Logger.Level;
import java.lang.invoke.SerializedLambda;
import java.lang.reflect.Field;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HexFormat;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import org.tensorflow.Tensor;
import org.tensorflow.TensorFlow;

/**
 * The key of a function's trace cache entries ({@link TraceCache}), or why it has none. An entry
 * must only ever be served to a function that would trace the same graph and declare the same
 * types, so the key holds the function's name, kind (and a unary function's input type), the
 * user's version, TensorFlow's version, Polyfn's version ({@link PolyfnVersion}: another build may
 * write other entries or trace the same body otherwise), the SHA-256 of the class file that defines the body and of
 * each superclass's, a serializable lambda's implementation method (or, for another lambda, that it
 * is its class's only lambda of its interface, {@link LambdaSites}), the place a lambda or method
 * reference of unknown implementation is defined at ({@link #place}), and a SHA-256 of this run's
 * example inputs and signature profile (they shape the declarations a restored entry carries).
 *
 * <p>A body is refused, never keyed, when what it computes could differ under one key: it holds an
 * instance field (its own or a superclass's: a captured value no class file shows; a field holding
 * a Kotlin function, as polyfn-kotlin's wrappers do, is followed and that function keyed), the function
 * has the default name (two lambdas of one class would share it), or another body of this process
 * already opened the same key in the same directory (two bodies defined at the same place, which the
 * place cannot tell apart).
 */
final class TraceCacheKey {
  /** Bumped when what the key holds changes, so older entries are never read. */
  private static final int VERSION = 6; // 6: reads used or returned are control outputs
  private static final String DEFAULT_NAME = FunctionOptions.defaults().name();
  private static final AtomicBoolean WARNED_UNNAMED = new AtomicBoolean();
  /** Directory and key to the name of the body class that opened it first in this process. */
  private static final Map<String, String> OWNERS = new ConcurrentHashMap<>();

  private TraceCacheKey() {}

  /**
   * The key for a function of {@code kind} ({@code unaryInput} for a unary one) with this body and
   * these options, or null (logged) when it must not be cached.
   */
  static String of(FunctionOptions options, Object body, String kind, Class<?> unaryInput, SignatureProfile profile) {
    String name = options.name();
    List<Part> parts = new ArrayList<>();
    String held = collect(body, parts, 0);
    if (held != null) {
      // A captured or inherited value is not in any class file: two runs with different values
      // would share entries.
      debug("'" + name + "' is not trace-cached: its body holds a value (" + held + "), which the cache key cannot see");
      return null;
    }
    if (name.equals(DEFAULT_NAME)) {
      // Lambdas of one class are told apart by nothing stable but their name.
      if (!WARNED_UNNAMED.getAndSet(true)) {
        warn("a function named '" + name + "' is not trace-cached: it has no name of its own; give each cached"
            + " function one with FunctionOptions.withName (two lambdas of one class would share entries)");
      }
      return null;
    }
    StringBuilder key = new StringBuilder("polyfn trace cache key ").append(VERSION).append("\nname=").append(name)
        .append("\nkind=").append(kind).append(unaryInput == null ? "" : " " + unaryInput.getName())
        .append("\nversion=").append(options.traceCacheVersion()).append("\ntensorflow=").append(TensorFlow.version())
        .append("\npolyfn=").append(PolyfnVersion.current());
    StringBuilder bodyClasses = new StringBuilder();
    Set<String> unplaced = new LinkedHashSet<>();
    for (Part part : parts) {
      String className = part.type.getName();
      bodyClasses.append(className).append(' ');
      int lambda = className.indexOf("$$Lambda");
      String defining = lambda >= 0 ? className.substring(0, lambda) : className;
      byte[] code = classFile(part.type.getClassLoader(), defining);
      if (code == null) {
        debug("'" + name + "' is not trace-cached: the class file of " + defining + " cannot be read");
        return null;
      }
      key.append("\nclass=").append(defining).append(' ').append(hex(Native.sha256(code)));
      if (lambda >= 0) {
        String implementation = implementation(part.type, part.instance);
        Class<?>[] made = part.type.getInterfaces();
        if (implementation.isEmpty() && made.length > 0 && LambdaSites.count(code, made[0]) == 1) {
          // The class makes no other lambda of this interface: this is that one, wherever defined.
          implementation = " sole " + made[0].getName();
        }
        key.append(implementation);
        if (implementation.isEmpty()) {
          unplaced.add(defining);
        }
      }
    }
    if (!unplaced.isEmpty()) {
      String place = place(unplaced);
      if (place == null) {
        debug("'" + name + "' is not trace-cached: the class file of the code defining it cannot be read");
        return null;
      }
      key.append(place);
    }
    String inferred = inferred(options, profile);
    String result = key.append("\ninferred=").append(inferred).toString();
    String owner = OWNERS.putIfAbsent(options.traceCache().toAbsolutePath().normalize() + "\n" + result,
        bodyClasses.toString());
    if (owner != null && !owner.equals(bodyClasses.toString())) {
      warn("'" + name + "' is not trace-cached: another body (" + owner.trim() + ") of the same class, defined at the"
          + " same place, already uses its name and trace cache " + options.traceCache()
          + "; give each cached function a name of its own");
      return null;
    }
    return result;
  }

  /** A class whose code the body's result depends on, and the object of that class. */
  private record Part(Class<?> type, Object instance) {}

  /**
   * Adds to {@code parts} the classes of {@code o} up to Object, and of the functions it holds;
   * returns the field that holds a value (which no class file shows), or null. The one value
   * followed is a Kotlin function: polyfn-kotlin's wrappers ({@code MapBody { tf, in -> body(tf, in) }})
   * hold the user's lambda, which is keyed in turn, by its own class.
   */
  private static String collect(Object o, List<Part> parts, int depth) {
    for (Class<?> k = o.getClass(); k != null && k != Object.class; k = k.getSuperclass()) {
      if (k.getName().equals("kotlin.jvm.internal.Lambda")) {
        break; // its one field, the arity, is set by the lambda class's own constructor
      }
      parts.add(new Part(k, o));
      for (Field field : k.getDeclaredFields()) {
        if (Modifier.isStatic(field.getModifiers())) {
          continue;
        }
        Object value = depth < 4 ? kotlinFunction(field, o) : null;
        String held = value == null ? k.getName() + "." + field.getName() : collect(value, parts, depth + 1);
        if (held != null) {
          return held;
        }
      }
    }
    return null;
  }

  /** The value of {@code field} of {@code o} when it is a Kotlin function, else null. */
  private static Object kotlinFunction(Field field, Object o) {
    if (field.getType().isPrimitive()) {
      return null;
    }
    Object value;
    try {
      field.setAccessible(true);
      value = field.get(o);
    } catch (ReflectiveOperationException | RuntimeException e) {
      return null;
    }
    return value != null && isKotlinFunction(value.getClass()) ? value : null;
  }

  private static boolean isKotlinFunction(Class<?> c) {
    for (Class<?> k = c; k != null; k = k.getSuperclass()) {
      for (Class<?> i : k.getInterfaces()) {
        if (i.getName().equals("kotlin.Function") || isKotlinFunction(i)) {
          return true;
        }
      }
    }
    return false;
  }

  /**
   * A serializable lambda's implementation method, which tells lambdas of one class apart; empty
   * for others (their class's hidden name is not stable across runs).
   */
  private static String implementation(Class<?> c, Object body) {
    try {
      Method writeReplace = c.getDeclaredMethod("writeReplace");
      writeReplace.setAccessible(true);
      if (writeReplace.invoke(body) instanceof SerializedLambda l) {
        return " lambda=" + l.getImplMethodName() + l.getImplMethodSignature();
      }
    } catch (ReflectiveOperationException | RuntimeException e) {
      // not serializable: the name must tell it apart
    }
    return "";
  }

  /**
   * Where the function is being defined, for bodies whose lambda class tells nothing stable (a
   * lambda or method reference that is not serializable, of a class that makes other lambdas of
   * its interface: its {@code $$Lambda} class is numbered as the JVM goes). Two such lambdas of one class are told apart by the place their {@code define}
   * runs at: every frame of the classes that define them ({@code defining}), and of the first
   * class on the stack that is neither Polyfn's nor the JDK's or Kotlin's (the caller: a helper
   * that wraps {@code define} is told apart by its own callers in that class), each as class,
   * method and bytecode index. The bytecode index needs no line numbers and is stable: the defining
   * classes' files are in the key, and so is the caller's (null when it cannot be read).
   * Frames of generated classes (lambda proxies, reflection accessors, framework proxies) are
   * skipped, their names being numbered per run. Bodies defined at one place (a loop, a factory
   * taking the body) share a place; {@link #of}'s guard keeps the second of one process uncached.
   */
  private static String place(Set<String> defining) {
    return StackWalker.getInstance(StackWalker.Option.RETAIN_CLASS_REFERENCE).walk(frames -> {
      List<StackWalker.StackFrame> stack = frames.filter(f -> !generated(f.getClassName())).toList();
      Set<String> classes = new LinkedHashSet<>(defining);
      StringBuilder place = new StringBuilder();
      StackWalker.StackFrame caller = stack.stream().filter(f -> !library(f.getClassName())).findFirst().orElse(null);
      if (caller != null && classes.add(caller.getClassName())) {
        // The caller's own file is keyed too: an edit that puts another body at the same bytecode
        // index (`define(Bodies.ADD)` changed to `define(Bodies.MUL)`) is then another key.
        byte[] code = classFile(caller.getDeclaringClass().getClassLoader(), caller.getClassName());
        if (code == null) {
          return null;
        }
        place.append("\ncaller=").append(caller.getClassName()).append(' ').append(hex(Native.sha256(code)));
      }
      for (StackWalker.StackFrame f : stack) {
        if (classes.contains(f.getClassName())) {
          place.append("\nat=").append(f.getClassName()).append('.').append(f.getMethodName())
              .append('@').append(f.getByteCodeIndex());
        }
      }
      return place.toString();
    });
  }

  /** Polyfn's own classes (its API, internals, Kotlin and Spark modules), the JDK's and Kotlin's. */
  private static boolean library(String className) {
    int dot = className.lastIndexOf('.');
    String pkg = dot < 0 ? "" : className.substring(0, dot);
    return pkg.equals("dev.polyfn") || pkg.startsWith("dev.polyfn.internal") || pkg.equals("dev.polyfn.kotlin")
        || pkg.equals("dev.polyfn.spark") || pkg.startsWith("java.") || pkg.startsWith("javax.")
        || pkg.startsWith("jdk.") || pkg.startsWith("sun.") || pkg.startsWith("com.sun.") || pkg.equals("kotlin")
        || pkg.startsWith("kotlin.");
  }

  /** A class generated at run time, whose name may differ between runs. */
  private static boolean generated(String className) {
    return className.contains("$$Lambda") || className.contains("CGLIB$$") || className.contains("$$EnhancerBy")
        || className.contains("$$FastClass") || className.contains("$ByteBuddy$") || isJdkProxy(className)
        || className.contains("GeneratedMethodAccessor") || className.contains("GeneratedConstructorAccessor")
        || className.contains("GeneratedSerializationConstructorAccessor") || className.startsWith("jdk.internal.");
  }

  /**
   * A JDK proxy class ({@code jdk.proxy1.$Proxy12}, {@code com.sun.proxy.$Proxy3}): its simple name
   * is {@code $Proxy} and a number. A user's class named like {@code Gateway$ProxyRoutes} is not.
   */
  private static boolean isJdkProxy(String className) {
    String simple = className.substring(className.lastIndexOf('.') + 1);
    return simple.startsWith("$Proxy") && simple.length() > 6 && simple.substring(6).chars().allMatch(Character::isDigit);
  }

  /**
   * SHA-256 of the example inputs' types and of the signature profile's bytes, as {@code profile}
   * (the definition's one read of the file) parsed them.
   */
  private static String inferred(FunctionOptions options, SignatureProfile profile) {
    StringBuilder text = new StringBuilder();
    for (Map<String, ?> example : options.exampleInputs()) {
      describe(example, text.append("\nexample "));
    }
    if (profile != null) {
      text.append("\nprofile ").append(profile.digest());
    }
    return text.length() == 0 ? "none" : hex(Native.sha256(text.toString().getBytes(StandardCharsets.UTF_8)));
  }

  /**
   * An example's type as inference sees it (a tensor's dtype and shape, not its values; a Java
   * value by class and text), in an order that does not depend on a map's iteration order.
   */
  private static void describe(Object v, StringBuilder out) {
    if (v instanceof Map<?, ?> m) {
      List<String> entries = new ArrayList<>();
      for (Map.Entry<?, ?> e : m.entrySet()) {
        StringBuilder one = text(String.valueOf(e.getKey()), new StringBuilder()).append('=');
        describe(e.getValue(), one);
        entries.add(one.toString());
      }
      entries.sort(null);
      out.append('{').append(String.join(",", entries)).append('}');
    } else if (v instanceof Collection<?> list) {
      out.append('[');
      for (Object o : list) {
        describe(o, out);
        out.append(',');
      }
      out.append(']');
    } else if (v instanceof Tensor t) {
      out.append("tensor(").append(t.dataType()).append(' ').append(t.shape()).append(')');
    } else if (v instanceof TensorSpec s) {
      out.append(s);
    } else {
      // A Java value, a variable spec, a record: an object with no stable text only keeps its
      // function from being restored, never serves it a wrong entry.
      if (v == null) {
        out.append("null");
      } else if (v.getClass().isArray()) {
        // A Java array example (float[] for a tensor): its values, not its identity hash, which
        // repeats across runs and would key float[2] and float[3] alike.
        text(java.util.Arrays.deepToString(new Object[] {v}), out.append(v.getClass().getName()).append(':'));
      } else {
        text(String.valueOf(v), out.append(v.getClass().getName()).append(':'));
      }
    }
  }

  /**
   * {@code s} with its length first: a key or value holding the separators ("a,b=...") can never
   * read as two entries, so two different example sets never share a key (and entries).
   */
  private static StringBuilder text(String s, StringBuilder out) {
    return out.append(s.length()).append('\'').append(s);
  }

  private static byte[] classFile(ClassLoader loader, String className) {
    if (loader == null) {
      return null;
    }
    try (InputStream in = loader.getResourceAsStream(className.replace('.', '/') + ".class")) {
      return in == null ? null : in.readAllBytes();
    } catch (IOException e) {
      return null;
    }
  }

  private static void warn(String message) {
    NativeLog.logger().log(Level.WARNING, message);
  }

  private static void debug(String message) {
    NativeLog.logger().log(Level.DEBUG, message);
  }

  private static String hex(byte[] b) {
    return HexFormat.of().formatHex(b);
  }
}
