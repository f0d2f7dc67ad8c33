package dev.polyfn.internal.trace;

import com.google.protobuf.InvalidProtocolBufferException;
import dev.polyfn.internal.JavaValues;
import dev.polyfn.internal.Native;
import dev.polyfn.internal.saved.BoundedFiles;
import dev.polyfn.internal.saved.FunctionLibrary;
import dev.polyfn.internal.saved.RestoreChecks;
import dev.polyfn.internal.saved.SavedModelParts;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;
import org.tensorflow.ndarray.Shape;
import org.tensorflow.proto.FunctionDef;
import org.tensorflow.proto.FunctionDefLibrary;
import org.tensorflow.types.family.TType;

/**
 * One trace cache entry and its file format: a header ({@code polyfn-trace-cache}, the format,
 * the SHA-256 and length of the payload), then the payload: the key, the parameter list, the
 * output names, the declared and traced types (JSON), the outputs' static shapes (JSON, as {@code
 * Native.exportConcreteTypes} gives them; empty: not recorded), the FunctionDef and the library
 * functions it refers to. Written by {@link #bytes}, read and checked by {@link #read}.
 */
record TraceCacheEntry(Param[] params, String[] outputNames, String declared, String traced, String outputShapes,
    byte[] def, byte[] library) {
  private static final byte[] MAGIC = "polyfn-trace-cache\n".getBytes(StandardCharsets.US_ASCII);
  /**
   * 2: entries hold the function library (control-flow branches) after the FunctionDef; 3: and
   * the outputs' static shapes after the traced type, so a save of a warm-started function tells
   * Python its outputs' shapes.
   */
  private static final int FORMAT = 3;

  /** The entry's file as {@link #read} reads it, for a function of {@code key}. */
  byte[] bytes(String key) {
    byte[] payload = payload(key);
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    DataOutputStream out = new DataOutputStream(bytes);
    try {
      out.write(MAGIC);
      out.writeInt(FORMAT);
      out.write(sha256(payload));
      out.writeInt(payload.length);
      out.write(payload);
    } catch (IOException e) {
      throw new IllegalStateException(e); // a ByteArrayOutputStream does not fail
    }
    return bytes.toByteArray();
  }

  private byte[] payload(String key) {
    try {
      ByteArrayOutputStream bytes = new ByteArrayOutputStream();
      DataOutputStream out = new DataOutputStream(bytes);
      out.writeUTF(key);
      out.writeInt(params.length);
      for (Param p : params) {
        out.writeUTF(p.name());
        out.writeUTF(p.kind().name());
        // The tensor class; a Java-value parameter's declared class (one with a text form).
        out.writeUTF(p.kind() == Param.Kind.JAVA ? p.javaClass().getName() : p.tensorType() == null ? "" : p.tensorType().getName());
        Shape s = p.shape();
        out.writeInt(s == null ? -2 : s.isUnknown() ? -1 : s.numDimensions());
        if (s != null && !s.isUnknown()) {
          for (long d : s.asArray()) {
            out.writeLong(d);
          }
        }
        out.writeBoolean(p.optional());
      }
      out.writeInt(outputNames.length);
      for (String n : outputNames) {
        out.writeUTF(n);
      }
      writeBytes(out, declared.getBytes(StandardCharsets.UTF_8));
      writeBytes(out, traced.getBytes(StandardCharsets.UTF_8));
      // Native.exportConcreteTypes gives "null" for a definition that recorded no shapes.
      String shapes = outputShapes == null || outputShapes.equals("null") ? "" : outputShapes;
      writeBytes(out, shapes.getBytes(StandardCharsets.UTF_8));
      writeBytes(out, def);
      writeBytes(out, library);
      return bytes.toByteArray();
    } catch (IOException e) {
      throw new IllegalStateException(e); // a ByteArrayOutputStream does not fail
    }
  }

  /**
   * The entry's function and library, renamed for this process; IllegalArgumentException when
   * either does not parse or a function the main one refers to is missing.
   */
  FunctionLibrary.Restorable restorable() {
    try {
      // Most entries call no other function: passed on as bytes, as Function.load does, since
      // the first use of protobuf's generated message classes would cost more than the restore.
      if (library.length == 0) {
        Map.Entry<String, SavedModelParts.Fn> main = SavedModelParts.describe(def);
        if (!SavedModelParts.mayCallFunctions(def, Set.of(main.getKey()))) {
          RestoreChecks.outputNames(outputNames, main.getValue().outputs());
          RestoreChecks.inputs(traced, main.getValue().inputs());
          return new FunctionLibrary.Restorable(def, library);
        }
      }
    } catch (InvalidProtocolBufferException x) {
      throw new IllegalArgumentException("its function does not parse: " + x.getMessage());
    }
    FunctionDef main;
    Map<String, FunctionDef> functions = new HashMap<>();
    try {
      main = FunctionDef.parseFrom(def);
      FunctionDefLibrary.parseFrom(library).getFunctionList().forEach(d -> functions.put(d.getSignature().getName(), d));
    } catch (InvalidProtocolBufferException x) {
      throw new IllegalArgumentException("its function or function library does not parse: " + x.getMessage());
    }
    RestoreChecks.outputNames(outputNames, main.getSignature().getOutputArgCount());
    RestoreChecks.inputs(traced, main.getSignature().getInputArgCount());
    return FunctionLibrary.forRestore(main, FunctionLibrary.reachable(main, functions, "the entry"));
  }

  /** Reads and checks one entry; any problem is an exception whose message says what is wrong. */
  static TraceCacheEntry read(Path file, String key) throws IOException {
    DataInputStream in = new DataInputStream(new ByteArrayInputStream(BoundedFiles.read(file, BoundedFiles.CACHE_ENTRY)));
    try {
      byte[] magic = in.readNBytes(MAGIC.length);
      if (!Arrays.equals(magic, MAGIC)) {
        throw new IOException("not a Polyfn trace cache entry");
      }
      int format = in.readInt();
      if (format != FORMAT) {
        throw new IOException("format " + format + ", expected " + FORMAT);
      }
      byte[] digest = in.readNBytes(32);
      int length = in.readInt();
      byte[] payload = in.readNBytes(Math.max(0, length));
      if (length < 0 || payload.length != length || in.available() != 0 || !Arrays.equals(digest, sha256(payload))) {
        throw new IOException("checksum mismatch: the file is corrupt or truncated");
      }
      return parse(new DataInputStream(new ByteArrayInputStream(payload)), key);
    } catch (EOFException e) {
      throw new IOException("truncated");
    }
  }

  private static TraceCacheEntry parse(DataInputStream in, String key) throws IOException {
    if (!in.readUTF().equals(key)) {
      throw new IOException("it belongs to another function or body");
    }
    Param[] params = new Param[count(in)];
    for (int i = 0; i < params.length; i++) {
      String name = in.readUTF();
      Param.Kind kind = Param.Kind.valueOf(in.readUTF());
      // NEST: lists, maps and built-in composites of tensors (TraceCacheNests checks the type).
      if (kind == Param.Kind.VARIABLE) {
        throw new IOException("parameter kind " + kind + " is never cached");
      }
      String type = in.readUTF();
      if (kind == Param.Kind.JAVA) {
        Class<?> cls = JavaValues.declaredClass(type);
        // No shape, no default (a parameter with a default is never cached).
        if (cls == null || in.readInt() != -2 || in.readBoolean()) {
          throw new IOException("Java-value parameter '" + name + "' has class " + type + ", a shape or a default,"
              + " which is never cached");
        }
        params[i] = new Param(name, kind, null, cls, null, false, null);
        continue;
      }
      int rank = in.readInt();
      Shape shape = rank == -2 ? null : rank == -1 ? Shape.unknown() : Shape.of(longs(in, rank));
      if (kind == Param.Kind.NEST && (!type.isEmpty() || shape != null)) {
        throw new IOException("nest parameter '" + name + "' has a tensor type or shape, which a nest never declares");
      }
      params[i] = new Param(name, kind, type.isEmpty() ? null : tensorType(type), null, shape, in.readBoolean(), null);
    }
    String[] names = new String[count(in)];
    for (int i = 0; i < names.length; i++) {
      names[i] = in.readUTF();
    }
    String declared = new String(readBytes(in), StandardCharsets.UTF_8);
    String traced = new String(readBytes(in), StandardCharsets.UTF_8);
    String shapes = new String(readBytes(in), StandardCharsets.UTF_8); // checked by Native.restoreConcrete
    byte[] def = readBytes(in);
    return new TraceCacheEntry(params, names, declared, traced, shapes.isEmpty() ? null : shapes, def, readBytes(in));
  }

  private static Class<? extends TType> tensorType(String name) throws IOException {
    try {
      return Class.forName(name, false, TType.class.getClassLoader()).asSubclass(TType.class);
    } catch (ClassNotFoundException | ClassCastException e) {
      throw new IOException("unknown tensor type " + name);
    }
  }

  private static long[] longs(DataInputStream in, int n) throws IOException {
    if (n > 254) {
      throw new IOException("rank " + n + " is beyond TensorFlow's limit");
    }
    long[] dims = new long[n];
    for (int i = 0; i < n; i++) {
      dims[i] = in.readLong();
    }
    return dims;
  }

  private static int count(DataInputStream in) throws IOException {
    int n = in.readInt();
    if (n < 0 || n > in.available()) {
      throw new IOException("malformed: a count of " + n);
    }
    return n;
  }

  private static void writeBytes(DataOutputStream out, byte[] b) throws IOException {
    out.writeInt(b.length);
    out.write(b);
  }

  private static byte[] readBytes(DataInputStream in) throws IOException {
    byte[] b = in.readNBytes(count(in));
    return b;
  }

  /** Native: Java's MessageDigest costs 30 to 40 ms on its first use in a process. */
  private static byte[] sha256(byte[] data) {
    return Native.sha256(data);
  }
}
