package dev.polyfn.internal.saved;

import com.google.protobuf.InvalidProtocolBufferException;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * A walk over one protobuf message's wire format in a byte array: the part of protobuf's {@code
 * CodedInputStream} that {@link SavedModelParts} uses (tags, skipping, length-delimited fields,
 * strict UTF-8 strings, enums), with the same checks: a field number 0, a wire type 6 or 7, an
 * overlong varint, a negative or overrunning length, an unmatched group end and invalid UTF-8
 * fail. {@code CodedInputStream}'s first use costs a fresh JVM 5 to 7 ms of class loading and
 * initialization (its decoders, {@code UnsafeUtil}), more than walking ten definitions.
 */
final class WireReader {
  static final int VARINT = 0;
  static final int FIXED64 = 1;
  static final int LENGTH_DELIMITED = 2;
  static final int START_GROUP = 3;
  static final int END_GROUP = 4;
  static final int FIXED32 = 5;
  /** Protobuf's default nesting limit for groups skipped. */
  private static final int MAX_DEPTH = 100;

  private final byte[] buf;
  private int pos;
  private final int end;

  private WireReader(byte[] buf, int pos, int end) {
    this.buf = buf;
    this.pos = pos;
    this.end = end;
  }

  static WireReader of(byte[] message) {
    return new WireReader(message, 0, message.length);
  }

  static int fieldNumber(int tag) {
    return tag >>> 3;
  }

  static int wireType(int tag) {
    return tag & 7;
  }

  /** The next tag, 0 at the message's end. */
  int readTag() throws InvalidProtocolBufferException {
    if (pos == end) {
      return 0;
    }
    int tag = readVarint32();
    if (fieldNumber(tag) == 0) {
      throw new InvalidProtocolBufferException("Protocol message contained an invalid tag (zero).");
    }
    return tag;
  }

  /** Skips the field whose tag was just read (an end-group tag skips nothing, as protobuf's does). */
  void skipField(int tag) throws InvalidProtocolBufferException {
    skipField(tag, 0);
  }

  private void skipField(int tag, int depth) throws InvalidProtocolBufferException {
    switch (wireType(tag)) {
      case VARINT -> readVarint64();
      case FIXED64 -> skip(8);
      case LENGTH_DELIMITED -> skip(readLength());
      case FIXED32 -> skip(4);
      case END_GROUP -> { }
      case START_GROUP -> {
        if (depth >= MAX_DEPTH) {
          throw new InvalidProtocolBufferException("Protocol message had too many levels of nesting.");
        }
        int t;
        do {
          t = readTag();
          if (t == 0) {
            throw truncated();
          }
          skipField(t, depth + 1);
        } while (wireType(t) != END_GROUP);
        if (fieldNumber(t) != fieldNumber(tag)) {
          throw new InvalidProtocolBufferException("Protocol message end-group tag did not match expected tag.");
        }
      }
      default -> throw new InvalidProtocolBufferException("Protocol message tag had invalid wire type.");
    }
  }

  /** A length-delimited field's bytes (a copy). */
  byte[] readByteArray() throws InvalidProtocolBufferException {
    int n = readLength();
    byte[] b = Arrays.copyOfRange(buf, pos, pos + n);
    pos += n;
    return b;
  }

  /** A length-delimited field as a string, which must be valid UTF-8. */
  String readStringRequireUtf8() throws InvalidProtocolBufferException {
    int n = readLength();
    try {
      String s = StandardCharsets.UTF_8.newDecoder().onMalformedInput(CodingErrorAction.REPORT)
          .onUnmappableCharacter(CodingErrorAction.REPORT).decode(ByteBuffer.wrap(buf, pos, n)).toString();
      pos += n;
      return s;
    } catch (CharacterCodingException e) {
      throw new InvalidProtocolBufferException("Protocol message had invalid UTF-8.");
    }
  }

  /** An enum (a varint, truncated to 32 bits as protobuf does). */
  int readEnum() throws InvalidProtocolBufferException {
    return readVarint32();
  }

  private int readLength() throws InvalidProtocolBufferException {
    int n = readVarint32();
    if (n < 0) {
      throw new InvalidProtocolBufferException(
          "CodedInputStream encountered an embedded string or message which claimed to have negative size.");
    }
    if (n > end - pos) {
      throw truncated();
    }
    return n;
  }

  private void skip(int n) throws InvalidProtocolBufferException {
    if (n > end - pos) {
      throw truncated();
    }
    pos += n;
  }

  private int readVarint32() throws InvalidProtocolBufferException {
    return (int) readVarint64();
  }

  private long readVarint64() throws InvalidProtocolBufferException {
    long value = 0;
    for (int shift = 0; shift < 70; shift += 7) {
      if (pos == end) {
        throw truncated();
      }
      byte b = buf[pos++];
      value |= (long) (b & 0x7f) << shift;
      if (b >= 0) {
        return value;
      }
    }
    throw new InvalidProtocolBufferException("CodedInputStream encountered a malformed varint.");
  }

  private static InvalidProtocolBufferException truncated() {
    return new InvalidProtocolBufferException("While parsing a protocol message, the input ended unexpectedly in the "
        + "middle of a field.  This could mean either that the input has been truncated or that an embedded message "
        + "misreported its own length.");
  }
}
