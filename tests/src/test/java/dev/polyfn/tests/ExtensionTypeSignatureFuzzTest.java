package dev.polyfn.tests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.polyfn.Function;
import dev.polyfn.MapFunction;
import dev.polyfn.NestFunction;
import dev.polyfn.NestOutputs;
import dev.polyfn.Outputs;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.tensorflow.proto.DataType;
import org.tensorflow.proto.MetaGraphDef;
import org.tensorflow.proto.SavedModel;
import org.tensorflow.proto.SavedObjectGraphOuterClass.SavedConcreteFunction;
import org.tensorflow.proto.SavedObjectGraphOuterClass.SavedObjectGraph;
import org.tensorflow.proto.Struct.StructuredValue;
import org.tensorflow.proto.Struct.TensorSpecProto;
import org.tensorflow.proto.Struct.TupleValue;
import org.tensorflow.proto.Struct.TypeSpecProto.TypeSpecClass;
import org.tensorflow.proto.TensorShapeProto;
import org.tensorflow.types.TBool;
import org.tensorflow.types.TFloat32;

/**
 * Seeded mutations of the extension-type specs in a Python SavedModel's signatures (written now
 * by {@code make_library_models.py}): fields dropped, renamed, duplicated, reordered, retyped,
 * packed, the spec's class changed, in the inputs of {@code masked} and the outputs of {@code
 * make_masked}. Each mutated file must load and answer (what the edit says), load and refuse a
 * call with an {@code IllegalArgumentException}, or be refused at load with one naming the file;
 * anything else (another exception, an error inside TensorFlow, a refusal not naming the file) is
 * a violation. Outcomes are counted.
 */
class ExtensionTypeSignatureFuzzTest {
  private static final int CASES = Integer.getInteger("polyfn.fuzz.cases", 120);

  @TempDir static Path dir;

  @BeforeAll
  static void writeModels() throws Exception {
    PythonScripts.run("make_library_models.py", 300, dir.toString());
  }

  @Test
  void mutatedExtensionTypeSpecsLoadAndAnswerOrAreRefused(@TempDir Path scratch) throws Exception {
    Path pristine = dir.resolve("nests");
    Map<String, Integer> outcomes = new TreeMap<>();
    List<String> violations = new ArrayList<>();
    Random random = new Random(Long.getLong("polyfn.fuzz.seed", 3));
    for (int i = 0; i < CASES; i++) {
      boolean output = i % 3 == 2;
      Path copy = scratch.resolve("case" + i);
      FileFuzzer.copy(pristine, copy);
      Path pb = copy.resolve("saved_model.pb");
      String what = mutate(pb, random, output);
      String outcome;
      try {
        outcome = output ? callMakeMasked(copy) : callMasked(copy);
      } catch (IllegalArgumentException e) {
        // A refusal names the file it refuses (the standards' clear exception), else it is a violation.
        outcome = String.valueOf(e.getMessage()).contains(pb.toString()) ? "refused at load" : "unnamed refusal";
        if (outcome.equals("unnamed refusal")) {
          violations.add("case " + i + " (" + what + "): " + e);
        }
      } catch (RuntimeException | Error e) {
        outcome = "violation";
        violations.add("case " + i + " (" + what + "): " + e);
      }
      outcomes.merge(outcome, 1, Integer::sum);
      FileFuzzer.delete(copy);
    }
    System.out.println("extension-type signature fuzzer: " + outcomes);
    assertTrue(violations.isEmpty(), outcomes + "\n" + String.join("\n", violations));
    assertTrue(outcomes.getOrDefault("refused at load", 0) > 0 && outcomes.getOrDefault("answers", 0) > 0, outcomes.toString());
    // The pristine model still answers as Python did.
    assertEquals("answers", callMasked(pristine));
  }

  /** Calls {@code masked} with values [1.5, -2, 4] and mask [T, F, T]: "answers" or "call refused". */
  private static String callMasked(Path root) {
    try (MapFunction f = Function.load(root, "masked");
         TFloat32 values = TFloat32.vectorOf(1.5f, -2f, 4f);
         TBool mask = TBool.vectorOf(true, false, true)) {
      try (Outputs o = f.call(Map.of("m", Map.of("values", values, "mask", mask)))) {
        float[] y = SavedModelTest.floats(o.get("y"));
        return y.length == 3 && y[0] == 1.5f && y[1] == 0f && y[2] == 4f ? "answers" : "answers what the edit says";
      } catch (IllegalArgumentException e) {
        return "call refused";
      }
    }
  }

  /** Calls {@code make_masked} on [1, -2, 0.5]: "answers" (a map of its two fields) or another outcome. */
  private static String callMakeMasked(Path root) {
    try (NestFunction f = Function.loadNested(root, "make_masked"); TFloat32 x = TFloat32.vectorOf(1f, -2f, 0.5f)) {
      try (NestOutputs o = f.call(Map.of("x", x))) {
        Object v = o.value();
        return v instanceof Map<?, ?> m && m.keySet().equals(java.util.Set.of("values", "mask")) ? "answers"
            : "answers what the edit says";
      } catch (IllegalArgumentException e) {
        return "call refused";
      }
    }
  }

  /** Mutates one extension-type spec in the signatures of every concrete function; says how. */
  private static String mutate(Path pb, Random r, boolean output) throws Exception {
    SavedModel model = SavedModel.parseFrom(Files.readAllBytes(pb));
    MetaGraphDef meta = model.getMetaGraphs(0);
    SavedObjectGraph.Builder graph = meta.getObjectGraphDef().toBuilder();
    String[] what = {"nothing"};
    for (String name : List.copyOf(graph.getConcreteFunctionsMap().keySet())) {
      SavedConcreteFunction c = graph.getConcreteFunctionsOrThrow(name);
      StructuredValue sig = output ? c.getOutputSignature() : c.getCanonicalizedInputSignature();
      StructuredValue edited = edit(sig, r, what);
      graph.putConcreteFunctions(name, output ? c.toBuilder().setOutputSignature(edited).build()
          : c.toBuilder().setCanonicalizedInputSignature(edited).build());
    }
    Files.write(pb, model.toBuilder().setMetaGraphs(0, meta.toBuilder().setObjectGraphDef(graph)).build().toByteArray());
    return what[0];
  }

  /** {@code v} with its extension-type specs edited (each one, by one random mutation). */
  private static StructuredValue edit(StructuredValue v, Random r, String[] what) {
    StructuredValue.Builder b = v.toBuilder();
    if (v.hasTupleValue()) {
      TupleValue.Builder t = TupleValue.newBuilder();
      v.getTupleValue().getValuesList().forEach(x -> t.addValues(edit(x, r, what)));
      return b.setTupleValue(t).build();
    }
    if (v.hasDictValue()) {
      v.getDictValue().getFieldsMap().forEach((k, x) -> b.getDictValueBuilder().putFields(k, edit(x, r, what)));
      return b.build();
    }
    if (!v.hasTypeSpecValue() || v.getTypeSpecValue().getTypeSpecClass() != TypeSpecClass.EXTENSION_TYPE_SPEC) {
      return v;
    }
    List<StructuredValue> fields = new ArrayList<>(v.getTypeSpecValue().getTypeState().getTupleValue().getValuesList());
    int i = r.nextInt(fields.size());
    StructuredValue pair = fields.get(i);
    switch (r.nextInt(8)) {
      case 0 -> {
        fields.remove(i);
        what[0] = "field " + i + " dropped";
      }
      case 1 -> {
        fields.set(i, pair(fields.get((i + 1) % fields.size()).getTupleValue().getValues(0).getStringValue(), value(pair)));
        what[0] = "field " + i + " renamed to another's name";
      }
      case 2 -> {
        fields.set(i, pair("renamed_" + r.nextInt(3), value(pair)));
        what[0] = "field " + i + " renamed";
      }
      case 3 -> {
        fields.add(fields.remove(i));
        what[0] = "field " + i + " moved last";
      }
      case 4 -> {
        fields.set(i, pair(pair.getTupleValue().getValues(0).getStringValue(), randomValue(r)));
        what[0] = "field " + i + " retyped";
      }
      case 5 -> {
        fields.add(pair("_tf_extension_type_is_packed", StructuredValue.newBuilder().setBoolValue(true).build()));
        what[0] = "packed";
      }
      case 6 -> {
        fields.set(i, StructuredValue.newBuilder().setStringValue("not a pair").build());
        what[0] = "field " + i + " not a pair";
      }
      default -> {
        b.getTypeSpecValueBuilder().setTypeSpecClass(TypeSpecClass.values()[r.nextInt(TypeSpecClass.values().length - 1)]);
        what[0] = "class changed";
      }
    }
    b.getTypeSpecValueBuilder().getTypeStateBuilder().setTupleValue(TupleValue.newBuilder().addAllValues(fields));
    return b.build();
  }

  private static StructuredValue value(StructuredValue pair) {
    return pair.hasTupleValue() && pair.getTupleValue().getValuesCount() > 1 ? pair.getTupleValue().getValues(1)
        : StructuredValue.getDefaultInstance();
  }

  private static StructuredValue pair(String name, StructuredValue value) {
    return StructuredValue.newBuilder().setTupleValue(TupleValue.newBuilder()
        .addValues(StructuredValue.newBuilder().setStringValue(name)).addValues(value)).build();
  }

  /** A value of another kind: None, a literal, a shape, a dtype, a tensor spec of another dtype or rank, a list. */
  private static StructuredValue randomValue(Random r) {
    StructuredValue.Builder b = StructuredValue.newBuilder();
    return switch (r.nextInt(7)) {
      case 0 -> b.setNoneValue(org.tensorflow.proto.Struct.NoneValue.getDefaultInstance()).build();
      case 1 -> b.setInt64Value(r.nextInt(5) - 2).build();
      case 2 -> b.setStringValue("s").build();
      case 3 -> b.setTensorShapeValue(TensorShapeProto.newBuilder().addDim(TensorShapeProto.Dim.newBuilder().setSize(3))).build();
      case 4 -> b.setTensorDtypeValue(DataType.DT_INT32).build();
      case 5 -> b.setTensorSpecValue(TensorSpecProto.newBuilder().setDtype(r.nextBoolean() ? DataType.DT_INT32 : DataType.DT_FLOAT)
          .setShape(r.nextBoolean() ? TensorShapeProto.getDefaultInstance()
              : TensorShapeProto.newBuilder().addDim(TensorShapeProto.Dim.newBuilder().setSize(-1)).build())).build();
      default -> b.setListValue(org.tensorflow.proto.Struct.ListValue.newBuilder()
          .addValues(StructuredValue.newBuilder().setTensorSpecValue(TensorSpecProto.newBuilder().setDtype(DataType.DT_FLOAT)))).build();
    };
  }
}
