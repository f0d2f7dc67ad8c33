package dev.polyfn.bench;

import dev.polyfn.Function;
import dev.polyfn.MapFunction;
import dev.polyfn.Outputs;
import java.util.Arrays;
import java.util.Map;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.atomic.AtomicBoolean;
import org.tensorflow.types.TFloat32;

/**
 * Two threads calling one cached {@code add2} against one thread, measured in one process in
 * alternating phases: each round runs one thread, then two (the order flips every round), for the
 * same time, and the speed-up is the median of the rounds' ratios. On a shared 2-core machine the
 * load changes from second to second; phases a fraction of a second apart see the same load,
 * where JMH's separate forks of {@code FastPathBench.hit1Thread} and {@code hit2Threads} run
 * minutes apart. The two threads are the same throughout (each keeps its session), each with its
 * own input tensor. Prints one JSON object.
 *
 * <p>Usage: {@code ThreadScalingMain [rounds] [phaseMillis] [warmupMillis]} (the warm-up, both
 * threads calling, defaults to two phases; a short run needs seconds of it for the JIT).
 */
public final class ThreadScalingMain {
  public static void main(String[] a) throws Exception {
    int rounds = a.length > 0 ? Integer.parseInt(a[0]) : 15;
    long phaseNanos = (a.length > 1 ? Long.parseLong(a[1]) : 400) * 1_000_000L;
    long warmupNanos = a.length > 2 ? Long.parseLong(a[2]) * 1_000_000L : 2 * phaseNanos;
    MapFunction fn = Function.define((tf, in) -> Map.of("y", tf.math.add(in.input("x", TFloat32.class), tf.constant(2f))));
    Worker[] workers = {new Worker(fn), new Worker(fn)};
    for (Worker w : workers) {
      w.start();
    }
    // Warm-up: both threads past the promotion and the JIT.
    phase(workers, 2, warmupNanos);
    double[] one = new double[rounds];
    double[] two = new double[rounds];
    double[] ratio = new double[rounds];
    for (int r = 0; r < rounds; r++) {
      if (r % 2 == 0) {
        one[r] = phase(workers, 1, phaseNanos);
        two[r] = phase(workers, 2, phaseNanos);
      } else {
        two[r] = phase(workers, 2, phaseNanos);
        one[r] = phase(workers, 1, phaseNanos);
      }
      ratio[r] = two[r] / one[r];
    }
    for (Worker w : workers) {
      w.stopAndJoin();
    }
    if (fn.traceCount() != 1) {
      throw new IllegalStateException("expected one trace, got " + fn.traceCount());
    }
    fn.close();
    System.out.printf(
        "{\"rounds\": %d, \"phase_ms\": %d, \"speedup_median\": %.3f, \"one_thread_calls_per_ms\": %.1f, "
            + "\"two_threads_calls_per_ms\": %.1f, \"ratios\": %s}%n",
        rounds, phaseNanos / 1_000_000, median(ratio), median(one), median(two), Arrays.toString(ratio));
  }

  /** Runs the first {@code threads} workers for {@code nanos}; their calls per millisecond. */
  private static double phase(Worker[] workers, int threads, long nanos) throws Exception {
    CyclicBarrier start = new CyclicBarrier(threads + 1);
    AtomicBoolean stop = new AtomicBoolean();
    for (int i = 0; i < threads; i++) {
      workers[i].assign(start, stop);
    }
    start.await();
    long t0 = System.nanoTime();
    Thread.sleep(nanos / 1_000_000L);
    stop.set(true);
    long calls = 0;
    for (int i = 0; i < threads; i++) {
      calls += workers[i].awaitCalls();
    }
    return calls / ((System.nanoTime() - t0) / 1e6);
  }

  private static double median(double[] xs) {
    double[] s = xs.clone();
    Arrays.sort(s);
    return s[s.length / 2];
  }

  /** A thread that calls {@code fn} on its own input during each phase it is given. */
  private static final class Worker extends Thread {
    private final MapFunction fn;
    private final Object lock = new Object();
    private CyclicBarrier start;
    private AtomicBoolean stop;
    private long calls = -1;
    private boolean quit;
    private Exception failure;

    Worker(MapFunction fn) {
      this.fn = fn;
      setDaemon(true);
    }

    void assign(CyclicBarrier start, AtomicBoolean stop) {
      synchronized (lock) {
        this.start = start;
        this.stop = stop;
        this.calls = -1;
        lock.notifyAll();
      }
    }

    long awaitCalls() throws InterruptedException {
      synchronized (lock) {
        while (calls < 0 && failure == null) {
          lock.wait();
        }
        if (failure != null) {
          throw new IllegalStateException("a calling thread failed", failure);
        }
        return calls;
      }
    }

    void stopAndJoin() throws InterruptedException {
      synchronized (lock) {
        quit = true;
        lock.notifyAll();
      }
      join();
    }

    @Override
    public void run() {
      try (TFloat32 x = TFloat32.scalarOf(1f)) {
        Map<String, TFloat32> args = Map.of("x", x);
        while (true) {
          CyclicBarrier b;
          AtomicBoolean s;
          synchronized (lock) {
            while (start == null && !quit) {
              lock.wait();
            }
            if (quit) {
              return;
            }
            b = start;
            s = stop;
            start = null;
          }
          b.await();
          long n = 0;
          while (!s.get()) {
            try (Outputs out = fn.call(args)) {
              if (out.size() != 1) {
                throw new IllegalStateException("expected one output");
              }
            }
            n++;
          }
          synchronized (lock) {
            calls = n;
            lock.notifyAll();
          }
        }
      } catch (Exception e) {
        synchronized (lock) {
          failure = e;
          lock.notifyAll();
        }
      }
    }
  }
}
