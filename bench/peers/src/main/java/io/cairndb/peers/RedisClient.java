package io.cairndb.peers;

import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.Vector;
import java.util.concurrent.atomic.AtomicLong;
import redis.clients.jedis.Jedis;
import redis.clients.jedis.exceptions.JedisException;
import site.ycsb.ByteIterator;
import site.ycsb.DB;
import site.ycsb.DBException;
import site.ycsb.Status;
import site.ycsb.StringByteIterator;

/**
 * YCSB's {@code DB} over Redis with Jedis, issuing the commands YCSB 0.17.0's
 * redis binding issues (that binding is not on Maven Central): a record is
 * one hash under its YCSB key.
 *
 * <ul>
 *   <li>insert: {@code HMSET key f1 v1 ... f10 v10}, then {@code ZADD _indices
 *       hash(key) key}, the sorted set scans walk (hash is Java's {@code
 *       String.hashCode()});
 *   <li>read: {@code HGETALL key} for all fields, {@code HMGET key f...} for
 *       some; {@code NOT_FOUND} when the hash has none of them;
 *   <li>update: {@code HMSET key f v ...} of the fields given;
 *   <li>delete: {@code DEL key} and {@code ZREM _indices key};
 *   <li>scan: {@code ZRANGEBYSCORE _indices hash(start) +inf LIMIT 0 n}, then
 *       a read of each key.
 * </ul>
 *
 * <p>Values travel as strings, as in YCSB's binding (YCSB's random values are
 * ASCII, so the bytes on the wire are the values' bytes).
 *
 * <p>Properties: {@code redis.host} (localhost), {@code redis.port} (6379),
 * {@code redis.password} (none), {@code redis.timeout} (socket timeout in
 * milliseconds, 2000).
 *
 * <p>YCSB makes one instance per client thread; each holds one connection.
 */
public class RedisClient extends DB {
  /** The sorted set of every inserted key, scored by its hash. */
  static final String INDEX_KEY = "_indices";
  /** Errors printed in full; later ones are only counted. */
  private static final long PRINTED_ERRORS = 10;

  private static final AtomicLong ERRORS = new AtomicLong();

  private Jedis jedis;

  @Override
  public void init() throws DBException {
    Properties p = getProperties();
    String host = p.getProperty("redis.host", "localhost");
    int port = intProperty(p, "redis.port", 6379);
    int timeout = intProperty(p, "redis.timeout", 2000);
    try {
      jedis = new Jedis(host, port, timeout);
      jedis.connect();
      String password = p.getProperty("redis.password");
      if (password != null && !password.isEmpty()) {
        jedis.auth(password);
      }
    } catch (JedisException e) {
      throw new DBException("redis at " + host + ":" + port + ": " + e.getMessage(), e);
    }
  }

  @Override
  public void cleanup() throws DBException {
    if (jedis != null) {
      try {
        jedis.close();
      } catch (JedisException e) {
        throw new DBException(e);
      }
    }
    long n = ERRORS.get();
    if (n > PRINTED_ERRORS) {
      System.err.println("RedisClient: " + n + " errors (first " + PRINTED_ERRORS + " printed)");
    }
  }

  private static int intProperty(Properties p, String name, int dflt) throws DBException {
    String v = p.getProperty(name);
    if (v == null || v.isEmpty()) {
      return dflt;
    }
    try {
      return Integer.parseInt(v.trim());
    } catch (NumberFormatException e) {
      throw new DBException(name + "=" + v + ": not an integer");
    }
  }

  private static double hash(String key) {
    return key.hashCode();
  }

  private static Status failed(String op, String key, RuntimeException e) {
    if (ERRORS.incrementAndGet() <= PRINTED_ERRORS) {
      System.err.println("RedisClient: " + op + " " + key + ": " + e);
    }
    return Status.ERROR;
  }

  @Override
  public Status read(String table, String key, Set<String> fields, Map<String, ByteIterator> result) {
    try {
      if (fields == null) {
        StringByteIterator.putAllAsByteIterators(result, jedis.hgetAll(key));
      } else {
        String[] names = fields.toArray(new String[0]);
        List<String> values = jedis.hmget(key, names);
        Iterator<String> it = values.iterator();
        for (String name : names) {
          String v = it.next();
          if (v != null) {
            result.put(name, new StringByteIterator(v));
          }
        }
      }
    } catch (JedisException e) {
      return failed("read", key, e);
    }
    return result.isEmpty() ? Status.NOT_FOUND : Status.OK;
  }

  @Override
  public Status insert(String table, String key, Map<String, ByteIterator> values) {
    try {
      if (!"OK".equals(jedis.hmset(key, StringByteIterator.getStringMap(values)))) {
        return Status.ERROR;
      }
      jedis.zadd(INDEX_KEY, hash(key), key);
      return Status.OK;
    } catch (JedisException e) {
      return failed("insert", key, e);
    }
  }

  @Override
  public Status update(String table, String key, Map<String, ByteIterator> values) {
    try {
      return "OK".equals(jedis.hmset(key, StringByteIterator.getStringMap(values))) ? Status.OK : Status.ERROR;
    } catch (JedisException e) {
      return failed("update", key, e);
    }
  }

  @Override
  public Status delete(String table, String key) {
    try {
      long deleted = jedis.del(key);
      long unindexed = jedis.zrem(INDEX_KEY, key);
      return deleted == 0 && unindexed == 0 ? Status.NOT_FOUND : Status.OK;
    } catch (JedisException e) {
      return failed("delete", key, e);
    }
  }

  @Override
  public Status scan(String table, String startkey, int recordcount, Set<String> fields,
      Vector<HashMap<String, ByteIterator>> result) {
    Set<String> keys;
    try {
      keys = jedis.zrangeByScore(INDEX_KEY, hash(startkey), Double.POSITIVE_INFINITY, 0, recordcount);
    } catch (JedisException e) {
      return failed("scan", startkey, e);
    }
    for (String key : keys) {
      HashMap<String, ByteIterator> values = new HashMap<>();
      Status s = read(table, key, fields, values);
      if (s == Status.ERROR) {
        return s;
      }
      result.add(values);
    }
    return Status.OK;
  }
}
