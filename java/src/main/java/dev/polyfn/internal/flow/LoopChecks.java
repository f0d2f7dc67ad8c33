package dev.polyfn.internal.flow;

import dev.polyfn.LoopOptions;
import java.util.List;
import java.util.Map;
import java.util.function.IntFunction;
import org.tensorflow.Operand;
import org.tensorflow.ndarray.Shape;
import org.tensorflow.proto.DataType;

/**
 * The checks {@code Flow.whileLoop} makes on its arguments and on each iteration's results, the
 * same whether the loop is traced ({@link FlowLoops}) or runs as Java ({@link FlowEager}), so both
 * give the same messages. Only the check of a single operand differs (of the trace's graph, or
 * eager), and is passed in.
 */
final class LoopChecks {
  private LoopChecks() {}

  /** Checks that an operand may be used here, naming it; returns it. */
  interface OperandCheck {
    Operand<?> check(Operand<?> o, String name);
  }

  /** The arguments that need no operand: cond and body present, loop variables given, declared shapes in range. */
  static void arguments(List<? extends Operand<?>> loopVars, LoopOptions options, Object cond, Object body) {
    if (cond == null || body == null) {
      throw new IllegalArgumentException("whileLoop: " + (cond == null ? "cond" : "body") + " is null");
    }
    if (loopVars == null || loopVars.isEmpty()) {
      throw new IllegalArgumentException("whileLoop: loopVars must hold at least one loop variable");
    }
    for (Map.Entry<Integer, Shape> e : options.shapes().entrySet()) {
      if (e.getKey() >= loopVars.size()) {
        throw new IllegalArgumentException("whileLoop: a shape is declared for loop variable " + e.getKey()
            + " but there are only " + loopVars.size() + " loop variables");
      }
    }
  }

  /** A bound given as a tensor ({@code LoopOptions.maximumIterations(Operand)}): a scalar INT32 or INT64; returned. */
  static Operand<?> bound(Operand<?> n) {
    DataType t = n.asOutput().dataType();
    if (t != DataType.DT_INT32 && t != DataType.DT_INT64) {
      throw new IllegalArgumentException("whileLoop: maximumIterations must be a scalar INT32 or INT64, got dtype "
          + FlowChecks.name(t));
    }
    Shape s = n.shape();
    if (!s.isUnknown() && s.numDimensions() != 0) {
      throw new IllegalArgumentException("whileLoop: maximumIterations must be a scalar INT32 or INT64, got shape "
          + FlowChecks.show(s));
    }
    return n;
  }

  /** The shape loop variable {@code i} keeps: the declared one, which its initial shape must fit, else its own. */
  static Shape declaredShape(Shape initial, LoopOptions options, int i, IntFunction<String> label) {
    Shape declared = options.shapes().getOrDefault(i, initial);
    if (!FlowChecks.fits(initial, declared)) {
      throw new IllegalArgumentException("whileLoop: " + label.apply(i) + " has shape " + FlowChecks.show(initial)
          + ", which does not fit its declared shape " + FlowChecks.show(declared));
    }
    return declared;
  }

  /** The body's results match the loop variables: as many, same dtypes, shapes within the declared ones. */
  static void next(List<? extends Operand<?>> next, List<DataType> entering, List<Shape> shapes, OperandCheck operand,
      IntFunction<String> label) {
    int n = entering.size();
    if (next == null || next.size() != n) {
      throw new IllegalArgumentException("whileLoop: the body must return " + n + " loop variables, returned "
          + (next == null ? "null" : String.valueOf(next.size())));
    }
    for (int i = 0; i < n; i++) {
      DataType returned = operand.check(next.get(i), label.apply(i) + " returned by the body").asOutput().dataType();
      if (returned != entering.get(i)) {
        throw new IllegalArgumentException("whileLoop: " + label.apply(i) + " enters as "
            + FlowChecks.name(entering.get(i)) + " but the body returns " + FlowChecks.name(returned));
      }
      Shape declared = shapes.get(i);
      Shape shape = next.get(i).shape();
      if (!FlowChecks.fits(shape, declared)) {
        throw new IllegalArgumentException("whileLoop: " + label.apply(i) + " has shape " + FlowChecks.show(declared)
            + " on entry but " + FlowChecks.show(shape) + " after an iteration; declare the shape it keeps with "
            + "Flow.loop().shape(" + i + ", Shape.of(...)) using -1 for the dimensions that change");
      }
    }
  }
}
