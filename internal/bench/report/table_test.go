package report

import (
	"slices"
	"testing"

	"github.com/cairndb/cairn/internal/bench/result"
)

func cellTexts(cs []cell) []string {
	var out []string
	for _, c := range cs {
		out = append(out, c.Text)
	}
	return out
}

func onePhase(t *testing.T, inputs ...Input) *phase {
	t.Helper()
	phases, err := prepare(inputs)
	if err != nil {
		t.Fatal(err)
	}
	if len(phases) != 1 {
		t.Fatalf("%d phases, want 1", len(phases))
	}
	return phases[0]
}

func TestLatencyTableGroupsByRun(t *testing.T) {
	a := plain("run", "workloada", "zipfian", 1000, 4, "UPDATE", "READ")
	b := plain("run", "workloada", "zipfian", 10000, 4, "READ")
	a.Run.Ops[0].Latency = result.Latency{AvgUs: 250.4, P50Us: 200, P95Us: 400, P99Us: 900, P999Us: 1500, MaxUs: 12345}
	a.Run.Ops[0].Count = 1234567
	p := onePhase(t, b, a)
	tb := latencyTable(p)
	if got, want := cellTexts(tb.Head), []string{"Workload", "Distribution", "Records", "Operation", "Count",
		"Avg (µs)", "p50 (µs)", "p95 (µs)", "p99 (µs)", "p99.9 (µs)", "Max (µs)"}; !slices.Equal(got, want) {
		t.Errorf("head = %q, want %q", got, want)
	}
	var rows [][]string
	var firsts []bool
	for _, r := range tb.Rows {
		rows = append(rows, cellTexts(r.Cells))
		firsts = append(firsts, r.First)
	}
	want := [][]string{
		{"workloada", "zipfian", "1,000", "READ", "1", "0.0", "0", "0", "0", "0", "0"},
		{"", "", "", "UPDATE", "1,234,567", "250", "200", "400", "900", "1,500", "12,345"},
		{"workloada", "zipfian", "10,000", "READ", "1", "0.0", "0", "0", "0", "0", "0"},
	}
	if !slices.EqualFunc(rows, want, slices.Equal) {
		t.Errorf("rows =\n%q\nwant\n%q", rows, want)
	}
	if !slices.Equal(firsts, []bool{true, false, true}) {
		t.Errorf("group starts = %v, want each run's first row", firsts)
	}
	if tb.Rows[0].Cells[0].Swatch == "" || tb.Rows[1].Cells[0].Swatch != "" {
		t.Error("the swatch should mark only a run's first row")
	}
}

func TestLatencyTableReturns(t *testing.T) {
	a := plain("run", "w", "zipfian", 1000, 4, "READ", "UPDATE")
	a.Run.Ops[0].Returns = map[string]int64{"OK": 90, "NOT_FOUND": 10}
	a.Run.Ops[1].Returns = map[string]int64{"OK": 90, "ERROR": 3, "NOT_FOUND": 0}
	tb := latencyTable(onePhase(t, a))
	if last := tb.Head[len(tb.Head)-1].Text; last != "Other returns" {
		t.Fatalf("last column %q, want Other returns", last)
	}
	for i, want := range []cell{{Text: "NOT_FOUND 10"}, {Text: "ERROR 3", Bad: true}} {
		if got := tb.Rows[i].Cells[len(tb.Rows[i].Cells)-1]; got != want {
			t.Errorf("row %d returns cell = %+v, want %+v", i, got, want)
		}
	}
	clean := latencyTable(onePhase(t, plain("run", "w", "zipfian", 1000, 4, "READ")))
	if slices.ContainsFunc(clean.Head, func(c cell) bool { return c.Text == "Other returns" }) {
		t.Error("a returns column without any non-OK return")
	}
}

func TestIntendedAndIntegrityTables(t *testing.T) {
	a := plain("run", "w", "zipfian", 1000, 4, "READ", "UPDATE")
	a.Run.TargetOpsSec = 5000
	a.Run.Ops[1].Intended = &result.Latency{AvgUs: 900, P99Us: 4000, P999Us: 9000}
	a.Run.Integrity = &result.Integrity{Checked: 1000, Mismatches: 2}
	b := plain("run", "w", "uniform", 1000, 4, "READ")
	b.Run.Integrity = &result.Integrity{Checked: 500}
	c := plain("run", "w", "latest", 1000, 4, "READ")
	p := onePhase(t, a, b, c)

	if !hasIntended(p) {
		t.Fatal("hasIntended = false")
	}
	it := intendedTable(p)
	if len(it.Rows) != 1 {
		t.Fatalf("intended rows = %d, want 1 (only UPDATE of one run has them)", len(it.Rows))
	}
	if got, want := cellTexts(it.Rows[0].Cells), []string{"w", "zipfian", "5,000", "UPDATE", "0.0", "900", "0", "4,000", "0", "9,000"}; !slices.Equal(got, want) {
		t.Errorf("intended row = %q, want %q", got, want)
	}

	gt, ok := integrityTable(p)
	if !ok || len(gt.Rows) != 2 {
		t.Fatalf("integrity table ok=%v rows=%d, want 2 rows", ok, len(gt.Rows))
	}
	// Sorted: uniform (clean) before zipfian (2 mismatches).
	if gt.Rows[0].Bad || !gt.Rows[1].Bad || !gt.Rows[1].Cells[len(gt.Rows[1].Cells)-1].Bad {
		t.Errorf("bad rows = %v, %v; want only the zipfian run's", gt.Rows[0].Bad, gt.Rows[1].Bad)
	}
	if _, ok := integrityTable(onePhase(t, c)); ok {
		t.Error("integrity table for runs that checked nothing")
	}
}

func TestGroupInt(t *testing.T) {
	for _, tc := range []struct {
		n    int64
		want string
	}{{0, "0"}, {999, "999"}, {1000, "1,000"}, {-1234567, "-1,234,567"}, {100000, "100,000"}} {
		if got := groupInt(tc.n); got != tc.want {
			t.Errorf("groupInt(%d) = %q, want %q", tc.n, got, tc.want)
		}
	}
	for _, tc := range []struct{ in, want string }{{"1000", "1,000"}, {"", ""}, {"—", "—"}, {"1.5", "1.5"}, {"12a", "12a"}} {
		if got := groupNumeric(tc.in); got != tc.want {
			t.Errorf("groupNumeric(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestFormats(t *testing.T) {
	for _, tc := range []struct {
		got, want string
	}{
		{fmtDuration(34), "34 ms"}, {fmtDuration(42_100), "42.1 s"}, {fmtDuration(725_000), "12 min 5 s"},
		{fmtDuration(7_380_000), "2 h 3 min"},
		{fmtRate(5882352.94), "5,882,353"}, {fmtRate(79.94), "79.9"}, {fmtRate(0.0007), "0.0"},
		{fmtBytes(25276502016), "23.5 GiB"}, {fmtBytes(512), "512 B"}, {fmtBytes(64 << 30), "64.0 GiB"},
		{compactNum(0.000125), "0.000125"}, {compactNum(0.25), "0.25"}, {compactNum(0.1 + 0.2), "0.3"},
	} {
		if tc.got != tc.want {
			t.Errorf("got %q, want %q", tc.got, tc.want)
		}
	}
}
