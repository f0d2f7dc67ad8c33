package dev.polyfn.internal.trace;

import com.google.protobuf.InvalidProtocolBufferException;
import dev.polyfn.ConcreteFunctionInfo;
import dev.polyfn.FunctionOptions;
import dev.polyfn.internal.JavaValues;
import dev.polyfn.internal.Native;
import dev.polyfn.internal.NativeLog;
import dev.polyfn.internal.PrivateFiles;
import dev.polyfn.internal.saved.FunctionLibrary;
import dev.polyfn.internal.saved.RestoreChecks;
import dev.polyfn.internal.saved.SavedLiterals;
import java.io.IOException;
import java.lang.System.Logger.Level;
import java.nio.charset.StandardCharsets;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.FileTime;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import org.tensorflow.proto.FunctionDef;
import org.tensorflow.proto.FunctionDefLibrary;

/**
 * The warm-start trace cache of one function ({@link FunctionOptions#withTraceCache}): one file
 * per concrete function, named by a hash of the key and of the traced type, holding the
 * function's parameter list, output names, its declared and traced types (JSON), its
 * TensorFlow FunctionDef and the library functions that one refers to (see {@link FunctionLibrary}). The key
 * ({@link TraceCacheKey}, which holds Polyfn's and TensorFlow's versions) is written into each entry and checked on read. A file is written to a temporary file in the same directory and renamed, so
 * a reader never sees half of one; a SHA-256 of its payload, checked on read, catches the rest.
 *
 * <p>An entry's graph is executed, so entries are read only from a directory, and only files, that
 * nobody but this user or root could have written ({@link PrivateFiles}, the rule of the native
 * library's cache); directories the cache creates are private (0700). Where the file system has
 * no Unix permissions (Windows), there is no such check.
 *
 * <p>Files are written by one background thread, not the tracing one: logging and disk I/O stay
 * outside the function's trace lock. A shutdown hook lets pending writes finish when the JVM exits.
 */
public final class TraceCache {
  public static final String SUFFIX = ".polyfn-trace";
  /**
   * Made on the first write: a warm start that finds every signature restores without it, and
   * need not pay for its thread pool, queue, shutdown hook and lambdas (a few ms of a fresh JVM).
   */
  private static final class Writer {
    static final ExecutorService WRITER = writer();
  }

  /**
   * The writer: a daemon thread, so an idle writer never holds the JVM open after {@code main}
   * returns, and a shutdown hook that lets pending writes finish (up to 10 s) when the JVM exits,
   * normally or through {@code System.exit}.
   */
  private static ExecutorService writer() {
    ThreadPoolExecutor writer = new ThreadPoolExecutor(0, 1, 2, TimeUnit.SECONDS, new LinkedBlockingQueue<>(), r -> {
      Thread t = new Thread(r, "polyfn-trace-cache");
      t.setDaemon(true);
      return t;
    });
    try {
      Runtime.getRuntime().addShutdownHook(new Thread(() -> {
        writer.shutdown();
        try {
          writer.awaitTermination(10, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
      }, "polyfn-trace-cache-flush"));
    } catch (IllegalStateException e) {
      // First used while the JVM exits (a function defined in a shutdown hook): no hook can be
      // added then; what the daemon writer finishes before the exit is written.
    }
    return writer;
  }

  /** Hands a task to the writer; once the JVM is exiting, a new entry is not written. */
  private static void submit(Runnable task) {
    try {
      Writer.WRITER.execute(task);
    } catch (RejectedExecutionException e) {
      // the JVM is shutting down: the trace itself succeeded, only its entry is lost
    }
  }

  private final Path dir;
  private final String key;
  /** The function's bound on concrete functions (0: none): at most this many entries are restored. */
  private final int bound;
  /** Hex hash of the key: the first part of every entry's file name. */
  private final String prefix;
  /** Set when {@link #restoreInto} found the directory untrusted: nothing is written to it either. */
  private volatile boolean untrusted;

  private TraceCache(Path dir, String key, int bound) {
    this.dir = dir;
    this.key = key;
    this.bound = bound;
    this.prefix = hex(sha256(key.getBytes(StandardCharsets.UTF_8))).substring(0, 24);
  }

  /**
   * The cache for a function of {@code kind} ({@code unaryInput} for a unary one) with this body,
   * or null when there is none or it must not be keyed (see {@link TraceCacheKey}).
   */
  public static TraceCache open(FunctionOptions options, Object body, String kind, Class<?> unaryInput,
      SignatureProfile profile) {
    if (options.traceCache() == null) {
      return null;
    }
    String key = TraceCacheKey.of(options, body, kind, unaryInput, profile);
    return key == null ? null : new TraceCache(options.traceCache(), key, options.maxConcreteFunctions());
  }

  /**
   * Restores every readable entry of this key into {@code f}; called once, at definition. Where
   * the file system has Unix permissions, a directory or entry another user could have written
   * ({@link PrivateFiles}) is not read: a warning names it and why, and its signatures trace anew.
   */
  public void restoreInto(FunctionCore f) {
    List<TraceCacheRetention.Listed> files = new ArrayList<>();
    long now = System.currentTimeMillis();
    String start = prefix + "-";
    boolean modes = PrivateFiles.hasUnixPermissions();
    Path listed = dir;
    try {
      if (modes) {
        // Listed and read through the real path that was checked: a link on the way could be
        // repointed after the check.
        listed = dir.toRealPath();
        String why = PrivateFiles.whyNotTrustedDirectory(listed);
        if (why != null) {
          untrusted = true;
          NativeLog.logger().log(Level.WARNING, "trace cache " + dir + " is not used: " + why
              + "; another user could have planted entries in it, so its functions trace as if it were empty");
          return;
        }
      }
      try (DirectoryStream<Path> list = Files.newDirectoryStream(listed)) {
        for (Path p : list) {
          String name = p.getFileName().toString();
          if (name.startsWith(start) && name.endsWith(SUFFIX)) {
            FileTime modified = TraceCacheRetention.modified(p, now);
            if (modified != null) {
              files.add(new TraceCacheRetention.Listed(p, modified));
            }
          }
        }
      }
    } catch (NoSuchFileException e) {
      return;
    } catch (IOException | RuntimeException e) {
      NativeLog.logger().log(Level.WARNING, "trace cache " + dir + " cannot be listed: " + e);
      return;
    }
    TraceCacheRetention.Selection chosen = TraceCacheRetention.select(files, bound);
    if (!chosen.delete().isEmpty()) {
      submit(() -> TraceCacheRetention.deleteUnlessChanged(chosen.delete()));
    }
    List<Path> used = new ArrayList<>();
    for (TraceCacheRetention.Listed entry : chosen.restore()) {
      Path file = entry.file();
      try {
        String why = modes ? PrivateFiles.whyNotTrustedFile(file) : null;
        if (why != null) {
          throw new IOException(why + "; another user could have planted it");
        }
        TraceCacheEntry e = TraceCacheEntry.read(file, key);
        RestoreChecks.parameters(e.params(), e.declared(), e.traced());
        String nests = TraceCacheNests.whyNot(e.params(), e.traced());
        if (nests != null) {
          throw new IllegalArgumentException(nests + " (the trace cache never writes such an entry)");
        }
        FunctionLibrary.Restorable def = e.restorable(); // checked before any value is interned
        String traced = mayHoldJava(e.params()) ? SavedLiterals.forLoad(e.traced(), e.params(), f.interner()) : e.traced();
        f.restoreConcrete(e.params(), new Capture[0], e.declared(), traced, def, e.outputNames(),
            e.outputShapes());
        if (TraceCacheRetention.needsRefresh(entry.modified(), now)) {
          used.add(file);
        }
      } catch (NoSuchFileException e) {
        // Another JVM sharing the directory deleted it since the listing (beyond its bound, or expired).
        debug("trace cache entry " + file + " was deleted meanwhile; its signature traces");
      } catch (IOException | RuntimeException | OutOfMemoryError | StackOverflowError e) {
        // A damaged entry never fails the definition: its signature traces anew.
        NativeLog.logger().log(Level.WARNING, "ignoring trace cache entry " + file + ": " + e.getMessage());
      }
    }
    if (!used.isEmpty()) {
      submit(() -> TraceCacheRetention.markUsed(used, now));
    }
  }

  /**
   * When a bounded function is closed: marks used now the entries of the concrete functions it
   * still holds and ran, the survivors of its least-recently-used eviction, so that the next
   * start restores those rather than entries written later but evicted (a hit changes nothing on
   * disk). An unbounded function restores every entry anyway.
   */
  public void closing(FunctionCore f) {
    if (untrusted || bound <= 0 || f.params() == null || whyNot(f) != null) {
      return; // nothing written for it
    }
    List<Path> used = new ArrayList<>();
    List<ConcreteFunctionInfo> held;
    try {
      held = f.concreteFunctions();
    } catch (RuntimeException e) {
      return; // closed meanwhile by another thread, which marks them
    }
    for (ConcreteFunctionInfo c : held) {
      if (c.firstRunTime().isPresent()) {
        try {
          String[] types = exportTypes(f, c.id());
          if (TraceCacheNests.whyNot(f.params(), types[0]) == null) {
            used.add(dir.resolve(fileName(cachedType(f, types[0]))));
          } // else a nest the cache does not keep: never written
        } catch (RuntimeException e) {
          // not exportable (a literal in a nest, a value without text), so never written; or closed meanwhile
        }
      }
    }
    if (!used.isEmpty()) {
      long now = System.currentTimeMillis();
      submit(() -> TraceCacheRetention.markUsed(used, now));
    }
  }

  /** The file of this function's entry for a concrete function of this traced type (JSON). */
  private String fileName(String tracedType) {
    return prefix + "-" + hex(sha256(tracedType.getBytes(StandardCharsets.UTF_8))).substring(0, 16) + SUFFIX;
  }

  /**
   * Called under the trace lock after a trace of {@code f} produced concrete function {@code id}:
   * exports it, if the function can be cached, and hands the writing to the writer thread.
   */
  public void traced(FunctionCore f, int id, String[] outputNames) {
    if (untrusted) {
      return; // its entries would never be read
    }
    String why = whyNot(f);
    if (why != null) {
      submit(() -> debug("'" + f.name() + "' is not trace-cached: " + why));
      return;
    }
    String[] types;
    byte[] bytes;
    try {
      types = exportTypes(f, id);
      // Checked before the definition is exported: a nest that is not kept costs no export.
      String nests = TraceCacheNests.whyNot(f.params(), types[0]);
      if (nests != null) {
        submit(() -> debug("a trace of '" + f.name() + "' is not cached: " + nests));
        return;
      }
      types[0] = cachedType(f, types[0]); // Java values as text
      byte[] def = Native.exportFunctionDef(f.address(), id, true);
      FunctionDefLibrary.Builder lib = FunctionDefLibrary.newBuilder()
          .addAllFunction(FunctionLibrary.exported(f.address(), id, FunctionDef.parseFrom(def)));
      // A name of 64 KiB or more does not fit the entry's format (a failure here would fail the call).
      bytes = new TraceCacheEntry(f.params(), outputNames, types[1], types[0], types[2], def, lib.build().toByteArray())
          .bytes(key);
    } catch (RuntimeException | InvalidProtocolBufferException e) {
      submit(() -> debug("a trace of '" + f.name() + "' is not cached: " + e.getMessage()));
      return;
    }
    String file = fileName(types[0]);
    submit(() -> write(dir.resolve(file), bytes));
  }

  /**
   * The types of concrete function {@code id} ({@link Native#exportConcreteTypes}), with the
   * literals of its Java values when it may have any (TraceCacheNests refuses those of classes
   * without a text form, in nests; whyNot, as parameters).
   */
  private static String[] exportTypes(FunctionCore f, int id) {
    return Native.exportConcreteTypes(f.address(), id, mayHoldJava(f.params()));
  }

  /**
   * Traced type {@code traced} as the entry holds it (and its file is named by): each Java
   * value's text in place of its id; the native text itself for a function whose types cannot
   * hold a Java value (parsed and rewritten only where it must be, a warm start's cost).
   */
  private static String cachedType(FunctionCore f, String traced) {
    return mayHoldJava(f.params()) ? SavedLiterals.forSave(traced, f.params(), f.interner()) : traced;
  }

  /** Whether a traced type over {@code params} may hold a Java value: a Java-value or nest parameter's. */
  private static boolean mayHoldJava(Param[] params) {
    for (Param p : params) {
      if (p.kind() == Param.Kind.JAVA || p.kind() == Param.Kind.NEST) {
        return true;
      }
    }
    return false;
  }

  /** Why {@code f} cannot be cached (null when it can). */
  private static String whyNot(FunctionCore f) {
    if (f.captures().length > 0) {
      return "it captures " + f.captures().length + " value(s) with in.capture";
    }
    if (f.ownsVariables()) {
      return "its body creates variables";
    }
    for (Param p : f.params()) {
      // A nest parameter is judged per trace, by its traced type (TraceCacheNests); a record
      // parameter always holds a record, whose class an entry does not keep.
      if (p.kind() == Param.Kind.NEST && p.javaClass() != null) {
        return "parameter '" + p.name() + "' is a record (" + p.javaClass().getName() + "); a trace cache keeps"
            + " tensors, and lists, maps, SparseTensors and RaggedTensors of them";
      }
      // A Java value is kept as its text (SavedLiterals), for the classes that have one.
      if (p.kind() == Param.Kind.VARIABLE
          || (p.kind() == Param.Kind.JAVA && JavaValues.declaredClass(p.javaClass().getName()) == null)) {
        return "parameter '" + p.name() + "' is " + p.kindName() + "; a trace cache keeps tensors, and lists, maps,"
            + " SparseTensors and RaggedTensors of them, and Java numbers, booleans and strings";
      }
      if (p.defaultValue() != null) {
        return "parameter '" + p.name() + "' has a default value";
      }
    }
    return null;
  }

  private static void write(Path target, byte[] bytes) {
    Path temp = null;
    try {
      PrivateFiles.createPrivateDirectories(target.getParent());
      temp = Files.createTempFile(target.getParent(), TraceCacheRetention.TEMP_PREFIX, TraceCacheRetention.TEMP_SUFFIX);
      Files.write(temp, bytes);
      try {
        Files.move(temp, target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
      } catch (AtomicMoveNotSupportedException e) {
        Files.move(temp, target, StandardCopyOption.REPLACE_EXISTING);
      }
      temp = null;
      TraceCacheRetention.sweepOnce(target.getParent(), System.currentTimeMillis());
    } catch (IOException | RuntimeException e) {
      NativeLog.logger().log(Level.WARNING, "trace cache entry " + target + " could not be written: " + e);
    } finally {
      if (temp != null) {
        try {
          Files.deleteIfExists(temp);
        } catch (IOException ignored) {
          // a leftover temporary file is never read: its name does not end with the suffix
        }
      }
    }
  }

  private static void debug(String message) {
    NativeLog.logger().log(Level.DEBUG, message);
  }

  /** Native: Java's MessageDigest costs 30 to 40 ms on its first use in a process, before a warm start's first entry. */
  private static byte[] sha256(byte[] data) {
    return Native.sha256(data);
  }

  private static String hex(byte[] b) {
    return HexFormat.of().formatHex(b);
  }
}
