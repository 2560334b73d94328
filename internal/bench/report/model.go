package report

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/cairndb/cairn/internal/bench/result"
)

// Input is one result document and the file it came from.
type Input struct {
	Path string
	Run  *result.Run
}

// dim is one setting that tells runs apart. The report shows a dim as a
// table column (and in legend labels) when its value varies across the runs
// of a phase; always-shown dims get a column regardless.
type dim struct {
	key     string // property name
	title   string // column heading
	always  bool   // always a column in the tables
	numeric bool   // sort by numeric value
	value   func(r *result.Run) string
	// label turns a value into a legend fragment ("1,000 records").
	label func(v string) string
}

// dims lists the distinguishing settings in column and sort order.
var dims = []dim{
	{key: "workload", title: "Workload", always: true,
		value: func(r *result.Run) string { return r.Workload }},
	{key: "db", title: "DB",
		value: func(r *result.Run) string { return r.DB }},
	{key: "requestdistribution", title: "Distribution", always: true,
		value: func(r *result.Run) string { return r.Properties["requestdistribution"] }},
	{key: "recordcount", title: "Records", numeric: true,
		value: func(r *result.Run) string { return r.Properties["recordcount"] },
		label: func(v string) string { return numWord(v, "records") }},
	{key: "threadcount", title: "Threads", numeric: true,
		value: func(r *result.Run) string {
			if r.Threads > 0 {
				return strconv.Itoa(r.Threads)
			}
			return r.Properties["threadcount"]
		},
		label: func(v string) string { return numWord(v, "threads") }},
	{key: "fieldcount", title: "Fields", numeric: true,
		value: func(r *result.Run) string { return r.Properties["fieldcount"] },
		label: func(v string) string { return numWord(v, "fields") }},
	{key: "fieldlength", title: "Field length (B)", numeric: true,
		value: func(r *result.Run) string { return r.Properties["fieldlength"] },
		label: func(v string) string { return numWord(v, "B fields") }},
	{key: "target", title: "Target (ops/s)", numeric: true,
		value: func(r *result.Run) string {
			if r.TargetOpsSec > 0 {
				return strconv.FormatFloat(r.TargetOpsSec, 'f', -1, 64)
			}
			return ""
		},
		label: func(v string) string {
			if v == "" {
				return "no target"
			}
			return "target " + numWord(v, "ops/s")
		}},
	{key: "operationcount", title: "operationcount", numeric: true,
		value: func(r *result.Run) string { return r.Properties["operationcount"] },
		label: func(v string) string { return numWord(v, "ops") }},
}

// numWord formats a numeric setting with a plural unit word: "1,000
// records", "1 record".
func numWord(v, word string) string {
	if v == "1" {
		word = strings.TrimSuffix(word, "s")
	}
	if n, err := strconv.ParseInt(v, 10, 64); err == nil {
		return groupInt(n) + " " + word
	}
	return orDash(v) + " " + word
}

// dimValue is the display value of d for a run.
func dimValue(d dim, r *result.Run) string { return orDash(d.value(r)) }

// opData is one operation of a run with its decoded histograms (nil when the
// document has none).
type opData struct {
	result.Op
	hist     *hdrhistogram.Histogram
	intended *hdrhistogram.Histogram
}

// run is one input prepared for display.
type run struct {
	Input
	label string // unique within its phase, for legends
	short string // label without the workload, for rows grouped by workload
	key   string // colour key: distribution, or db (and distribution)
	color string // line colour within its phase
	dash  string // line dash pattern within its phase ("" solid)
	ops   []opData
}

// opOrder is the order operations are shown in; others follow by name.
var opOrder = []string{"READ", "UPDATE", "INSERT", "SCAN", "READ-MODIFY-WRITE", "DELETE", "CLEANUP"}

func opRank(name string) int {
	if i := slices.Index(opOrder, strings.ToUpper(name)); i >= 0 {
		return i
	}
	return len(opOrder)
}

func compareOps(a, b string) int {
	return cmp.Or(cmp.Compare(opRank(a), opRank(b)), strings.Compare(a, b))
}

// phaseRank orders phases: load, run, then any other by name.
func phaseRank(p string) int {
	switch p {
	case "load":
		return 0
	case "run":
		return 1
	}
	return 2
}

// compareValues orders two dim values, numerically when both parse.
func compareValues(a, b string, numeric bool) int {
	if numeric {
		fa, ea := strconv.ParseFloat(a, 64)
		fb, eb := strconv.ParseFloat(b, 64)
		if ea == nil && eb == nil {
			return cmp.Compare(fa, fb)
		}
	}
	return strings.Compare(a, b)
}

// compareRuns is the report's one ordering of runs: phase, each dim in
// order, start time, then file name. Equal inputs in any order therefore
// give the same report.
func compareRuns(a, b Input) int {
	if c := cmp.Or(cmp.Compare(phaseRank(a.Run.Phase), phaseRank(b.Run.Phase)),
		strings.Compare(a.Run.Phase, b.Run.Phase)); c != 0 {
		return c
	}
	for _, d := range dims {
		if c := compareValues(d.value(a.Run), d.value(b.Run), d.numeric); c != 0 {
			return c
		}
	}
	return cmp.Or(a.Run.Started.Compare(b.Run.Started), strings.Compare(a.Path, b.Path))
}

// varying returns the dims whose values differ across runs.
func varying(runs []Input) []dim {
	var out []dim
	for _, d := range dims {
		for _, r := range runs[1:] {
			if d.value(r.Run) != d.value(runs[0].Run) {
				out = append(out, d)
				break
			}
		}
	}
	return out
}

// columns returns the dims shown as table columns for runs: the always-shown
// ones and those that vary.
func columns(runs []Input) []dim {
	vary := varying(runs)
	var out []dim
	for _, d := range dims {
		if d.always || slices.ContainsFunc(vary, func(v dim) bool { return v.key == d.key }) {
			out = append(out, d)
		}
	}
	return out
}

// phase is the runs of one phase, sorted.
type phase struct {
	name string
	runs []*run
	cols []dim // table columns
	ops  []string
}

// prepare sorts the inputs, decodes their histograms and splits them into
// phases, giving each run its labels and colours.
func prepare(inputs []Input) ([]*phase, error) {
	sorted := slices.Clone(inputs)
	slices.SortStableFunc(sorted, compareRuns)
	var phases []*phase
	for start := 0; start < len(sorted); {
		end := start + 1
		for end < len(sorted) && sorted[end].Run.Phase == sorted[start].Run.Phase {
			end++
		}
		p, err := preparePhase(sorted[start:end])
		if err != nil {
			return nil, err
		}
		phases = append(phases, p)
		start = end
	}
	return phases, nil
}

func preparePhase(inputs []Input) (*phase, error) {
	p := &phase{name: inputs[0].Run.Phase, cols: columns(inputs)}
	vary := varying(inputs)
	varies := func(key string) bool {
		return slices.ContainsFunc(vary, func(d dim) bool { return d.key == key })
	}
	for _, in := range inputs {
		r := &run{Input: in}
		var parts, shortParts []string
		for _, d := range vary {
			v := dimValue(d, in.Run)
			if d.label != nil {
				v = d.label(d.value(in.Run))
			}
			parts = append(parts, v)
			if d.key != "workload" {
				shortParts = append(shortParts, v)
			}
		}
		r.label = cmp.Or(strings.Join(parts, " · "), orDash(in.Run.Workload))
		r.short = cmp.Or(strings.Join(shortParts, " · "), orDash(in.Run.DB))
		r.key = orDash(in.Run.Properties["requestdistribution"])
		if varies("db") {
			r.key = orDash(in.Run.DB) + " · " + r.key
		}
		ops, err := decodeOps(in)
		if err != nil {
			return nil, err
		}
		r.ops = ops
		for _, o := range ops {
			if !slices.Contains(p.ops, o.Name) {
				p.ops = append(p.ops, o.Name)
			}
		}
		p.runs = append(p.runs, r)
	}
	slices.SortFunc(p.ops, compareOps)
	uniquify(p.runs)
	colorRuns(p.runs)
	return p, nil
}

// uniquify numbers runs whose labels collide ("#1", "#2"), so every legend
// entry names one run.
func uniquify(runs []*run) {
	count := map[string]int{}
	for _, r := range runs {
		count[r.label]++
	}
	seen := map[string]int{}
	for _, r := range runs {
		if count[r.label] > 1 {
			seen[r.label]++
			n := " #" + strconv.Itoa(seen[r.label])
			r.label += n
			r.short += n
		}
	}
}

// colorRuns gives each run a line style (colour and dash) of its own. The
// first run of each colour key takes the key's colour, which is also the
// colour of its bars, so a chart never uses one colour for two things; the
// other runs take the styles no key took, in order: the rest of the palette,
// then the palette again dashed.
func colorRuns(runs []*run) {
	keys := keyColors(runs)
	var styles [][2]string // colour, dash
	for _, d := range dashes {
		for _, c := range palette {
			if d != "" || !slices.Contains(slices.Collect(maps.Values(keys)), c) {
				styles = append(styles, [2]string{c, d})
			}
		}
	}
	first := map[string]bool{}
	next := 0
	for _, r := range runs {
		if !first[r.key] {
			first[r.key] = true
			r.color = keys[r.key]
			continue
		}
		st := styles[next%len(styles)]
		next++
		r.color, r.dash = st[0], st[1]
	}
}

// keyColors maps each run's colour key to a palette colour, in order of
// first appearance.
func keyColors(runs []*run) map[string]string {
	m := map[string]string{}
	for _, r := range runs {
		if _, ok := m[r.key]; !ok {
			m[r.key] = palette[len(m)%len(palette)]
		}
	}
	return m
}

// decodeOps sorts a run's operations and decodes their histograms.
func decodeOps(in Input) ([]opData, error) {
	ops := make([]opData, 0, len(in.Run.Ops))
	for _, o := range in.Run.Ops {
		d := opData{Op: o}
		var err error
		if d.hist, err = decodeLatency(o.Latency); err != nil {
			return nil, fmt.Errorf("report: %s: %s latency: %w", in.Path, o.Name, err)
		}
		if o.Intended != nil {
			if d.intended, err = decodeLatency(*o.Intended); err != nil {
				return nil, fmt.Errorf("report: %s: %s intended latency: %w", in.Path, o.Name, err)
			}
		}
		ops = append(ops, d)
	}
	slices.SortStableFunc(ops, func(a, b opData) int { return compareOps(a.Name, b.Name) })
	return ops, nil
}

// decodeLatency decodes l's histogram; nil when there is none.
func decodeLatency(l result.Latency) (*hdrhistogram.Histogram, error) {
	if l.Histogram == "" {
		return nil, nil
	}
	return l.Decode()
}
