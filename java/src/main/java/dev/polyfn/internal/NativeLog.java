package dev.polyfn.internal;

import java.lang.System.Logger;
import java.lang.System.Logger.Level;

/**
 * Where Polyfn's Rust log records arrive: the {@code System.Logger} named {@code dev.polyfn}
 * (java.util.logging by default). Retrace warnings are {@code WARNING}; a trace or a first run
 * longer than {@link SlowWork}'s threshold is {@code INFO}; every trace and eviction with its
 * reason is {@code DEBUG}.
 */
public final class NativeLog {
  private NativeLog() {}

  /**
   * The {@code dev.polyfn} logger, made on first use: making it starts java.util.logging (its
   * LogManager and configuration, 15 to 30 ms in a fresh JVM), which a start that logs nothing
   * need not pay. Rust asks {@link #isLoggable} per record, so nothing reads the level earlier.
   */
  public static Logger logger() {
    return Holder.LOGGER;
  }

  private static final class Holder {
    static final Logger LOGGER = System.getLogger("dev.polyfn");
  }

  /**
   * Makes the logger on a thread of its own, so that the first record (the first trace's or
   * restore's debug record, asked for whatever the level) finds it made, or waits only for the
   * rest, instead of making it on the caller's thread. Called once, when Polyfn has loaded.
   */
  static void makeInBackground() {
    Thread t = new Thread(new Maker(), "polyfn-logger-start");
    t.setDaemon(true);
    t.start();
  }

  /** A class, not a lambda: a lambda's first bootstrap would cost the caller's thread more than the thread does. */
  private static final class Maker implements Runnable {
    @Override
    public void run() {
      logger();
    }
  }

  /**
   * Called from Rust before each record is formatted, so that a level set at run time takes
   * effect at once; {@code level} is Rust's: 1 error, 2 warn, 3 info, 4 debug, 5 trace.
   */
  static boolean isLoggable(int level) {
    return logger().isLoggable(javaLevel(level));
  }

  /** Called from Rust for a record {@link #isLoggable} accepted. */
  static void log(int level, String message) {
    logger().log(javaLevel(level), message);
  }

  /**
   * Called from Rust after a trace or a first run: whether work that took {@code nanos} is worth
   * an {@code INFO} record (over {@link SlowWork}'s threshold, and the logger wants INFO).
   */
  static boolean isSlow(long nanos) {
    return SlowWork.exceeds(nanos) && logger().isLoggable(Level.INFO);
  }

  /**
   * The most verbose Rust level worth asking about now, read when a trace begins and handed to
   * Rust, which then drops more verbose records of the trace without calling back into Java (a
   * call that costs a first call more than the rest of the trace's bookkeeping): 3 (INFO) when
   * the logger does not want DEBUG records, as by default; 5 (every record asked for) when it does.
   */
  public static int wantedLevel() {
    return logger().isLoggable(Level.DEBUG) ? 5 : 3;
  }

  private static Level javaLevel(int rustLevel) {
    switch (rustLevel) {
      case 1: return Level.ERROR;
      case 2: return Level.WARNING;
      case 3: return Level.INFO;
      case 4: return Level.DEBUG;
      default: return Level.TRACE;
    }
  }
}
