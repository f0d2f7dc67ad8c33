package dev.polyfn.tests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/** Runs a test class's {@code main} in a JVM of its own (this test's class path, -Xcheck:jni). */
final class ChildJvm {
  private ChildJvm() {}

  /**
   * How a child JVM ended: its exit code (-1 when it was killed after the timeout) and its output.
   *
   * @param exit the exit code, -1 after a timeout
   * @param timedOut whether it was killed for running past the timeout
   * @param output stdout and stderr
   */
  record Outcome(int exit, boolean timedOut, String output) {}

  /** Runs {@code main} of {@code mainClass} with {@code args}; asserts it exits 0; returns its output. */
  static String run(Class<?> mainClass, String... args) throws Exception {
    return runWith(List.of(), mainClass, args);
  }

  /** {@link #run} with these JVM options (a fixed heap, say) before the class name. */
  static String runWith(List<String> jvmOptions, Class<?> mainClass, String... args) throws Exception {
    return runWith(Map.of(), jvmOptions, mainClass, args);
  }

  /** {@link #runWith(List, Class, String...)} with these environment variables added for the child. */
  static String runWith(Map<String, String> env, List<String> jvmOptions, Class<?> mainClass, String... args) throws Exception {
    List<String> cmd = command(jvmOptions, mainClass, args);
    // Output to a file, not read from a pipe until it closes: a hung child would stall the build
    // instead of failing its test after the timeout.
    Path log = java.nio.file.Files.createTempFile("polyfn-child-", ".log");
    try {
      ProcessBuilder builder = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(log.toFile());
      builder.environment().putAll(env);
      Process p = builder.start();
      boolean done = p.waitFor(RUN_TIMEOUT_SECONDS, TimeUnit.SECONDS);
      if (!done) {
        p.destroyForcibly().waitFor(30, TimeUnit.SECONDS);
      }
      String out = new String(java.nio.file.Files.readAllBytes(log), StandardCharsets.UTF_8);
      assertTrue(done, "child JVM timed out after " + RUN_TIMEOUT_SECONDS + " s (a hang?)\n" + out);
      assertEquals(0, p.exitValue(), out);
      return out;
    } finally {
      java.nio.file.Files.deleteIfExists(log);
    }
  }

  /** How long {@link #run} waits for a child: far beyond any test's child, short of stalling CI. */
  private static final long RUN_TIMEOUT_SECONDS = 600;

  /**
   * Runs {@code main} of {@code mainClass} with JVM options {@code jvm} and {@code args}, killing
   * it after {@code seconds}: for code that may crash, abort or hang the JVM it runs in.
   */
  static Outcome outcome(long seconds, List<String> jvm, Class<?> mainClass, String... args) throws Exception {
    return outcome(seconds, 0, jvm, mainClass, args);
  }

  /**
   * {@link #outcome(long, List, Class, String...)} with the child's address space limited to
   * {@code addressSpace} bytes (0: unlimited), for code that might grow without bound in native
   * memory: it then fails inside its limit instead of exhausting the machine's memory.
   */
  static Outcome outcome(long seconds, long addressSpace, List<String> jvm, Class<?> mainClass, String... args)
      throws Exception {
    Path log = java.nio.file.Files.createTempFile("polyfn-child-", ".log");
    try {
      List<String> cmd = new ArrayList<>();
      if (addressSpace > 0 && java.nio.file.Files.isExecutable(Path.of("/usr/bin/prlimit"))) {
        cmd.addAll(List.of("/usr/bin/prlimit", "--as=" + addressSpace));
      }
      cmd.addAll(command(jvm, mainClass, args));
      Process p = new ProcessBuilder(cmd).redirectErrorStream(true)
          .redirectOutput(log.toFile()).start();
      boolean done = p.waitFor(seconds, TimeUnit.SECONDS);
      if (!done) {
        p.destroyForcibly().waitFor(30, TimeUnit.SECONDS);
      }
      String out = java.nio.file.Files.readString(log, StandardCharsets.ISO_8859_1);
      return new Outcome(done ? p.exitValue() : -1, !done, out);
    } finally {
      java.nio.file.Files.deleteIfExists(log);
    }
  }

  /**
   * Starts {@code main} of {@code mainClass} with JVM options and {@code args} and returns at once, its stdout and
   * stderr going to {@code log}: for tests that run several children at the same time, or kill one.
   */
  static Process start(Path log, List<String> jvmOptions, Class<?> mainClass, String... args) throws Exception {
    return new ProcessBuilder(command(jvmOptions, mainClass, args)).redirectErrorStream(true)
        .redirectOutput(log.toFile()).start();
  }

  private static List<String> command(List<String> jvm, Class<?> mainClass, String... args) {
    List<String> cmd = new ArrayList<>();
    cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    String javacppCache = System.getProperty("org.bytedeco.javacpp.cachedir",
        Path.of(System.getProperty("user.home"), ".javacpp", "cache").toString());
    cmd.add("-Dorg.bytedeco.javacpp.cachedir=" + javacppCache);
    cmd.add("-Xcheck:jni");
    // The suite's call-path settings (session path early, or the eager caller-thread path) reach
    // child JVMs too.
    for (String property : List.of("dev.polyfn.fastPath", "dev.polyfn.sessionPathAfter", "dev.polyfn.eagerOpAsFunction")) {
      String value = System.getProperty(property);
      if (value != null) {
        cmd.add("-D" + property + "=" + value);
      }
    }
    cmd.addAll(jvm);
    cmd.add("-cp");
    cmd.add(System.getProperty("java.class.path"));
    cmd.add(mainClass.getName());
    cmd.addAll(List.of(args));
    return cmd;
  }
}
