package node

import (
	"github.com/cairndb/cairn/internal/metrics"
	"github.com/cairndb/cairn/internal/replica"
)

// metrics is what the lite node reports at a scrape of /metrics.
func (n *Lite) metrics() metrics.Snapshot {
	st := n.engine.Stats()
	ls := n.replica.Stats()
	cs := n.calls.Stats()
	return metrics.Snapshot{Storage: &st, Local: &ls, Requests: n.kv.Stats(), Streams: &cs}
}

// metrics is what the storage node reports at a scrape of /metrics: its
// engine and the replicas running now; nothing of either while a heal
// closes and replaces them (enter).
func (n *SN) metrics() metrics.Snapshot {
	var s metrics.Snapshot
	release, err := n.enter()
	if err != nil {
		return s
	}
	defer release()
	if e := n.engine(); e != nil {
		st := e.Stats()
		s.Storage = &st
	}
	if kv := n.kv.Load(); kv != nil {
		s.Requests = kv.Stats()
	}
	if n.calls != nil {
		cs := n.calls.Stats()
		s.Streams = &cs
	}
	n.mu.RLock()
	defer n.mu.RUnlock()
	s.Shards = make([]replica.RaftStats, 0, len(n.replicas))
	for _, r := range n.replicas {
		s.Shards = append(s.Shards, r.Stats())
	}
	return s
}
