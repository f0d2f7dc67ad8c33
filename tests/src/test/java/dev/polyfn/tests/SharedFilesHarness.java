package dev.polyfn.tests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * What the tests of processes sharing Polyfn's files have in common: children started at once,
 * each printing one {@code outcome right=.. errors=.. wrong=..} line, which the parent adds up.
 */
final class SharedFilesHarness {
  private SharedFilesHarness() {}

  /** A child's or the sum of the children's outcomes: calls right, clear errors, wrong results. */
  static final class Counts {
    final AtomicInteger right = new AtomicInteger();
    final AtomicInteger errors = new AtomicInteger();
    final AtomicInteger wrong = new AtomicInteger();
    /** The first few error and wrong-result messages, for the report. */
    final List<String> samples = new ArrayList<>();

    /** A clear error (an exception whose message says what happened): allowed, counted. */
    void error(RuntimeException e) {
      errors.incrementAndGet();
      sample("error: " + e);
    }

    /** A result that differs from the independently computed one: a defect. */
    void wrong(String what) {
      wrong.incrementAndGet();
      sample("WRONG: " + what);
    }

    private synchronized void sample(String s) {
      if (samples.size() < 5) {
        samples.add(s);
      }
    }

    /** The line a child prints for the parent (and the samples, for its log). */
    String line(String extra) {
      StringBuilder b = new StringBuilder();
      synchronized (this) {
        for (String s : samples) {
          b.append("sample ").append(s.replace('\n', ' ')).append('\n');
        }
      }
      return b + "outcome right=" + right + " errors=" + errors + " wrong=" + wrong + (extra.isEmpty() ? "" : " " + extra);
    }
  }

  private static final Pattern OUTCOME = Pattern.compile("outcome right=(\\d+) errors=(\\d+) wrong=(\\d+)(.*)");

  /** Starts each child ({@code args[i]} for child i) at once, waits for all, asserts none crashed; returns their logs. */
  static List<String> runAll(Path logs, Class<?> main, List<String[]> args) throws Exception {
    return runAll(logs, List.of(), main, args);
  }

  /** {@link #runAll(Path, Class, List)} with these JVM options for every child. */
  static List<String> runAll(Path logs, List<String> jvm, Class<?> main, List<String[]> args) throws Exception {
    List<Process> started = new ArrayList<>();
    List<Path> files = new ArrayList<>();
    for (int i = 0; i < args.size(); i++) {
      Path log = Files.createTempFile(logs, "child-" + i + "-", ".log");
      files.add(log);
      started.add(ChildJvm.start(log, jvm, main, args.get(i)));
    }
    List<String> out = new ArrayList<>();
    for (int i = 0; i < started.size(); i++) {
      Process p = started.get(i);
      boolean done = p.waitFor(300, TimeUnit.SECONDS);
      if (!done) {
        p.destroyForcibly().waitFor(30, TimeUnit.SECONDS);
      }
      String text = Files.readString(files.get(i), StandardCharsets.ISO_8859_1);
      assertTrue(done, "child " + i + " hung:\n" + text);
      assertEquals(0, p.exitValue(), "child " + i + " crashed or failed:\n" + text);
      out.add(text);
    }
    return out;
  }

  /** Adds up the children's outcome lines; each child must have printed one. */
  static Counts sum(List<String> logs) {
    Counts total = new Counts();
    for (String log : logs) {
      Matcher m = OUTCOME.matcher(log);
      assertTrue(m.find(), "a child printed no outcome:\n" + log);
      System.out.println(m.group());
      total.right.addAndGet(Integer.parseInt(m.group(1)));
      total.errors.addAndGet(Integer.parseInt(m.group(2)));
      total.wrong.addAndGet(Integer.parseInt(m.group(3)));
    }
    logs.stream().flatMap(String::lines).filter(l -> l.startsWith("sample ")).forEach(System.out::println);
    System.out.println("children's outcomes: right=" + total.right + " errors=" + total.errors + " wrong=" + total.wrong);
    return total;
  }

  /** How many of the children's log lines contain {@code text}. */
  static long linesWith(List<String> logs, String text) {
    return logs.stream().flatMap(String::lines).filter(l -> l.contains(text)).count();
  }
}
