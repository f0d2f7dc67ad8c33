package dev.polyfn.internal.saved;

import dev.polyfn.internal.EagerLock;
import dev.polyfn.internal.WholeFiles;
import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;
import java.util.UUID;
import java.util.regex.Pattern;
import org.tensorflow.Operand;
import org.tensorflow.proto.DataType;
import org.tensorflow.proto.TensorShapeProto;
import org.tensorflow.types.TString;

/**
 * Whether the files a load read come from one save. A SavedModel is several files (the
 * checkpoint, {@code polyfn.json}, {@code saved_model.pb}, written in that order): a load while
 * another process saves into the same directory, or after two processes saved into it at once,
 * read one save's graph with another's variables, and served a function with another function's
 * values, a wrong answer with no error. Each save draws a random id and writes it into all three
 * (the MetaGraph's {@code meta_info_def.meta_graph_version}, {@code "save_id"}, a checkpoint tensor);
 * a load refuses files whose ids differ, or of which some have one and others none (a save over
 * a directory an older Polyfn wrote). A SavedModel written before ids has none in any file.
 */
public final class SaveIds {
  private SaveIds() {}

  /** The checkpoint key of the save id (a string scalar); loaders that restore by object graph or saver ignore it. */
  public static final String CHECKPOINT_KEY = "_POLYFN_SAVE_ID";
  /** What {@code meta_graph_version} holds: this prefix, then the id. */
  static final String VERSION_PREFIX = "polyfn-save-";

  /** A new save's id. */
  static String next() {
    return UUID.randomUUID().toString();
  }

  /** The save id in a {@code saved_model.pb}, null when it has none. */
  static String of(SavedModelParts model) {
    return ofVersion(model.version());
  }

  /** The save id in a MetaGraph's {@code meta_graph_version}, null when it holds none. */
  static String ofVersion(String metaGraphVersion) {
    return metaGraphVersion.startsWith(VERSION_PREFIX) ? metaGraphVersion.substring(VERSION_PREFIX.length()) : null;
  }

  /** The save id a checkpoint held, restored as an eager string scalar. */
  static String of(Operand<?> restored) {
    synchronized (EagerLock.LOCK) { // TensorFlow Java's eager session is not thread-safe
      return ((TString) restored.asTensor()).getObject();
    }
  }

  /**
   * Refuses a load whose {@code what} holds save id {@code found} where {@code polyfn.json} says
   * {@code expected} (null: no id). The ids must be all absent (a SavedModel written before ids)
   * or all equal: a save over a directory an older Polyfn wrote mixes files with and without one.
   */
  static void check(Path root, String expected, String found, String what) {
    if (!Objects.equals(expected, found)) {
      throw new IllegalArgumentException(root + ": " + what + " and " + SavedModelWriter.METADATA + " were written by"
          + " different saves (save ids " + (found == null ? "none" : found) + " and "
          + (expected == null ? "none" : expected) + "): another process saved into this directory while it was"
          + " loaded, two saved into it at once, or a save into it stopped part-way. Load it again once the save is"
          + " done, or save it again; to replace a model while others load it, save each version into a directory of"
          + " its own (SaveOptions.withServingVersion). The files: "
          + root.resolve(what.equals("the checkpoint") ? "variables" : what) + ", " + root.resolve(SavedModelWriter.METADATA));
    }
  }

  /**
   * Restores {@code keys} (of {@code dtypes}) from the checkpoint at {@code prefix}, whose index
   * is {@code index}, and checks its save id against {@code expected}: read by the same RestoreV2
   * as the tensors, so from the same checkpoint whatever happens to it meanwhile. A checkpoint
   * without an id is refused when {@code expected} is one (another save's), as is one with an id
   * when none is expected. Every restore of a load goes through here (the variables, the tables'
   * contents), so none reads another save's values.
   */
  static List<Operand<?>> restoreChecked(Path root, Path prefix, CheckpointIndex index, String expected, String[] keys,
      List<DataType> dtypes) {
    if (!index.keys().contains(CHECKPOINT_KEY)) {
      check(root, expected, null, "the checkpoint");
      return new ArrayList<>(CheckpointVariables.restoreV2(prefix, keys, dtypes));
    }
    index.check(CHECKPOINT_KEY, DataType.DT_STRING, TensorShapeProto.getDefaultInstance(), "the save id");
    String[] all = Arrays.copyOf(keys, keys.length + 1);
    all[keys.length] = CHECKPOINT_KEY;
    List<DataType> allTypes = new ArrayList<>(dtypes);
    allTypes.add(DataType.DT_STRING);
    List<Operand<?>> values = new ArrayList<>(CheckpointVariables.restoreV2(prefix, all, allTypes));
    check(root, expected, of(values.remove(values.size() - 1)), "the checkpoint");
    return values;
  }

  /**
   * Writes {@code bytes} to a temporary file beside {@code target} and renames it into place, so a
   * reader sees the old file or the new one, never part of one (as Python's
   * {@code tf.saved_model.save} writes {@code saved_model.pb}).
   */
  static void writeWhole(Path target, byte[] bytes) throws IOException {
    WholeFiles.write(target, target.resolveSibling("." + target.getFileName() + "-" + UUID.randomUUID() + ".tmp"), bytes);
  }

  /** A temporary file's name after its target's: {@code .<target>-<uuid>.tmp}, as {@link #writeWhole} names it. */
  private static final String UUID_TMP = "-[0-9a-f]{8}(-[0-9a-f]{4}){3}-[0-9a-f]{12}\\.tmp";
  private static final Pattern ROOT_TEMP = Pattern.compile("\\.saved_model\\.pb" + UUID_TMP);
  private static final Pattern METADATA_TEMP = Pattern.compile("\\.polyfn\\.json" + UUID_TMP);
  private static final Pattern ASSET_TEMP = Pattern.compile("\\..+" + UUID_TMP);
  /** A directory of asset files Polyfn's save names by their contents' digest ({@code assets/<16 hex>/}). */
  private static final Pattern DIGEST = Pattern.compile("[0-9a-f]{16}");

  /**
   * After a save into {@code target}: deletes the temporary files of {@link #writeWhole} that an
   * earlier save, killed before its renames, left in the SavedModel's directories (an hour old at
   * least, so never a save in progress: see {@link WholeFiles#deleteStale}); only the names this
   * save's writer gives in each directory, so a file another tool wrote there stays.
   */
  static void deleteStaleTemps(Path target) {
    WholeFiles.deleteStale(target, ROOT_TEMP);
    WholeFiles.deleteStale(target.resolve("assets.extra"), METADATA_TEMP);
    try (DirectoryStream<Path> assets = Files.newDirectoryStream(target.resolve("assets"),
        p -> DIGEST.matcher(p.getFileName().toString()).matches() && Files.isDirectory(p, LinkOption.NOFOLLOW_LINKS))) {
      for (Path dir : assets) {
        WholeFiles.deleteStale(dir, ASSET_TEMP);
      }
    } catch (IOException | RuntimeException e) {
      // no assets, or not listable: nothing to clean
    }
  }
}
