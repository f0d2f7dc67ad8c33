package dev.polyfn.internal.trace;

import java.io.ByteArrayInputStream;
import java.io.DataInputStream;
import java.io.IOException;

/**
 * How many lambdas and method references of one class make one interface, read from the class
 * file's constant pool: each distinct lambda is an {@code InvokeDynamic} constant whose call
 * descriptor returns the interface (javac and kotlinc share a constant only between sites that
 * call the same method with the same captures, which compute the same thing). When there is one,
 * a lambda of that class and interface is known without its implementation method.
 */
final class LambdaSites {
  private static final int MAGIC = 0xCAFEBABE;

  private LambdaSites() {}

  /**
   * The number of {@code InvokeDynamic} constants of {@code classFile} returning {@code iface};
   * -1 when the file cannot be read (a constant this reader does not know): the caller must then
   * assume there are several.
   */
  static int count(byte[] classFile, Class<?> iface) {
    String returns = ")L" + iface.getName().replace('.', '/') + ";";
    try (DataInputStream in = new DataInputStream(new ByteArrayInputStream(classFile))) {
      if (in.readInt() != MAGIC) {
        return -1;
      }
      in.readInt(); // minor and major version
      int size = in.readUnsignedShort();
      String[] utf8 = new String[size];
      int[] descriptorOf = new int[size]; // NameAndType index to its descriptor's Utf8 index
      int[] indyNameAndType = new int[size];
      int indys = 0;
      for (int i = 1; i < size; i++) {
        int tag = in.readUnsignedByte();
        switch (tag) {
          case 1 -> utf8[i] = in.readUTF();
          case 7, 8, 16, 19, 20 -> in.skipNBytes(2);
          case 15 -> in.skipNBytes(3);
          case 3, 4, 9, 10, 11, 17 -> in.skipNBytes(4);
          case 12 -> {
            in.readUnsignedShort(); // name
            descriptorOf[i] = in.readUnsignedShort();
          }
          case 18 -> {
            in.readUnsignedShort(); // bootstrap method
            indyNameAndType[indys++] = in.readUnsignedShort();
          }
          case 5, 6 -> {
            in.skipNBytes(8);
            i++; // a long or double takes two entries
          }
          default -> {
            return -1;
          }
        }
      }
      int count = 0;
      for (int k = 0; k < indys; k++) {
        int nameAndType = indyNameAndType[k];
        String descriptor = nameAndType < size ? utf8[descriptorOf[nameAndType]] : null;
        if (descriptor == null || descriptor.endsWith(returns)) {
          count++; // an unreadable descriptor counts: more sites only keep the place in the key
        }
      }
      return count;
    } catch (IOException | RuntimeException e) {
      return -1;
    }
  }
}
