package dev.polyfn.tests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.File;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A Kotlin 1.9 consumer of polyfn-kotlin: compiled by the Kotlin 1.9 compiler (which refuses
 * classes whose metadata is newer than 2.0, as Kotlin 2.1's default is) against polyfn-kotlin as
 * built here, and run with Kotlin 1.9's standard library, as a Maven project on Kotlin 1.9 gets
 * it. The compiler and stdlib are copied to target/ by tests/pom.xml (property kotlin19.version).
 */
class Kotlin19ConsumerTest {

  private static String jarsIn(Path dir) throws Exception {
    try (Stream<Path> s = Files.list(dir)) {
      return s.filter(p -> p.toString().endsWith(".jar")).map(Path::toString).sorted()
          .collect(Collectors.joining(File.pathSeparator));
    }
  }

  /** Polyfn, polyfn-kotlin and TensorFlow Java (jars, or classes directories under `mvn test`). */
  private static String polyfnClassPath() {
    List<String> entries = new ArrayList<>();
    for (String e : System.getProperty("java.class.path").split(File.pathSeparator)) {
      Path p = Path.of(e);
      String name = p.getFileName().toString();
      boolean moduleClasses = name.equals("classes") && p.getParent() != null
          && p.getParent().getParent() != null
          && List.of("java", "kotlin").contains(p.getParent().getParent().getFileName().toString());
      if (moduleClasses || name.matches("polyfn(-kotlin)?-\\d.*\\.jar")
          || name.matches("(tensorflow-core-|ndarray-|javacpp-|protobuf-java-).*\\.jar")) {
        entries.add(e);
      }
    }
    assertTrue(entries.stream().anyMatch(e -> e.contains("kotlin")), "polyfn-kotlin is not on the class path: " + entries);
    return String.join(File.pathSeparator, entries);
  }

  private static String run(List<String> cmd) throws Exception {
    Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertTrue(p.waitFor(300, TimeUnit.SECONDS), "timed out: " + cmd);
    return "exit " + p.exitValue() + "\n" + out;
  }

  @Test
  void aKotlin19ProjectCompilesAndRunsWithPolyfnKotlin(@TempDir Path dir) throws Exception {
    Path kotlin19 = Path.of(System.getProperty("polyfn.kotlin19.dir", "target/kotlin-1.9.25"));
    String compiler = jarsIn(kotlin19.resolve("compiler"));
    String stdlib = jarsIn(kotlin19.resolve("stdlib"));
    String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
    Path src = dir.resolve("Main.kt");
    try (InputStream in = getClass().getResourceAsStream("/kotlin19-consumer/Main.kt.txt")) {
      Files.copy(in, src);
    }
    Path classes = dir.resolve("classes");
    String classPath = stdlib + File.pathSeparator + polyfnClassPath();

    String compiled = run(List.of(java, "-cp", compiler, "org.jetbrains.kotlin.cli.jvm.K2JVMCompiler",
        "-version", "-no-stdlib", "-no-reflect", "-jvm-target", "17", "-cp", classPath,
        "-d", classes.toString(), src.toString()));
    assertTrue(compiled.startsWith("exit 0"), compiled);
    assertTrue(compiled.contains("kotlinc-jvm 1.9."), compiled);
    assertFalse(compiled.contains("error:"), compiled);

    String ran = run(List.of(java, "-cp", classes + File.pathSeparator + classPath, "consumer.MainKt"));
    assertTrue(ran.startsWith("exit 0"), ran);
    assertTrue(ran.contains("stdlib 1.9.25: y = [0.5, 1.5], z = 2.5, traces 2"), ran);
    assertTrue(ran.contains("square: 9.0"), ran);
    assertEquals(-1, ran.indexOf("Exception"), ran);
  }
}
