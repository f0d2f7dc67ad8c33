package dev.polyfn.tests;

import java.util.ArrayList;
import java.util.List;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;

/** Records of the {@code dev.polyfn} logger, captured while some code runs. */
final class LoggedWarnings {
  private LoggedWarnings() {}

  /** The WARNING (and more severe) messages of dev.polyfn logged while {@code run} runs, from any thread. */
  static List<String> during(Runnable run) {
    return atLeast(Level.WARNING, run);
  }

  /**
   * The messages of dev.polyfn at {@code level} or more severe logged while {@code run} runs, from
   * any thread; the logger is set to log them meanwhile (Polyfn's native side follows its level at
   * once), and its level is restored afterwards.
   */
  static List<String> atLeast(Level level, Runnable run) {
    List<String> out = new ArrayList<>();
    // Held while run runs: java.util.logging keeps loggers weakly, and the handler lives on this instance.
    Logger logger = Logger.getLogger("dev.polyfn");
    Level before = logger.getLevel();
    Handler capture = new Handler() {
      @Override
      public void publish(LogRecord r) {
        if (r.getLevel().intValue() >= level.intValue()) {
          synchronized (out) {
            out.add(r.getMessage());
          }
        }
      }

      @Override
      public void flush() {}

      @Override
      public void close() {}
    };
    if (!logger.isLoggable(level)) {
      logger.setLevel(level);
    }
    logger.addHandler(capture);
    try {
      run.run();
    } finally {
      logger.removeHandler(capture);
      logger.setLevel(before);
    }
    synchronized (out) {
      return new ArrayList<>(out);
    }
  }
}
