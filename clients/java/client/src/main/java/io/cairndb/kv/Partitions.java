package io.cairndb.kv;

import java.nio.charset.StandardCharsets;
import java.util.List;
import net.openhft.hashing.LongHashFunction;

/**
 * How a major path hashes to a partition, as Cairn's internal/keys does (the
 * vectors in api/testdata/keys.json pin it):
 *
 * <pre>
 *   hash = xxhash64(seed 0) of, for each major component:
 *            its UTF-8 bytes with every 0x00 written 00 FF, then 00 01
 *   partition = the high 64 bits of (hash * partitions), hash unsigned
 * </pre>
 */
final class Partitions {
  private Partitions() {}

  private static final LongHashFunction XX = LongHashFunction.xx();

  static long hashMajor(List<String> major) {
    int n = 0;
    byte[][] parts = new byte[major.size()][];
    for (int i = 0; i < parts.length; i++) {
      parts[i] = major.get(i).getBytes(StandardCharsets.UTF_8);
      n += parts[i].length + 2;
      for (byte b : parts[i]) {
        if (b == 0) {
          n++;
        }
      }
    }
    byte[] buf = new byte[n];
    int j = 0;
    for (byte[] p : parts) {
      for (byte b : p) {
        buf[j++] = b;
        if (b == 0) {
          buf[j++] = (byte) 0xFF;
        }
      }
      buf[j++] = 0;
      buf[j++] = 1;
    }
    return XX.hashBytes(buf);
  }

  /** The partition of hash h (unsigned) among {@code partitions}. */
  static int partitionOf(long h, int partitions) {
    long p = partitions & 0xFFFFFFFFL;
    return (int) (Math.multiplyHigh(h, p) + ((h >> 63) & p));
  }
}
