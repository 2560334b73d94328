/**
 * Cairn's YCSB binding: {@link io.cairndb.ycsb.CairnClient}, a
 * {@code site.ycsb.DB} for the real YCSB client (built against
 * {@code site.ycsb:core:0.17.0}), over Cairn's Java client.
 *
 * <p>It stores records exactly as {@code cairn bench -db cairn} does
 * (internal/bench/db_kv.go) and reads the same {@code cairn.*} properties, so
 * one property file drives both and a store loaded by one can be run by the
 * other:
 *
 * <ul>
 *   <li>{@code cairn.layout=value} (default): one value per record under
 *       {@code /<table>/<key>}, encoded by {@link io.cairndb.ycsb.RecordCodec}
 *       (drawn there byte by byte; golden records from Go in the tests).
 *   <li>{@code cairn.layout=minor}: one record per field under
 *       {@code /<table>/<key>/-/<field>}, as Oracle NoSQL's nosqldb binding.
 * </ul>
 *
 * <p>Invariants: every YCSB thread has its own {@code CairnClient} and its
 * own scratch space; all of them share one {@code KVStore}, opened by the
 * first {@code init()} and closed by the last {@code cleanup()}. The binding
 * starts no threads. An operation returns {@code OK}, {@code NOT_FOUND} (the
 * record is missing; a conditional write found nothing) or {@code ERROR}
 * (a {@code FaultException}, a value that is not a record, or a partial
 * update that lost the race to other writers 10 times); errors are printed
 * to stderr, the first 10 in full.
 *
 * <p>Run: {@code make ycsb} (scripts/ycsb.sh), or by hand as in
 * docs/porting-from-oracle.md.
 */
package io.cairndb.ycsb;
