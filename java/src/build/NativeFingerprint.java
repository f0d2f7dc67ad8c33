import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HexFormat;
import java.util.zip.Adler32;
import java.util.zip.CRC32;

/**
 * Build step (java/pom.xml, after the native library is packed into the classes): writes
 * {@code <library>.fingerprint} next to each native library in the directory given, the name of
 * the library's directory in Polyfn's cache as {@code dev.polyfn.internal.NativeCache.fingerprint}
 * computes it (CRC-32 and Adler-32, 8 hex digits each, a dash, the length in hex). A start that
 * finds that file in the cache then loads it without reading the jar's copy of the library.
 * Run as a source file: {@code java NativeFingerprint.java DIR}.
 */
public final class NativeFingerprint {
  public static void main(String[] args) throws Exception {
    Path dir = Path.of(args[0]);
    for (String name : new String[] {"libpolyfn_jni.so", "libpolyfn_jni.dylib", "polyfn_jni.dll"}) {
      Path library = dir.resolve(name);
      Path out = dir.resolve(name + ".fingerprint");
      if (!Files.isRegularFile(library)) {
        Files.deleteIfExists(out); // a stale fingerprint of a library no longer packed
        continue;
      }
      byte[] bytes = Files.readAllBytes(library);
      CRC32 crc = new CRC32();
      crc.update(bytes);
      Adler32 adler = new Adler32();
      adler.update(bytes);
      HexFormat hex = HexFormat.of();
      String fingerprint = hex.toHexDigits((int) crc.getValue()) + hex.toHexDigits((int) adler.getValue()) + "-"
          + Long.toHexString(bytes.length);
      Files.writeString(out, fingerprint + "\n", StandardCharsets.US_ASCII);
    }
  }
}
