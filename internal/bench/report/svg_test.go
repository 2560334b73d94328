package report

import (
	"math"
	"strings"
	"testing"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/cairndb/cairn/internal/bench/result"
)

func TestNodeRenderEscapes(t *testing.T) {
	n := el("g", "class", `a"b<c>&`).add(
		textEl("text", `</svg><script>x</script> & "q"`, "x", "1"),
		el("line", "x1", "0"),
	)
	var b strings.Builder
	n.render(&b)
	want := `<g class="a&#34;b&lt;c&gt;&amp;"><text x="1">&lt;/svg&gt;&lt;script&gt;x&lt;/script&gt; &amp; &#34;q&#34;</text><line x1="0"/></g>`
	if got := b.String(); got != want {
		t.Errorf("render =\n%s\nwant\n%s", got, want)
	}
}

func TestElPanicsOnOddPairs(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("el with an odd attribute list did not panic")
		}
	}()
	el("g", "class")
}

func TestNum(t *testing.T) {
	for _, tc := range []struct {
		v    float64
		want string
	}{
		{0, "0"}, {-0.04, "0"}, {1.25, "1.3"}, {1.24, "1.2"}, {100, "100"}, {-3.5, "-3.5"}, {12.0001, "12"},
	} {
		if got := num(tc.v); got != tc.want {
			t.Errorf("num(%v) = %q, want %q", tc.v, got, tc.want)
		}
	}
}

func TestPathD(t *testing.T) {
	for _, tc := range []struct {
		name string
		pts  []pt
		want string
	}{
		{"empty", nil, ""},
		{"one point", []pt{{1, 2}}, "M1 2"},
		{"polyline", []pt{{0, 10}, {5, 5}, {10, 0}}, "M0 10 L5 5 L10 0"},
		{"flat run collapses", []pt{{0, 5}, {1, 5}, {2, 5}, {3, 5}, {4, 1}}, "M0 5 L3 5 L4 1"},
		{"vertical run collapses", []pt{{0, 9}, {2, 9}, {2, 7}, {2, 5}, {2, 3}, {4, 3}}, "M0 9 L2 9 L2 3 L4 3"},
		{"ends kept", []pt{{0, 5}, {1, 5}}, "M0 5 L1 5"},
		{"rounds to a tenth", []pt{{0.04, 1.26}, {3.333, 2}}, "M0 1.3 L3.3 2"},
	} {
		if got := pathD(tc.pts); got != tc.want {
			t.Errorf("%s: pathD = %q, want %q", tc.name, got, tc.want)
		}
	}
}

func TestLineChartGeometry(t *testing.T) {
	x := axis{s: linearScale{0, 10}, ticks: linearTicks(0, 10, 5), title: "X (s)"}
	y := axis{s: linearScale{0, 100}, ticks: linearTicks(0, 100, 5), title: "Y (ops/s)"}
	svg := lineChart("t", 400, 300, x, y, []series{
		{color: "#0072B2", pts: []pt{{0, 0}, {10, 100}}},
		{color: "#E69F00", dash: "7 4", pts: []pt{{5, 50}}, markers: true},
	})
	var b strings.Builder
	svg.render(&b)
	out := b.String()
	// The frame is left 64, right 18, top 14, bottom 50: (0,0) is at
	// (64, 250) and (10,100) at (382, 14).
	for _, want := range []string{
		`viewBox="0 0 400 300"`,
		`<path d="M64 250 L382 14" stroke="#0072B2"/>`,
		`stroke-dasharray="7 4"`,
		`<circle cx="223" cy="132" r="3"/>`,
		`>X (s)</text>`, `>Y (ops/s)</text>`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("line chart lacks %s:\n%s", want, out)
		}
	}
}

func TestBarChartGeometry(t *testing.T) {
	svg := barChart("t", "Throughput (ops/s)", 600, []barGroup{
		{title: "workloada", bars: []bar{{label: "zipfian", color: "#0072B2", value: 100, valueLabel: "100"}}},
		{title: "workloadb", bars: []bar{
			{label: "uniform", color: "#E69F00", value: 50, valueLabel: "50"},
			{label: "latest", color: "#009E73", value: 0, valueLabel: "0"},
		}},
	})
	var b strings.Builder
	svg.render(&b)
	out := b.String()
	// Two group rows and three bar rows, padded, between margins of 6 and 50.
	if want := `viewBox="0 0 600 ` + num(6+2*groupRow+3*barRow+barPad+50) + `"`; !strings.Contains(out, want) {
		t.Errorf("bar chart lacks %s", want)
	}
	if got := strings.Count(out, "<rect"); got != 3 {
		t.Errorf("%d bars, want 3", got)
	}
	// Labels of up to 7 characters get the 90-unit minimum label column;
	// the axis runs to niceMax(112) = 120 over 600-90-24 units, so the
	// 100 bar is 405 units long, the 50 one 202.5 and the 0 one 1 (visible).
	for _, want := range []string{`x="90" y="39" width="405"`, `width="202.5"`, `width="1"`} {
		if !strings.Contains(out, want) {
			t.Errorf("bar chart lacks %s:\n%s", want, out)
		}
	}
}

func TestPercentileCurve(t *testing.T) {
	h := hdrhistogram.New(1, 1_000_000, 3)
	for v := int64(1); v <= 1000; v++ {
		if err := h.RecordValue(v); err != nil {
			t.Fatal(err)
		}
	}
	pts := percentileCurve(h, 6)
	// 1000 values resolve up to 99.9% (x = 3), where the curve ends at the
	// maximum.
	last := pts[len(pts)-1]
	if math.Abs(last.x-3) > 1e-9 || last.y != 1000 {
		t.Errorf("curve ends at %v, want (3, 1000)", last)
	}
	if pts[0].x != 0 || pts[0].y != 1 {
		t.Errorf("curve starts at %v, want (0, 1)", pts[0])
	}
	for i := 1; i < len(pts); i++ {
		if pts[i].x <= pts[i-1].x || pts[i].y < pts[i-1].y {
			t.Fatalf("curve not increasing at %d: %v then %v", i, pts[i-1], pts[i])
		}
	}
	// The median is near 500, at x = log10(2).
	for _, p := range pts {
		if p.x >= percentileX(0.5)-percentileStep/2 && p.x < percentileX(0.5)+percentileStep/2 && (p.y < 480 || p.y > 520) {
			t.Errorf("median sample %v, want about 500", p)
		}
	}
	// Capped at 99% the curve ends there, below the maximum.
	capped := percentileCurve(h, 2)
	if end := capped[len(capped)-1]; math.Abs(end.x-2) > 1e-9 || end.y < 985 || end.y > 995 {
		t.Errorf("capped curve ends at %v, want about (2, 990)", end)
	}
	if percentileCurve(hdrhistogram.New(1, 1000, 3), 3) != nil {
		t.Error("an empty histogram has a curve")
	}
}

// TestFiguresForShortRuns uses what `cairn bench -db null` writes: runs of
// a few milliseconds with latencies under a microsecond, and CLEANUP.
func TestFiguresForShortRuns(t *testing.T) {
	h := hdrhistogram.New(1, 1_000_000, 3)
	for i := range 1000 {
		if err := h.RecordValue(int64(i / 990 * 30)); err != nil { // mostly 0 µs, a tail at 30
			t.Fatal(err)
		}
	}
	l, err := result.Summarize(h)
	if err != nil {
		t.Fatal(err)
	}
	in := plain("run", "workloada", "zipfian", 1000, 4, "READ", "CLEANUP")
	in.Run.Ops[0].Latency, in.Run.Ops[1].Latency = l, l
	in.Run.Series = []result.Sample{{TMs: 34, Operations: 1000, OpsPerSec: 29411}}
	p := onePhase(t, in)

	figs := percentileFigures(p)
	if len(figs) != 1 || !strings.Contains(figs[0].Title, "READ") {
		t.Fatalf("percentile figures %v, want READ's only (CLEANUP is left to the tables)", figs)
	}
	if !strings.Contains(figs[0].Caption, "under 1 µs are drawn at 1 µs") {
		t.Errorf("caption %q does not say where zero latencies are drawn", figs[0].Caption)
	}
	tl, ok := timelineFigure(p)
	if !ok || !strings.Contains(string(tl.SVG), "Time since start (ms)") {
		t.Errorf("timeline of a 34 ms run is not in milliseconds: %v", ok)
	}
}

func TestBarChartCutsLongLabels(t *testing.T) {
	long := strings.Repeat("zipfian · 2 threads · ", 10)
	svg := barChart("t", "x", 1000, []barGroup{{title: "w", bars: []bar{{label: long, color: "#000000", value: 1, valueLabel: "1"}}}})
	var b strings.Builder
	svg.render(&b)
	out := b.String()
	// The column stops at 45% of the width: 450 units, 426 for text, 59
	// characters at 7.2 units each.
	want := string([]rune(long)[:58]) + "…<title>" + long + "</title>"
	if !strings.Contains(out, want) || !strings.Contains(out, `<rect x="450"`) {
		t.Errorf("long label not cut to fit:\n%s", out)
	}
}
