package dev.polyfn.internal.trace;

import dev.polyfn.TensorSpec;
import dev.polyfn.internal.JavaValues;
import dev.polyfn.internal.WholeFiles;
import dev.polyfn.internal.saved.BoundedFiles;
import dev.polyfn.internal.saved.Json;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;
import java.util.regex.Pattern;
import org.tensorflow.ndarray.Shape;
import org.tensorflow.types.TBfloat16;
import org.tensorflow.types.TBool;
import org.tensorflow.types.TFloat16;
import org.tensorflow.types.TFloat32;
import org.tensorflow.types.TFloat64;
import org.tensorflow.types.TInt32;
import org.tensorflow.types.TInt64;
import org.tensorflow.types.TString;
import org.tensorflow.types.TUint16;
import org.tensorflow.types.TUint8;
import org.tensorflow.types.family.TType;

/**
 * A signature profile file read back: each recorded signature as an example argument set (of
 * {@link TensorSpec}s, lists and maps of them, and Java values), and the number of calls recorded.
 * The format is documented in the guide ("Let Polyfn find the signature", docs/signatures.md).
 */
public final class SignatureProfile {
  private static final Map<String, Class<? extends TType>> DTYPES = Map.of(
      "FLOAT", TFloat32.class, "DOUBLE", TFloat64.class, "HALF", TFloat16.class, "BFLOAT16", TBfloat16.class,
      "INT32", TInt32.class, "INT64", TInt64.class, "UINT8", TUint8.class, "UINT16", TUint16.class,
      "BOOL", TBool.class, "STRING", TString.class);

  private final List<Map<String, ?>> examples;
  private final long calls;
  private final String function;
  /** Hex SHA-256 of the bytes these were parsed from: the trace cache's key holds it. */
  private final String digest;

  private SignatureProfile(List<Map<String, ?>> examples, long calls, String function, String digest) {
    this.examples = examples;
    this.calls = calls;
    this.function = function;
    this.digest = digest;
  }

  /**
   * Hex SHA-256 of the file's bytes this profile was parsed from: the trace cache keys entries by
   * it, so the key and the declarations its entries carry come from one read of the file (a
   * profile rewritten between two reads filed one profile's declarations under the other's key).
   */
  public String digest() {
    return digest;
  }

  public List<Map<String, ?>> examples() {
    return examples;
  }

  public long calls() {
    return calls;
  }

  /** The name of the function the profile was recorded for ({@code "function"}), or null if the file has none. */
  public String function() {
    return function;
  }

  /**
   * Writes the profile JSON {@code json} to {@code file}: to a new file next to it first, then
   * renamed over it, so that a process killed mid-write, or a reader at the same time, never
   * sees half a profile (which the next definition reading it would refuse).
   */
  public static void write(Path file, String json) {
    if (file.getFileName() == null || Files.isDirectory(file)) {
      throw new UncheckedIOException("cannot write the signature profile " + file,
          new java.nio.file.FileSystemException(file.toString(), null, "is a directory"));
    }
    // Created with the default permissions (Files.createTempFile's would be owner-only); a short
    // name of its own, as the profile's may be near the file system's length limit.
    Path temp = file.resolveSibling(".polyfn-profile-" + Long.toHexString(ThreadLocalRandom.current().nextLong()) + ".tmp");
    try {
      WholeFiles.write(file, temp, json.getBytes(StandardCharsets.UTF_8));
    } catch (IOException e) {
      throw new UncheckedIOException("cannot write the signature profile " + file, e);
    }
    WholeFiles.deleteStale(temp.toAbsolutePath().getParent(), TEMP);
  }

  /** The names {@link #write} gives its temporary files: what a killed writer left is deleted by the next. */
  private static final Pattern TEMP = Pattern.compile("\\.polyfn-profile-[0-9a-f]{1,16}\\.tmp");

  /** Reads {@code file}; a missing or malformed file is an IllegalArgumentException naming it. */
  public static SignatureProfile read(Path file) {
    String text;
    String digest;
    try {
      byte[] bytes = BoundedFiles.read(file, BoundedFiles.PROFILE);
      digest = java.util.HexFormat.of().formatHex(dev.polyfn.internal.Native.sha256(bytes));
      text = BoundedFiles.utf8(bytes);
    } catch (IOException e) {
      throw new IllegalArgumentException("signature profile " + file + ": cannot be read ("
          + (e instanceof java.nio.file.NoSuchFileException ? "missing" : e.getMessage()) + ")", e);
    }
    try {
      Map<?, ?> root = object("the document", new Json(text).document());
      if (!"polyfn-signature-profile".equals(root.get("format"))) {
        throw new IllegalArgumentException("not a Polyfn signature profile (\"format\" is not \"polyfn-signature-profile\")");
      }
      if (!Long.valueOf(1).equals(Json.integer(root.get("version")))) {
        throw new IllegalArgumentException("unsupported version " + root.get("version") + " (this Polyfn reads version 1)");
      }
      List<Map<String, ?>> examples = new ArrayList<>();
      List<?> signatures = list("signatures", root.get("signatures"));
      for (int i = 0; i < signatures.size(); i++) {
        String at = "signatures[" + i + "]";
        Map<?, ?> sig = object(at, signatures.get(i));
        if (sig.containsKey("count")) {
          count(at + ".count", sig.get("count"));
        }
        Map<String, Object> example = new LinkedHashMap<>();
        for (Map.Entry<?, ?> p : object(at + ".parameters", sig.get("parameters")).entrySet()) {
          String name = (String) p.getKey();
          example.put(name, value(at + ".parameters." + name, name, object(at + ".parameters." + name, p.getValue())));
        }
        examples.add(example);
      }
      if (examples.isEmpty()) {
        throw new IllegalArgumentException("it records no signature");
      }
      String function = root.containsKey("function") ? string("function", root.get("function")) : null;
      return new SignatureProfile(examples, count("calls", root.get("calls")), function, digest);
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException("signature profile " + file + ": " + e.getMessage(), e);
    }
  }

  private static Map<?, ?> object(String at, Object v) {
    if (!(v instanceof Map<?, ?> m)) {
      throw new IllegalArgumentException(at + ": expected an object, got " + Json.write(v));
    }
    return m;
  }

  private static List<?> list(String at, Object v) {
    if (!(v instanceof List<?> l)) {
      throw new IllegalArgumentException(at + ": expected an array, got " + Json.write(v));
    }
    return l;
  }

  private static String string(String at, Object v) {
    if (!(v instanceof String s)) {
      throw new IllegalArgumentException(at + ": expected a string, got " + Json.write(v));
    }
    return s;
  }

  private static long count(String at, Object v) {
    Long n = Json.integer(v);
    if (n == null || n < 0) {
      throw new IllegalArgumentException(at + ": expected an integer >= 0, got " + Json.write(v));
    }
    return n;
  }

  /** One recorded value of parameter {@code name} (at {@code at} in the file) as an example value. */
  private static Object value(String at, String name, Map<?, ?> v) {
    if (v.containsKey("dtype")) {
      Class<? extends TType> type = DTYPES.get(string(at + ".dtype", v.get("dtype")));
      if (type == null) {
        throw new IllegalArgumentException("parameter '" + name + "': dtype " + v.get("dtype") + " has no TensorFlow Java type");
      }
      Object dims = v.get("shape");
      return TensorSpec.of(type, dims == null ? Shape.unknown() : shape(at + ".shape", list(at + ".shape", dims)));
    }
    if (v.containsKey("list")) {
      List<Object> out = new ArrayList<>();
      List<?> items = list(at + ".list", v.get("list"));
      for (int i = 0; i < items.size(); i++) {
        out.add(value(at + ".list[" + i + "]", name, object(at + ".list[" + i + "]", items.get(i))));
      }
      return out;
    }
    if (v.containsKey("map")) {
      Map<String, Object> map = new LinkedHashMap<>();
      for (Map.Entry<?, ?> e : object(at + ".map", v.get("map")).entrySet()) {
        String k = at + ".map." + e.getKey();
        map.put((String) e.getKey(), value(k, name, object(k, e.getValue())));
      }
      return map;
    }
    if (v.containsKey("java")) {
      String cls = string(at + ".java", v.get("java"));
      if (v.get("value") == null) { // written so for a value whose text would not read back the same
        throw new IllegalArgumentException("parameter '" + name + "': a " + cls + " value (" + v.get("display")
            + ") cannot be restored from a profile (only numbers, booleans and strings of well-formed UTF-16)");
      }
      return javaValue(name, cls, string(at + ".value", v.get("value")));
    }
    if (v.get("unknown") instanceof String type) { // how the writer records a type it cannot restore
      throw new IllegalArgumentException("parameter '" + name + "' (at " + at + "): " + type + " cannot be restored from"
          + " a profile (only tensors, lists, maps and Java numbers, booleans and strings: a record, a SparseTensor,"
          + " a RaggedTensor or another composite is not); declare that parameter in the body instead");
    }
    throw new IllegalArgumentException("parameter '" + name + "' (at " + at + "): " + v.keySet()
        + " cannot be restored from a profile (only tensors, lists, maps and Java numbers, booleans and strings)");
  }

  /** A recorded shape: at most 254 dims, each -1 (unknown) or a size, with at most 2^63-1 elements. */
  private static Shape shape(String at, List<?> dims) {
    if (dims.size() > 254) {
      throw new IllegalArgumentException(at + ": " + dims.size() + " dimensions, more than TensorFlow's 254");
    }
    long[] out = new long[dims.size()];
    long elements = 1;
    for (int i = 0; i < out.length; i++) {
      Object d = dims.get(i);
      Long n = Json.integer(d);
      if (n == null || n < -1) {
        throw new IllegalArgumentException(at + "[" + i + "]: expected a size >= 0 or -1 (unknown), got " + Json.write(d));
      }
      out[i] = n;
      if (n >= 0) {
        try {
          elements = Math.multiplyExact(elements, n);
        } catch (ArithmeticException e) {
          throw new IllegalArgumentException(at + ": " + Json.write(dims) + " has more elements than a 64-bit count holds");
        }
      }
    }
    return Shape.of(out);
  }

  private static Object javaValue(String name, String cls, String repr) {
    try {
      return parsed(name, cls, repr);
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException("parameter '" + name + "': " + repr + " is no " + cls + " value");
    }
  }

  private static Object parsed(String name, String cls, String repr) {
    Object v = JavaValues.parse(cls, repr);
    if (v == null) {
      throw new IllegalArgumentException("parameter '" + name + "': a " + cls + " value (" + repr
          + ") cannot be restored from a profile (only numbers, booleans and strings)");
    }
    return v;
  }
}
