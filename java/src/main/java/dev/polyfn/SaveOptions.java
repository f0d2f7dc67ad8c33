package dev.polyfn;

import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * How {@link PolymorphicFunction#save(java.nio.file.Path, SaveOptions)} writes a SavedModel:
 * its tags, the names of its signatures and an optional TensorFlow Serving version directory.
 *
 * <pre>{@code
 * f.save(Path.of("/models/score"), SaveOptions.defaults()
 *     .withServingVersion(3)                                    // writes /models/score/3/
 *     .withSignatureNames(Map.of("score__float32_N_3", "serving_default")));
 * }</pre>
 *
 * Immutable: each {@code with} method returns a new instance.
 */
public final class SaveOptions {
  private static final SaveOptions DEFAULTS = new SaveOptions(List.of("serve"), Map.of(), -1);

  private final List<String> tags;
  private final Map<String, String> signatureNames;
  private final long servingVersion;

  private SaveOptions(List<String> tags, Map<String, String> signatureNames, long servingVersion) {
    this.tags = tags;
    this.signatureNames = signatureNames;
    this.servingVersion = servingVersion;
  }

  /** Tag {@code "serve"}, the default signature names, no version directory. */
  public static SaveOptions defaults() {
    return DEFAULTS;
  }

  /**
   * The MetaGraph's tags (default {@code "serve"}, what TensorFlow Serving and {@code
   * SavedModelBundle.load(dir)} look for).
   */
  public SaveOptions withTags(String... tags) {
    Objects.requireNonNull(tags, "tags");
    if (tags.length == 0) {
      throw new IllegalArgumentException("tags: expected at least one tag");
    }
    for (String t : tags) {
      if (t == null || t.isEmpty()) {
        throw new IllegalArgumentException("tags: expected non-empty strings, got " + Arrays.toString(tags));
      }
    }
    return new SaveOptions(List.of(tags), signatureNames, servingVersion);
  }

  /**
   * Renames signatures: each key is a default signature name (see {@link
   * PolymorphicFunction#save(java.nio.file.Path)}), each value the name to write instead (for
   * example {@code "serving_default"}). A key that names no signature fails the save.
   */
  public SaveOptions withSignatureNames(Map<String, String> byDefaultName) {
    Objects.requireNonNull(byDefaultName, "byDefaultName");
    for (Map.Entry<String, String> e : byDefaultName.entrySet()) {
      if (e.getValue() == null || e.getValue().isEmpty()) {
        throw new IllegalArgumentException("signature name for '" + e.getKey() + "': expected a non-empty name");
      }
    }
    return new SaveOptions(tags, Map.copyOf(byDefaultName), servingVersion);
  }

  /**
   * Writes the SavedModel into {@code dir/<version>/}, TensorFlow Serving's layout ({@code
   * Function.load(dir)} then loads the highest version).
   */
  public SaveOptions withServingVersion(long version) {
    if (version < 0) {
      throw new IllegalArgumentException("servingVersion: expected a version >= 0, got " + version);
    }
    return new SaveOptions(tags, signatureNames, version);
  }

  /** {@hidden} */
  public List<String> tags() {
    return tags;
  }

  /** {@hidden} */
  public Map<String, String> signatureNames() {
    return signatureNames;
  }

  /** The version directory, or -1 for none. {@hidden} */
  public long servingVersion() {
    return servingVersion;
  }
}
