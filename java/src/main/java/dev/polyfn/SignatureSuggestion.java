package dev.polyfn;

import java.util.List;

/**
 * The signature a function's recorded calls suggest ({@link PolymorphicFunction#suggestedSignature}):
 * the declarations that would have served them with the fewest traces, as ready-to-paste Java
 * and Kotlin lines, with the trace counts before and after.
 */
public final class SignatureSuggestion {
  private final long calls;
  private final int tracesBefore;
  private final int tracesAfter;
  private final List<String> javaLines;
  private final List<String> kotlinLines;
  private final List<String> notes;

  /** Built by Polyfn's native library. */
  SignatureSuggestion(long calls, int tracesBefore, int tracesAfter, String[] javaLines, String[] kotlinLines,
      String[] notes) {
    this.calls = calls;
    this.tracesBefore = tracesBefore;
    this.tracesAfter = tracesAfter;
    this.javaLines = List.of(javaLines);
    this.kotlinLines = List.of(kotlinLines);
    this.notes = List.of(notes);
  }

  /** How many calls were recorded. */
  public long calls() {
    return calls;
  }

  /** The traces the recorded calls need as the body declares them: one per distinct call type. */
  public int tracesBefore() {
    return tracesBefore;
  }

  /** The traces they need with the suggested declarations. */
  public int tracesAfter() {
    return tracesAfter;
  }

  /**
   * The suggested declarations in Java, one per parameter whose declaration would change, e.g.
   * {@code Operand<TFloat32> x = in.input("x", TFloat32.class, Shape.of(-1, 3));}.
   */
  public List<String> javaLines() {
    return javaLines;
  }

  /** The same declarations in Kotlin, e.g. {@code val x = inputs.input<TFloat32>("x", Shape.of(-1, 3))}. */
  public List<String> kotlinLines() {
    return kotlinLines;
  }

  /** Why some parameters keep several traces, and what would help (pass a Java value as a tensor...). */
  public List<String> notes() {
    return notes;
  }

  /** The suggestion as text: the counts, the Java and Kotlin lines and the notes. */
  @Override
  public String toString() {
    StringBuilder b = new StringBuilder();
    b.append(calls).append(" calls recorded: ").append(tracesBefore).append(" traces as declared, ")
        .append(tracesAfter).append(" with these declarations\n");
    if (javaLines.isEmpty()) {
      b.append("  (no declaration to change)\n");
    }
    b.append("Java:\n");
    javaLines.forEach(l -> b.append("  ").append(l).append('\n'));
    b.append("Kotlin:\n");
    kotlinLines.forEach(l -> b.append("  ").append(l).append('\n'));
    notes.forEach(n -> b.append("note: ").append(n).append('\n'));
    return b.toString();
  }
}
