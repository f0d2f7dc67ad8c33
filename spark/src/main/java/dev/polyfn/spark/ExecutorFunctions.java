package dev.polyfn.spark;

import dev.polyfn.MapFunction;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.NotSerializableException;
import java.io.ObjectOutputStream;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * The functions defined in this JVM, one per name: each executor defines a function once (its
 * first task) and every later task and thread reuses it, so its traces are reused too.
 *
 * <p>A name alone is not an identity: a job may reuse a name with another factory (another model,
 * or a SavedModel rewritten or given a new version), and it must not be served the old function.
 * A deserialized factory has no identity worth comparing, so a factory is known by a digest of its
 * serialized form, taken on the driver: the same method reference or lambda with the same captured
 * values gives the same digest, anything else another function.
 *
 * <p>Only the latest factory's function is kept per name: a job with another factory replaces it,
 * and the replaced function (its graphs, variables and tables) is closed once no batch uses it;
 * until then a job with its factory uses it again (two jobs running side by side with one name do
 * not load their models again and again).
 * Users hold a {@link Lease} (a batch iterator holds one for its partition, the driver's check one
 * for the check), so a function is never closed under a running batch.
 */
final class ExecutorFunctions {
  private static final System.Logger LOG = System.getLogger("dev.polyfn.spark");
  /**
   * The slots of each name: first the current one, then replaced ones that leases still hold (a
   * job using one again gets it back instead of defining it again). Guarded by itself, as are every
   * slot's users and replaced flag.
   */
  private static final Map<String, List<Slot>> SLOTS = new HashMap<>();

  private ExecutorFunctions() {}

  /** One function's slot; defining it holds only this slot's lock, never the map's. */
  private static final class Slot {
    final String name;
    final String factory;
    /** Leases not yet closed (guarded by SLOTS). */
    int users;
    /** Whether another factory's slot is current for this name (guarded by SLOTS). */
    boolean replaced;
    private MapFunction function;
    private boolean closed;

    Slot(String name, String factory) {
      this.name = name;
      this.factory = factory;
    }

    /** Defines the function on first use; the caller holds a lease, so the slot is not closed. */
    synchronized MapFunction define(FunctionFactory factory) {
      if (closed) {
        throw new IllegalStateException("Polyfn function '" + name + "' was closed while leased");
      }
      if (function == null) {
        MapFunction created = factory.create();
        if (created == null) {
          throw new IllegalStateException("the factory of Polyfn function '" + name + "' returned null");
        }
        function = created;
      }
      return function;
    }

    /** Closes the function; called once, when the slot is replaced and has no users. */
    synchronized void close() {
      closed = true;
      if (function != null) {
        try {
          function.close();
        } catch (RuntimeException e) {
          LOG.log(System.Logger.Level.WARNING, "closing the replaced Polyfn function '" + name + "' failed", e);
        }
        function = null;
      }
    }
  }

  /**
   * A use of one function: the function stays open until every lease of it is closed. Closing
   * is idempotent (a batch iterator closes its lease when its rows end and when its task ends).
   */
  static final class Lease implements AutoCloseable {
    private final Slot slot;
    private final MapFunction function;
    private final AtomicBoolean released = new AtomicBoolean();

    private Lease(Slot slot, MapFunction function) {
      this.slot = slot;
      this.function = function;
    }

    /** @return the leased function (open until this lease is closed) */
    MapFunction function() {
      return function;
    }

    @Override
    public void close() {
      if (released.compareAndSet(false, true)) {
        release(slot);
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
   * Leases the function named {@code name} and made by the factory whose digest is {@code id},
   * defined by {@code factory} on first use. A function of that name from another factory is
   * replaced (and closed once its last lease is). Close the lease when done with the function.
   */
  static Lease acquire(String name, String id, FunctionFactory factory) {
    Slot slot = null;
    Slot unused = null;
    synchronized (SLOTS) {
      List<Slot> slots = SLOTS.computeIfAbsent(name, n -> new ArrayList<>());
      for (Slot s : slots) {
        if (s.factory.equals(id)) {
          slot = s;
        }
      }
      if (slot == null) {
        slot = new Slot(name, id);
        if (!slots.isEmpty()) {
          LOG.log(System.Logger.Level.INFO, "Polyfn function ''{0}'' is defined in this JVM by another factory "
              + "than before (another model, or a new version of it): the previous function is closed once no "
              + "batch uses it (give different models different names to keep both)", name);
        }
      } else {
        slots.remove(slot); // current already, or replaced but still leased: used again, not defined again
      }
      slots.add(0, slot);
      slot.replaced = false;
      if (slots.size() > 1) {
        Slot previous = slots.get(1);
        previous.replaced = true;
        if (previous.users == 0) {
          slots.remove(1);
          unused = previous;
        }
      }
      slot.users++;
    }
    if (unused != null) {
      unused.close();
    }
    try {
      return new Lease(slot, slot.define(factory));
    } catch (RuntimeException | Error e) {
      release(slot);
      throw e;
    }
  }

  private static void release(Slot slot) {
    synchronized (SLOTS) {
      slot.users--;
      if (!slot.replaced || slot.users > 0) {
        return;
      }
      SLOTS.get(slot.name).remove(slot);
    }
    slot.close(); // replaced and unused: no lease can reach it any more
  }
}
