package dev.polyfn.internal;

import java.lang.System.Logger.Level;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.function.Supplier;

/**
 * Word on long work: a trace, a concrete function's first run (where TensorFlow prepares it), a
 * save or a load that takes longer than the threshold is logged at {@code INFO} to the {@code
 * dev.polyfn} logger, with its phases and their times. The threshold is the system property
 * {@value #PROPERTY} in milliseconds (default {@value #DEFAULT_MILLIS}; negative: never), read
 * each time, so it may change while the program runs. Rust asks {@link #exceeds} through {@code
 * NativeLog}; Java's own work (save, load) is timed with {@link Phases}.
 */
public final class SlowWork {
  /** The system property holding the threshold in milliseconds. */
  public static final String PROPERTY = "dev.polyfn.slowWorkMillis";
  static final long DEFAULT_MILLIS = 1000;

  private SlowWork() {}

  /** Whether work that took {@code nanos} is over the threshold. */
  static boolean exceeds(long nanos) {
    long threshold = thresholdNanos();
    return threshold >= 0 && nanos > threshold;
  }

  /**
   * The threshold now, in nanoseconds (-1: never slow). A trace reads it once when it begins and
   * hands it to Rust, which then needs no call back into Java to tell whether its work was slow.
   */
  public static long thresholdNanos() {
    long millis = Long.getLong(PROPERTY, DEFAULT_MILLIS);
    return millis < 0 ? -1 : millis > Long.MAX_VALUE / 1_000_000L ? Long.MAX_VALUE : millis * 1_000_000L;
  }

  /** Starts timing a piece of work made of phases. */
  public static Phases start() {
    return new Phases();
  }

  /** A time as Polyfn's records write it (as Rust's {@code duration_text}): {@code 12.3 ms}, {@code 2.61 s}. */
  static String text(long nanos) {
    return nanos < 1_000_000_000L
        ? String.format(Locale.ROOT, "%.1f ms", nanos / 1e6)
        : String.format(Locale.ROOT, "%.2f s", nanos / 1e9);
  }

  /** The phases of one piece of work, each ended by {@link #end}; reported by {@link #report}. */
  public static final class Phases {
    private final long started = System.nanoTime();
    private long phaseStarted = started;
    private final List<String> names = new ArrayList<>();
    private final List<Long> times = new ArrayList<>();

    private Phases() {}

    /** Ends the current phase, naming it; the next phase starts now. */
    public void end(String phase) {
      long now = System.nanoTime();
      names.add(phase);
      times.add(now - phaseStarted);
      phaseStarted = now;
    }

    /**
     * Logs {@code what} ("function 'f' saved to /dir") with the total time and the phases, when
     * the total is over the threshold. Call it holding no lock other callers need: the logger is
     * user code.
     */
    public void report(Supplier<String> what) {
      long total = System.nanoTime() - started;
      if (!exceeds(total) || !NativeLog.logger().isLoggable(Level.INFO)) {
        return;
      }
      StringBuilder b = new StringBuilder(what.get()).append(" in ").append(text(total)).append(':');
      for (int i = 0; i < names.size(); i++) {
        b.append(i == 0 ? " " : ", ").append(names.get(i)).append(' ').append(text(times.get(i)));
      }
      NativeLog.logger().log(Level.INFO, b.toString());
    }
  }
}
