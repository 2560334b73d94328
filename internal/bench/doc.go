// Package bench is cairn bench: a YCSB-compatible benchmark client running
// YCSB's core workload (site.ycsb.workloads.CoreWorkload) against a Cairn
// store. It reads YCSB property files and options, reproduces YCSB's key
// names, distributions and operation semantics, and prints YCSB's text
// summary line for line, so YCSB results and scripts carry over.
//
//	cairn bench load -P workloads/workloada -p recordcount=1000000 -threads 16
//	cairn bench run  -P workloads/workloada -p recordcount=1000000 \
//	    -p operationcount=1000000 -threads 16 -s -p exportfile=a.json
//
// Package dist holds the generators; package result the JSON document
// written by -p exportfile and read by cairn bench report.
//
// # Pieces
//
//   - ParseArgs reads the command line: -P files in order (later ones win),
//     then -p, -threads, -target, -db, -s and -l, which win over every file.
//   - NewConfig checks every property against an allow-list (an unknown
//     one is an error naming the nearest known name) and validates values
//     (bad numbers, proportions that do not sum to 1 within 1e-9); every
//     error is a *UsageError naming the property and where it was set.
//   - NewWorkload builds the shared generators; each client goroutine runs
//     a worker (YCSB's ClientThread plus the per-thread half of
//     CoreWorkload) against its own DB from a Binding: null, cairn (the
//     public Go client) or embedded (storage + replica + server handlers in
//     this process, no network).
//   - Run measures, merges and prints (WriteText), and builds the result.
//     With cairn.cpuprofile=FILE it writes a Go CPU profile of this process
//     over the measured phase (with -db embedded: generator, server
//     handlers, replica and Pebble together).
//
// # Invariants
//
//   - Key names are YCSB's: "user" + FNVHash64(keynum) (or keynum with
//     insertorder=ordered), zero-padded to zeropadding digits.
//   - A run reads only keys whose insert was acknowledged (YCSB's
//     AcknowledgedCounter), so a record missing during a run is an error of
//     the store, not of the benchmark.
//   - With dataintegrity=true every field value is a function of key and
//     field name (YCSB's buildDeterministicValue) and every read and scanned
//     record is checked. A record that does not verify is counted under
//     [VERIFY] (Return=UNEXPECTED_STATE; ERROR when no data came back), its
//     read is reported as Return=ERROR, the result document's integrity
//     counts it, and Run returns ErrIntegrity (exit status 1). It is never
//     ignored.
//   - Latencies are microseconds in HDR histograms (1 us to 1 hour, 3
//     significant digits, as YCSB's Recorder(3)). A failed operation's
//     latency goes to OP-FAILED and its return code to OP, as YCSB's
//     DBWrapper does.
//
// # Concurrency
//
// Run starts one goroutine per client thread. Each owns its Rand (PCG,
// stream = thread number, seed cairn.seed), buffers, DB and histograms:
// the per-operation path takes no locks and, against -db null, allocates
// nothing. The only shared writes are the load key counter, the insert
// counter of a run (atomics; an Acknowledge may take a try-lock) and the
// sequential distribution's counter. A monitor goroutine reads each
// thread's atomic operation count every second (the throughput series, and
// the status line with -s). Histograms are merged after the threads end.
// With -target each thread sleeps until its next slot (target/threads per
// second) and, unless measurement.interval=op, also records latency from
// that intended start (Intended-OP), so coordinated omission shows.
//
// # Record layouts (cairn.layout)
//
// value (default): the record is one value under the key /<table>/<key>,
// a field record (api/fieldrec: version byte, field count, then length-
// prefixed name and value per field). A read is one get; an insert one
// put; an update of all fields one put-if-present; an update of some
// fields one put that the server merges into the stored record
// (cairn.update=merge, the default), or a get and a put-if-version,
// retried if the record changed (cairn.update=rmw).
//
// minor: one record per field under /<table>/<key>/-/<field>, as Oracle
// NoSQL's YCSB binding stores records. A read of several fields is one
// multi-get of the major path (a read of one field one get); an insert or
// update is one atomic execute of the field puts.
//
// # Scans (workload E)
//
// Cairn, like Oracle NoSQL, keeps records in hash-partitioned order: they
// are sorted within a partition but not across partitions, so there is no
// cheap "the next N keys after startkey". A YCSB scan is therefore run the
// way Oracle NoSQL's YCSB binding runs it: a store iterator under the parent
// /<table> with a key range starting at startkey (inclusive) on the key
// component, taking the first N records (N distinct keys in the minor
// layout) it yields. The records returned are all at or after startkey, but
// they are not the N keys that follow it in key order, and which ones come
// back depends on the partitioning. Scan numbers compare with other
// stores' only as "N-record range reads", not as ordered scans.
//
// # Differences from YCSB
//
//   - Random streams are Go PCG, not java.util.Random: same distributions,
//     different sequences. Keys and values are never truncated to Java ints.
//   - recordcount must be set (YCSB silently uses 2^31-1 for 0); a load
//     inserts insertcount records (default recordcount - insertstart).
//   - Out-of-range hotspot fractions and empty hot or cold sets are errors
//     (YCSB substitutes 0 or divides by zero).
//   - exportfile receives the JSON result document (package result); the
//     text summary always goes to stdout. hdrhistogram.percentiles defaults
//     to 50,95,99,99.9 (YCSB: 50,95,99); 99.9 prints as
//     99.9thPercentileLatency(us) (YCSB would print 99.9PercentileLatency).
//   - With -target, measurement.interval defaults to both.
//   - Status lines match YCSB's up to "est completion in ..."; YCSB's
//     per-operation latency summaries are not appended.
//   - The GC lines are [TOTAL_GCs], [TOTAL_GC_TIME] and [TOTAL_GC_TIME_%]
//     (Go has one collector; the time is stop-the-world pause time).
//   - Random field values are printable ASCII from ' ' to '_'.
package bench
