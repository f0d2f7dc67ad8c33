package dev.polyfn;

import dev.polyfn.internal.Wire;
import org.tensorflow.ndarray.Shape;
import org.tensorflow.types.family.TType;

/**
 * One parameter as the body declared it: what the Java side needs to describe arguments (kind,
 * tensor or Java class, default). Rust holds the type constraints; this mirrors the declaration.
 */
final class Param {
  final String name;
  final int kind;
  /** Tensor (element) type, for tensor, list and map parameters. */
  final Class<? extends TType> tensorType;
  /** Declared class, for Java parameters. */
  final Class<?> javaClass;
  /** Declared shape of a tensor parameter, or null. */
  final Shape shape;
  final boolean optional;
  final Object defaultValue;

  Param(String name, int kind, Class<? extends TType> tensorType, Class<?> javaClass, Shape shape,
      boolean optional, Object defaultValue) {
    this.name = name;
    this.kind = kind;
    this.tensorType = tensorType;
    this.javaClass = javaClass;
    this.shape = shape;
    this.optional = optional;
    this.defaultValue = defaultValue;
  }

  String kindName() {
    switch (kind) {
      case Wire.KIND_TENSOR: return "a tensor";
      case Wire.KIND_LIST: return "a list of tensors";
      case Wire.KIND_MAP: return "a map of tensors";
      case Wire.KIND_VARIABLE: return "a Variable";
      default: return "a " + javaClass.getName();
    }
  }
}
