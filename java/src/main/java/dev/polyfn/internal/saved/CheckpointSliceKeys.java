package dev.polyfn.internal.saved;

/**
 * The checkpoint key TensorFlow reads one slice of a tensor under ({@code
 * checkpoint::EncodeTensorNameSlice}): ordered codes ({@code strings::OrderedCode}) of 0, the
 * tensor's key, the rank, then each dimension's start and length (-1: all of it). RestoreV2 looks a
 * slice up by the extents its tensor's entry lists, so {@link CheckpointIndex} checks the entry
 * under exactly this key. Keys are ISO-8859-1 strings of their bytes, as the index's are.
 */
public final class CheckpointSliceKeys {
  private CheckpointSliceKeys() {}

  /** OrderedCode's header bits of a signed number's first two bytes, by its encoded length. */
  private static final int[][] HEADER = {
      {0, 0}, {0x80, 0}, {0xc0, 0}, {0xe0, 0}, {0xf0, 0}, {0xf8, 0}, {0xfc, 0}, {0xfe, 0}, {0xff, 0}, {0xff, 0x80},
      {0xff, 0xc0}};

  /** The key of the slice of tensor {@code name} (ISO-8859-1) starting at {@code starts}, {@code lengths} long. */
  public static String of(String name, long[] starts, long[] lengths) {
    StringBuilder b = new StringBuilder();
    numIncreasing(b, 0);
    for (int i = 0; i < name.length(); i++) {
      char c = name.charAt(i);
      if (c == 0) {
        b.append('\0').append('\u00ff');
      } else if (c == 0xff) {
        b.append('\u00ff').append('\0');
      } else {
        b.append(c);
      }
    }
    b.append('\0').append('\u0001');
    numIncreasing(b, starts.length);
    for (int d = 0; d < starts.length; d++) {
      signedNumIncreasing(b, starts[d]);
      signedNumIncreasing(b, lengths[d]);
    }
    return b.toString();
  }

  /** {@code OrderedCode::WriteNumIncreasing}: a length byte, then the value big-endian without leading zeros. */
  static void numIncreasing(StringBuilder b, long value) {
    int len = value == 0 ? 0 : 8 - Long.numberOfLeadingZeros(value) / 8;
    b.append((char) len);
    for (int i = len - 1; i >= 0; i--) {
      b.append((char) ((value >>> (8 * i)) & 0xff));
    }
  }

  /**
   * {@code OrderedCode::WriteSignedNumIncreasing}: the sign and the length in the leading bits, then
   * the value big-endian; n bytes hold [-2^(7n-1), 2^(7n-1)).
   */
  static void signedNumIncreasing(StringBuilder b, long value) {
    long x = value < 0 ? ~value : value;
    if (x < 64) {
      b.append((char) ((0x80 ^ value) & 0xff));
      return;
    }
    int bits = 64 - Long.numberOfLeadingZeros(x); // Log2Floor64(x) + 1
    int len = 1 + bits / 7;
    byte[] buf = new byte[10];
    byte sign = (byte) (value < 0 ? 0xff : 0);
    buf[0] = sign;
    buf[1] = sign;
    for (int i = 0; i < 8; i++) {
      buf[2 + i] = (byte) (value >>> (56 - 8 * i));
    }
    int begin = 10 - len;
    buf[begin] ^= (byte) HEADER[len][0];
    buf[begin + 1] ^= (byte) HEADER[len][1];
    for (int i = begin; i < 10; i++) {
      b.append((char) (buf[i] & 0xff));
    }
  }
}
