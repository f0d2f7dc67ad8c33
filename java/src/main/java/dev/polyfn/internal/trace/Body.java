package dev.polyfn.internal.trace;

import dev.polyfn.Inputs;
import org.tensorflow.op.Ops;

/**
 * A function's body as its core runs it while tracing: the public function passes it at
 * definition, so the core never calls back into the public class.
 */
@FunctionalInterface
public interface Body {
  /** Runs the body; returns its outputs, named. */
  Traced trace(Ops tf, Inputs inputs);
}
