package dev.polyfn.internal;

/** For tests outside this package: plays another build of Polyfn ({@link PolyfnVersion#overrideForTests}). */
public final class PolyfnVersions {
  private PolyfnVersions() {}

  /** From now on this JVM's Polyfn calls itself {@code version}. */
  public static void pretend(String version) {
    PolyfnVersion.overrideForTests(version);
  }
}
