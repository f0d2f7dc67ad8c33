package dev.polyfn.tests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.ByteArrayOutputStream;
import java.io.File;
import java.io.InputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.jar.JarFile;
import java.util.spi.ToolProvider;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A tiny consumer that is a named module ({@code requires dev.polyfn; requires tensorflow;}),
 * compiled and run on the module path with Polyfn's jar, as a modular application is: Polyfn's
 * jar is the automatic module {@code dev.polyfn}; without the two flags Polyfn needs, its error
 * names them, and with exactly those flags the consumer runs.
 */
class ModulePathTest {
  static final String FLAGS = "--add-opens tensorflow/org.tensorflow=dev.polyfn "
      + "--add-exports tensorflow/org.tensorflow.internal.types.registry=dev.polyfn "
      + "--add-opens org.bytedeco.javacpp/org.bytedeco.javacpp=dev.polyfn";

  /** Polyfn's jar and TensorFlow Java's (with what they need), from this test's class path. */
  private static String modulePath() throws Exception {
    List<String> entries = new ArrayList<>();
    boolean polyfn = false;
    for (String e : System.getProperty("java.class.path").split(File.pathSeparator)) {
      String name = Path.of(e).getFileName().toString();
      if (name.matches("polyfn-\\d.*\\.jar")) {
        try (JarFile jar = new JarFile(e)) {
          assertEquals("dev.polyfn", jar.getManifest().getMainAttributes().getValue("Automatic-Module-Name"), e);
        }
        polyfn = true;
        entries.add(e);
      } else if (name.matches("(tensorflow-core-|ndarray-|javacpp-|protobuf-java-).*\\.jar")) {
        entries.add(e);
      }
    }
    // `mvn test` puts Polyfn's classes directory on the class path, not its jar (`mvn verify` does).
    assumeTrue(polyfn, "needs Polyfn's packaged jar on the class path (mvn verify)");
    return String.join(File.pathSeparator, entries);
  }

  private static void copy(String resource, Path to) throws Exception {
    Files.createDirectories(to.getParent());
    try (InputStream in = ModulePathTest.class.getResourceAsStream("/module-consumer/" + resource)) {
      Files.copy(in, to);
    }
  }

  private static String run(List<String> cmd) throws Exception {
    Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertTrue(p.waitFor(120, TimeUnit.SECONDS), "child JVM timed out");
    return "exit " + p.exitValue() + "\n" + out;
  }

  @Test
  void aModularConsumerRunsWithTheFlagsTheErrorNames(@TempDir Path dir) throws Exception {
    String modulePath = modulePath();
    Path src = dir.resolve("src");
    copy("module-info.java.txt", src.resolve("module-info.java"));
    copy("demo/Main.java.txt", src.resolve("demo/Main.java"));
    Path classes = dir.resolve("classes");
    ByteArrayOutputStream log = new ByteArrayOutputStream();
    PrintStream ps = new PrintStream(log, true, StandardCharsets.UTF_8);
    int code = ToolProvider.findFirst("javac").orElseThrow().run(ps, ps, "-d", classes.toString(),
        "--module-path", modulePath, src.resolve("module-info.java").toString(),
        src.resolve("demo/Main.java").toString());
    assertEquals(0, code, log.toString(StandardCharsets.UTF_8));

    List<String> base = new ArrayList<>(List.of(
        Path.of(System.getProperty("java.home"), "bin", "java").toString(),
        "-Dorg.bytedeco.javacpp.cachedir=" + System.getProperty("org.bytedeco.javacpp.cachedir",
            Path.of(System.getProperty("user.home"), ".javacpp", "cache").toString())));
    List<String> module = List.of("--module-path", classes + File.pathSeparator + modulePath,
        "-m", "demo/demo.Main");

    List<String> without = new ArrayList<>(base);
    without.addAll(module);
    String out = run(without);
    assertTrue(!out.startsWith("exit 0") && out.contains("start the JVM with " + FLAGS), out);

    List<String> with = new ArrayList<>(base);
    with.addAll(Arrays.asList(FLAGS.split(" ")));
    with.addAll(module);
    out = run(with);
    assertTrue(out.startsWith("exit 0") && out.contains("result -2.0"), out);
  }
}
