package dev.polyfn.spark;

import dev.polyfn.ConcreteFunctionInfo;
import dev.polyfn.FunctionType;
import dev.polyfn.MapFunction;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Checks a scoring plan against the function on the driver, before any task runs: each input
 * column must feed a parameter the function has, each parameter without a default must be fed,
 * and each output must be one the function returns. A mistake found here is an
 * {@link IllegalArgumentException} naming the column, parameter or output, instead of a failed
 * task on every executor.
 */
final class DriverChecks {
  private DriverChecks() {}

  /**
   * Checks {@code plan} against {@code function}. A function that has not traced yet has no
   * parameter list: it is traced once here with the batch specs of the input columns (what the
   * executors will call it with), which fixes its parameters; the trace stays cached. An array
   * column's width is not in the schema, so its spec is {@code [rows, -1]}: when the body declares
   * a fixed width for that parameter, the trace is refused for that alone, and the check is left
   * to the executors (which trace with the real width).
   */
  static void check(String name, MapFunction function, PolyfnScoring.Plan plan) {
    FunctionType type = function.functionType();
    if (type.parameters().isEmpty()) {
      Map<String, Object> specs = new LinkedHashMap<>();
      for (int c = 0; c < plan.inputColumns.length; c++) {
        specs.put(plan.parameters[c], plan.inputTypes[c].batchSpec());
      }
      try {
        function.getConcreteFunction(specs);
      } catch (IllegalArgumentException e) {
        if (arraySpecRefused(plan, String.valueOf(e.getMessage()))) {
          return;
        }
        // The trace's own message says what the body wanted (a missing or mistyped input).
        throw new IllegalArgumentException("function '" + name + "' cannot be called with input columns "
            + mapping(plan) + ": " + e.getMessage(), e);
      }
      type = function.functionType();
    }
    Set<String> fed = new LinkedHashSet<>();
    for (int c = 0; c < plan.inputColumns.length; c++) {
      String parameter = plan.parameters[c];
      if (type.parameter(parameter).isEmpty()) {
        throw new IllegalArgumentException("input column '" + plan.inputColumns[c] + "' feeds parameter '"
            + parameter + "', but function '" + name + "' has no parameter '" + parameter + "'; its parameters: "
            + type);
      }
      fed.add(parameter);
    }
    for (FunctionType.Parameter p : type.parameters()) {
      if (!p.optional() && !fed.contains(p.name())) {
        throw new IllegalArgumentException("parameter '" + p.name() + "' of function '" + name
            + "' is fed by no input column (it has no default); input columns: " + mapping(plan));
      }
    }
    Set<String> outputs = new LinkedHashSet<>();
    List<ConcreteFunctionInfo> concrete = function.concreteFunctions();
    for (ConcreteFunctionInfo c : concrete) {
      outputs.addAll(c.outputNames());
    }
    for (String output : plan.outputNames) {
      if (!concrete.isEmpty() && !outputs.contains(output)) {
        throw new IllegalArgumentException("output '" + output + "': function '" + name
            + "' has no such output; its outputs: " + outputs);
      }
    }
  }

  /** Whether the trace refused only the unknown width of an array column's spec. */
  private static boolean arraySpecRefused(PolyfnScoring.Plan plan, String message) {
    for (int c = 0; c < plan.inputColumns.length; c++) {
      if (plan.inputTypes[c].array && message.startsWith("argument '" + plan.parameters[c] + "': expected ")) {
        return true;
      }
    }
    return false;
  }

  private static String mapping(PolyfnScoring.Plan plan) {
    StringBuilder s = new StringBuilder("[");
    for (int c = 0; c < plan.inputColumns.length; c++) {
      s.append(c == 0 ? "" : ", ").append(plan.inputColumns[c]).append(" -> ").append(plan.parameters[c]);
    }
    return s.append(']').toString();
  }
}
