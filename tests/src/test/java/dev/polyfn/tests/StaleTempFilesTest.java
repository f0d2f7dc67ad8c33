package dev.polyfn.tests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.polyfn.Function;
import dev.polyfn.MapBody;
import dev.polyfn.MapFunction;
import dev.polyfn.Outputs;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.tensorflow.Operand;
import org.tensorflow.ndarray.Shape;
import org.tensorflow.types.TFloat32;

/**
 * A process killed between writing a file of a SavedModel or a signature profile and renaming it
 * into place leaves its temporary file behind; the next save into that directory deletes such
 * files once they are an hour old (never a save in progress elsewhere), and nothing else: a fresh
 * temporary file, and a user's own files with similar names (another name before the id, another
 * directory under {@code assets/} than a save's digest directories), stay.
 */
class StaleTempFilesTest {
  private static final MapBody BODY = (tf, in) -> {
    Operand<TFloat32> x = in.input("x", TFloat32.class, Shape.of(-1));
    return Map.of("y", tf.math.mul(x, tf.constant(2f)));
  };

  /** A file at {@code p}, last changed {@code age} ago. */
  private static Path file(Path p, Duration age) throws Exception {
    Files.createDirectories(p.getParent());
    Files.writeString(p, "left by a killed writer");
    Files.setLastModifiedTime(p, FileTime.from(Instant.now().minus(age)));
    return p;
  }

  @Test
  void aSaveDeletesTheTemporaryFilesAKilledSaveLeftAndNothingElse(@TempDir Path dir) throws Exception {
    Path saved = dir.resolve("m");
    Duration old = Duration.ofHours(2);
    Path oldPb = file(saved.resolve(".saved_model.pb-" + UUID.randomUUID() + ".tmp"), old);
    Path oldMeta = file(saved.resolve("assets.extra/.polyfn.json-" + UUID.randomUUID() + ".tmp"), old);
    Path oldAsset = file(saved.resolve("assets/0123456789abcdef/.vocab.txt-" + UUID.randomUUID() + ".tmp"), old);
    Path fresh = file(saved.resolve(".saved_model.pb-" + UUID.randomUUID() + ".tmp"), Duration.ofMinutes(5));
    Path users = file(saved.resolve(".notes.tmp"), old);
    Path usersUuidLike = file(saved.resolve(".draft-" + UUID.randomUUID() + ".tmp"), old);
    Path usersAssets = file(saved.resolve("assets/vocabularies/.vocab.txt-" + UUID.randomUUID() + ".tmp"), old);
    try (MapFunction f = Function.define(BODY); TFloat32 x = TFloat32.vectorOf(1f, 2f)) {
      f.call(Map.of("x", x)).close();
      f.save(saved);
    }
    for (Path p : new Path[] {oldPb, oldMeta, oldAsset}) {
      assertFalse(Files.exists(p), p + " was left by a killed save and is an hour old: deleted");
    }
    for (Path p : new Path[] {fresh, users, usersUuidLike, usersAssets}) {
      assertTrue(Files.exists(p), p + " is a save in progress or the user's: kept");
    }
    try (MapFunction g = (MapFunction) Function.load(saved); TFloat32 x = TFloat32.vectorOf(3f);
         Outputs out = g.call(Map.of("x", x))) {
      assertEquals(6f, out.get("y", TFloat32.class).getFloat(0));
    }
  }

  @Test
  void aProfileWriteDeletesTheTemporaryFilesAKilledOneLeft(@TempDir Path dir) throws Exception {
    Path old = file(dir.resolve(".polyfn-profile-7f3a9c.tmp"), Duration.ofHours(2));
    Path fresh = file(dir.resolve(".polyfn-profile-51b0.tmp"), Duration.ofSeconds(10));
    Path users = file(dir.resolve(".polyfn-profile-notes.tmp"), Duration.ofHours(2));
    try (MapFunction f = Function.define(BODY); TFloat32 x = TFloat32.vectorOf(1f, 2f)) {
      f.call(Map.of("x", x)).close();
      f.writeSignatureProfile(dir.resolve("profile.json"));
    }
    assertTrue(Files.exists(dir.resolve("profile.json")));
    assertFalse(Files.exists(old), "a killed profile write's file, an hour old: deleted");
    assertTrue(Files.exists(fresh), "a write in progress: kept");
    assertTrue(Files.exists(users), "not a name the profile writer gives: kept");
  }
}
