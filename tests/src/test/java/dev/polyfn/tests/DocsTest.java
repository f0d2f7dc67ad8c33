package dev.polyfn.tests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The guide cannot drift: every relative link of README.md and docs/ resolves (the file, and the
 * heading an {@code #anchor} names, as GitHub and MkDocs both spell it), every page is in the
 * site's navigation, and every ```java and ```kotlin block is copied from a source file the build
 * compiles (examples/, tests/src/test/, spark/src/test/), line for line (indentation and blank
 * lines aside; a line {@code ...} stands for lines left out). Gradle build scripts are fenced as
 * {@code groovy} or {@code kotlin-dsl}, and are not code of this build.
 */
class DocsTest {
  private static final Path ROOT = Path.of("..").toAbsolutePath().normalize();
  private static final Pattern FENCE = Pattern.compile("^(\\s*)```+\\s*([\\w-]*).*$");
  private static final Pattern LINK = Pattern.compile("\\[[^\\]]*\\]\\(([^)\\s]+)(\\s+\"[^\"]*\")?\\)");

  /** A fenced block: its language, first line number and lines. */
  record Block(Path file, String lang, int line, List<String> lines) {}

  static List<Path> markdownFiles(Path root) throws IOException {
    List<Path> files = new ArrayList<>();
    files.add(root.resolve("README.md"));
    files.add(root.resolve("kotlin/README.md"));
    try (Stream<Path> s = Files.walk(root.resolve("docs"))) {
      s.filter(p -> p.toString().endsWith(".md")).sorted().forEach(files::add);
    }
    return files;
  }

  /** Splits a page into its fenced blocks and its prose (with the blocks blanked out). */
  static List<Block> blocks(Path file, List<String> prose) throws IOException {
    List<Block> blocks = new ArrayList<>();
    List<String> lines = Files.readAllLines(file);
    Block open = null;
    for (int i = 0; i < lines.size(); i++) {
      String l = lines.get(i);
      Matcher m = FENCE.matcher(l);
      if (m.matches()) {
        if (open == null) {
          open = new Block(file, m.group(2), i + 1, new ArrayList<>());
        } else {
          blocks.add(open);
          open = null;
        }
        prose.add("");
      } else if (open != null) {
        open.lines().add(l);
        prose.add("");
      } else {
        prose.add(l.replaceAll("`[^`]*`", "``"));   // code spans are no links
      }
    }
    return blocks;
  }

  /** GitHub's heading ids: lower case, punctuation dropped, each space a hyphen. */
  static String githubSlug(String heading) {
    return heading.trim().toLowerCase(Locale.ROOT).replaceAll("[^\\p{L}\\p{N}\\s_-]", "").replace(' ', '-');
  }

  /** MkDocs' (Python-Markdown's toc): the same, but runs of spaces and hyphens become one. */
  static String mkdocsSlug(String heading) {
    return heading.toLowerCase(Locale.ROOT).replaceAll("[^\\p{L}\\p{N}\\s_-]", "").trim().replaceAll("[-\\s]+", "-");
  }

  static Set<String> anchors(Path md) throws IOException {
    Set<String> ids = new LinkedHashSet<>();
    List<String> prose = new ArrayList<>();
    blocks(md, prose);
    List<String> lines = Files.readAllLines(md);
    for (int i = 0; i < prose.size(); i++) {
      if (prose.get(i).startsWith("#")) {
        String heading = lines.get(i).replaceFirst("^#+\\s*", "").replace("`", "");
        // A heading the two spell differently gets no id here: no link may point to it.
        if (githubSlug(heading).equals(mkdocsSlug(heading))) {
          ids.add(githubSlug(heading));
        }
      }
    }
    return ids;
  }

  /** Every broken relative link of the given pages, one line each. */
  static List<String> brokenLinks(Path root, List<Path> pages) throws IOException {
    List<String> broken = new ArrayList<>();
    for (Path page : pages) {
      List<String> prose = new ArrayList<>();
      blocks(page, prose);
      for (int i = 0; i < prose.size(); i++) {
        Matcher m = LINK.matcher(prose.get(i));
        while (m.find()) {
          String target = m.group(1);
          if (target.matches("^[a-zA-Z][a-zA-Z0-9+.-]*:.*")) {
            continue;   // http:, https:, mailto:
          }
          String where = root.relativize(page) + ":" + (i + 1) + ": " + target;
          int hash = target.indexOf('#');
          String path = hash < 0 ? target : target.substring(0, hash);
          String anchor = hash < 0 ? null : target.substring(hash + 1);
          Path resolved = path.isEmpty() ? page : page.getParent().resolve(path).normalize();
          if (!Files.exists(resolved)) {
            broken.add(where + " (no such file: " + root.relativize(resolved) + ")");
          } else if (anchor != null && !(resolved.toString().endsWith(".md") && anchors(resolved).contains(anchor))) {
            broken.add(where + " (no heading with that id in " + root.relativize(resolved) + ")");
          }
        }
      }
    }
    return broken;
  }

  /** The compiled sources snippets are copied from, by file, as trimmed non-blank lines. */
  static Map<Path, List<String>> compiledSources(Path root) throws IOException {
    Map<Path, List<String>> sources = new HashMap<>();
    for (String dir : List.of("examples/src", "tests/src/test", "spark/src/test")) {
      try (Stream<Path> s = Files.walk(root.resolve(dir))) {
        for (Path p : s.filter(p -> p.toString().endsWith(".java") || p.toString().endsWith(".kt")).toList()) {
          sources.put(p, Files.readAllLines(p).stream().map(String::trim).filter(l -> !l.isEmpty()).toList());
        }
      }
    }
    return sources;
  }

  /** Whether the snippet's lines (chunks separated by "..." lines) occur in order in the source. */
  static boolean contains(List<String> source, List<String> snippet) {
    List<List<String>> chunks = new ArrayList<>();
    chunks.add(new ArrayList<>());
    for (String l : snippet) {
      if (l.equals("...")) {
        chunks.add(new ArrayList<>());
      } else {
        chunks.get(chunks.size() - 1).add(l);
      }
    }
    chunks.removeIf(List::isEmpty);
    for (int start = 0; start < source.size(); start++) {
      int at = start;
      boolean all = true;
      for (int c = 0; c < chunks.size() && all; c++) {
        int found = c == 0 ? (matchesAt(source, at, chunks.get(0)) ? at : -1) : indexOf(source, at, chunks.get(c));
        all = found >= 0;
        at = found + chunks.get(c).size();
      }
      if (all && !chunks.isEmpty()) {
        return true;
      }
    }
    return false;
  }

  private static boolean matchesAt(List<String> source, int at, List<String> chunk) {
    return at + chunk.size() <= source.size() && source.subList(at, at + chunk.size()).equals(chunk);
  }

  private static int indexOf(List<String> source, int from, List<String> chunk) {
    for (int i = from; i + chunk.size() <= source.size(); i++) {
      if (matchesAt(source, i, chunk)) {
        return i;
      }
    }
    return -1;
  }

  /** Every Java or Kotlin block that no compiled source holds. */
  static List<String> driftedSnippets(Path root, List<Path> pages) throws IOException {
    Map<Path, List<String>> sources = compiledSources(root);
    List<String> drifted = new ArrayList<>();
    for (Path page : pages) {
      for (Block b : blocks(page, new ArrayList<>())) {
        if (!b.lang().equals("java") && !b.lang().equals("kotlin")) {
          continue;
        }
        List<String> lines = b.lines().stream().map(String::trim).filter(l -> !l.isEmpty()).toList();
        String ext = b.lang().equals("java") ? ".java" : ".kt";
        boolean found = sources.entrySet().stream()
            .anyMatch(e -> e.getKey().toString().endsWith(ext) && contains(e.getValue(), lines));
        if (!found) {
          drifted.add(root.relativize(page) + ":" + b.line() + ": a ```" + b.lang()
              + " block that no compiled source holds (first line: " + (lines.isEmpty() ? "" : lines.get(0)) + ")");
        }
      }
    }
    return drifted;
  }

  @Test
  void everyRelativeLinkResolves() throws IOException {
    List<String> broken = brokenLinks(ROOT, markdownFiles(ROOT));
    assertTrue(broken.isEmpty(), "broken links:\n" + String.join("\n", broken));
  }

  @Test
  void everyJavaAndKotlinSnippetIsCopiedFromACompiledSource() throws IOException {
    List<String> drifted = driftedSnippets(ROOT, markdownFiles(ROOT));
    assertTrue(drifted.isEmpty(), String.join("\n", drifted));
  }

  @Test
  void everyPageIsInTheSiteNavigationAndTheReadmeIsShort() throws IOException {
    String mkdocs = Files.readString(ROOT.resolve("mkdocs.yml"));
    Set<String> nav = new LinkedHashSet<>();
    Matcher m = Pattern.compile("(?m)^\\s*-\\s*(?:[^:\\n]+:\\s*)?([\\w/-]+\\.md)\\s*$").matcher(mkdocs);
    while (m.find()) {
      nav.add(m.group(1));
    }
    Set<String> pages;
    try (Stream<Path> s = Files.walk(ROOT.resolve("docs"))) {
      pages = s.filter(p -> p.toString().endsWith(".md")).map(p -> ROOT.resolve("docs").relativize(p).toString())
          .collect(Collectors.toCollection(LinkedHashSet::new));
    }
    assertEquals(new java.util.TreeSet<>(pages), new java.util.TreeSet<>(nav), "docs/ pages vs mkdocs.yml's nav");
    long readmeLines = Files.readAllLines(ROOT.resolve("README.md")).size();
    assertTrue(readmeLines <= 200, "README.md has " + readmeLines + " lines; the guide is docs/");
  }

  @Test
  void theCheckerFindsABrokenLinkAnchorAndSnippet(@org.junit.jupiter.api.io.TempDir Path dir) throws IOException {
    // The checks above must be able to fail: a page with one of each mistake.
    Files.createDirectories(dir.resolve("docs"));
    Files.createDirectories(dir.resolve("examples/src"));
    Files.createDirectories(dir.resolve("tests/src/test"));
    Files.createDirectories(dir.resolve("spark/src/test"));
    Files.writeString(dir.resolve("examples/src/A.java"), "class A {\n  int x = 1;\n\n  int y = 2;\n  int z = 3;\n}\n");
    Files.writeString(dir.resolve("docs/b.md"), "# Title: here\n\n## Two  spaces\n");
    Files.writeString(dir.resolve("docs/a.md"), String.join("\n",
        "# A", "[ok](b.md#title-here) [gone](c.md) [bad anchor](b.md#nope) [ambiguous](b.md#two-spaces)",
        "`[in code](nowhere.md)` [web](https://example.org/x)",
        "```java", "int x = 1;", "int y = 2;", "```",
        "```java", "int x = 1;", "...", "int z = 3;", "```",
        "```java", "int y = 2;", "int x = 1;", "```", ""));
    List<Path> pages = List.of(dir.resolve("docs/a.md"));
    assertEquals(List.of("docs/a.md:2: c.md (no such file: docs/c.md)",
        "docs/a.md:2: b.md#nope (no heading with that id in docs/b.md)",
        "docs/a.md:2: b.md#two-spaces (no heading with that id in docs/b.md)"), brokenLinks(dir, pages));
    assertEquals(List.of("docs/a.md:13: a ```java block that no compiled source holds (first line: int y = 2;)"),
        driftedSnippets(dir, pages));
  }
}
