package dev.polyfn.tests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.polyfn.Function;
import dev.polyfn.FunctionOptions;
import dev.polyfn.MapBody;
import dev.polyfn.MapFunction;
import dev.polyfn.Outputs;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.tensorflow.ndarray.StdArrays;
import org.tensorflow.types.TFloat32;

/**
 * A trace cache entry that lists more output names than its function has outputs (its checksum
 * made right) must not make a call read past what the native call wrote into the reused result
 * array (it read an earlier call's freed tensors: SIGSEGV). The call is refused with a clear
 * exception and the function stays usable; if the entry is refused when it is loaded instead, the
 * signature is traced again. Run in child JVMs, so that a crash fails the test.
 */
class OutputCountMismatchTest {

  /** The body the entry is written for (a static lambda: the cache key is its class file). */
  static final class Body {
    static final MapBody BODY = (tf, in) -> Map.of("y",
        tf.math.add(tf.math.mul(in.input("x", TFloat32.class), tf.constant(2f)), tf.constant(1f)));
  }

  /** Child JVM: args = cache dir, "write" or "read". */
  public static void main(String[] args) throws Exception {
    FunctionOptions options = FunctionOptions.defaults().withName("mismatch").withTraceCache(Path.of(args[0]), "v1");
    if (args[1].equals("write")) {
      try (MapFunction f = Function.define(Body.BODY, options); TFloat32 x = TFloat32.vectorOf(1f, 2f, 3f)) {
        f.call(Map.of("x", x)).close();
      }
      return; // the entry is written when the JVM exits
    }
    try (TFloat32 x = TFloat32.vectorOf(1f, 2f, 3f); TFloat32 x2 = TFloat32.vectorOf(1f, 2f)) {
      // Fills this thread's result array with the addresses of four outputs, freed right after:
      // what a call that reads too far would find (the second call is a cached one, which writes
      // into the reused array).
      try (MapFunction wide = Function.define((tf, in) -> {
            var v = in.input("x", TFloat32.class);
            return Map.of("a", tf.math.neg(v), "b", tf.math.square(v), "c", tf.math.abs(v), "d", tf.math.exp(v));
          })) {
        for (int i = 0; i < 2; i++) {
          try (Outputs out = wide.call(Map.of("x", x))) {
            System.out.println("wide " + out.size());
          }
        }
      }
      try (MapFunction f = Function.define(Body.BODY, options)) {
        try (Outputs out = f.call(Map.of("x", x))) {
          System.out.println("returned " + out.names() + " " + Arrays.toString(StdArrays.array1dCopyOf(out.get("y", TFloat32.class))));
        } catch (IllegalStateException e) {
          System.out.println("refused: " + e.getMessage());
        }
        try (Outputs out = f.call(Map.of("x", x2))) {
          System.out.println("good " + Arrays.toString(StdArrays.array1dCopyOf(out.get("y", TFloat32.class))));
        }
        System.out.println("traceCount " + f.traceCount());
      }
    }
  }

  /** Rewrites the entry's output names as {@code names}, with a checksum that matches again. */
  private static void rewriteNames(Path file, List<String> names) throws Exception {
    DataInputStream in = new DataInputStream(new ByteArrayInputStream(Files.readAllBytes(file)));
    byte[] magic = in.readNBytes("polyfn-trace-cache\n".length());
    int format = in.readInt();
    in.readNBytes(32); // the old digest
    byte[] payload = in.readNBytes(in.readInt());
    DataInputStream p = new DataInputStream(new ByteArrayInputStream(payload));
    ByteArrayOutputStream rewritten = new ByteArrayOutputStream();
    DataOutputStream out = new DataOutputStream(rewritten);
    out.writeUTF(p.readUTF()); // key
    int params = p.readInt();
    out.writeInt(params);
    for (int i = 0; i < params; i++) {
      out.writeUTF(p.readUTF()); // name
      out.writeUTF(p.readUTF()); // kind
      out.writeUTF(p.readUTF()); // tensor type
      int rank = p.readInt();
      out.writeInt(rank);
      for (int d = 0; d < rank; d++) {
        out.writeLong(p.readLong());
      }
      out.writeBoolean(p.readBoolean());
    }
    int old = p.readInt();
    for (int i = 0; i < old; i++) {
      p.readUTF();
    }
    out.writeInt(names.size());
    for (String n : names) {
      out.writeUTF(n);
    }
    out.write(p.readAllBytes()); // types, function, library: unchanged
    byte[] body = rewritten.toByteArray();
    ByteArrayOutputStream file2 = new ByteArrayOutputStream();
    DataOutputStream f = new DataOutputStream(file2);
    f.write(magic);
    f.writeInt(format);
    f.write(MessageDigest.getInstance("SHA-256").digest(body));
    f.writeInt(body.length);
    f.write(body);
    Files.write(file, file2.toByteArray());
  }

  @Test
  void anEntryWithMoreOutputNamesThanOutputsIsRefusedNotACrash(@TempDir Path dir) throws Exception {
    ChildJvm.run(OutputCountMismatchTest.class, dir.toString(), "write");
    List<Path> entries;
    try (Stream<Path> files = Files.list(dir)) {
      entries = files.filter(f -> f.toString().endsWith(".polyfn-trace")).toList();
    }
    assertEquals(1, entries.size(), "one entry written: " + entries);
    rewriteNames(entries.get(0), List.of("y", "extra"));

    String out = ChildJvm.run(OutputCountMismatchTest.class, dir.toString(), "read");
    // The function stays usable: another signature traces and runs.
    assertTrue(out.contains("good [3.0, 5.0]"), out);
    if (out.contains("refused: ")) {
      String message = out.lines().filter(l -> l.startsWith("refused: ")).findFirst().orElseThrow();
      assertTrue(message.contains("'mismatch'") && message.contains("returned 1 outputs")
          && message.contains("2 output names") && message.contains("[y, extra]"), message);
      assertTrue(out.contains("traceCount 1"), out);
    } else {
      // Refused when it was loaded (a check of the entry's names against its function): traced again.
      assertTrue(out.contains("returned [y] [3.0, 5.0, 7.0]"), out);
      assertTrue(out.contains("traceCount 2"), out);
    }
  }
}
