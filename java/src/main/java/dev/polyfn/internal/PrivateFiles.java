package dev.polyfn.internal;

import java.io.IOException;
import java.nio.file.FileSystems;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.nio.file.attribute.UserPrincipal;
import java.util.EnumSet;
import java.util.Map;

/**
 * Whether a file Polyfn found on disk may be trusted, that is loaded or executed: the rule the
 * native library's cache ({@link NativeCache}) and the trace cache ({@code
 * internal.trace.TraceCache}) apply before reading what they find.
 *
 * <p>A file is trusted only if nobody but this user (or root) could have written or swapped it,
 * between the check and the use too: it is a regular file (not a link), and it and every directory
 * up to the file system's root belong to this user or root, and none is writable by group or
 * others, unless it is a directory with the sticky bit (like {@code /tmp}), where others can
 * neither rename nor delete what is not theirs. Directories Polyfn creates are private (0700).
 * Where the file system has no Unix permissions (Windows), nothing here can be checked: callers
 * ask {@link #hasUnixPermissions} first and decide.
 */
public final class PrivateFiles {
  private static final int STICKY = 01000;
  private static final int GROUP_OR_OTHERS_WRITE = 022;
  private static final int TYPE = 0170000;
  private static final int REGULAR = 0100000;
  private static final int DIRECTORY = 040000;

  private PrivateFiles() {}

  /** Whether the default file system has Unix owners and modes, which the checks here read. */
  public static boolean hasUnixPermissions() {
    return FileSystems.getDefault().supportedFileAttributeViews().contains("unix");
  }

  /**
   * {@code file}'s real path when it may be used (see the class comment), else null. Throws
   * {@link java.nio.file.NoSuchFileException} when it or its directory is missing.
   */
  public static Path trusted(Path file) throws IOException {
    Path dir = trustedDirectory(file.getParent());
    if (dir == null) {
      return null;
    }
    Path real = dir.resolve(file.getFileName());
    return whyNotTrustedFile(real) == null ? real : null;
  }

  /**
   * {@code dir}'s real path when nobody but this user or root can change what it holds: it and
   * each directory above it are theirs and writable by nobody else (but for sticky ones); else null.
   */
  public static Path trustedDirectory(Path dir) throws IOException {
    Path real = dir.toRealPath();
    return whyNotTrustedDirectory(real) == null ? real : null;
  }

  /**
   * Why the directory at real path {@code real} (see {@link Path#toRealPath}) is not trusted, naming
   * the directory at fault (it or one above it), or null when it is.
   */
  public static String whyNotTrustedDirectory(Path real) throws IOException {
    Owner me = Owner.current();
    for (Path d = real; d != null; d = d.getParent()) {
      Map<String, Object> a = Files.readAttributes(d, me.attributes(), LinkOption.NOFOLLOW_LINKS);
      int mode = (Integer) a.get("mode");
      String where = d.equals(real) ? "it" : d + " (above it)";
      if ((mode & TYPE) != DIRECTORY) {
        return where + " is not a directory";
      }
      if ((mode & GROUP_OR_OTHERS_WRITE) != 0 && (mode & STICKY) == 0) {
        return where + " is writable by group or others (mode " + Integer.toOctalString(mode & 07777) + ")";
      }
      if (!me.owns(a)) {
        return where + " belongs to another user (" + me.ownerOf(a) + "), not to this one or root";
      }
    }
    return null;
  }

  /**
   * Why {@code file}, in a directory already found trusted, is not (a link or not a regular file,
   * writable by group or others, another user's), or null when it is; the link itself is read,
   * never followed.
   */
  public static String whyNotTrustedFile(Path file) throws IOException {
    Owner me = Owner.current();
    Map<String, Object> a = Files.readAttributes(file, me.attributes(), LinkOption.NOFOLLOW_LINKS);
    int mode = (Integer) a.get("mode");
    if ((mode & TYPE) != REGULAR) {
      return "it is a link or not a regular file";
    }
    if ((mode & GROUP_OR_OTHERS_WRITE) != 0) {
      return "it is writable by group or others (mode " + Integer.toOctalString(mode & 07777) + ")";
    }
    if (!me.owns(a)) {
      return "it belongs to another user (" + me.ownerOf(a) + "), not to this one or root";
    }
    return null;
  }

  /** Creates {@code dir} and its missing parents, private to this user where modes exist. */
  public static void createPrivateDirectories(Path dir) throws IOException {
    if (hasUnixPermissions()) {
      Files.createDirectories(dir, PosixFilePermissions.asFileAttribute(EnumSet.of(
          PosixFilePermission.OWNER_READ, PosixFilePermission.OWNER_WRITE, PosixFilePermission.OWNER_EXECUTE)));
    } else {
      Files.createDirectories(dir);
    }
  }

  /**
   * This process's user: its uid, read from {@code /proc/self} (Linux), else its principal, looked
   * up by {@code user.name}. Root (uid 0) is trusted too: it can replace any file anyway.
   */
  private static final class Owner {
    private static volatile Owner current;
    private final int uid;
    private final UserPrincipal principal;

    private Owner(int uid, UserPrincipal principal) {
      this.uid = uid;
      this.principal = principal;
    }

    static Owner current() throws IOException {
      Owner o = current;
      if (o == null) {
        Path self = Path.of("/proc/self");
        if (Files.isDirectory(self)) {
          o = new Owner((Integer) Files.getAttribute(self, "unix:uid"), null);
        } else {
          String name = System.getProperty("user.name");
          o = new Owner(-1, FileSystems.getDefault().getUserPrincipalLookupService().lookupPrincipalByName(name));
        }
        current = o;
      }
      return o;
    }

    String attributes() {
      return principal == null ? "unix:uid,mode" : "unix:uid,mode,owner";
    }

    boolean owns(Map<String, Object> a) {
      int owner = (Integer) a.get("uid");
      return owner == 0 || (principal == null ? owner == uid : principal.equals(a.get("owner")));
    }

    /** The owner in {@code a}, for a message. */
    String ownerOf(Map<String, Object> a) {
      return principal == null ? "uid " + a.get("uid") : String.valueOf(a.get("owner"));
    }
  }
}
