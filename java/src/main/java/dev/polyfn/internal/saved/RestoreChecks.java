package dev.polyfn.internal.saved;

import dev.polyfn.internal.trace.Param;
import dev.polyfn.internal.trace.TraceOutputs;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import org.tensorflow.proto.DataType;
import org.tensorflow.proto.FunctionDef;
import org.tensorflow.proto.OpDef;
import org.tensorflow.proto.TensorShapeProto;

/**
 * Checks that the parts of a concrete function read from a file (a trace cache entry, {@code
 * polyfn.json}) agree with one another before anything is restored: the parameter list with the
 * saved FunctionTypes, the output names with the FunctionDef's outputs. Each part alone may be
 * well formed and still contradict another (a parameter listed twice, a tensor parameter whose
 * kind was edited into a list, an entry without output names), and a function restored from
 * contradicting parts loads, then refuses or misanswers every call.
 */
public final class RestoreChecks {
  private RestoreChecks() {}

  /**
   * Checks {@code params} against the parameters of the declared and traced FunctionType
   * documents; an IllegalArgumentException says what contradicts what.
   */
  public static void parameters(Param[] params, String declared, String traced) {
    Set<String> names = new HashSet<>();
    for (Param p : params) {
      if (p.name().isEmpty() || !names.add(p.name())) {
        throw new IllegalArgumentException("parameter '" + p.name() + "' is "
            + (p.name().isEmpty() ? "unnamed" : "listed twice"));
      }
    }
    typeAgrees("declared", params, declared);
    typeAgrees("traced", params, traced);
  }

  /**
   * Refuses a function with an output TensorFlow Java cannot hand over (an int16, a variant, a
   * resource handle, see {@link TraceOutputs#checkDataType}): restored, it would run and then fail
   * every call at its outputs. {@code names} are the outputs' names, in the definition's order.
   */
  public static void outputTypes(FunctionDef def, String[] names) {
    List<OpDef.ArgDef> args = def.getSignature().getOutputArgList();
    for (int i = 0; i < args.size() && i < names.length; i++) {
      DataType type = args.get(i).getType();
      if (type != DataType.DT_INVALID) { // a type set by an attribute: no concrete function has one
        TraceOutputs.checkDataType(def.getSignature().getName(), names[i], type);
      }
    }
  }

  private static void typeAgrees(String which, Param[] params, String document) {
    List<?> typeParams;
    try {
      Map<?, ?> doc = (Map<?, ?>) Json.parse(document);
      typeParams = (List<?>) ((Map<?, ?>) doc.get("function_type")).get("parameters");
      if (typeParams == null) {
        throw new IllegalArgumentException("no parameters");
      }
    } catch (ClassCastException | NullPointerException e) {
      throw new IllegalArgumentException("the " + which + " type is not a function type document");
    }
    if (typeParams.size() != params.length) {
      throw new IllegalArgumentException("the parameter list has " + params.length + " parameters, the " + which
          + " type " + typeParams.size());
    }
    for (int i = 0; i < params.length; i++) {
      Param p = params[i];
      Object t = typeParams.get(i);
      Map<?, ?> m = t instanceof Map<?, ?> map ? map : Map.of();
      String kind = p.kind().name().toLowerCase(Locale.ROOT);
      if (!p.name().equals(m.get("name")) || !kind.equals(m.get("kind"))
          || !Boolean.valueOf(p.optional()).equals(m.get("optional"))) {
        throw new IllegalArgumentException("parameter " + i + " is '" + p.name() + "' (" + kind
            + (p.optional() ? ", optional" : "") + ") in the parameter list, but '" + m.get("name") + "' (" + m.get("kind")
            + (Boolean.TRUE.equals(m.get("optional")) ? ", optional" : "") + ") in the " + which + " type");
      }
    }
  }

  /**
   * Checks the shape of {@code variable} stored in a checkpoint's index ({@code stored}) against
   * the shape the SavedModel declares for it ({@code declared}; an unknown rank or dim accepts
   * any), before it is restored ({@link CheckpointIndex#check}): TensorFlow's RestoreV2 checks the
   * dtype only, and a variable of another shape would load, then change dispatch (a bodyless
   * function refuses every call) or the weights a retrace adopts. An IllegalArgumentException
   * names the variable and both shapes.
   */
  public static void variableShape(String variable, TensorShapeProto declared, long[] stored) {
    boolean agrees = declared.getUnknownRank() || declared.getDimCount() == stored.length;
    for (int i = 0; agrees && !declared.getUnknownRank() && i < stored.length; i++) {
      long d = declared.getDim(i).getSize();
      agrees = d < 0 || d == stored[i];
    }
    if (!agrees) {
      List<Long> want = declared.getDimList().stream().map(d -> Math.max(d.getSize(), -1)).toList();
      throw new IllegalArgumentException("variable " + variable + " has shape " + Arrays.toString(stored)
          + " in the checkpoint, but the SavedModel declares " + want);
    }
  }

  /**
   * Checks that a function of traced type document {@code traced}, without captures (a trace
   * cache entry), takes {@code inputs} inputs: one per tensor of its parameters' types (lists,
   * maps, records and composites flattened; a Java value none). A type edited to hold more or
   * fewer tensors than the FunctionDef takes (a nest with a list element added) would restore,
   * then fail or misfeed every call it serves.
   */
  public static void inputs(String traced, int inputs) {
    int n = 0;
    try {
      Map<?, ?> type = (Map<?, ?>) ((Map<?, ?>) Json.parse(traced)).get("function_type");
      if (!((List<?>) type.get("captures")).isEmpty()) {
        throw new IllegalArgumentException("the traced type has captures, which a cached function never has");
      }
      for (Object p : (List<?>) type.get("parameters")) {
        n += tensors(((Map<?, ?>) p).get("type"), 0);
      }
    } catch (ClassCastException | NullPointerException e) {
      throw new IllegalArgumentException("the traced type is not a function type document");
    }
    if (n != inputs) {
      throw new IllegalArgumentException("its traced type holds " + n + " tensors, but its function takes " + inputs
          + " inputs");
    }
  }

  /** How many tensors (graph inputs) a value of traced type {@code type} is (none for an omitted optional one: null). */
  private static int tensors(Object type, int depth) {
    if (type == null) {
      return 0;
    }
    Map<?, ?> m = (Map<?, ?>) type;
    Object kind = m.get("kind");
    if (depth > Json.MAX_DEPTH) {
      throw new IllegalArgumentException("the traced type nests too deep");
    }
    Iterable<?> parts = switch (String.valueOf(kind)) {
      case "tensor_spec" -> null;
      case "literal" -> List.of();
      case "list" -> (List<?>) m.get("elements");
      case "map" -> ((Map<?, ?>) m.get("entries")).values();
      case "record" -> (List<?>) m.get("types");
      case "composite" -> (List<?>) m.get("components");
      default -> throw new IllegalArgumentException("the traced type holds a " + kind + ", which is not a value's type");
    };
    if (parts == null) {
      return 1;
    }
    int n = 0;
    for (Object t : parts) {
      n += tensors(t, depth + 1);
    }
    return n;
  }

  /**
   * Checks output names against the FunctionDef's {@code outputs}: one distinct, non-empty name
   * per output.
   */
  public static void outputNames(String[] names, int outputs) {
    if (names.length != outputs) {
      throw new IllegalArgumentException(names.length + " output names for a function with " + outputs + " outputs");
    }
    Set<String> seen = new HashSet<>();
    for (String n : names) {
      if (n.isEmpty() || !seen.add(n)) {
        throw new IllegalArgumentException("output name '" + n + "' is " + (n.isEmpty() ? "empty" : "listed twice"));
      }
    }
  }
}
