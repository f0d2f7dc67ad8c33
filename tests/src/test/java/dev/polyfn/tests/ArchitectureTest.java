package dev.polyfn.tests;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The layering rules of ARCHITECTURE.md ("Java packages"), checked on the sources: each test
 * names every file that breaks its rule. The sources are read as text (imports, declarations and
 * fully qualified names outside comments), so a rule holds for code that does not compile yet.
 */
class ArchitectureTest {
  private static final Path ROOT = Path.of("..").toAbsolutePath().normalize();
  private static final Path MAIN = ROOT.resolve("java/src/main/java");
  /** The public classes of the API the machinery must not call back into (it gets cores instead). */
  private static final Pattern FACADE = Pattern.compile(
      "\\bdev\\.polyfn\\.(PolymorphicFunction|Function|CallableFunction|[A-Z]\\w*Function)\\b|\\bimport\\s+dev\\.polyfn\\.\\*");
  private static final Pattern INTERNAL = Pattern.compile("\\bdev\\.polyfn\\.internal\\b");
  private static final Pattern TF_INTERNALS = Pattern.compile("\\borg\\.tensorflow\\.internal\\b|\\borg\\.bytedeco\\b");
  private static final int MAX_LINES = 450;

  @Test
  void theApiPackageHoldsOnlyPublicTypes() {
    List<String> hidden = new ArrayList<>();
    Pattern decl = Pattern.compile("^((?:\\w+\\s+)*?)(?:class|interface|enum|record|@interface)\\s+(\\w+)", Pattern.MULTILINE);
    for (Path f : javaFiles(MAIN.resolve("dev/polyfn"), false)) {
      Matcher m = decl.matcher(code(f));
      while (m.find()) {
        if (!m.group(1).contains("public")) {
          hidden.add(rel(f) + ": " + m.group(2) + " is not public (machinery belongs in dev.polyfn.internal.*)");
        }
      }
    }
    assertTrue(hidden.isEmpty(), String.join("\n", hidden));
  }

  @Test
  void theMachineryDoesNotCallBackIntoThePublicFunctions() {
    List<String> bad = matching(javaFiles(MAIN.resolve("dev/polyfn/internal"), true), FACADE);
    assertTrue(bad.isEmpty(), "internal code names a public function class (use FunctionCore, Body, Facades):\n"
        + String.join("\n", bad));
  }

  @Test
  void onlyTheApiAndTestsUseTheInternalPackages() {
    List<Path> users = new ArrayList<>();
    for (String dir : List.of("kotlin/src/main", "spark/src/main", "examples", "bench")) {
      users.addAll(sources(ROOT.resolve(dir)));
    }
    List<String> bad = matching(users, INTERNAL);
    assertTrue(bad.isEmpty(), "only dev.polyfn and tests may use dev.polyfn.internal:\n" + String.join("\n", bad));
  }

  @Test
  void onlyTheBridgeTouchesTensorFlowJavasInternals() {
    List<Path> outside = new ArrayList<>(javaFiles(MAIN.resolve("dev/polyfn"), false));
    for (Path f : javaFiles(MAIN.resolve("dev/polyfn/internal"), true)) {
      if (!f.getParent().equals(MAIN.resolve("dev/polyfn/internal"))) {
        outside.add(f);
      }
    }
    List<String> bad = matching(outside, TF_INTERNALS);
    assertTrue(bad.isEmpty(), "only dev.polyfn.internal may use org.tensorflow.internal or org.bytedeco (the C API "
        + "goes through Native and polyfn-tf):\n" + String.join("\n", bad));
  }

  @Test
  void noSourceFileIsOver450Lines() throws IOException {
    List<String> long_ = new ArrayList<>();
    for (String dir : List.of("java/src", "kotlin/src", "spark/src", "tests/src")) {
      for (Path f : sources(ROOT.resolve(dir))) {
        long n;
        try (Stream<String> lines = Files.lines(f)) {
          n = lines.count();
        }
        if (n > MAX_LINES) {
          long_.add(ROOT.relativize(f) + ": " + n + " lines");
        }
      }
    }
    assertTrue(long_.isEmpty(), "source files over " + MAX_LINES + " lines:\n" + String.join("\n", long_));
  }

  @Test
  void theRustCoreDependsOnNeitherTensorFlowNorJni() throws IOException {
    String manifest = Files.readString(ROOT.resolve("native/core/Cargo.toml"));
    List<String> bad = new ArrayList<>();
    if (manifest.contains("polyfn-tf") || manifest.contains("polyfn-jni")) {
      bad.add("native/core/Cargo.toml depends on polyfn-tf or polyfn-jni");
    }
    try (Stream<Path> walk = Files.walk(ROOT.resolve("native/core/src"))) {
      for (Path f : walk.filter(p -> p.toString().endsWith(".rs")).collect(Collectors.toList())) {
        if (Pattern.compile("\\bpolyfn_(tf|jni)\\b|\\bjni::").matcher(Files.readString(f)).find()) {
          bad.add(ROOT.relativize(f) + " uses polyfn_tf, polyfn_jni or jni");
        }
      }
    }
    assertTrue(bad.isEmpty(), String.join("\n", bad));
  }

  /** Each line (outside comments and strings) of {@code files} where {@code p} occurs, as "file:line: text". */
  private static List<String> matching(List<Path> files, Pattern p) {
    List<String> out = new ArrayList<>();
    for (Path f : files) {
      String[] lines = code(f).split("\n", -1);
      for (int i = 0; i < lines.length; i++) {
        if (p.matcher(lines[i]).find()) {
          out.add(rel(f) + ":" + (i + 1) + ": " + lines[i].strip());
        }
      }
    }
    return out;
  }

  /** The source with comments and string literals blanked (line breaks kept, so line numbers hold). */
  private static String code(Path f) {
    String text;
    try {
      text = Files.readString(f);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    StringBuilder out = new StringBuilder(text.length());
    Matcher m = Pattern.compile("//[^\n]*|/\\*(?s:.*?)\\*/|\"(?:\\\\.|[^\"\\\\\n])*\"").matcher(text);
    int at = 0;
    while (m.find()) {
      out.append(text, at, m.start());
      out.append(m.group().replaceAll("[^\n]", " "));
      at = m.end();
    }
    return out.append(text.substring(at)).toString();
  }

  private static String rel(Path f) {
    return f.startsWith(MAIN) ? MAIN.relativize(f).toString() : ROOT.relativize(f).toString();
  }

  private static List<Path> javaFiles(Path dir, boolean recursive) {
    try (Stream<Path> walk = recursive ? Files.walk(dir) : Files.list(dir)) {
      return walk.filter(p -> p.toString().endsWith(".java") && !p.endsWith("package-info.java"))
          .sorted().collect(Collectors.toList());
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private static List<Path> sources(Path dir) {
    if (!Files.isDirectory(dir)) {
      return List.of();
    }
    try (Stream<Path> walk = Files.walk(dir)) {
      return walk.filter(p -> p.toString().endsWith(".java") || p.toString().endsWith(".kt"))
          .filter(p -> !p.toString().contains("/target/") && !p.toString().contains("/build/"))
          .sorted().collect(Collectors.toList());
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
