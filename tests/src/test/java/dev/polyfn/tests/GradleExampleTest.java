package dev.polyfn.tests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.File;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Runs examples/gradle (a Groovy DSL build whose JUnit 5 test defines and calls a function) with
 * the Gradle on the PATH, against the Polyfn jar this build made. Skipped when gradle is not
 * installed. The jar and its POMs are laid out as a Maven repository in a scratch directory, so
 * the example never sees an older Polyfn from ~/.m2; TensorFlow Java comes from ~/.m2.
 */
class GradleExampleTest {

  private static boolean gradleInstalled() {
    return Arrays.stream(System.getenv().getOrDefault("PATH", "").split(File.pathSeparator))
        .anyMatch(dir -> Files.isExecutable(Path.of(dir, "gradle")));
  }

  @Test
  void theGradleExampleDefinesAndCallsAFunction(@TempDir Path scratch) throws Exception {
    assumeTrue(gradleInstalled(), "gradle is not installed");
    Path root = Path.of("..").toAbsolutePath().normalize();
    // `mvn test` puts Polyfn's classes directory on the class path, not its jar (`mvn verify` does).
    String jar = Arrays.stream(System.getProperty("java.class.path").split(File.pathSeparator))
        .filter(e -> Path.of(e).getFileName().toString().matches("polyfn-\\d.*\\.jar"))
        .findFirst().orElse(null);
    assumeTrue(jar != null, "needs Polyfn's packaged jar on the class path (mvn verify)");
    String version = Path.of(jar).getFileName().toString().replaceAll("^polyfn-(.*)\\.jar$", "$1");
    Path repo = scratch.resolve("repo");
    Path polyfn = Files.createDirectories(repo.resolve("dev/polyfn/polyfn/" + version));
    Path parent = Files.createDirectories(repo.resolve("dev/polyfn/polyfn-parent/" + version));
    Files.copy(Path.of(jar), polyfn.resolve("polyfn-" + version + ".jar"));
    Files.copy(root.resolve("java/pom.xml"), polyfn.resolve("polyfn-" + version + ".pom"));
    Files.copy(root.resolve("pom.xml"), parent.resolve("polyfn-parent-" + version + ".pom"));

    ProcessBuilder pb = new ProcessBuilder("bash", root.resolve("examples/gradle/run.sh").toString())
        .redirectErrorStream(true);
    pb.environment().put("POLYFN_REPO", repo.toUri().toString());
    pb.environment().put("GRADLE_SCRATCH", scratch.resolve("gradle").toString());
    Process p = pb.start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertTrue(p.waitFor(600, TimeUnit.SECONDS), "gradle timed out");
    assertEquals(0, p.exitValue(), out);
    assertTrue(out.contains("polyfn from gradle: y = [3.0, 6.0, 11.0], traces 1"), out);
  }
}
