package dev.polyfn;

import java.util.List;

/**
 * One traced, cached concrete function of a polymorphic function: the name TensorFlow knows it by,
 * its monomorphic {@link FunctionType} and its output names.
 */
public final class ConcreteFunctionInfo {
  private final int id;
  private final String name;
  private final FunctionType functionType;
  private final List<String> outputNames;

  private final int inputCount;

  /** Built by Polyfn's native library. */
  ConcreteFunctionInfo(int id, String name, FunctionType functionType, String[] outputNames, int inputCount) {
    this.inputCount = inputCount;
    this.id = id;
    this.name = name;
    this.functionType = functionType;
    this.outputNames = List.of(outputNames);
  }

  /** {@hidden} */
  public int id() {
    return id;
  }

  /** The TensorFlow function name registered in the eager context. */
  public String name() {
    return name;
  }

  /** The monomorphic type this function was traced for. */
  public FunctionType functionType() {
    return functionType;
  }

  /**
   * The number of graph inputs: one per tensor of the parameters and captures, and one per
   * distinct variable (a variable passed or captured twice is one input).
   */
  public int inputCount() {
    return inputCount;
  }

  /** The names of the outputs, in output order. */
  public List<String> outputNames() {
    return outputNames;
  }

  @Override
  public String toString() {
    return name + functionType + " -> " + outputNames;
  }
}
