package dev.polyfn.bench;

import dev.polyfn.Function;
import dev.polyfn.MapFunction;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.tensorflow.ConcreteFunction;
import org.tensorflow.Graph;
import org.tensorflow.Operand;
import org.tensorflow.Session;
import org.tensorflow.Signature;
import org.tensorflow.Tensor;
import org.tensorflow.ndarray.Shape;
import org.tensorflow.ndarray.buffer.DataBuffers;
import org.tensorflow.op.Ops;
import org.tensorflow.op.core.Placeholder;
import org.tensorflow.types.TFloat32;

/**
 * The benchmark workloads, each one graph built the same way for every JVM contender (and, in
 * bench/python/bench_tf.py and native/tf/examples/floor.rs, for Python and the C API floor).
 * All inputs are float tensors filled with 1; weights follow {@link #weight(long)}.
 */
public final class Workload {
  /** Builds the single output {@code y} from the inputs, in input order. */
  interface Body {
    Operand<?> build(Ops tf, List<Operand<TFloat32>> xs);
  }

  public static final String[] NAMES = {
    "add2", "mlp", "matmul512", "args16", "list100", "map10", "shape_4B", "shape_64MiB"
  };

  /** How Polyfn takes the inputs: separate tensor parameters, one list, or one map. */
  enum Form { TENSORS, LIST, MAP }

  final String name;
  final String[] inputNames;
  final Shape[] shapes;
  final Body body;
  Form form = Form.TENSORS;

  private Workload(String name, String[] inputNames, Shape[] shapes, Body body) {
    this.name = name;
    this.inputNames = inputNames;
    this.shapes = shapes;
    this.body = body;
  }

  private static Workload scalars(String name, String prefix, int n) {
    String[] names = new String[n];
    Shape[] shapes = new Shape[n];
    for (int i = 0; i < n; i++) {
      names[i] = prefix + i;
      shapes[i] = Shape.scalar();
    }
    return new Workload(name, names, shapes, Workload::sum);
  }

  private static Operand<?> sum(Ops tf, List<Operand<TFloat32>> xs) {
    Operand<TFloat32> acc = xs.get(0);
    for (int i = 1; i < xs.size(); i++) {
      acc = tf.math.add(acc, xs.get(i));
    }
    return acc;
  }

  /** Deterministic weights, the same formula every contender uses. */
  static float weight(long i) {
    return ((i % 17) - 8) * 0.01f;
  }

  private static Operand<TFloat32> constant(Ops tf, long... dims) {
    Shape shape = Shape.of(dims);
    float[] values = new float[(int) shape.size()];
    for (int i = 0; i < values.length; i++) {
      values[i] = weight(i);
    }
    return tf.constant(shape, DataBuffers.of(values, true, false));
  }

  public static Workload get(String name) {
    switch (name) {
      case "add2":
        return new Workload(name, new String[] {"x"}, new Shape[] {Shape.scalar()},
            (tf, xs) -> tf.math.add(xs.get(0), tf.constant(2f)));
      case "mlp":
        return new Workload(name, new String[] {"x"}, new Shape[] {Shape.of(1, 64)}, (tf, xs) -> {
          Operand<TFloat32> h = tf.linalg.matMul(xs.get(0), constant(tf, 64, 64));
          h = tf.nn.relu(tf.math.add(h, constant(tf, 64)));
          return tf.math.add(tf.linalg.matMul(h, constant(tf, 64, 10)), constant(tf, 10));
        });
      case "matmul512":
        return new Workload(name, new String[] {"a", "b"}, new Shape[] {Shape.of(512, 512), Shape.of(512, 512)},
            (tf, xs) -> tf.linalg.matMul(xs.get(0), xs.get(1)));
      case "args16":
        return scalars(name, "x", 16);
      case "list100": {
        // Polyfn takes one list parameter (in.list), as Python takes a list; the graph-level
        // contenders take 100 graph inputs.
        Workload w = scalars(name, "x", 100);
        w.form = Form.LIST;
        return w;
      }
      case "map10": {
        // Polyfn takes one map parameter (in.map), as Python takes a dict.
        Workload w = scalars(name, "k", 10);
        w.form = Form.MAP;
        return w;
      }
      case "shape_4B":
        return new Workload(name, new String[] {"x"}, new Shape[] {Shape.of(1)}, (tf, xs) -> tf.shape(xs.get(0)));
      case "shape_64MiB":
        return new Workload(name, new String[] {"x"}, new Shape[] {Shape.of(1 << 24)}, (tf, xs) -> tf.shape(xs.get(0)));
      default:
        throw new IllegalArgumentException("unknown workload " + name + "; known: " + Arrays.toString(NAMES));
    }
  }

  /** Fresh input tensors (the caller closes them). */
  Map<String, Tensor> newInputs() {
    Map<String, Tensor> args = new LinkedHashMap<>();
    for (int i = 0; i < inputNames.length; i++) {
      float[] ones = new float[(int) shapes[i].size()];
      Arrays.fill(ones, 1f);
      args.put(inputNames[i], TFloat32.tensorOf(shapes[i], DataBuffers.of(ones, true, false)));
    }
    return args;
  }

  /** The Polyfn contender. */
  MapFunction polyfn() {
    return Function.define((tf, in) -> {
      List<Operand<TFloat32>> xs = new ArrayList<>();
      switch (form) {
        case LIST:
          xs.addAll(in.list("xs", TFloat32.class));
          break;
        case MAP:
          xs.addAll(in.map("m", TFloat32.class).values());
          break;
        default:
          for (String n : inputNames) {
            xs.add(in.input(n, TFloat32.class));
          }
      }
      return Map.of("y", body.build(tf, xs));
    });
  }

  /** The arguments of a Polyfn call over {@code inputs} (from {@link #newInputs}), in its form. */
  Map<String, ?> polyfnArgs(Map<String, Tensor> inputs) {
    switch (form) {
      case LIST:
        return Map.of("xs", List.copyOf(inputs.values()));
      case MAP:
        return Map.of("m", inputs);
      default:
        return inputs;
    }
  }

  /** The TensorFlow Java {@code ConcreteFunction} contender (static input shapes). */
  ConcreteFunction concrete() {
    return ConcreteFunction.create(tf -> {
      Signature.Builder sig = Signature.builder();
      List<Operand<TFloat32>> xs = placeholders(tf);
      for (int i = 0; i < inputNames.length; i++) {
        sig.input(inputNames[i], xs.get(i));
      }
      return sig.output("y", body.build(tf, xs)).build();
    });
  }

  List<Operand<TFloat32>> placeholders(Ops tf) {
    List<Operand<TFloat32>> xs = new ArrayList<>();
    for (int i = 0; i < inputNames.length; i++) {
      xs.add(tf.withName(inputNames[i]).placeholder(TFloat32.class, Placeholder.shape(shapes[i])));
    }
    return xs;
  }

  /** The graph and session of the TensorFlow Java {@code Session.runner()} contender. */
  static final class SessionGraph implements AutoCloseable {
    final Graph graph = new Graph();
    final List<Operand<TFloat32>> xs;
    final Operand<?> y;
    final Session session;

    SessionGraph(Workload w) {
      Ops tf = Ops.create(graph);
      xs = w.placeholders(tf);
      y = w.body.build(tf, xs);
      session = new Session(graph);
    }

    @Override
    public void close() {
      session.close();
      graph.close();
    }
  }
}
