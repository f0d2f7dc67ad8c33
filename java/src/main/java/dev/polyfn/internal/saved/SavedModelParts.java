package dev.polyfn.internal.saved;

import com.google.protobuf.InvalidProtocolBufferException;
import java.util.HashMap;
import java.util.Map;

/**
 * The parts of a {@code saved_model.pb} that loading a Polyfn-written SavedModel needs: each
 * FunctionDef's bytes, name and signature's arity, and each node's bytes by name. They are read
 * by walking the wire format down to those fields, without the generated message classes:
 * parsing the whole {@code SavedModel} (first use of the classes of SavedModel, FunctionDef,
 * NodeDef, AttrValue, TensorProto...) took about 250 ms of a fresh JVM's load even after
 * TensorFlow's start-up, the walk about 15 ms; the FunctionDefs go to TensorFlow as bytes anyway.
 * Every field walked or skipped is checked for a valid tag and length, so a truncated or corrupt
 * file still fails here. The walk is {@link WireReader}'s, not protobuf's {@code CodedInputStream},
 * whose first use costs more than the walk.
 *
 * @param library the FunctionDefs of every MetaGraph's library, by signature name
 * @param nodes the serialized NodeDefs of every MetaGraph's graph, by name
 * @param metaGraphs how many MetaGraphs the file holds
 * @param version the last MetaGraph's {@code meta_info_def.meta_graph_version} ("" when unset):
 *     where Polyfn's save writes its save id ({@link SaveIds})
 */
public record SavedModelParts(Map<String, Fn> library, Map<String, byte[]> nodes, int metaGraphs, String version) {
  // Field numbers of tensorflow/core/protobuf/saved_model.proto, meta_graph.proto,
  // framework/graph.proto, function.proto, op_def.proto and node_def.proto.
  private static final int SAVED_MODEL_META_GRAPHS = 2;
  private static final int META_GRAPH_META_INFO = 1;
  private static final int META_INFO_VERSION = 1;
  private static final int META_GRAPH_GRAPH_DEF = 2;
  private static final int GRAPH_NODE = 1;
  private static final int GRAPH_LIBRARY = 2;
  private static final int LIBRARY_FUNCTION = 1;
  private static final int FUNCTION_SIGNATURE = 1;
  private static final int OP_NAME = 1;
  private static final int OP_INPUT_ARG = 2;
  private static final int OP_OUTPUT_ARG = 3;
  private static final int ARG_TYPE = 3;
  private static final int NODE_NAME = 1;
  private static final int FUNCTION_NODE_DEF = 3;
  private static final int NODE_OP = 2;
  private static final int NODE_ATTR = 5;
  private static final int MAP_VALUE = 2;
  private static final int ATTR_LIST = 1;
  private static final int ATTR_FUNC = 10;
  private static final int LIST_FUNC = 9;
  private static final int DT_RESOURCE = 20;

  /**
   * One FunctionDef: its bytes, and what its signature says.
   *
   * @param bytes the serialized FunctionDef
   * @param inputs how many inputs its signature declares
   * @param resourceInputs how many of them are resource handles (variables)
   * @param outputs how many outputs its signature declares
   */
  public record Fn(byte[] bytes, int inputs, int resourceInputs, int outputs) {}

  public static SavedModelParts read(byte[] savedModel) throws InvalidProtocolBufferException {
    return walk(savedModel);
  }

  private static SavedModelParts walk(byte[] savedModel) throws InvalidProtocolBufferException {
    Map<String, Fn> library = new HashMap<>();
    Map<String, byte[]> nodes = new HashMap<>();
    int metaGraphs = 0;
    String version = "";
    WireReader model = WireReader.of(savedModel);
    for (int tag = model.readTag(); tag != 0; tag = model.readTag()) {
      if (!isMessage(tag, SAVED_MODEL_META_GRAPHS)) {
        model.skipField(tag);
        continue;
      }
      metaGraphs++;
      WireReader meta = WireReader.of(model.readByteArray());
      for (int t = meta.readTag(); t != 0; t = meta.readTag()) {
        if (isMessage(t, META_GRAPH_GRAPH_DEF)) {
          graph(WireReader.of(meta.readByteArray()), library, nodes);
        } else if (isMessage(t, META_GRAPH_META_INFO)) {
          version = name(meta.readByteArray(), META_INFO_VERSION);
        } else {
          meta.skipField(t);
        }
      }
    }
    return new SavedModelParts(library, nodes, metaGraphs, version);
  }

  private static void graph(WireReader graph, Map<String, Fn> library, Map<String, byte[]> nodes)
      throws InvalidProtocolBufferException {
    for (int t = graph.readTag(); t != 0; t = graph.readTag()) {
      if (isMessage(t, GRAPH_NODE)) {
        byte[] node = graph.readByteArray();
        nodes.put(name(node, NODE_NAME), node);
      } else if (isMessage(t, GRAPH_LIBRARY)) {
        WireReader lib = WireReader.of(graph.readByteArray());
        for (int l = lib.readTag(); l != 0; l = lib.readTag()) {
          if (isMessage(l, LIBRARY_FUNCTION)) {
            function(lib.readByteArray(), library);
          } else {
            lib.skipField(l);
          }
        }
      } else {
        graph.skipField(t);
      }
    }
  }

  /**
   * The serialized FunctionDef {@code def}'s signature name, and what its signature declares,
   * read from the wire format as {@link #read} reads them; an exception when it is malformed.
   */
  public static Map.Entry<String, Fn> describe(byte[] def) throws InvalidProtocolBufferException {
    Map<String, Fn> one = new HashMap<>();
    function(def, one);
    return one.entrySet().iterator().next();
  }

  /**
   * Whether a node of the serialized FunctionDef {@code def} may call a function: its op type is
   * one of {@code names}, or it has a function-valued attribute ({@code func}, or a list holding
   * one), whatever function that names. Read from the wire format: a definition that calls none
   * needs no parsing (nor renaming of references) before it goes to TensorFlow as bytes.
   */
  public static boolean mayCallFunctions(byte[] def, java.util.Set<String> names) throws InvalidProtocolBufferException {
    WireReader in = WireReader.of(def);
    for (int t = in.readTag(); t != 0; t = in.readTag()) {
      if (!isMessage(t, FUNCTION_NODE_DEF)) {
        in.skipField(t);
        continue;
      }
      WireReader node = WireReader.of(in.readByteArray());
      for (int n = node.readTag(); n != 0; n = node.readTag()) {
        if (isMessage(n, NODE_OP)) {
          if (names.contains(node.readStringRequireUtf8())) {
            return true;
          }
        } else if (isMessage(n, NODE_ATTR)) {
          WireReader entry = WireReader.of(node.readByteArray());
          for (int e = entry.readTag(); e != 0; e = entry.readTag()) {
            if (!isMessage(e, MAP_VALUE)) {
              entry.skipField(e);
            } else if (isFunctionValue(entry.readByteArray())) {
              return true;
            }
          }
        } else {
          node.skipField(n);
        }
      }
    }
    return false;
  }

  /** Whether a serialized AttrValue holds a function, or a list with one. */
  private static boolean isFunctionValue(byte[] value) throws InvalidProtocolBufferException {
    WireReader in = WireReader.of(value);
    for (int t = in.readTag(); t != 0; t = in.readTag()) {
      if (isMessage(t, ATTR_FUNC)) {
        return true;
      }
      if (!isMessage(t, ATTR_LIST)) {
        in.skipField(t);
        continue;
      }
      WireReader list = WireReader.of(in.readByteArray());
      for (int l = list.readTag(); l != 0; l = list.readTag()) {
        if (isMessage(l, LIST_FUNC)) {
          return true;
        }
        list.skipField(l);
      }
    }
    return false;
  }

  private static void function(byte[] def, Map<String, Fn> library) throws InvalidProtocolBufferException {
    WireReader in = WireReader.of(def);
    String name = "";
    int inputs = 0;
    int resources = 0;
    int outputs = 0;
    for (int t = in.readTag(); t != 0; t = in.readTag()) {
      if (!isMessage(t, FUNCTION_SIGNATURE)) {
        in.skipField(t);
        continue;
      }
      WireReader sig = WireReader.of(in.readByteArray());
      for (int s = sig.readTag(); s != 0; s = sig.readTag()) {
        if (isMessage(s, OP_NAME)) {
          name = sig.readStringRequireUtf8();
        } else if (isMessage(s, OP_INPUT_ARG)) {
          inputs++;
          resources += argType(sig.readByteArray()) == DT_RESOURCE ? 1 : 0;
        } else if (isMessage(s, OP_OUTPUT_ARG)) {
          outputs++;
          sig.skipField(s);
        } else {
          sig.skipField(s);
        }
      }
    }
    library.put(name, new Fn(def, inputs, resources, outputs));
  }

  /** The {@code type} of an ArgDef (0, DT_INVALID, when it has none). */
  private static int argType(byte[] arg) throws InvalidProtocolBufferException {
    WireReader in = WireReader.of(arg);
    int type = 0;
    for (int t = in.readTag(); t != 0; t = in.readTag()) {
      if (WireReader.fieldNumber(t) == ARG_TYPE && WireReader.wireType(t) == WireReader.VARINT) {
        type = in.readEnum();
      } else {
        in.skipField(t);
      }
    }
    return type;
  }

  /** String field {@code field} of a message ("" when absent, as protobuf reads it). */
  private static String name(byte[] message, int field) throws InvalidProtocolBufferException {
    WireReader in = WireReader.of(message);
    String name = "";
    for (int t = in.readTag(); t != 0; t = in.readTag()) {
      if (isMessage(t, field)) {
        name = in.readStringRequireUtf8();
      } else {
        in.skipField(t);
      }
    }
    return name;
  }

  private static boolean isMessage(int tag, int field) {
    return WireReader.fieldNumber(tag) == field
        && WireReader.wireType(tag) == WireReader.LENGTH_DELIMITED;
  }
}
