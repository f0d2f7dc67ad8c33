package dev.polyfn.tests;

import java.io.RandomAccessFile;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.tensorflow.proto.AttrValue;
import org.tensorflow.proto.DataType;
import org.tensorflow.proto.FunctionDef;
import org.tensorflow.proto.FunctionDefLibrary;
import org.tensorflow.proto.NodeDef;
import org.tensorflow.proto.TensorProto;
import org.tensorflow.proto.TensorShapeProto;

/**
 * The mutations of {@link FileFuzzer}, each applied to one file: byte flips, truncations, chunks
 * cut or repeated, size bombs (a link to /dev/zero, a 3 GiB sparse file), edits of JSON fields,
 * edits of FunctionDefs that keep the file well formed (and a cache entry's checksum right), and
 * cycles in a function library. Each returns its name, for the outcome table.
 */
final class FileMutations {
  private FileMutations() {}

  /** Numbers a hostile or damaged JSON field may hold instead of the right one. */
  private static final String[] NUMBERS = {"-5", "-1", "0", "1.5", "1e400", "9223372036854775807",
      "4611686018427387904", "300", "1.0", "-0"};
  private static final Pattern NUMBER = Pattern.compile("(?<=[:\\[,])\\s*-?\\d+(\\.\\d+)?([eE][+-]?\\d+)?");
  private static final Pattern STRING = Pattern.compile("\"([^\"\\\\]*)\"");

  /** A mutation of raw bytes, kept for every file kind. */
  static String bytes(Path file, Random r) throws Exception {
    int pick = r.nextInt(100);
    if (pick < 3) {
      Files.delete(file);
      Files.createSymbolicLink(file, Path.of("/dev/zero"));
      return "link to /dev/zero";
    }
    if (pick < 6) {
      try (RandomAccessFile f = new RandomAccessFile(file.toFile(), "rw")) {
        f.setLength(3L << 30);
      }
      return "3 GiB sparse";
    }
    byte[] b = Files.readAllBytes(file);
    if (b.length == 0) {
      return "empty";
    }
    if (pick < 50) {
      int flips = 1 + r.nextInt(4);
      for (int i = 0; i < flips; i++) {
        b[r.nextInt(b.length)] ^= (byte) (1 + r.nextInt(255));
      }
      Files.write(file, b);
      return "byte flips";
    }
    if (pick < 75) {
      Files.write(file, java.util.Arrays.copyOf(b, r.nextInt(b.length)));
      return "truncation";
    }
    int from = r.nextInt(b.length);
    int len = Math.min(b.length - from, 1 + r.nextInt(64));
    byte[] out = new byte[b.length + (pick < 88 ? -len : len)];
    if (pick < 88) {
      System.arraycopy(b, 0, out, 0, from);
      System.arraycopy(b, from + len, out, from, b.length - from - len);
      Files.write(file, out);
      return "chunk cut";
    }
    System.arraycopy(b, 0, out, 0, from + len);
    System.arraycopy(b, from, out, from + len, b.length - from);
    Files.write(file, out);
    return "chunk repeated";
  }

  /** A JSON document with one field edited: a number, a string, an element repeated or a key dropped. */
  static String json(String text, Random r, String[] out) {
    int pick = r.nextInt(4);
    if (pick == 0) {
      List<int[]> spans = spans(NUMBER.matcher(text));
      if (!spans.isEmpty()) {
        int[] s = spans.get(r.nextInt(spans.size()));
        out[0] = text.substring(0, s[0]) + NUMBERS[r.nextInt(NUMBERS.length)] + text.substring(s[1]);
        return "JSON number";
      }
    }
    List<int[]> strings = spans(STRING.matcher(text));
    if (strings.isEmpty()) {
      out[0] = text;
      return "JSON unchanged";
    }
    int[] s = strings.get(r.nextInt(strings.size()));
    if (pick == 1) {
      int[] other = strings.get(r.nextInt(strings.size()));
      String[] choices = {text.substring(other[0], other[1]), "\"LIST\"", "\"TENSOR\"", "\"\"", "\"x\"", "null", "1.0", "[]"};
      out[0] = text.substring(0, s[0]) + choices[r.nextInt(choices.length)] + text.substring(s[1]);
      return "JSON value";
    }
    int open = text.lastIndexOf('{', s[0]);
    int close = matching(text, open);
    if (open < 0 || close < 0) {
      out[0] = text;
      return "JSON unchanged";
    }
    String object = text.substring(open, close + 1);
    if (pick == 2 && open > 0 && (text.charAt(open - 1) == '[' || text.charAt(open - 1) == ',')) {
      out[0] = text.substring(0, close + 1) + "," + object + text.substring(close + 1);
      return "JSON element repeated";
    }
    // a key and its value dropped: from the string to the next comma at this level
    int end = text.indexOf(',', s[1]);
    if (end < 0 || end > close) {
      out[0] = text;
      return "JSON unchanged";
    }
    out[0] = text.substring(0, s[0]) + text.substring(end + 1);
    return "JSON key dropped";
  }

  private static List<int[]> spans(Matcher m) {
    List<int[]> out = new ArrayList<>();
    while (m.find()) {
      out.add(new int[] {m.start(), m.end()});
    }
    return out;
  }

  private static int matching(String text, int open) {
    if (open < 0) {
      return -1;
    }
    int depth = 0;
    boolean string = false;
    for (int i = open; i < text.length(); i++) {
      char c = text.charAt(i);
      if (c == '"' && text.charAt(i - 1) != '\\') {
        string = !string;
      } else if (!string && (c == '{' || c == '[')) {
        depth++;
      } else if (!string && (c == '}' || c == ']') && --depth == 0) {
        return i;
      }
    }
    return -1;
  }

  /** A function library with one well-formed but damaged or hostile edit. */
  static FunctionDefLibrary functions(FunctionDefLibrary lib, Random r, String[] name) {
    if (lib.getFunctionCount() == 0) {
      name[0] = "no functions";
      return lib;
    }
    int pick = r.nextInt(11);
    if (pick == 10 && lib.getFunctionCount() > 2) {
      try {
        name[0] = "cycle";
        return FileFixtures.cycle(lib);
      } catch (AssertionError e) {
        pick = r.nextInt(10);
      }
    }
    FunctionDefLibrary.Builder b = lib.toBuilder();
    FunctionDef.Builder f = b.getFunctionBuilder(r.nextInt(b.getFunctionCount()));
    if (f.getNodeDefCount() == 0) {
      name[0] = "no nodes";
      return lib;
    }
    NodeDef.Builder n = f.getNodeDefBuilder(r.nextInt(f.getNodeDefCount()));
    switch (pick % 10) {
      case 0 -> {
        n.setOp(r.nextBoolean() ? "NoSuchOp" : f.getNodeDef(r.nextInt(f.getNodeDefCount())).getOp());
        name[0] = "op type";
      }
      case 1 -> {
        TensorShapeProto.Builder shape = TensorShapeProto.newBuilder();
        long[] sizes = {-3, -1, 0, 1L << 40, 7};
        for (int i = r.nextInt(3); i > 0; i--) {
          shape.addDim(TensorShapeProto.Dim.newBuilder().setSize(sizes[r.nextInt(sizes.length)]));
        }
        DataType dtype = DataType.forNumber(1 + r.nextInt(23));
        TensorProto.Builder t = TensorProto.newBuilder().setDtype(dtype == null ? DataType.DT_FLOAT : dtype).setTensorShape(shape);
        if (r.nextBoolean()) {
          t.setTensorContent(com.google.protobuf.ByteString.copyFrom(new byte[r.nextInt(16)]));
        } else {
          t.addIntVal(r.nextInt());
        }
        n.putAttr("value", AttrValue.newBuilder().setTensor(t).build());
        name[0] = "tensor value";
      }
      case 2 -> {
        String key = n.getAttrCount() == 0 ? "T" : new ArrayList<>(n.getAttrMap().keySet()).get(r.nextInt(n.getAttrCount()));
        AttrValue[] values = {AttrValue.newBuilder().setType(DataType.DT_INT32).build(),
            AttrValue.newBuilder().setS(com.google.protobuf.ByteString.copyFromUtf8("x")).build(),
            AttrValue.newBuilder().setI(-1).build(),
            AttrValue.newBuilder().setShape(TensorShapeProto.newBuilder().setUnknownRank(true)
                .addDim(TensorShapeProto.Dim.newBuilder().setSize(-9))).build(),
            AttrValue.getDefaultInstance()};
        n.putAttr(key, values[r.nextInt(values.length)]);
        name[0] = "attribute value";
      }
      case 3 -> {
        if (n.getAttrCount() > 0) {
          n.removeAttr(new ArrayList<>(n.getAttrMap().keySet()).get(r.nextInt(n.getAttrCount())));
        }
        name[0] = "attribute dropped";
      }
      case 4 -> {
        if (n.getInputCount() > 0) {
          n.setInput(r.nextInt(n.getInputCount()), r.nextBoolean() ? "nowhere:0" : f.getNodeDef(r.nextInt(f.getNodeDefCount())).getName());
        } else {
          n.addInput(f.getNodeDef(r.nextInt(f.getNodeDefCount())).getName());
        }
        name[0] = "input rewired";
      }
      case 5 -> {
        String other = lib.getFunction(r.nextInt(lib.getFunctionCount())).getSignature().getName();
        for (var a : new ArrayList<>(n.getAttrMap().entrySet())) {
          if (a.getValue().hasFunc()) {
            n.putAttr(a.getKey(), a.getValue().toBuilder().setFunc(a.getValue().getFunc().toBuilder().setName(other)).build());
          }
        }
        name[0] = "function attribute rewired";
      }
      case 6 -> {
        f.removeNodeDef(r.nextInt(f.getNodeDefCount()));
        name[0] = "node dropped";
      }
      case 8 -> {
        // A string constant whose one long value TensorFlow repeats over a huge shape (4 GiB
        // from 4 KiB), or a numeric one filled from a single value: memory from nothing.
        boolean text = r.nextBoolean();
        TensorProto.Builder t = TensorProto.newBuilder()
            .setDtype(text ? DataType.DT_STRING : DataType.DT_FLOAT)
            .setTensorShape(TensorShapeProto.newBuilder().addDim(TensorShapeProto.Dim.newBuilder()
                .setSize(text ? 1_000_000 : 1L << 30)));
        if (text) {
          t.addStringVal(com.google.protobuf.ByteString.copyFrom(new byte[4096]));
        } else {
          t.addFloatVal(1f);
        }
        n.setOp("Const").clearInput().putAttr("dtype", AttrValue.newBuilder().setType(t.getDtype()).build())
            .putAttr("value", AttrValue.newBuilder().setTensor(t).build());
        name[0] = "constant filled past the limit";
      }
      case 9 -> {
        // The function's own attributes and its arguments': shapes TensorFlow would trust.
        AttrValue shapes = AttrValue.newBuilder().setList(AttrValue.ListValue.newBuilder()
            .addShape(TensorShapeProto.newBuilder().addDim(TensorShapeProto.Dim.newBuilder().setSize(-5)))).build();
        if (r.nextBoolean()) {
          f.putAttr("_input_shapes", shapes);
        } else {
          f.putArgAttr(0, FunctionDef.ArgAttrs.newBuilder().putAttr("_output_shapes", shapes).build());
        }
        name[0] = "function or argument attribute";
      }
      default -> {
        f.putRet(f.getRetCount() > 0 && r.nextBoolean() ? f.getRetMap().keySet().iterator().next() : "extra",
            f.getNodeDef(r.nextInt(f.getNodeDefCount())).getName() + ":output:0");
        name[0] = "output rewired";
      }
    }
    return b.build();
  }

  /** A trace cache entry with one field edited, its checksum kept right. */
  static String entry(Path file, Random r) throws Exception {
    CacheEntryFile e = CacheEntryFile.read(file);
    int pick = r.nextInt(6);
    String name;
    switch (pick) {
      case 0 -> {
        switch (r.nextInt(4)) {
          case 0 -> e.outputs.clear();
          case 1 -> e.outputs.add(e.outputs.isEmpty() ? "z" : e.outputs.get(0));
          case 2 -> e.outputs.set(0, "");
          default -> e.outputs.add("extra");
        }
        name = "entry output names";
      }
      case 1 -> {
        CacheEntryFile.Param p = e.params.get(0);
        switch (r.nextInt(4)) {
          case 0 -> p.kind = p.kind.equals("TENSOR") ? "LIST" : "TENSOR";
          case 1 -> e.params.add(p);
          case 2 -> p.name = "renamed";
          default -> p.optional = !p.optional;
        }
        name = "entry parameters";
      }
      case 2, 3 -> {
        String[] out = new String[1];
        boolean declared = r.nextBoolean();
        String what = json(declared ? e.declared : e.traced, r, out);
        if (declared) {
          e.declared = out[0];
        } else {
          e.traced = out[0];
        }
        name = "entry types: " + what;
      }
      default -> {
        FunctionDefLibrary all = FunctionDefLibrary.newBuilder().addFunction(FunctionDef.parseFrom(e.def))
            .mergeFrom(FunctionDefLibrary.parseFrom(e.library)).build();
        String[] what = new String[1];
        FunctionDefLibrary edited = functions(all, r, what);
        e.def = edited.getFunction(0).toByteArray();
        e.library = FunctionDefLibrary.newBuilder().addAllFunction(edited.getFunctionList().subList(1, edited.getFunctionCount()))
            .build().toByteArray();
        name = "entry function: " + what[0];
      }
    }
    e.write(file);
    return name;
  }

  /** A text file with one JSON field edited. */
  static String jsonFile(Path file, Random r) throws Exception {
    String[] out = new String[1];
    String what = json(Files.readString(file, StandardCharsets.UTF_8), r, out);
    Files.writeString(file, out[0]);
    return what;
  }
}
