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
 * @param dir the directory as the user gave it
 * @param function the function's name in a multi-function SavedModel, or null for its only one
 * @param shippedName the name of the shipped copy under SparkFiles' root, or null if not shipped
 * @param stamp what the driver saw of the model (modification time and size of its
 *     {@code saved_model.pb}) so that a model rewritten at the same path is another function, not
 *     the one an executor loaded before
 */
record SavedModelFactory(String dir, String function, String shippedName, String stamp) implements FunctionFactory {
  private static final long serialVersionUID = 1L;

  /** The name the function is known by in each JVM's {@link ExecutorFunctions}. */
  String functionName() {
    return "savedmodel:" + dir + (function == null ? "" : "#" + function);
  }

  /** The directory to read in this JVM. */
  Path localDir() {
    return Path.of(shippedName == null ? dir : SparkFiles.get(shippedName));
  }

  @Override
  public MapFunction create() {
    Path local = localDir();
    if (function != null) {
      return Function.load(local, function);
    }
    PolymorphicFunction loaded = Function.load(local);
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
