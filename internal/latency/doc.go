// Package latency keeps histograms of durations in fixed buckets, cheaply
// enough to record on every KV call and every WAL fsync: a Record is a
// short scan of the bounds and two atomic adds, and takes no lock.
//
// The buckets are the same for every histogram (Bounds), so two
// histograms' snapshots can be added and subtracted bucket by bucket, and
// a node's admin, its console and its metrics endpoint agree on them:
//
//	bucket i counts durations d with Bounds[i-1] < d <= Bounds[i]
//	bucket 0 counts d <= Bounds[0], the last one d > Bounds[len-1] (+Inf)
//
//	  20µs 50µs 100µs 200µs 500µs 1ms 2ms 5ms 10ms 20ms 50ms
//	  100ms 200ms 500ms 1s 2s 5s 10s +Inf
//
// # Concurrency
//
// Record and Snapshot are safe from any goroutine. A Snapshot taken while
// Records run is not one instant: each bucket and the sum are read one
// after the other, so the sum may hold a duration whose bucket was read
// before it was counted. The count is the buckets' total, so the buckets
// and the count always agree.
package latency
