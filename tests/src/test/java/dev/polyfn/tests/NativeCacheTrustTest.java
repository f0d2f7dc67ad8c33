package dev.polyfn.tests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.attribute.FileTime;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.HexFormat;
import java.util.List;
import java.util.zip.Adler32;
import java.util.zip.CRC32;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Polyfn's native library in its persistent cache, in fresh JVMs (see {@link NativeLoaderTest}):
 * a later start finds its file by the fingerprint the jar ships, without reading the jar's copy;
 * a file others could have written or swapped is never loaded (a group-writable file or
 * directory, a link); a directory the user owns heals by writing the file anew, one others may
 * write to is left alone for a fresh temporary file. Each child prints the file it mapped.
 */
class NativeCacheTrustTest {
  private static final String LIBRARY = "dev/polyfn/native/linux-x86_64/libpolyfn_jni.so";

  /** A first start, filling the cache; returns the cached library. */
  private static Path firstStart(Path cache) throws Exception {
    Process p = NativeLoaderTest.child(cache.toFile(), "polyfn.native.cache=" + cache);
    String out = NativeLoaderTest.output(p);
    assertEquals(0, p.exitValue(), out);
    List<String> files = NativeLoaderTest.files(cache);
    assertEquals(1, files.size(), files.toString());
    return cache.resolve(files.get(0));
  }

  /** A later start; returns its output, after checking it ran the function. */
  private static String laterStart(Path cache, String... jvm) throws Exception {
    Process p = NativeLoaderTest.child(cache.toFile(), List.of(jvm), "polyfn.native.cache=" + cache);
    String out = NativeLoaderTest.output(p);
    assertEquals(0, p.exitValue(), out);
    assertTrue(out.contains("result -2.0"), out);
    return out;
  }

  private static String mapped(String out) {
    return out.lines().filter(l -> l.startsWith("mapped ")).findFirst().orElseThrow(() -> new AssertionError(out))
        .substring("mapped ".length());
  }

  @Test
  void aLaterStartLoadsTheCachedFileWithoutReadingTheJarsCopy(@TempDir Path cache) throws Exception {
    Path lib = firstStart(cache);
    String out = laterStart(cache, "-Xlog:class+load=info:stdout");
    assertEquals(lib.toRealPath().toString(), mapped(out));
    // NativeLibraryCopy is the only code that reads the jar's copy of the library.
    assertTrue(out.contains("dev.polyfn.internal.NativeCache "), out);
    assertFalse(out.contains("dev.polyfn.internal.NativeLibraryCopy "), "read the jar's copy: " + out);
  }

  @Test
  void theShippedFingerprintIsTheLibrarysOwn() throws Exception {
    byte[] bytes;
    String shipped;
    ClassLoader loader = NativeCacheTrustTest.class.getClassLoader();
    try (InputStream lib = loader.getResourceAsStream(LIBRARY);
         InputStream fp = loader.getResourceAsStream(LIBRARY + ".fingerprint")) {
      assertTrue(lib != null && fp != null, "the jar ships the library and its fingerprint");
      bytes = lib.readAllBytes();
      shipped = new String(fp.readAllBytes(), StandardCharsets.US_ASCII).trim();
    }
    CRC32 crc = new CRC32();
    crc.update(bytes);
    Adler32 adler = new Adler32();
    adler.update(bytes);
    HexFormat hex = HexFormat.of();
    assertEquals(hex.toHexDigits((int) crc.getValue()) + hex.toHexDigits((int) adler.getValue()) + "-"
        + Integer.toHexString(bytes.length), shipped);
  }

  @Test
  void aCachedFileInAGroupWritableDirectoryIsNotLoadedNorTouched(@TempDir Path cache) throws Exception {
    Path lib = firstStart(cache);
    Files.setPosixFilePermissions(lib.getParent(), PosixFilePermissions.fromString("rwxrwxr-x"));
    Object inode = Files.readAttributes(lib, BasicFileAttributes.class).fileKey();
    FileTime written = Files.getLastModifiedTime(lib);
    String out = laterStart(cache);
    assertFalse(mapped(out).startsWith(cache.toRealPath().toString()), out);
    assertTrue(mapped(out).endsWith("(deleted)"), "a fresh temporary file, deleted once loaded: " + out);
    assertEquals(inode, Files.readAttributes(lib, BasicFileAttributes.class).fileKey());
    assertEquals(written, Files.getLastModifiedTime(lib));
  }

  @Test
  void aCacheUnderADirectoryOthersMayWriteToIsNotUsed(@TempDir Path dir) throws Exception {
    Path cache = dir.resolve("shared").resolve("cache");
    Files.createDirectories(cache);
    Path lib = firstStart(cache);
    // Others may rename "cache" away and put their own in its place.
    Files.setPosixFilePermissions(dir.resolve("shared"), PosixFilePermissions.fromString("rwxrwxrwx"));
    String out = laterStart(cache);
    assertFalse(mapped(out).startsWith(cache.toRealPath().toString()), out);
    assertTrue(Files.isRegularFile(lib));
  }

  @Test
  void aStickyDirectoryAboveTheCacheIsTrusted(@TempDir Path dir) throws Exception {
    Path cache = dir.resolve("shared").resolve("cache");
    Files.createDirectories(cache);
    Path lib = firstStart(cache);
    // Like /tmp: others may add entries but cannot rename or delete this user's.
    Files.setAttribute(dir.resolve("shared"), "unix:mode", 01777);
    String out = laterStart(cache, "-Xlog:class+load=info:stdout");
    assertEquals(lib.toRealPath().toString(), mapped(out));
    assertFalse(out.contains("dev.polyfn.internal.NativeLibraryCopy "), out);
  }

  @Test
  void aGroupWritableCachedFileIsReplacedBeforeItIsLoaded(@TempDir Path cache) throws Exception {
    Path lib = firstStart(cache);
    Files.setPosixFilePermissions(lib, PosixFilePermissions.fromString("rw-rw-r--"));
    String out = laterStart(cache);
    assertEquals(lib.toRealPath().toString(), mapped(out));
    String mode = PosixFilePermissions.toString(Files.getPosixFilePermissions(lib));
    assertEquals("rw-------", mode, "written anew, private");
  }

  @Test
  void aLinkInPlaceOfTheCachedFileIsReplacedNotFollowed(@TempDir Path cache, @TempDir Path elsewhere)
      throws Exception {
    Path lib = firstStart(cache);
    Path target = elsewhere.resolve("libpolyfn_jni.so");
    Files.move(lib, target);
    Files.createSymbolicLink(lib, target);
    String out = laterStart(cache);
    String mapped = mapped(out);
    assertFalse(mapped.startsWith(elsewhere.toRealPath().toString()), "followed the link: " + out);
    assertEquals(lib.toRealPath().toString(), mapped);
    assertFalse(Files.isSymbolicLink(lib), "the link is replaced by the library itself");
    assertTrue(Files.isRegularFile(lib, LinkOption.NOFOLLOW_LINKS));
  }
}
