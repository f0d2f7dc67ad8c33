package dev.polyfn.tests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/** Runs a test class's {@code main} in a JVM of its own (this test's class path, -Xcheck:jni). */
final class ChildJvm {
  private ChildJvm() {}

  /** Runs {@code main} of {@code mainClass} with {@code args}; asserts it exits 0; returns its output. */
  static String run(Class<?> mainClass, String... args) throws Exception {
    return runWith(List.of(), mainClass, args);
  }

  /** {@link #run} with these JVM options (a fixed heap, say) before the class name. */
  static String runWith(List<String> jvmOptions, Class<?> mainClass, String... args) throws Exception {
    List<String> cmd = new ArrayList<>();
    cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    cmd.addAll(jvmOptions);
    String javacppCache = System.getProperty("org.bytedeco.javacpp.cachedir",
        Path.of(System.getProperty("user.home"), ".javacpp", "cache").toString());
    cmd.add("-Dorg.bytedeco.javacpp.cachedir=" + javacppCache);
    cmd.add("-Xcheck:jni");
    // The suite's call-path settings (session path early, or fast path forced off) reach
    // child JVMs too.
    for (String property : List.of("dev.polyfn.fastPath", "dev.polyfn.sessionPathAfter")) {
      String value = System.getProperty(property);
      if (value != null) {
        cmd.add("-D" + property + "=" + value);
      }
    }
    cmd.add("-cp");
    cmd.add(System.getProperty("java.class.path"));
    cmd.add(mainClass.getName());
    cmd.addAll(List.of(args));
    Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertTrue(p.waitFor(120, TimeUnit.SECONDS), "child JVM timed out");
    assertEquals(0, p.exitValue(), out);
    return out;
  }
}
