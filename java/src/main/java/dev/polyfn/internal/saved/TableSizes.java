package dev.polyfn.internal.saved;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import org.tensorflow.proto.FunctionDef;
import org.tensorflow.proto.NodeDef;
import org.tensorflow.proto.TensorShapeProto;

/**
 * Bounds the sizing attributes of the lookup-table ops of a SavedModel's functions before
 * TensorFlow runs them: TensorFlow sizes a table by them before reading anything, and a size it
 * cannot allocate aborts the process (std::bad_alloc) or overflows a shape (a failed CHECK).
 * {@code vocab_size} of a text file initializer: the table reserves that many entries, so it must
 * be -1 (count the lines) or at most the lines the largest asset file the function reads can hold
 * (its bytes + 1).
 * {@code initial_num_buckets} of a dense table: at most {@link #MAX_BUCKETS}, and its bucket
 * tensors (buckets times the elements of {@code value_shape}) at most {@link #MAX_BUCKET_ELEMENTS}.
 */
final class TableSizes {
  /** 2^26 initial buckets: 512 times Python's default (2^17). */
  static final long MAX_BUCKETS = 1L << 26;
  /** Elements of a dense table's initial value buckets (buckets times the value's elements). */
  static final long MAX_BUCKET_ELEMENTS = 1L << 31;
  private static final Set<String> TEXT_FILE = Set.of("InitializeTableFromTextFileV2", "InitializeTableFromTextFile");
  private static final Set<String> DENSE = Set.of("MutableDenseHashTableV2", "MutableDenseHashTable",
      "AnonymousMutableDenseHashTable");

  private TableSizes() {}

  /**
   * Checks the table ops of {@code def} and of the library functions it calls, {@code called};
   * {@code assets}: the asset files {@code def} reads. The error names the node and attribute.
   */
  static void check(FunctionDef def, List<FunctionDef> called, List<Path> assets) {
    List<FunctionDef> all = new ArrayList<>(called);
    all.add(0, def);
    long lines = -1;
    for (FunctionDef d : all) {
      for (NodeDef n : d.getNodeDefList()) {
        String at = "node '" + n.getName() + "' (" + n.getOp() + ") of function " + d.getSignature().getName();
        if (TEXT_FILE.contains(n.getOp()) && n.containsAttr("vocab_size")) {
          long v = n.getAttrOrThrow("vocab_size").getI();
          if (lines < 0) {
            lines = maxLines(assets);
          }
          if (v < -1 || v > lines) {
            throw new IllegalArgumentException(at + ": attribute vocab_size is " + v + ", expected -1 (count the lines)"
                + " or at most " + lines + " (the lines " + (assets.isEmpty() ? "of no asset file"
                : "its asset file" + (assets.size() == 1 ? " " + assets.get(0) : "s " + assets) + " can hold: bytes + 1")
                + ")");
          }
        }
        if (DENSE.contains(n.getOp())) {
          long buckets = n.containsAttr("initial_num_buckets") ? n.getAttrOrThrow("initial_num_buckets").getI() : 1L << 17;
          if (buckets < 1 || buckets > MAX_BUCKETS) {
            throw new IllegalArgumentException(at + ": attribute initial_num_buckets is " + buckets
                + ", expected 1 to " + MAX_BUCKETS + " (2^26; Python's default is 2^17)");
          }
          long elements = n.containsAttr("value_shape") ? elements(n.getAttrOrThrow("value_shape").getShape()) : 1;
          if (elements > MAX_BUCKET_ELEMENTS / buckets) {
            throw new IllegalArgumentException(at + ": attributes initial_num_buckets (" + buckets + ") and value_shape"
                + " make buckets of more than " + MAX_BUCKET_ELEMENTS + " elements (2^31), more than Polyfn restores");
          }
        }
      }
    }
  }

  /** The lines the largest of {@code assets} can hold (bytes + 1); 1 without any. */
  private static long maxLines(List<Path> assets) {
    long max = 0;
    for (Path a : assets) {
      try {
        max = Math.max(max, Files.size(a));
      } catch (IOException e) {
        throw new IllegalArgumentException("asset file " + a + " cannot be read: " + e.getMessage(), e);
      }
    }
    return max + 1;
  }

  /** The elements of a shape, its unknown dimensions counted as 1; capped past MAX_BUCKET_ELEMENTS. */
  private static long elements(TensorShapeProto shape) {
    long n = 1;
    for (TensorShapeProto.Dim d : shape.getDimList()) {
      n *= Math.max(1, Math.min(d.getSize(), MAX_BUCKET_ELEMENTS + 1));
      if (n > MAX_BUCKET_ELEMENTS) {
        return MAX_BUCKET_ELEMENTS + 1;
      }
    }
    return n;
  }
}
