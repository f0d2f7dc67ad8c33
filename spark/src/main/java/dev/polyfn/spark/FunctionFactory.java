package dev.polyfn.spark;

import dev.polyfn.MapFunction;
import java.io.Serializable;

/**
 * Defines the Polyfn function a scoring job runs. Spark ships the factory (not the function) to
 * each executor, which calls it once per JVM; a reference to a static method is the simplest
 * factory: {@code Models::scorer}.
 */
@FunctionalInterface
public interface FunctionFactory extends Serializable {
  /**
   * Defines the function (called once per executor JVM).
   *
   * @return a new function; Polyfn keeps it until a job uses another factory under the same name,
   *     then closes it once no running batch uses it
   */
  MapFunction create();
}
