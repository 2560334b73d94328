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
    List<String> lines;
    try {
      lines = Files.readAllLines(Path.of(loginFile), StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new IllegalArgumentException("login file " + loginFile + ": " + e.getMessage(), e);
    }
    for (int n = 0; n < lines.size(); n++) {
      String line = lines.get(n).strip();
      if (line.isEmpty() || line.startsWith("#") || line.startsWith("!")) {
        continue;
      }
      int eq = line.indexOf('=');
      if (eq < 0) {
        throw new IllegalArgumentException("login file " + loginFile + " line " + (n + 1) + ": want key=value, got \"" + line + "\"");
      }
      if (line.substring(0, eq).strip().equals("cairn.ssl.ca")) {
        Path ca = Path.of(line.substring(eq + 1).strip());
        Path dir = Path.of(loginFile).toAbsolutePath().getParent();
        return (ca.isAbsolute() || dir == null ? ca : dir.resolve(ca)).toString();
      }
    }
    throw new IllegalArgumentException("login file " + loginFile + ": cairn.ssl.ca (the store CA's ca.pem) is missing");
  }
}
