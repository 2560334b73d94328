package report

import (
	"html/template"
	"math"
	"slices"
	"strings"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// figure is one chart with its caption and legend.
type figure struct {
	ID      string
	Title   string
	Caption string
	SVG     template.HTML
	Legend  []legendItem
}

// phaseTitle is a phase's display name: "Load", "Run".
func phaseTitle(name string) string {
	if name == "" {
		return "Unnamed"
	}
	return strings.ToUpper(name[:1]) + name[1:]
}

// throughputFigure draws one bar per run, grouped by workload and coloured
// by colour key: the request distribution, or db and distribution when the
// db varies.
func throughputFigure(p *phase) figure {
	keys := keyColors(p.runs)
	var groups []barGroup
	for _, r := range p.runs {
		w := orDash(r.Run.Workload)
		if len(groups) == 0 || groups[len(groups)-1].title != w {
			groups = append(groups, barGroup{title: w})
		}
		g := &groups[len(groups)-1]
		g.bars = append(g.bars, bar{label: r.short, color: keys[r.key], value: r.Run.ThroughputOpsSec,
			valueLabel: fmtRate(r.Run.ThroughputOpsSec)})
	}
	title := phaseTitle(p.name) + " phase: throughput per run"
	var legend []legendItem
	seen := map[string]bool{}
	for _, r := range p.runs {
		if !seen[r.key] {
			seen[r.key] = true
			legend = append(legend, legendItem{Label: r.key, Color: keys[r.key], Box: true})
		}
	}
	return figure{
		ID: p.name + "-throughput", Title: title,
		Caption: "Operations per second over the whole phase; higher is better.",
		SVG:     barChart(title, "Throughput (ops/s)", wideW, groups).html(),
		Legend:  legend,
	}
}

// maxPercentileX is where the percentile axis ends at the latest: 99.9999%.
const maxPercentileX = 6

// percentileFigures draws, per operation, latency by percentile: one line
// per run (and a dashed one for its intended latency, when present).
// CLEANUP, a handful of per-thread calls at the end, is left to the tables.
func percentileFigures(p *phase) []figure {
	ops := slices.DeleteFunc(slices.Clone(p.ops), func(op string) bool { return op == "CLEANUP" })
	w, h := halfW, halfH
	if len(ops) == 1 {
		w, h = wideW, wideH
	}
	var figs []figure
	for _, op := range ops {
		var lines []series
		var legend []legendItem
		intended := false
		xmax := 2.0 // at least to 99%
		for _, r := range p.runs {
			for _, o := range r.ops {
				if o.Name != op || o.hist == nil || o.hist.TotalCount() == 0 {
					continue
				}
				xmax = math.Max(xmax, math.Min(maxPercentileX, math.Log10(float64(o.hist.TotalCount()))))
				if o.intended != nil && o.intended.TotalCount() > 0 {
					xmax = math.Max(xmax, math.Min(maxPercentileX, math.Log10(float64(o.intended.TotalCount()))))
				}
			}
		}
		for _, r := range p.runs {
			for _, o := range r.ops {
				if o.Name != op || o.hist == nil || o.hist.TotalCount() == 0 {
					continue
				}
				lines = append(lines, series{color: r.color, dash: r.dash, pts: percentileCurve(o.hist, xmax)})
				legend = append(legend, legendItem{Label: r.label, Color: r.color, Dashed: r.dash != ""})
				if o.intended != nil && o.intended.TotalCount() > 0 {
					lines = append(lines, series{color: r.color, dash: intendedDash, pts: percentileCurve(o.intended, xmax)})
					intended = true
				}
			}
		}
		if !nonEmpty(lines) {
			continue
		}
		if intended {
			legend = append(legend, legendItem{Label: "dashed: intended latency", Color: tickColor, Dashed: true})
		}
		lo, hi := dataRange(lines)
		x := axis{s: linearScale{0, xmax}, ticks: percentileTicks(xmax), title: "Percentile"}
		y := latencyAxis(lo, hi)
		caption := "From the full HDR histogram; each grid step right adds a nine."
		if _, isLog := y.s.(logScale); isLog && lo < 1 {
			caption += " Latencies under 1 µs are drawn at 1 µs."
		}
		title := phaseTitle(p.name) + " phase: " + op + " latency by percentile"
		figs = append(figs, figure{
			ID: p.name + "-latency-" + slug(op), Title: title, Caption: caption,
			SVG:    lineChart(title, w, h, x, y, lines).html(),
			Legend: legend,
		})
	}
	return figs
}

// percentileStep is the spacing of the samples of a percentile curve, on the
// log10(1/(1-q)) axis.
const percentileStep = 0.02

// percentileCurve samples h's value at percentiles from 0 up to the last one
// its count resolves (1 - 1/count) or xmax, whichever is first; the last
// point is the maximum when the curve reaches the end of the data.
func percentileCurve(h *hdrhistogram.Histogram, xmax float64) []pt {
	n := h.TotalCount()
	if n == 0 {
		return nil
	}
	end := math.Min(xmax, math.Log10(float64(n)))
	var pts []pt
	for i := 0; ; i++ {
		x := float64(i) * percentileStep
		if x >= end-1e-9 {
			break
		}
		q := 1 - math.Pow(10, -x)
		pts = append(pts, pt{x, float64(h.ValueAtQuantile(100 * q))})
	}
	last := float64(h.Max())
	if end < math.Log10(float64(n)) {
		last = float64(h.ValueAtQuantile(100 * (1 - math.Pow(10, -end))))
	}
	return append(pts, pt{end, last})
}

// timelineFigure draws throughput over time, one line per run with
// samples; ok is false when no run has any.
func timelineFigure(p *phase) (figure, bool) {
	var lines []series
	var legend []legendItem
	// Seconds, or milliseconds for runs shorter than two seconds.
	div, unit := 1000.0, "s"
	var lastMs int64
	for _, r := range p.runs {
		for _, smp := range r.Run.Series {
			lastMs = max(lastMs, smp.TMs)
		}
	}
	if lastMs < 2000 {
		div, unit = 1, "ms"
	}
	maxT, maxV := 0.0, 0.0
	for _, r := range p.runs {
		if len(r.Run.Series) == 0 {
			continue
		}
		s := series{color: r.color, dash: r.dash, markers: len(r.Run.Series) <= 40}
		for _, smp := range r.Run.Series {
			t := float64(smp.TMs) / div
			s.pts = append(s.pts, pt{t, smp.OpsPerSec})
			maxT, maxV = math.Max(maxT, t), math.Max(maxV, smp.OpsPerSec)
		}
		lines = append(lines, s)
		legend = append(legend, legendItem{Label: r.label, Color: r.color, Dashed: r.dash != ""})
	}
	if len(lines) == 0 {
		return figure{}, false
	}
	tMax, vMax := niceMax(maxT, 8), niceMax(maxV, 5)
	x := axis{s: linearScale{0, tMax}, ticks: linearTicks(0, tMax, 8), title: "Time since start (" + unit + ")"}
	y := axis{s: linearScale{0, vMax}, ticks: linearTicks(0, vMax, 5), title: "Throughput (ops/s)"}
	title := phaseTitle(p.name) + " phase: throughput over time"
	return figure{
		ID: p.name + "-timeline", Title: title,
		Caption: "Each point is the throughput over the status interval that ended there.",
		SVG:     lineChart(title, wideW, wideH, x, y, lines).html(),
		Legend:  legend,
	}, true
}
