package dev.polyfn.tests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import com.google.protobuf.ByteString;
import com.google.protobuf.InvalidProtocolBufferException;
import dev.polyfn.internal.saved.SavedModelParts;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.tensorflow.proto.AttrValue;
import org.tensorflow.proto.DataType;
import org.tensorflow.proto.FunctionDef;
import org.tensorflow.proto.GraphDef;
import org.tensorflow.proto.MetaGraphDef;
import org.tensorflow.proto.NameAttrList;
import org.tensorflow.proto.NodeDef;
import org.tensorflow.proto.OpDef;
import org.tensorflow.proto.SavedModel;

/**
 * Polyfn's own walk of the protobuf wire format ({@code SavedModelParts}, which reads what
 * loading and warm start need without protobuf's classes) against protobuf's parser, on a
 * definition and thousands of seeded mutations of it: whenever protobuf parses a mutation, the
 * walk reads the same name and arity, and sees every function reference; whatever it is given, the walk
 * answers or refuses with {@link InvalidProtocolBufferException}, never another exception.
 */
class SavedModelWireTest {

  private static FunctionDef definition() {
    OpDef.ArgDef x = OpDef.ArgDef.newBuilder().setName("x").setType(DataType.DT_FLOAT).build();
    OpDef.ArgDef v = OpDef.ArgDef.newBuilder().setName("v").setType(DataType.DT_RESOURCE).build();
    OpDef.ArgDef y = OpDef.ArgDef.newBuilder().setName("y").setType(DataType.DT_FLOAT).build();
    NodeDef add = NodeDef.newBuilder().setName("add").setOp("AddV2").addInput("x").addInput("x")
        .putAttr("T", AttrValue.newBuilder().setType(DataType.DT_FLOAT).build()).build();
    NodeDef call = NodeDef.newBuilder().setName("call").setOp("StatefulPartitionedCall").addInput("add:z:0")
        .putAttr("f", AttrValue.newBuilder().setFunc(NameAttrList.newBuilder().setName("branch_é")).build())
        .putAttr("Tin", AttrValue.newBuilder().setList(AttrValue.ListValue.newBuilder()
            .addType(DataType.DT_FLOAT)).build())
        .build();
    return FunctionDef.newBuilder()
        .setSignature(OpDef.newBuilder().setName("__inference_f_17").addInputArg(x).addInputArg(v).addOutputArg(y))
        .addNodeDef(add).addNodeDef(call).putRet("y", "call:output:0").build();
  }

  /** Whether a parsed definition calls a function, as {@code mayCallFunctions} decides it. */
  private static boolean callsFunction(FunctionDef d, Set<String> names) {
    for (NodeDef n : d.getNodeDefList()) {
      if (names.contains(n.getOp())) {
        return true;
      }
      for (AttrValue a : n.getAttrMap().values()) {
        if (a.hasFunc() || a.getList().getFuncCount() > 0) {
          return true;
        }
      }
    }
    return false;
  }

  private static byte[] mutate(byte[] good, Random r) {
    byte[] b = good.clone();
    switch (r.nextInt(4)) {
      case 0 -> b[r.nextInt(b.length)] = (byte) r.nextInt(256);
      case 1 -> b = java.util.Arrays.copyOf(b, r.nextInt(b.length));
      case 2 -> b[r.nextInt(b.length)] ^= (byte) (1 << r.nextInt(8));
      default -> {
        for (int i = 0; i < 3; i++) {
          b[r.nextInt(b.length)] = (byte) (0x80 | r.nextInt(128)); // runs of continuation bytes
        }
      }
    }
    return b;
  }

  @Test
  void theWalkAgreesWithProtobufOnEveryMutationProtobufParses() {
    byte[] good = definition().toByteArray();
    Random r = new Random(42);
    int parsed = 0;
    boolean calledOnce = false;
    for (int i = 0; i < 5000; i++) {
      byte[] b = i == 0 ? good : mutate(good, r);
      FunctionDef d;
      try {
        d = FunctionDef.parseFrom(b);
      } catch (InvalidProtocolBufferException e) {
        d = null;
      }
      Map.Entry<String, SavedModelParts.Fn> walked;
      boolean calls;
      try {
        walked = SavedModelParts.describe(b);
        calls = SavedModelParts.mayCallFunctions(b, Set.of("f", "g"));
      } catch (InvalidProtocolBufferException e) {
        if (d != null) {
          fail("protobuf parses mutation " + i + " but the walk refuses it: " + e.getMessage());
        }
        continue;
      } catch (RuntimeException e) {
        throw new AssertionError("mutation " + i + ": " + e, e);
      }
      if (d == null) {
        continue; // protobuf checks what the walk skips (a known field's wire type)
      }
      parsed++;
      OpDef sig = d.getSignature();
      assertEquals(sig.getName(), walked.getKey(), "mutation " + i);
      assertEquals(sig.getInputArgCount(), walked.getValue().inputs(), "mutation " + i);
      assertEquals(sig.getInputArgList().stream().filter(a -> a.getType() == DataType.DT_RESOURCE).count(),
          walked.getValue().resourceInputs(), "mutation " + i);
      assertEquals(sig.getOutputArgCount(), walked.getValue().outputs(), "mutation " + i);
      // "May call": the walk may see a call protobuf's map or oneof would drop, never miss one.
      assertTrue(calls || !callsFunction(d, Set.of("f", "g")), "the walk missed a call in mutation " + i);
      calledOnce |= calls;
    }
    assertTrue(parsed > 100, "too few mutations parse to compare: " + parsed);
    assertTrue(calledOnce);
  }

  @Test
  void aSavedModelsFunctionsAndNodesAreReadAsProtobufReadsThem() throws Exception {
    FunctionDef f = definition();
    NodeDef node = NodeDef.newBuilder().setName("saver").setOp("NoOp").build();
    byte[] model = SavedModel.newBuilder().addMetaGraphs(MetaGraphDef.newBuilder().setGraphDef(GraphDef.newBuilder()
        .addNode(node).setLibrary(org.tensorflow.proto.FunctionDefLibrary.newBuilder().addFunction(f))))
        .build().toByteArray();
    SavedModelParts parts = SavedModelParts.read(model);
    assertEquals(1, parts.metaGraphs());
    assertEquals(Set.of("__inference_f_17"), parts.library().keySet());
    assertEquals(ByteString.copyFrom(f.toByteArray()), ByteString.copyFrom(parts.library().get("__inference_f_17").bytes()));
    assertEquals(ByteString.copyFrom(node.toByteArray()), ByteString.copyFrom(parts.nodes().get("saver")));
    // Truncated anywhere, the file is refused as protobuf refuses it, never with another exception.
    for (int n = 1; n < model.length; n++) {
      byte[] cut = java.util.Arrays.copyOf(model, n);
      boolean protobuf;
      try {
        SavedModel.parseFrom(cut);
        protobuf = true;
      } catch (InvalidProtocolBufferException e) {
        protobuf = false;
      }
      try {
        SavedModelParts.read(cut);
        assertTrue(protobuf, "the walk read a cut protobuf refuses, at " + n);
      } catch (InvalidProtocolBufferException e) {
        assertTrue(!protobuf, "the walk refused a cut protobuf reads, at " + n);
      }
    }
  }
}
