package dev.polyfn.spark;

import dev.polyfn.MapFunction;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.NotSerializableException;
import java.io.ObjectOutputStream;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The functions defined in this JVM, by name and factory: each executor defines a function once
 * (its first task) and every later task and thread reuses it, so its traces are reused too. They
 * live as long as the JVM, as an executor's cached state does.
 *
 * <p>A name alone is not an identity: two jobs may reuse a name with different factories (another
 * model), and the second must not be served the first one's function. A deserialized factory has
 * no identity worth comparing, so a factory is known by a digest of its serialized form, taken on
 * the driver: the same method reference or lambda with the same captured values gives the same
 * digest, anything else another function.
 */
final class ExecutorFunctions {
  private static final System.Logger LOG = System.getLogger("dev.polyfn.spark");
  private static final ConcurrentHashMap<Key, Slot> SLOTS = new ConcurrentHashMap<>();
  /** The first factory digest seen for each name, to warn when a name is reused for another. */
  private static final ConcurrentHashMap<String, String> FIRST = new ConcurrentHashMap<>();

  private ExecutorFunctions() {}

  /** A function's identity on an executor. */
  record Key(String name, String factory) {}

  /** One function's slot; defining it holds only this slot's lock, never the map's. */
  private static final class Slot {
    private volatile MapFunction function;

    MapFunction get(String name, FunctionFactory factory) {
      MapFunction f = function;
      if (f != null) {
        return f;
      }
      synchronized (this) {
        if (function == null) {
          MapFunction created = factory.create();
          if (created == null) {
            throw new IllegalStateException("the factory of Polyfn function '" + name + "' returned null");
          }
          function = created;
        }
        return function;
      }
    }
  }

  /**
   * The digest that identifies {@code factory} (SHA-256 of its Java serialization), computed on
   * the driver before the factory is shipped.
   */
  static String identify(String name, FunctionFactory factory) {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    try (ObjectOutputStream out = new ObjectOutputStream(bytes)) {
      out.writeObject(factory);
    } catch (NotSerializableException e) {
      throw new IllegalArgumentException("factory of '" + name + "': it must be serializable to reach the executors "
          + "(a static method reference such as Models::scorer is), but it holds a " + e.getMessage(), e);
    } catch (IOException e) {
      throw new IllegalArgumentException("factory of '" + name + "': it could not be serialized (" + e + ")", e);
    }
    try {
      return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(bytes.toByteArray()));
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("SHA-256 is missing from this JVM", e);
    }
  }

  /**
   * The function named {@code name} and made by the factory whose digest is {@code id} in this
   * JVM, defined by {@code factory} on first use.
   */
  static MapFunction get(String name, String id, FunctionFactory factory) {
    String first = FIRST.putIfAbsent(name, id);
    Key key = new Key(name, id);
    Slot slot = SLOTS.get(key);
    if (slot == null) {
      Slot created = new Slot();
      slot = SLOTS.putIfAbsent(key, created);
      if (slot == null) {
        slot = created;
        if (first != null && !first.equals(id)) {
          LOG.log(System.Logger.Level.WARNING, "Polyfn function ''{0}'' is defined in this JVM by another factory "
              + "than before: each keeps its own function (give them different names to tell them apart)", name);
        }
      }
    }
    return slot.get(name, factory);
  }
}
