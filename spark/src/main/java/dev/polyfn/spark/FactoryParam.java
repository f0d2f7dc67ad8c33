package dev.polyfn.spark;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.ObjectInputStream;
import java.io.ObjectOutputStream;
import java.io.ObjectStreamClass;
import java.util.Base64;
import org.apache.spark.ml.param.Param;
import org.apache.spark.ml.param.Params;

/**
 * A {@link FunctionFactory} parameter that a saved pipeline keeps: Spark ML writes parameters as
 * JSON, so the factory is written as its Java serialization in Base64 (the form Spark already
 * ships it to executors in). Loading it needs the factory's class on the class path, as running
 * it does. Reading it back is Java deserialization, which runs code of the classes it names: load
 * only pipelines you trust (as with Spark's own Java-serialized state), never one from an
 * untrusted source.
 */
final class FactoryParam extends Param<FunctionFactory> {
  private static final long serialVersionUID = 1L;

  FactoryParam(Params parent, String name, String doc) {
    super(parent, name, doc);
  }

  @Override
  public String jsonEncode(FunctionFactory factory) {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    try (ObjectOutputStream out = new ObjectOutputStream(bytes)) {
      out.writeObject(factory);
    } catch (IOException e) {
      throw new IllegalArgumentException("param " + name() + ": the factory cannot be serialized to be saved ("
          + e + ")", e);
    }
    return '"' + Base64.getEncoder().encodeToString(bytes.toByteArray()) + '"';
  }

  @Override
  public FunctionFactory jsonDecode(String json) {
    String text = json.strip();
    if (text.length() < 2 || text.charAt(0) != '"' || text.charAt(text.length() - 1) != '"') {
      throw new IllegalArgumentException("param " + name() + ": expected a JSON string of Base64, got " + json);
    }
    byte[] bytes;
    try {
      bytes = Base64.getDecoder().decode(text.substring(1, text.length() - 1));
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException("param " + name() + ": the saved factory is not Base64 (" + e.getMessage() + ")", e);
    }
    try (ObjectInputStream in = new ContextClassLoaderInput(new ByteArrayInputStream(bytes))) {
      return (FunctionFactory) in.readObject();
    } catch (IOException | ClassNotFoundException | ClassCastException e) {
      throw new IllegalArgumentException("param " + name() + ": the saved factory cannot be read back (" + e
          + "); its class must be on the class path of the JVM that loads the pipeline", e);
    }
  }

  /** Resolves classes with the thread's context class loader, which sees the application's jars. */
  private static final class ContextClassLoaderInput extends ObjectInputStream {
    ContextClassLoaderInput(InputStream in) throws IOException {
      super(in);
    }

    @Override
    protected Class<?> resolveClass(ObjectStreamClass desc) throws IOException, ClassNotFoundException {
      ClassLoader loader = Thread.currentThread().getContextClassLoader();
      if (loader != null) {
        try {
          return Class.forName(desc.getName(), false, loader);
        } catch (ClassNotFoundException e) {
          // fall back to the default resolution (primitive types, the caller's loader)
        }
      }
      return super.resolveClass(desc);
    }
  }
}
