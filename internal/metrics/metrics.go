package metrics

import (
	"net/http"
	"strconv"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/cairndb/cairn/internal/latency"
	"github.com/cairndb/cairn/internal/replica"
	"github.com/cairndb/cairn/internal/server"
	"github.com/cairndb/cairn/internal/storage"
)

// Snapshot is what a node reports at one scrape. Storage is nil while the
// node has no engine open; Local is set on cairn lite, Shards on a storage
// node (one entry per replica it runs); Requests on both.
type Snapshot struct {
	Storage  *storage.Stats
	Local    *replica.LocalStats
	Shards   []replica.RaftStats
	Requests []server.OpStats    // the KV methods' calls (none before the node serves)
	Streams  *server.StreamStats // clients' call streams and sockets (nil before the node serves)
}

// Handler serves GET /metrics from snap, with the Go runtime's and the
// process's collectors.
func Handler(snap func() Snapshot) http.Handler {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	reg.MustRegister(collector{snap: snap})
	return promhttp.HandlerFor(reg, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError})
}

// collector turns each scrape's Snapshot into constant metrics.
type collector struct {
	snap func() Snapshot
}

// Describe sends nothing: the collector is unchecked, since the shards it
// reports come and go with the topology.
func (collector) Describe(chan<- *prometheus.Desc) {}

func (c collector) Collect(ch chan<- prometheus.Metric) {
	s := c.snap()
	if s.Storage != nil {
		collectStorage(ch, s.Storage)
	}
	if s.Local != nil {
		counter(ch, applyGroups, s.Local.Groups)
		counter(ch, applyCommands, s.Local.Commands)
		gauge(ch, appliedIndex, s.Local.Applied, "0")
	}
	for _, r := range s.Shards {
		collectShard(ch, r)
	}
	for _, o := range s.Requests {
		counter(ch, requests, o.Calls, o.Op)
		counter(ch, requestErrors, o.Errors, o.Op)
		histogram(ch, requestTime, o.Time, o.Op)
	}
	if st := s.Streams; st != nil {
		gauge(ch, callStreams, st.Streams, "grpc")
		gauge(ch, callStreams, st.Sockets, "socket")
		counter(ch, callSockets, st.SocketsTotal)
	}
}

func collectStorage(ch chan<- prometheus.Metric, st *storage.Stats) {
	counter(ch, commits, st.Commits)
	counter(ch, commitKeys, st.CommitKeys)
	counter(ch, commitBytes, st.CommitBytes)
	counter(ch, walFsyncs, st.WALSyncs)
	histogram(ch, walFsyncTime, st.WALSyncTime)
	counter(ch, flushes, st.Flushes)
	counter(ch, compactions, st.Compactions)
	gauge(ch, memtableBytes, st.MemtableBytes)
	gauge(ch, l0Files, st.L0Files)
	gauge(ch, diskBytes, st.DiskBytes)
	counter(ch, rowHits, st.RowHits)
	counter(ch, rowMisses, st.RowMisses)
	gauge(ch, rowEntries, st.RowEntries)
}

func collectShard(ch chan<- prometheus.Metric, r replica.RaftStats) {
	shard := strconv.FormatUint(r.Shard, 10)
	leader := uint64(0)
	if r.Leader {
		leader = 1
	}
	gauge(ch, appliedIndex, r.Applied, shard)
	gauge(ch, raftLeader, leader, shard)
	gauge(ch, raftTerm, r.Term, shard)
	gauge(ch, raftCommit, r.Commit, shard)
	counter(ch, raftReadies, r.Readies, shard)
	counter(ch, raftAppended, r.Appended, shard)
	counter(ch, raftApplied, r.ApplyEntries, shard)
	counter(ch, raftSent, r.Sent, shard)
}

func counter(ch chan<- prometheus.Metric, d *prometheus.Desc, v uint64, labels ...string) {
	ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, float64(v), labels...)
}

// histogram sends h with Prometheus's cumulative buckets, in seconds.
func histogram(ch chan<- prometheus.Metric, d *prometheus.Desc, h latency.Snapshot, labels ...string) {
	buckets := make(map[float64]uint64, len(latency.Bounds))
	var below uint64
	for i, b := range latency.Bounds {
		below += h.Counts[i]
		buckets[b.Seconds()] = below
	}
	ch <- prometheus.MustNewConstHistogram(d, h.Count(), h.Sum.Seconds(), buckets, labels...)
}

func gauge(ch chan<- prometheus.Metric, d *prometheus.Desc, v uint64, labels ...string) {
	ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, float64(v), labels...)
}
