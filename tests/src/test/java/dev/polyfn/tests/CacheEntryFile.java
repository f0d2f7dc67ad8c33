package dev.polyfn.tests;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.List;

/**
 * A trace cache entry file taken apart and put back together with a correct SHA-256, so tests
 * can edit its fields as a damaged or hostile writer would (the format of TraceCache, version 3).
 */
final class CacheEntryFile {
  static final byte[] MAGIC = "polyfn-trace-cache\n".getBytes(StandardCharsets.US_ASCII);

  /** One parameter: name, kind (TENSOR, LIST, MAP), tensor class name ("" for none), dims (null: undeclared). */
  static final class Param {
    String name;
    String kind;
    String type;
    int rank;
    long[] dims;
    boolean optional;
  }

  int format;
  String key;
  final List<Param> params = new ArrayList<>();
  final List<String> outputs = new ArrayList<>();
  String declared;
  String traced;
  String outputShapes;
  byte[] def;
  byte[] library;

  static CacheEntryFile read(Path file) throws IOException {
    DataInputStream in = new DataInputStream(new ByteArrayInputStream(Files.readAllBytes(file)));
    in.readNBytes(MAGIC.length);
    CacheEntryFile e = new CacheEntryFile();
    e.format = in.readInt();
    in.readNBytes(32);
    DataInputStream p = new DataInputStream(new ByteArrayInputStream(in.readNBytes(in.readInt())));
    e.key = p.readUTF();
    int n = p.readInt();
    for (int i = 0; i < n; i++) {
      Param q = new Param();
      q.name = p.readUTF();
      q.kind = p.readUTF();
      q.type = p.readUTF();
      q.rank = p.readInt();
      q.dims = new long[Math.max(0, q.rank)];
      for (int d = 0; d < q.dims.length; d++) {
        q.dims[d] = p.readLong();
      }
      q.optional = p.readBoolean();
      e.params.add(q);
    }
    int names = p.readInt();
    for (int i = 0; i < names; i++) {
      e.outputs.add(p.readUTF());
    }
    e.declared = new String(p.readNBytes(p.readInt()), StandardCharsets.UTF_8);
    e.traced = new String(p.readNBytes(p.readInt()), StandardCharsets.UTF_8);
    e.outputShapes = new String(p.readNBytes(p.readInt()), StandardCharsets.UTF_8);
    e.def = p.readNBytes(p.readInt());
    e.library = p.readNBytes(p.readInt());
    return e;
  }

  /** The payload, as TraceCache writes it. */
  byte[] payload() throws IOException {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    DataOutputStream out = new DataOutputStream(bytes);
    out.writeUTF(key);
    out.writeInt(params.size());
    for (Param q : params) {
      out.writeUTF(q.name);
      out.writeUTF(q.kind);
      out.writeUTF(q.type);
      out.writeInt(q.rank);
      for (long d : q.dims) {
        out.writeLong(d);
      }
      out.writeBoolean(q.optional);
    }
    out.writeInt(outputs.size());
    for (String o : outputs) {
      out.writeUTF(o);
    }
    for (byte[] b : new byte[][] {declared.getBytes(StandardCharsets.UTF_8), traced.getBytes(StandardCharsets.UTF_8),
        outputShapes.getBytes(StandardCharsets.UTF_8), def, library}) {
      out.writeInt(b.length);
      out.write(b);
    }
    return bytes.toByteArray();
  }

  /** Writes the entry with a checksum that matches its (possibly edited) payload. */
  void write(Path file) throws Exception {
    Files.write(file, wrap(format, payload()));
  }

  /** A whole entry file around {@code payload}, its checksum right. */
  static byte[] wrap(int format, byte[] payload) throws Exception {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    DataOutputStream out = new DataOutputStream(bytes);
    out.write(MAGIC);
    out.writeInt(format);
    out.write(MessageDigest.getInstance("SHA-256").digest(payload));
    out.writeInt(payload.length);
    out.write(payload);
    return bytes.toByteArray();
  }
}
