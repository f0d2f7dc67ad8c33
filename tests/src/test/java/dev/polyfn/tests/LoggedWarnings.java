package dev.polyfn.tests;

import java.util.ArrayList;
import java.util.List;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;

/** WARNING records of the {@code dev.polyfn} logger, captured while some code runs. */
final class LoggedWarnings {
  private LoggedWarnings() {}

  /** The WARNING (and more severe) messages of dev.polyfn logged while {@code run} runs, from any thread. */
  static List<String> during(Runnable run) {
    List<String> out = new ArrayList<>();
    // Held while run runs: java.util.logging keeps loggers weakly, and the handler lives on this instance.
    Logger logger = Logger.getLogger("dev.polyfn");
    Handler capture = new Handler() {
      @Override
      public void publish(LogRecord r) {
        if (r.getLevel().intValue() >= Level.WARNING.intValue()) {
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
    logger.addHandler(capture);
    try {
      run.run();
    } finally {
      logger.removeHandler(capture);
    }
    synchronized (out) {
      return new ArrayList<>(out);
    }
  }
}
