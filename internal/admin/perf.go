package admin

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/cairndb/cairn/api/cairnpb"
	"github.com/cairndb/cairn/internal/admin/controlpb"
	"github.com/cairndb/cairn/internal/latency"
)

// show perf samples every storage node twice, -seconds apart, and reports
// from each node's own counters (Describe: its KV calls and their latency
// histograms, reads and writes apart) what happened in between, and what
// happened since the node started. The store line sums the nodes.

// perfDefaultSeconds is show perf's sampling interval without -seconds.
const perfDefaultSeconds = 2

// perfLatency sums up one histogram, in show perf's JSON. The quantiles
// are the upper bounds of their buckets (internal/latency), -1 when above
// the largest (10 s).
type perfLatency struct {
	Count      uint64  `json:"count"`
	PerSecond  float64 `json:"per_s,omitempty"` // interval only
	MeanMicros int64   `json:"mean_us"`
	P95Micros  int64   `json:"p95_us"`
	P99Micros  int64   `json:"p99_us"`
}

// perfPart is one node's (or the store's) reads and writes over a span.
type perfPart struct {
	Reads  perfLatency `json:"reads"`
	Writes perfLatency `json:"writes"`
	// Failed counts the calls that failed (interval: per second).
	Failed float64 `json:"failed"`
}

// perfNode is one storage node in show perf's JSON.
type perfNode struct {
	SN         uint64    `json:"sn"`
	Addr       string    `json:"addr"`
	Status     string    `json:"status"`     // RUNNING, UNREACHABLE, or RESTARTED (counters went down)
	Interval   *perfPart `json:"interval"`   // null unless RUNNING
	Cumulative *perfPart `json:"cumulative"` // null when it did not answer
}

// perfReport is show perf's JSON.
type perfReport struct {
	Seconds float64    `json:"seconds"`
	Nodes   []perfNode `json:"storage_nodes"`
	Store   perfPart   `json:"store"` // the interval, summed over the nodes
}

// nodeCalls is what one Describe says of a node's KV calls.
type nodeCalls struct {
	reads, writes latency.Snapshot
	errors        uint64
}

// callsOf reads info's calls; ok is false when the node sent no
// histograms (it serves no KV yet) or histograms of other buckets.
func callsOf(info *controlpb.NodeInfo) (nodeCalls, bool) {
	r, okR := info.GetReadLatency().Snapshot()
	w, okW := info.GetWriteLatency().Snapshot()
	return nodeCalls{reads: r, writes: w, errors: info.GetRequestErrors()}, okR && okW
}

// sub is what c holds beyond an earlier before; ok is false when a count
// went down (the node restarted, or reopened its storage).
func (c nodeCalls) sub(before nodeCalls) (nodeCalls, bool) {
	r, okR := c.reads.Sub(before.reads)
	w, okW := c.writes.Sub(before.writes)
	return nodeCalls{reads: r, writes: w, errors: c.errors - before.errors}, okR && okW && c.errors >= before.errors
}

func summarize(s latency.Snapshot, seconds float64) perfLatency {
	l := perfLatency{Count: s.Count(), MeanMicros: s.Mean().Microseconds(),
		P95Micros: quantileMicros(s, 0.95), P99Micros: quantileMicros(s, 0.99)}
	if seconds > 0 {
		l.PerSecond = float64(l.Count) / seconds
	}
	return l
}

func quantileMicros(s latency.Snapshot, q float64) int64 {
	d := s.Quantile(q)
	if d < 0 {
		return -1
	}
	return d.Microseconds()
}

func (c nodeCalls) part(seconds float64) *perfPart {
	p := &perfPart{Reads: summarize(c.reads, seconds), Writes: summarize(c.writes, seconds), Failed: float64(c.errors)}
	if seconds > 0 {
		p.Failed /= seconds
	}
	return p
}

func (s *Service) showPerf(ctx context.Context, a map[string]string) (*cairnpb.AdminReply, error) {
	m, err := s.loadConfigured(ctx)
	if err != nil {
		return nil, err
	}
	seconds := perfDefaultSeconds
	if v := a["seconds"]; v != "" {
		if seconds, err = strconv.Atoi(v); err != nil { // the table checked its bounds
			return nil, usageError("-seconds %q: %v", v, err)
		}
	}
	first, t0 := s.describeAll(ctx, m), time.Now()
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-time.After(time.Duration(seconds) * time.Second):
	}
	second := s.describeAll(ctx, m)
	rep := perfReportOf(m, first, second, time.Since(t0).Seconds())
	return reply(perfText(rep), rep)
}

// perfReportOf compares the nodes' two answers, elapsed seconds apart.
func perfReportOf(m *Meta, first, second map[uint64]*controlpb.NodeInfo, elapsed float64) perfReport {
	rep := perfReport{Seconds: elapsed, Nodes: []perfNode{}}
	var store nodeCalls
	for _, sn := range m.SNs {
		n := perfNode{SN: sn.ID, Addr: sn.Addr(), Status: "UNREACHABLE"}
		now, okNow := callsOf(second[sn.ID])
		if second[sn.ID] != nil && okNow {
			n.Status, n.Cumulative = "RUNNING", now.part(0)
			before, okBefore := callsOf(first[sn.ID])
			if d, ok := now.sub(before); okBefore && ok {
				n.Interval = d.part(elapsed)
				store = nodeCalls{reads: store.reads.Add(d.reads), writes: store.writes.Add(d.writes), errors: store.errors + d.errors}
			} else {
				n.Status = "RESTARTED" // or it did not answer the first time: no interval
			}
		}
		rep.Nodes = append(rep.Nodes, n)
	}
	rep.Store = *store.part(elapsed)
	return rep
}

// perfText is show perf's text.
func perfText(r perfReport) string {
	var b strings.Builder
	fmt.Fprintf(&b, "KV calls over the last %.1f s, and since each node started, as the nodes time them (latency: mean, and the\n", r.Seconds)
	b.WriteString("bucket bounds of the 95th and 99th percentiles):\n")
	for _, n := range r.Nodes {
		fmt.Fprintf(&b, "Storage Node [%s] on %s  Status: %s\n", snName(n.SN), n.Addr, n.Status)
		if n.Interval != nil {
			fmt.Fprintf(&b, "    last %.0f s     %s\n", r.Seconds, perfLine(*n.Interval, true))
		}
		if n.Cumulative != nil {
			fmt.Fprintf(&b, "    since start  %s\n", perfLine(*n.Cumulative, false))
		}
	}
	fmt.Fprintf(&b, "Store, last %.0f s: %s\n", r.Seconds, perfLine(r.Store, true))
	return strings.TrimSuffix(b.String(), "\n")
}

func perfLine(p perfPart, rates bool) string {
	failed := fmt.Sprintf("%d failed", int64(p.Failed))
	if rates {
		failed = fmt.Sprintf("%.1f/s failed", p.Failed)
	}
	return fmt.Sprintf("reads %s   writes %s   %s", latencyText(p.Reads, rates), latencyText(p.Writes, rates), failed)
}

func latencyText(l perfLatency, rates bool) string {
	n := fmt.Sprintf("%d", l.Count)
	if rates {
		n = fmt.Sprintf("%.1f/s", l.PerSecond)
	}
	if l.Count == 0 {
		return n
	}
	return fmt.Sprintf("%s (mean %s, p95 %s, p99 %s)", n, microsText(l.MeanMicros), boundText(l.P95Micros), boundText(l.P99Micros))
}

func boundText(us int64) string {
	if us < 0 {
		return "> 10 s"
	}
	return "≤ " + microsText(us)
}

func microsText(us int64) string {
	switch {
	case us < 1000:
		return fmt.Sprintf("%d µs", us)
	case us < 1000000:
		return fmt.Sprintf("%.3g ms", float64(us)/1000)
	}
	return fmt.Sprintf("%.3g s", float64(us)/1e6)
}
