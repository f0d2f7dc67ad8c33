package dev.polyfn.internal;

/**
 * The lock Polyfn holds while it builds eager operations on TensorFlow Java's default session.
 *
 * <p>Why: TensorFlow Java 1.1's {@code EagerSession} records the native pointers of every eager
 * operation it builds or reads ({@code WeakPointerScope.attach} and {@code detach}) in a {@code
 * WeakHashMap} that nothing synchronizes. Two threads creating, reading or assigning variables at
 * once corrupted it, and one of them then looped forever inside {@code WeakHashMap.put}: the JVM
 * hung ({@code EagerSessionRaceTest}). Polyfn's own eager work (variables, destroying restored
 * resources, feeding tensors to eager operations, loading and saving) takes this lock, so it
 * never races with itself.
 *
 * <p>Held only around TensorFlow Java calls, never while user code runs (a body run eagerly
 * builds its operations unlocked: eager operations a program builds on several threads at once
 * race in TensorFlow Java with or without Polyfn). Reentrant, as every Java monitor is.
 */
public final class EagerLock {
  private EagerLock() {}

  /** The monitor: {@code synchronized (EagerLock.LOCK) { ... }}. */
  public static final Object LOCK = new Object();
}
