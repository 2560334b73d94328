/**
 * Cairn's Java client, shaped like Oracle NoSQL Database's {@code oracle.kv}
 * so that an Oracle application ports with small edits.
 *
 * <h2>Example</h2>
 *
 * <pre>{@code
 * try (KVStore store = KVStoreFactory.getStore(new KVStoreConfig("kvstore", "127.0.0.1:5000"))) {
 *   Key k = Key.createKey(List.of("users", "alice"), List.of("email"));
 *   Version v = store.put(k, Value.createValue("a@example.com".getBytes(UTF_8)));
 *   ValueVersion got = store.get(k);                      // null when there is no record
 *   store.putIfVersion(k, Value.createValue(new byte[0]), v);  // null if the version moved on
 * }
 * }</pre>
 *
 * <h2>Invariants</h2>
 *
 * <ol>
 *   <li>Key string forms, the hash of a major path and its partition are
 *       those of the Go and Python clients (api/testdata/keys.json).
 *   <li>Routing follows the Go client (client/route.go): the topology comes
 *       from StoreInfo; a key's major path hashes to a partition and a
 *       shard; writes and {@link io.cairndb.kv.Consistency#ABSOLUTE} reads go
 *       to the shard leader, other reads to the handle's home replica of the
 *       shard (or round robin over its replicas, with
 *       {@link io.cairndb.kv.KVStoreConfig#setSpreadReads});
 *       not_leader hints and wrong_shard's moved_to_shard are followed, and
 *       a stale topology is refreshed.
 *   <li>A write that may have been applied is never retried: it fails with
 *       {@link io.cairndb.kv.FaultException#maybeApplied()} true. Reads and
 *       writes that certainly were not applied are retried with backoff
 *       until the request's timeout.
 *   <li>A conditional write whose condition does not hold returns null or
 *       false; it is not an exception. Bad input is an
 *       {@link io.cairndb.kv.InvalidArgumentException} (an
 *       IllegalArgumentException, action FIX_INPUT); everything else is a
 *       {@link io.cairndb.kv.FaultException} carrying the server's kind and
 *       action.
 *   <li>{@link io.cairndb.kv.KVStore#execute} is atomic within one major
 *       path; {@link io.cairndb.kv.KVStore#putMany} is atomic per batch only.
 * </ol>
 *
 * <h2>Concurrency</h2>
 *
 * A {@link io.cairndb.kv.KVStore} is thread-safe: share one handle among all
 * threads. It holds one gRPC channel per node, shared by all threads, and
 * makes blocking calls on the caller's thread (no thread hand-off per
 * operation). Iterators, {@link io.cairndb.kv.ReturnValueVersion},
 * {@link io.cairndb.kv.KVStoreConfig} and the option classes are not
 * thread-safe: one per thread or call. Keys, values, versions, durability
 * and consistency objects are immutable (a Value does not copy its array:
 * do not change it while in use).
 */
package io.cairndb.kv;
