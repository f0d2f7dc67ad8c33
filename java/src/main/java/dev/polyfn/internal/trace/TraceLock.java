package dev.polyfn.internal.trace;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Supplier;

/**
 * A function's trace lock: held while it traces, and while a nested call or an export uses a
 * concrete function it found. Reentrant, as the monitor it replaces.
 *
 * <p>A trace runs the body, which may call other Polyfn functions, each taking its own trace lock
 * while holding the caller's. Two functions that call each other, first traced from two threads
 * at once, would each hold one lock and wait for the other's forever. So a thread that would wait
 * for a trace lock while the lock's holder waits, directly or through others, for one this thread
 * holds does not wait if it has the highest id of the threads in that cycle: it gives up its
 * trace with {@link Conflict}, which unwinds its traces (a failed trace leaves nothing behind) and
 * releases their locks; its outermost call ({@link #retrying}) then waits for its turn and traces
 * again. The other threads of the cycle go on waiting, and get the locks it released.
 */
public final class TraceLock {
  /** The trace lock each thread is waiting for, if any: the edges of the wait-for graph. */
  private static final Map<Thread, TraceLock> WAITING = new ConcurrentHashMap<>();
  /** How many trace locks this thread holds (counting reentries): 0 at an outermost call. */
  private static final ThreadLocal<int[]> HELD = new ThreadLocal<>() {
    @Override
    protected int[] initialValue() { // not withInitial: a lambda's first bootstrap costs a warm start
      return new int[1];
    }
  };
  /** How often an outermost call traces again after giving up for another thread, at most. */
  private static final int MAX_RETRIES = 1000;

  /** Thrown in the thread that gives up its trace to break a cycle; never escapes an outermost call. */
  public static final class Conflict extends RuntimeException {
    /** The lock the thread was waiting for: its outermost call waits for it before tracing again. */
    private final transient TraceLock awaited;

    Conflict(String message, TraceLock awaited) {
      super(message, null, false, false);
      this.awaited = awaited;
    }
  }

  /** A ReentrantLock that tells its owner. */
  private static final class OwnedLock extends ReentrantLock {
    Thread owner() {
      return getOwner();
    }
  }

  private final OwnedLock lock = new OwnedLock();
  private final String function;

  TraceLock(String function) {
    this.function = function;
  }

  /** Takes the lock; throws {@link Conflict} instead of waiting in a cycle this thread must break. */
  public void lock() {
    if (!lock.tryLock()) {
      await();
    }
    HELD.get()[0]++;
  }

  public void unlock() {
    HELD.get()[0]--;
    lock.unlock();
  }

  private void await() {
    Thread me = Thread.currentThread();
    boolean interrupted = false;
    WAITING.put(me, this);
    try {
      while (true) {
        try {
          if (lock.tryLock(5, TimeUnit.MILLISECONDS)) {
            return;
          }
        } catch (InterruptedException e) {
          interrupted = true; // waits on, as the monitor did; the interrupt is kept for the caller
        }
        if (mustYield(me)) {
          throw new Conflict("the trace of '" + function + "' waits for a thread that waits for a trace this"
              + " thread holds (functions calling each other, traced from two threads at once)", this);
        }
      }
    } finally {
      WAITING.remove(me);
      if (interrupted) {
        me.interrupt();
      }
    }
  }

  /**
   * Whether the threads holding and waiting for trace locks, from this lock's holder on, come back
   * to {@code me} (a cycle, which no waiting ends) and {@code me} has the highest id among them.
   */
  private boolean mustYield(Thread me) {
    long highest = me.getId();
    TraceLock wanted = this;
    for (int step = 0; step < 10_000; step++) {
      Thread owner = wanted.lock.owner();
      if (owner == null) {
        return false; // released meanwhile: the next try takes it
      }
      if (owner == me) {
        return highest == me.getId();
      }
      highest = Math.max(highest, owner.getId());
      wanted = WAITING.get(owner);
      if (wanted == null) {
        return false; // the holder runs: it will release
      }
    }
    return false;
  }

  /**
   * Runs {@code action}, an outermost call's trace, again when this thread gave it up to break a
   * cycle; inside another trace, the {@link Conflict} goes on unwinding to the outermost call.
   */
  public static <T> T retrying(Supplier<T> action) {
    for (int attempt = 0; ; attempt++) {
      try {
        return action.get();
      } catch (Conflict c) {
        if (HELD.get()[0] > 0) {
          throw c;
        }
        if (attempt >= MAX_RETRIES) {
          throw new IllegalStateException(c.getMessage() + "; gave up after " + MAX_RETRIES + " attempts");
        }
        // Its turn: once the thread it gave way to is done with the lock this one waited for. The
        // lock's plain wait is safe here, as this thread holds no trace lock now; tracing again at
        // once could take back, before that thread wakes, the lock this one released for it.
        c.awaited.lock.lock();
        c.awaited.lock.unlock();
      }
    }
  }
}
