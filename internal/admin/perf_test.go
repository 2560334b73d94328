package admin

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/cairndb/cairn/internal/admin/controlpb"
	"github.com/cairndb/cairn/internal/latency"
)

// calls is a NodeInfo whose reads took d each, n of them, and writes w of
// 3 ms, with errs failed calls.
func calls(n uint64, d time.Duration, w uint64, errs uint64) *controlpb.NodeInfo {
	var r, wr latency.Histogram
	for range n {
		r.Record(d)
	}
	for range w {
		wr.Record(3 * time.Millisecond)
	}
	rs, ws := r.Snapshot(), wr.Snapshot()
	return &controlpb.NodeInfo{RequestErrors: errs,
		ReadLatency:  &controlpb.Latency{Counts: rs.Counts[:], SumMicros: uint64(rs.Sum.Microseconds())},
		WriteLatency: &controlpb.Latency{Counts: ws.Counts[:], SumMicros: uint64(ws.Sum.Microseconds())}}
}

// TestPerfReport: show perf takes each node's calls between its two
// answers as the interval, and its counts as the cumulative figures; a
// node that did not answer is UNREACHABLE, one whose counts went down
// RESTARTED with no interval; the store sums the intervals.
func TestPerfReport(t *testing.T) {
	m := &Meta{SNs: []SN{{ID: 1, Host: "h", Port: 1}, {ID: 2, Host: "h", Port: 2}, {ID: 3, Host: "h", Port: 3}, {ID: 4, Host: "h", Port: 4}}}
	first := map[uint64]*controlpb.NodeInfo{
		1: calls(100, 40*time.Microsecond, 10, 1),
		2: calls(10, 40*time.Microsecond, 0, 0),
		4: calls(500, 40*time.Microsecond, 0, 0),
	}
	second := map[uint64]*controlpb.NodeInfo{
		1: calls(300, 40*time.Microsecond, 30, 5), // 200 reads, 20 writes, 4 failures in 2 s
		2: calls(10, 40*time.Microsecond, 0, 0),   // nothing
		4: calls(5, 40*time.Microsecond, 0, 0),    // restarted
	}
	rep := perfReportOf(m, first, second, 2)
	n1, n2, n3, n4 := rep.Nodes[0], rep.Nodes[1], rep.Nodes[2], rep.Nodes[3]
	if n1.Status != "RUNNING" || n1.Interval.Reads.PerSecond != 100 || n1.Interval.Writes.PerSecond != 10 || n1.Interval.Failed != 2 {
		t.Errorf("sn1's interval: %+v", n1.Interval)
	}
	if n1.Interval.Reads.P99Micros != 50 || n1.Interval.Writes.P99Micros != 5000 || n1.Interval.Reads.MeanMicros != 40 {
		t.Errorf("sn1's interval latency: reads %+v, writes %+v", n1.Interval.Reads, n1.Interval.Writes)
	}
	if n1.Cumulative.Reads.Count != 300 || n1.Cumulative.Failed != 5 || n1.Cumulative.Reads.PerSecond != 0 {
		t.Errorf("sn1's cumulative figures: %+v", n1.Cumulative)
	}
	if n2.Interval == nil || n2.Interval.Reads.Count != 0 || n2.Cumulative.Reads.Count != 10 {
		t.Errorf("sn2 (idle): %+v %+v", n2.Interval, n2.Cumulative)
	}
	if n3.Status != "UNREACHABLE" || n3.Interval != nil || n3.Cumulative != nil {
		t.Errorf("sn3 (no answer): %+v", n3)
	}
	if n4.Status != "RESTARTED" || n4.Interval != nil || n4.Cumulative.Reads.Count != 5 {
		t.Errorf("sn4 (restarted): %+v", n4)
	}
	if rep.Store.Reads.Count != 200 || rep.Store.Writes.Count != 20 || rep.Store.Failed != 2 {
		t.Errorf("the store's interval: %+v", rep.Store)
	}
	text := perfText(rep)
	for _, want := range []string{
		"Storage Node [sn1] on h:1  Status: RUNNING",
		"last 2 s     reads 100.0/s (mean 40 µs, p95 ≤ 50 µs, p99 ≤ 50 µs)   writes 10.0/s (mean 3 ms, p95 ≤ 5 ms, p99 ≤ 5 ms)   2.0/s failed",
		"since start  reads 300 (mean 40 µs",
		"Storage Node [sn3] on h:3  Status: UNREACHABLE",
		"Store, last 2 s: reads 100.0/s",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("show perf's text lacks %q:\n%s", want, text)
		}
	}
	if _, err := json.Marshal(rep); err != nil {
		t.Fatal(err)
	}
}
