package dev.polyfn.tests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The file fuzzer ({@link FileFuzzer}) in short form: a few hundred seeded mutations of every
 * file Polyfn reads, loaded in child JVMs; no crash, hang, {@code Error}, unnamed refusal or
 * file that loads and then fails its call. The long form is one command (see the README's
 * "Development notes"):
 *
 * <pre>{@code
 * mvn -B -pl java,tests verify -Dtest=FileFuzzTest -Dsurefire.failIfNoSpecifiedTests=false \
 *     -Dpolyfn.fuzz.cases=20000 -Dpolyfn.fuzz.seed=7
 * }</pre>
 */
class FileFuzzTest {
  @Test
  void mutatedFilesLoadAndAnswerRightOrAreRefusedNamingTheFile(@TempDir Path dir) throws Exception {
    int cases = Integer.getInteger("polyfn.fuzz.cases", 300);
    long seed = Long.getLong("polyfn.fuzz.seed", 1);
    String keep = System.getProperty("polyfn.fuzz.dir"); // a long run's files, kept for a look at its violations
    if (keep != null) {
      FileFuzzer.delete(Path.of(keep));
      dir = Files.createDirectories(Path.of(keep));
    }
    Path corpus = dir.resolve("corpus");
    String python = System.getProperty("polyfn.python");
    FileFuzzer.corpus(corpus, python != null && Files.isExecutable(Path.of(python)) ? python : null);
    // The build's Python writes half the targets; a failed or missing Python must not shrink the run.
    assertEquals(List.of(FileFuzzer.Target.values()), FileFuzzer.targets(corpus), "targets in the corpus (Python " + python + ")");
    Path scratch = Files.createDirectories(dir.resolve("scratch"));
    FileFuzzer.Report report = FileFuzzer.drive(corpus, scratch, seed, cases, 60);
    System.out.println("file fuzzer, seed " + seed + ":\n" + report.table());
    assertTrue(report.violations().isEmpty(), report.table());
    assertTrue(report.counts().getOrDefault("answers right", 0) > 0
        && report.counts().getOrDefault("refused naming the file", 0) > 0, report.table());
  }
}
