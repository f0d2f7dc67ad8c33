package dev.polyfn.internal.trace;

import dev.polyfn.Variable;
import dev.polyfn.internal.EagerResource;
import dev.polyfn.internal.FunctionHandle;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.tensorflow.Tensor;

/**
 * What a function closes with it: the variables its first trace created, the resources (lookup
 * tables) and tensors (parameter defaults) restored with it. Something adopted after the function
 * closed (a body still running when another thread closed it) is closed at once: {@link #adopt}
 * adds first and checks the handle second, while {@link #closeAll} runs after the handle is
 * marked closed, so one of the two always closes it.
 */
final class Owned {
  private final FunctionHandle handle;
  private final List<Variable<?>> variables = new CopyOnWriteArrayList<>();
  private final List<EagerResource> resources = new CopyOnWriteArrayList<>();
  private final List<Tensor> tensors = new CopyOnWriteArrayList<>();

  Owned(FunctionHandle handle) {
    this.handle = handle;
  }

  void adopt(Variable<?> v) {
    variables.add(v);
    if (handle.isClosed()) {
      v.close();
    }
  }

  void adopt(EagerResource r) {
    resources.add(r);
    if (handle.isClosed()) {
      r.close();
    }
  }

  void adopt(Tensor t) {
    tensors.add(t);
    if (handle.isClosed()) {
      t.close();
    }
  }

  boolean hasVariables() {
    return !variables.isEmpty();
  }

  /** Closes everything adopted so far; called once the handle is closed. Each close is idempotent. */
  void closeAll() {
    variables.forEach(Variable::close);
    resources.forEach(EagerResource::close);
    tensors.forEach(Tensor::close);
  }
}
