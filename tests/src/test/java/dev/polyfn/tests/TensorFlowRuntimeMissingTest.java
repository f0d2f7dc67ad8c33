package dev.polyfn.tests;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.File;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Polyfn binds to whichever TensorFlow native build TensorFlow Java loaded (CPU or GPU). With
 * none on the class path, the first use fails with an error that says what to add, not with a
 * crash or a bare JavaCPP message.
 */
class TensorFlowRuntimeMissingTest {

  @Test
  void withoutANativeBuildTheErrorSaysWhichJarToAdd(@TempDir Path cache) throws Exception {
    String classPath = Arrays.stream(System.getProperty("java.class.path").split(File.pathSeparator))
        .filter(e -> !Path.of(e).getFileName().toString().matches("tensorflow-core-native-.*-linux-x86_64.*\\.jar"))
        .collect(Collectors.joining(File.pathSeparator));
    assertTrue(!classPath.equals(System.getProperty("java.class.path")),
        "the test's class path has TensorFlow Java's native jar to take away");
    List<String> cmd = List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
        // An empty JavaCPP cache: no runtime extracted by another JVM can be found there.
        "-Dorg.bytedeco.javacpp.cachedir=" + cache, "-cp", classPath, NativeLoaderTest.class.getName());
    Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertTrue(p.waitFor(120, TimeUnit.SECONDS), "child JVM timed out");
    assertTrue(p.exitValue() == 1, "a Java exception, not a crash: exit " + p.exitValue() + "\n" + out);
    assertTrue(out.contains("UnsatisfiedLinkError: TensorFlow Java's native runtime did not load"), out);
    assertTrue(out.contains("org.tensorflow:tensorflow-core-native") && out.contains("linux-x86_64-gpu"), out);
  }
}
