package dev.polyfn.tests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotSame;

import dev.polyfn.Function;
import java.io.IOException;
import java.io.InputStream;
import java.lang.reflect.Method;
import java.net.URL;
import java.net.URLClassLoader;
import org.junit.jupiter.api.Test;

/**
 * Two class loaders in one JVM (application servers, notebooks, Spark) each load their own copy of
 * Polyfn over the one TensorFlow runtime. Each copy registers functions in the same eager context,
 * so their TensorFlow names must be unique in the process, not per copy.
 */
class TwoClassLoadersTest {
  @Test
  void twoCopiesOfPolyfnDefineDifferentBodiesSideBySide() throws Exception {
    URL polyfn = Function.class.getProtectionDomain().getCodeSource().getLocation();
    URL tests = ClassLoaderProbe.class.getProtectionDomain().getCodeSource().getLocation();
    try (ChildFirst a = new ChildFirst(new URL[] {polyfn, tests});
        ChildFirst b = new ChildFirst(new URL[] {polyfn, tests})) {
      Method scaleA = a.loadClass(ClassLoaderProbe.class.getName()).getMethod("scale", float.class, float.class);
      Method scaleB = b.loadClass(ClassLoaderProbe.class.getName()).getMethod("scale", float.class, float.class);
      assertNotSame(scaleA.getDeclaringClass(), scaleB.getDeclaringClass());
      assertNotSame(a.loadClass(Function.class.getName()), Function.class);
      for (int i = 0; i < 3; i++) {
        assertEquals(6f, (float) scaleA.invoke(null, 2f, 3f));
        assertEquals(15f, (float) scaleB.invoke(null, 5f, 3f));
        assertEquals(21f, ClassLoaderProbe.scale(7f, 3f)); // and the application's own copy
      }
    }
  }

  /** Loads Polyfn's classes (and the probe) itself; everything else, TensorFlow Java included, from the parent. */
  private static final class ChildFirst extends URLClassLoader {
    ChildFirst(URL[] urls) {
      super(urls, TwoClassLoadersTest.class.getClassLoader());
    }

    @Override
    protected Class<?> loadClass(String name, boolean resolve) throws ClassNotFoundException {
      synchronized (getClassLoadingLock(name)) {
        boolean ours = (name.startsWith("dev.polyfn.") && !name.startsWith("dev.polyfn.tests."))
            || name.startsWith(ClassLoaderProbe.class.getName());
        if (!ours) {
          return super.loadClass(name, resolve);
        }
        Class<?> c = findLoadedClass(name);
        if (c == null) {
          c = findClass(name);
        }
        if (resolve) {
          resolveClass(c);
        }
        return c;
      }
    }

    @Override
    public InputStream getResourceAsStream(String name) {
      InputStream own = null;
      URL url = findResource(name); // the native library from this copy's jar
      if (url != null) {
        try {
          own = url.openStream();
        } catch (IOException e) {
          own = null;
        }
      }
      return own != null ? own : super.getResourceAsStream(name);
    }
  }
}
