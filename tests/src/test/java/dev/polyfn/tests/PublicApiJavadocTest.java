package dev.polyfn.tests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.spi.ToolProvider;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Every public type and member of Polyfn's Java API (the {@code dev.polyfn} package, not its
 * {@code internal} one) has a Javadoc comment: javadoc's doclint reports none as "no comment".
 * The build's javadoc jar checks HTML, references and syntax; this checks completeness.
 */
class PublicApiJavadocTest {

  @Test
  void everyPublicDeclarationHasAComment(@TempDir Path out) throws Exception {
    Path sources = Path.of("..", "java", "src", "main", "java").toAbsolutePath().normalize();
    assertTrue(Files.isDirectory(sources.resolve("dev/polyfn")), "Polyfn's sources at " + sources);
    List<String> files;
    try (Stream<Path> walk = Files.list(sources.resolve("dev/polyfn"))) {
      files = walk.filter(p -> p.toString().endsWith(".java")).map(Path::toString).sorted()
          .collect(Collectors.toList());
    }
    List<String> args = new ArrayList<>(List.of(
        "-d", out.toString(), "-quiet", "-Xdoclint:missing", "-Xmaxwarns", "10000",
        "-sourcepath", sources.toString(), "-classpath", System.getProperty("java.class.path")));
    args.addAll(files);
    ByteArrayOutputStream log = new ByteArrayOutputStream();
    PrintStream ps = new PrintStream(log, true, StandardCharsets.UTF_8);
    int code = ToolProvider.findFirst("javadoc").orElseThrow()
        .run(ps, ps, args.toArray(new String[0]));
    String text = log.toString(StandardCharsets.UTF_8);
    assertEquals(0, code, text);
    List<String> missing = text.lines().filter(l -> l.contains("warning: no comment"))
        .collect(Collectors.toList());
    assertTrue(missing.isEmpty(), "public declarations without a comment:\n" + String.join("\n", missing));
  }
}
