package dev.polyfn.spark;

import dev.polyfn.Function;
import dev.polyfn.MapFunction;
import dev.polyfn.PolymorphicFunction;
import java.nio.file.Path;
import org.apache.spark.SparkFiles;

/**
 * Loads a SavedModel's function where it runs (driver or executor) with {@link Function#load}.
 * The directory is read at {@code dir} itself, or, when the driver shipped it with
 * {@code SparkContext.addFile(dir, true)}, at this JVM's copy, {@code SparkFiles.get(shippedName)}.
 *
 * <p>The driver resolves the model once ({@link ModelStamp}): the version subdirectory to read and
 * the stamp of its content. Every JVM loads that version, not the highest one it happens to find,
 * and refuses a model whose stamp differs (rewritten after the job was planned) instead of
 * scoring part of the job with another model.
 *
 * @param dir the directory as the user gave it
 * @param function the function's name in a multi-function SavedModel, or null for its only one
 * @param shippedName the name of the shipped copy under SparkFiles' root, or null if not shipped
 * @param version the version subdirectory the driver resolved (TensorFlow Serving's layout), or
 *     null when {@code dir} holds the SavedModel itself
 * @param stamp {@link ModelStamp#of} of the model the driver resolved: a model rewritten at the same
 *     path is another factory (another function), and a JVM that finds another model refuses it
 */
record SavedModelFactory(String dir, String function, String shippedName, String version, String stamp)
    implements FunctionFactory {
  private static final long serialVersionUID = 2L;

  /** The name the function is known by in each JVM's {@link ExecutorFunctions}. */
  String functionName() {
    return "savedmodel:" + dir + (function == null ? "" : "#" + function);
  }

  /** The directory to read in this JVM. */
  Path localDir() {
    return Path.of(shippedName == null ? dir : SparkFiles.get(shippedName));
  }

  /** The SavedModel itself in this JVM: the resolved version's directory. */
  Path modelDir() {
    Path local = localDir();
    return version == null ? local : local.resolve(version);
  }

  /** This factory for the model the driver finds now in {@code dir} (or its shipped copy). */
  SavedModelFactory resolved() {
    Path local = localDir();
    String v = ModelStamp.version(local);
    return new SavedModelFactory(dir, function, shippedName, v, ModelStamp.of(v == null ? local : local.resolve(v)));
  }

  @Override
  public MapFunction create() {
    Path model = modelDir();
    checkStamp(model, " (rewritten since the job was planned)");
    MapFunction loaded = load(model);
    try {
      checkStamp(model, " once loaded (rewritten while it loaded: the load may mix two models)");
    } catch (RuntimeException e) {
      loaded.close();
      throw e;
    }
    return loaded;
  }

  private void checkStamp(Path model, String when) {
    String found = ModelStamp.of(model);
    if (!found.equals(stamp)) {
      throw new IllegalStateException("SavedModel " + model + " is not the model the driver planned the job with: "
          + "the driver saw stamp " + stamp + ", this JVM finds stamp " + found + when + "; "
          + "refused rather than scoring with another model: transform again to score with the new one");
    }
  }

  private MapFunction load(Path model) {
    if (function != null) {
      return Function.load(model, function);
    }
    PolymorphicFunction loaded = Function.load(model);
    if (!(loaded instanceof MapFunction)) {
      String kind = loaded.getClass().getSimpleName();
      loaded.close();
      throw new IllegalArgumentException("SavedModel " + dir + " holds a " + kind + "; Spark scoring calls "
          + "a function with named parameters and outputs (a MapFunction, as Function.define makes and Python's "
          + "tf.function with a dict output loads as)");
    }
    return (MapFunction) loaded;
  }
}
