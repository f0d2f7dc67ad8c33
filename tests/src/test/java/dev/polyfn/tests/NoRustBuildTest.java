package dev.polyfn.tests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.File;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The build of a fresh clone on a machine without Rust (or with a Rust older than the workspace's
 * rust-version) stops at once, in Maven's validate phase, saying what to install and how, rather
 * than at a bare {@code Cannot run program "cargo"} (native/check-rust.sh, run by java/pom.xml).
 */
class NoRustBuildTest {
  private static final Path ROOT = Path.of("..").toAbsolutePath().normalize();

  /** This JVM's PATH without the directories that hold a cargo. */
  private static String pathWithoutCargo() {
    return Arrays.stream(System.getenv().getOrDefault("PATH", "").split(File.pathSeparator))
        .filter(dir -> !dir.isEmpty() && !Files.exists(Path.of(dir, "cargo")))
        .collect(Collectors.joining(File.pathSeparator));
  }

  private static String run(List<String> cmd, String path, Path home) throws Exception {
    ProcessBuilder pb = new ProcessBuilder(cmd).directory(ROOT.toFile()).redirectErrorStream(true);
    pb.environment().put("PATH", path);
    pb.environment().put("HOME", home.toString());   // no ~/.cargo: as on a machine without Rust
    Process p = pb.start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertTrue(p.waitFor(300, TimeUnit.SECONDS), "timed out: " + cmd);
    return "exit " + p.exitValue() + "\n" + out;
  }

  private static void assertSaysHowToInstall(String out) {
    assertFalse(out.startsWith("exit 0"), out);
    assertTrue(out.contains("Install Rust 1.85 or later with rustup"), out);
    assertTrue(out.contains("https://sh.rustup.rs"), out);
    assertFalse(out.contains("Cannot run program"), out);
  }

  @Test
  void mavenWithoutCargoStopsBeforeCompilingAndSaysWhatToInstall(@TempDir Path home) throws Exception {
    String path = pathWithoutCargo();
    boolean mvn = Arrays.stream(path.split(File.pathSeparator)).anyMatch(d -> Files.isExecutable(Path.of(d, "mvn")));
    assumeTrue(mvn, "mvn is not on the PATH");
    // -o: the plugins are in the local repository already (this build resolved them).
    String out = run(List.of("mvn", "-B", "-o", "-q", "-f", ROOT.resolve("java/pom.xml").toString(), "validate"),
        path, home);
    assertSaysHowToInstall(out);
    assertTrue(out.contains("no 'cargo' is on the PATH"), out);
    assertTrue(out.contains("check-rust"), out);   // the execution that stopped the build
  }

  @Test
  void aCargoOlderThanTheWorkspacesRustVersionIsNamedWithTheMinimum(@TempDir Path dir) throws Exception {
    Path bin = Files.createDirectories(dir.resolve("bin"));
    Path cargo = bin.resolve("cargo");
    Files.writeString(cargo, "#!/bin/sh\necho 'cargo 1.80.1 (376290515 2024-07-16)'\n");
    assertTrue(cargo.toFile().setExecutable(true));
    String out = run(List.of("bash", "native/check-rust.sh"), bin + File.pathSeparator + pathWithoutCargo(), dir);
    assertSaysHowToInstall(out);
    assertTrue(out.contains("needs Rust 1.85 or later; the cargo on the PATH is 1.80"), out);
  }

  @Test
  void theMinimumIsTheWorkspacesRustVersion() throws Exception {
    String cargoToml = Files.readString(ROOT.resolve("Cargo.toml"));
    String script = Files.readString(ROOT.resolve("native/check-rust.sh"));
    assertTrue(cargoToml.contains("rust-version = \"1.85\""), "Cargo.toml's rust-version changed: update native/check-rust.sh");
    assertTrue(script.contains("min_major=1\nmin_minor=85\n"), script);
  }

  @Test
  void aRecentCargoPasses(@TempDir Path dir) throws Exception {
    Path bin = Files.createDirectories(dir.resolve("bin"));
    Path cargo = bin.resolve("cargo");
    Files.writeString(cargo, "#!/bin/sh\necho 'cargo 1.85.0 (d73d2caf9 2024-12-31)'\n");
    assertTrue(cargo.toFile().setExecutable(true));
    assertEquals("exit 0\n", run(List.of("bash", "native/check-rust.sh"), bin + File.pathSeparator + pathWithoutCargo(), dir));
  }
}
