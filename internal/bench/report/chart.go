package report

import (
	"math"
	"strings"
)

// palette is the report's colours, in the order they are handed out: the
// Okabe-Ito colour-blind-safe set without its yellow (too pale on white),
// then a grey, a wine, an indigo and a brown.
var palette = []string{"#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00",
	"#6B7280", "#882255", "#332288", "#8C564B"}

// dashes are the line patterns used once the palette has been used up.
var dashes = []string{"", "7 4", "2 3"}

// intendedDash marks an intended-latency line (see result.Op.Intended).
const intendedDash = "8 5"

// Colours of the chart furniture.
const (
	gridColor  = "#E5E7EB"
	axisColor  = "#9CA3AF"
	tickColor  = "#6B7280"
	titleColor = "#374151"
	inkColor   = "#111827"
)

// Chart sizes in SVG user units. Charts scale to their container's width
// (viewBox), so these set proportions and the text size relative to them.
const (
	wideW, wideH = 1100.0, 380.0
	halfW, halfH = 540.0, 340.0
	fontSize     = 12.0
	charW        = 0.6 * fontSize // rough width of one character
)

// frame is the plot area of a w×h chart, inside its margins.
type frame struct {
	w, h                     float64
	left, right, top, bottom float64
}

// px is the x coordinate of fraction fx of the plot width.
func (f frame) px(fx float64) float64 { return f.left + fx*(f.w-f.left-f.right) }

// py is the y coordinate of fraction fy of the plot height, upwards.
func (f frame) py(fy float64) float64 { return f.h - f.bottom - fy*(f.h-f.top-f.bottom) }

// axis is a scale with its ticks and title (which names the unit).
type axis struct {
	s     scale
	ticks []tick
	title string
}

// svgRoot starts a chart: a responsive svg element with an accessible title.
// Wide charts are marked so the page can stop them shrinking their text
// below legibility on narrow screens (they scroll instead).
func svgRoot(w, h float64, title string) *node {
	class := "chart"
	if w >= wideW {
		class += " chart-wide"
	}
	return el("svg", "xmlns", "http://www.w3.org/2000/svg", "viewBox", "0 0 "+num(w)+" "+num(h),
		"class", class, "role", "img", "font-size", num(fontSize)).
		add(textEl("title", title))
}

// axes draws the grid, ticks, tick labels and axis titles of f.
func (f frame) axes(x, y axis) *node {
	g := el("g", "class", "axes")
	grid := el("g", "stroke", gridColor, "stroke-width", "1")
	labels := el("g", "fill", tickColor)
	for _, t := range y.ticks {
		yy := num(f.py(y.s.frac(t.v)))
		grid.add(el("line", "x1", num(f.left), "x2", num(f.w-f.right), "y1", yy, "y2", yy))
		labels.add(textEl("text", t.label, "x", num(f.left-8), "y", yy, "dy", "0.32em", "text-anchor", "end"))
	}
	for _, t := range x.ticks {
		px := f.px(x.s.frac(t.v))
		xx := num(px)
		grid.add(el("line", "x1", xx, "x2", xx, "y1", num(f.top), "y2", num(f.h-f.bottom)))
		// A label centred on its tick would stick out of the chart at the
		// ends; align it to the tick there instead.
		anchor, half := "middle", float64(len([]rune(t.label)))*charW/2
		switch {
		case px+half > f.w-2:
			anchor = "end"
		case px-half < 2:
			anchor = "start"
		}
		labels.add(textEl("text", t.label, "x", xx, "y", num(f.h-f.bottom+18), "text-anchor", anchor))
	}
	base := el("g", "stroke", axisColor, "stroke-width", "1").add(
		el("line", "x1", num(f.left), "x2", num(f.w-f.right), "y1", num(f.h-f.bottom), "y2", num(f.h-f.bottom)),
		el("line", "x1", num(f.left), "x2", num(f.left), "y1", num(f.top), "y2", num(f.h-f.bottom)),
	)
	titles := el("g", "fill", titleColor, "font-weight", "600").add(
		textEl("text", x.title, "x", num(f.px(0.5)), "y", num(f.h-6), "text-anchor", "middle"),
		textEl("text", y.title, "transform", "translate(16 "+num(f.py(0.5))+") rotate(-90)", "text-anchor", "middle"),
	)
	return g.add(grid, base, labels, titles)
}

// series is one line of a line chart, in data units.
type series struct {
	color, dash string
	pts         []pt
	markers     bool // draw a dot at each point (for sparse data)
}

// lineChart draws series over the axes x and y.
func lineChart(title string, w, h float64, x, y axis, lines []series) *node {
	f := frame{w: w, h: h, left: 64, right: 18, top: 14, bottom: 50}
	root := svgRoot(w, h, title).add(f.axes(x, y))
	plot := el("g", "class", "lines", "fill", "none", "stroke-width", "2",
		"stroke-linejoin", "round", "stroke-linecap", "round")
	for _, s := range lines {
		pts := make([]pt, len(s.pts))
		for i, p := range s.pts {
			pts[i] = pt{f.px(x.s.frac(p.x)), f.py(y.s.frac(p.y))}
		}
		path := el("path", "d", pathD(pts), "stroke", s.color)
		if s.dash != "" {
			path.attrs = append(path.attrs, attr{"stroke-dasharray", s.dash})
		}
		plot.add(path)
		if s.markers {
			dots := el("g", "fill", s.color, "stroke", "none")
			for _, p := range pts {
				dots.add(el("circle", "cx", num(p.x), "cy", num(p.y), "r", "3"))
			}
			plot.add(dots)
		}
	}
	return root.add(plot)
}

// barGroup is a titled group of bars (one workload).
type barGroup struct {
	title string
	bars  []bar
}

// bar is one horizontal bar.
type bar struct {
	label, color string
	value        float64
	valueLabel   string
}

// Bar chart layout, in user units.
const (
	barRow   = 28.0 // height of one bar's row
	barThick = 18.0
	groupRow = 28.0 // height of a group title's row
	barPad   = 8.0  // space between the last bar and the axis
)

// barChart draws horizontal bars in groups, on a linear axis from zero.
func barChart(title, xTitle string, w float64, groups []barGroup) *node {
	maxLabel, maxV, rows := 0, 0.0, 0.0
	for _, g := range groups {
		rows += groupRow
		for _, b := range g.bars {
			maxLabel = max(maxLabel, len([]rune(b.label)))
			maxV = math.Max(maxV, b.value)
			rows += barRow
		}
	}
	// The label column fits the longest label, up to 45% of the width;
	// longer labels are cut short, in full in their tooltip.
	left := math.Min(math.Max(float64(maxLabel)*charW+24, 90), math.Round(0.45*w))
	fit := int((left - 24) / charW)
	f := frame{w: w, left: left, right: 24, top: 6, bottom: 50}
	f.h = f.top + rows + barPad + f.bottom
	hi := niceMax(maxV*1.12, 6)
	x := axis{s: linearScale{0, hi}, ticks: linearTicks(0, hi, 6), title: xTitle}
	root := svgRoot(f.w, f.h, title).add(f.axes(x, axis{s: linearScale{0, 1}}))
	body := el("g", "class", "bars")
	yy := f.top
	for _, g := range groups {
		body.add(textEl("text", g.title, "x", "8", "y", num(yy+groupRow/2+2), "dy", "0.32em",
			"font-weight", "700", "fill", inkColor))
		yy += groupRow
		for _, b := range g.bars {
			mid := yy + barRow/2
			x1 := f.px(x.s.frac(b.value))
			label := textEl("text", b.label, "x", num(f.left-10), "y", num(mid), "dy", "0.32em",
				"text-anchor", "end", "fill", titleColor)
			if r := []rune(b.label); len(r) > fit {
				label.text = string(r[:fit-1]) + "…"
				label.add(textEl("title", b.label))
			}
			body.add(label)
			body.add(el("rect", "x", num(f.left), "y", num(mid-barThick/2), "width", num(math.Max(x1-f.left, 1)),
				"height", num(barThick), "rx", "2", "fill", b.color))
			// The value sits after the bar, or inside its end when there is no room.
			vw := float64(len(b.valueLabel)) * charW
			if x1+6+vw <= f.w-f.right {
				body.add(textEl("text", b.valueLabel, "x", num(x1+6), "y", num(mid), "dy", "0.32em", "fill", inkColor))
			} else {
				body.add(textEl("text", b.valueLabel, "x", num(x1-6), "y", num(mid), "dy", "0.32em",
					"text-anchor", "end", "fill", "#FFFFFF"))
			}
			yy += barRow
		}
	}
	return root.add(body)
}

// legendItem is one entry of a chart's legend (drawn in HTML below it).
type legendItem struct {
	Label  string
	Color  string
	Dashed bool
	Box    bool // a filled box (bars) rather than a line
}

// nonEmpty reports whether any line has a point.
func nonEmpty(lines []series) bool {
	for _, s := range lines {
		if len(s.pts) > 0 {
			return true
		}
	}
	return false
}

// dataRange returns the smallest and largest y over the lines.
func dataRange(lines []series) (lo, hi float64) {
	lo, hi = math.Inf(1), math.Inf(-1)
	for _, s := range lines {
		for _, p := range s.pts {
			lo, hi = math.Min(lo, p.y), math.Max(hi, p.y)
		}
	}
	return lo, hi
}

// latencyAxis chooses a y axis for latencies from lo to hi µs: logarithmic
// when the range is wide, else linear from zero.
func latencyAxis(lo, hi float64) axis {
	const title = "Latency (µs)"
	if useLog(lo, hi) {
		dlo, dhi := logDomain(lo, hi)
		return axis{s: logScale{dlo, dhi}, ticks: logTicks(dlo, dhi), title: title + ", log scale"}
	}
	top := niceMax(hi, 5)
	return axis{s: linearScale{0, top}, ticks: linearTicks(0, top, 5), title: title}
}

// slug makes an element id fragment from s: lowercase letters, digits and
// dashes.
func slug(s string) string {
	var b strings.Builder
	for _, c := range strings.ToLower(s) {
		switch {
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9':
			b.WriteRune(c)
		case b.Len() > 0 && !strings.HasSuffix(b.String(), "-"):
			b.WriteByte('-')
		}
	}
	return strings.TrimSuffix(b.String(), "-")
}
