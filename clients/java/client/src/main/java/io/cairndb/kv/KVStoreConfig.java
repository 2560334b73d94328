package io.cairndb.kv;

import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * How to reach a store, and the defaults of its operations, as
 * {@code oracle.kv.KVStoreConfig}. Not thread-safe; the store handle takes a
 * copy of the settings when it opens.
 */
public class KVStoreConfig {
  private final String storeName;
  private final List<String> helperHosts;
  private long requestTimeoutMs = 5_000;
  private long connectTimeoutMs = 2_000;
  private Consistency consistency = Consistency.NONE_REQUIRED;
  private Durability durability = Durability.COMMIT_WRITE_NO_SYNC;
  private String trustedCAFile;
  private String user;
  private String password;
  private boolean spreadReads;
  private boolean unaryCalls;
  private boolean callSocket = true;

  /**
   * @param storeName the store's name (a node serving another store is refused)
   * @param helperHostPort "host:port" of any nodes of the store, or of a cairn lite
   */
  public KVStoreConfig(String storeName, String... helperHostPort) {
    if (storeName == null || storeName.isEmpty()) {
      throw new IllegalArgumentException("KVStoreConfig: no store name");
    }
    if (helperHostPort == null || helperHostPort.length == 0) {
      throw new IllegalArgumentException("KVStoreConfig: no helper hosts (host:port of any node)");
    }
    for (String h : helperHostPort) {
      if (h == null || h.lastIndexOf(':') <= 0 || h.endsWith(":")) {
        throw new IllegalArgumentException("KVStoreConfig: helper host \"" + h + "\" is not host:port");
      }
    }
    this.storeName = storeName;
    this.helperHosts = List.copyOf(Arrays.asList(helperHostPort));
  }

  public String getStoreName() {
    return storeName;
  }

  public String[] getHelperHosts() {
    return helperHosts.toArray(new String[0]);
  }

  /** Each operation's default timeout (default 5 s). */
  public KVStoreConfig setRequestTimeout(long timeout, TimeUnit unit) {
    this.requestTimeoutMs = positive(timeout, unit, "request timeout");
    return this;
  }

  public long getRequestTimeout(TimeUnit unit) {
    return unit.convert(requestTimeoutMs, TimeUnit.MILLISECONDS);
  }

  /** How long an attempt waits for a connection to a node before trying another (default 2 s). */
  public KVStoreConfig setSocketOpenTimeout(long timeout, TimeUnit unit) {
    this.connectTimeoutMs = positive(timeout, unit, "socket open timeout");
    return this;
  }

  public long getSocketOpenTimeout(TimeUnit unit) {
    return unit.convert(connectTimeoutMs, TimeUnit.MILLISECONDS);
  }

  /** The default consistency of reads (default NONE_REQUIRED). */
  public KVStoreConfig setConsistency(Consistency consistency) {
    if (consistency == null) {
      throw new IllegalArgumentException("KVStoreConfig: consistency is null");
    }
    this.consistency = consistency;
    return this;
  }

  public Consistency getConsistency() {
    return consistency;
  }

  /**
   * Send each read that any replica may serve (NONE_REQUIRED, time lag,
   * version consistency) round robin over the shard's replicas. By default
   * (false) a store handle sends them to its home replica of the shard,
   * chosen per handle so that handles spread over the nodes: one node then
   * serves them more cheaply, and the handle sees that replica's state only
   * move forward. Spreading lets one handle use every replica.
   */
  public KVStoreConfig setSpreadReads(boolean spread) {
    this.spreadReads = spread;
    return this;
  }

  public boolean getSpreadReads() {
    return spreadReads;
  }

  /**
   * Make every call its own unary gRPC request. By default (false) a
   * connection carries gets, multi-gets and writes on one long-lived call
   * stream (cairn.v1.KVStream), where a call costs one DATA frame each way
   * instead of a new HTTP/2 stream with headers and trailers; with a login,
   * the stream carries the session's token and the node checks every call.
   * A store without the stream (an older server) is called unary anyway.
   */
  public KVStoreConfig setUnaryCalls(boolean unary) {
    this.unaryCalls = unary;
    return this;
  }

  public boolean getUnaryCalls() {
    return unaryCalls;
  }

  /**
   * Make gets, multi-gets and writes on the node's call socket (default
   * true): the call stream's calls, framed by a length on a plain TCP (or
   * TLS) connection instead of HTTP/2 and gRPC, one call at a time per
   * connection, each sent and its answer read by the calling thread. It
   * costs the client and the node less CPU per call than the gRPC stream.
   * False: calls go on the gRPC call stream. A node without the call
   * socket (an older server, or one run with --no-http) is called on the
   * stream anyway. setUnaryCalls(true) overrides both.
   */
  public KVStoreConfig setCallSocket(boolean callSocket) {
    this.callSocket = callSocket;
    return this;
  }

  public boolean getCallSocket() {
    return callSocket;
  }

  /** The default durability of writes (default COMMIT_WRITE_NO_SYNC, the server's). */
  public KVStoreConfig setDurability(Durability durability) {
    if (durability == null) {
      throw new IllegalArgumentException("KVStoreConfig: durability is null");
    }
    this.durability = durability;
    return this;
  }

  public Durability getDurability() {
    return durability;
  }

  /**
   * A secure store (TLS): the login file that {@code cairn lite --secure} or
   * {@code cairn security init} writes (ROOT/security/client.security). It
   * names the store CA ({@code cairn.ssl.ca=...}; a relative path is read
   * from the login file's directory), as Oracle's {@code oracle.kv.security}
   * file names its trust store.
   */
  public KVStoreConfig setSecurityFile(String loginFile) {
    setTrustedCAFile(Login.caFile(loginFile));
    String u = Login.user(loginFile);
    if (u != null) {
      setCredentials(u, Login.password(loginFile));
    }
    return this;
  }

  /**
   * Log in to a secure store as user: the store opens with a login, every call carries the session token, and the
   * client renews it before it expires. Needs the store CA ({@link #setTrustedCAFile}); a login never travels in
   * plaintext.
   */
  public KVStoreConfig setCredentials(String user, String password) {
    this.user = user;
    this.password = password;
    return this;
  }

  public String getUser() {
    return user;
  }

  String getPassword() {
    return password;
  }

  /** A secure store (TLS): the store CA's certificate (ca.pem). Null: plaintext. */
  public KVStoreConfig setTrustedCAFile(String caFile) {
    if (caFile != null && !java.nio.file.Files.isReadable(java.nio.file.Path.of(caFile))) {
      throw new IllegalArgumentException("KVStoreConfig: the store CA " + caFile + " is not a readable file");
    }
    this.trustedCAFile = caFile;
    return this;
  }

  public String getTrustedCAFile() {
    return trustedCAFile;
  }

  private static long positive(long n, TimeUnit unit, String what) {
    if (n <= 0 || unit == null) {
      throw new IllegalArgumentException("KVStoreConfig: " + what + " must be positive with a unit");
    }
    return Math.max(unit.toMillis(n), 1);
  }
}
