package io.cairndb.kv;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/** Reads a login file ({@code --security FILE}): {@code key=value} lines, as the Go tools do. */
final class Login {
  private Login() {}

  /** The store CA the login file names (cairn.ssl.ca), resolved against the file's directory. */
  static String caFile(String loginFile) {
    String ca = values(loginFile).get("cairn.ssl.ca");
    if (ca == null) {
      throw new IllegalArgumentException("login file " + loginFile + ": cairn.ssl.ca (the store CA's ca.pem) is missing");
    }
    return resolve(loginFile, ca);
  }

  /** The user the login file names (cairn.auth.username), or null. */
  static String user(String loginFile) {
    return values(loginFile).get("cairn.auth.username");
  }

  /** The first line of the password file the login file names (cairn.auth.password.file). */
  static String password(String loginFile) {
    String f = values(loginFile).get("cairn.auth.password.file");
    if (f == null) {
      throw new IllegalArgumentException("login file " + loginFile
          + ": cairn.auth.username is set but cairn.auth.password.file is missing");
    }
    try {
      String pw = Files.readString(Path.of(resolve(loginFile, f)), StandardCharsets.UTF_8);
      int nl = pw.indexOf('\n');
      return (nl < 0 ? pw : pw.substring(0, nl)).stripTrailing();
    } catch (IOException e) {
      throw new IllegalArgumentException("login file " + loginFile + ": the password file: " + e.getMessage(), e);
    }
  }

  private static String resolve(String loginFile, String v) {
    Path p = Path.of(v);
    Path dir = Path.of(loginFile).toAbsolutePath().getParent();
    return (p.isAbsolute() || dir == null ? p : dir.resolve(p)).toString();
  }

  private static java.util.Map<String, String> values(String loginFile) {
    List<String> lines;
    try {
      lines = Files.readAllLines(Path.of(loginFile), StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new IllegalArgumentException("login file " + loginFile + ": " + e.getMessage(), e);
    }
    java.util.Map<String, String> out = new java.util.HashMap<>();
    for (int n = 0; n < lines.size(); n++) {
      String line = lines.get(n).strip();
      if (line.isEmpty() || line.startsWith("#") || line.startsWith("!")) {
        continue;
      }
      int eq = line.indexOf('=');
      if (eq < 0) {
        throw new IllegalArgumentException("login file " + loginFile + " line " + (n + 1) + ": want key=value, got \"" + line + "\"");
      }
      out.put(line.substring(0, eq).strip(), line.substring(eq + 1).strip());
    }
    return out;
  }
}
