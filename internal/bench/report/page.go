package report

import (
	_ "embed"
	"html/template"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/cairndb/cairn/internal/bench/result"
)

//go:embed page.html.tmpl
var pageSource string

//go:embed page.css
var pageCSS string

var pageTemplate = template.Must(template.New("page").Parse(pageSource))

// page is everything the template shows.
type page struct {
	Title     string
	CSS       template.CSS
	Facts     []fact
	Integrity *integritySummary
	Common    []fact // properties with the same value in every input
	Phases    []phaseView
	Inputs    table
}

// fact is one named value of the header; a Wide one takes two columns.
type fact struct {
	Name, Value string
	Wide        bool
}

type integritySummary struct {
	Text string
	Bad  bool
}

// phaseView is the section of one phase.
type phaseView struct {
	ID, Title, Summary string
	Throughput         figure
	ThroughputTable    table
	Latency            []figure
	Wide               bool // the latency figures are full width
	LatencyTable       table
	Intended           *table
	Timeline           *figure
	Integrity          *table
}

// buildPage lays out the report for inputs.
func buildPage(inputs []Input, title string) (*page, error) {
	phases, err := prepare(inputs)
	if err != nil {
		return nil, err
	}
	runs := make([]*result.Run, 0, len(inputs))
	for _, p := range phases {
		for _, r := range p.runs {
			runs = append(runs, r.Run)
		}
	}
	pg := &page{
		Title:  title,
		CSS:    template.CSS(pageCSS), //nolint:gosec // a constant of this package
		Facts:  facts(runs, phases),
		Common: commonProperties(runs),
	}
	if checked, bad, ok := integrityTotals(runs); ok {
		pg.Integrity = &integritySummary{Bad: bad > 0,
			Text: groupInt(bad) + " mismatches in " + groupInt(checked) + " checked records"}
	}
	for _, p := range phases {
		pg.Phases = append(pg.Phases, buildPhase(p))
	}
	pg.Inputs = inputsTable(phases)
	return pg, nil
}

func buildPhase(p *phase) phaseView {
	v := phaseView{
		ID:              p.name,
		Title:           phaseTitle(p.name) + " phase",
		Summary:         phaseSummary(p),
		Throughput:      throughputFigure(p),
		ThroughputTable: throughputTable(p),
		Latency:         percentileFigures(p),
		LatencyTable:    latencyTable(p),
	}
	v.Wide = len(v.Latency) == 1
	if hasIntended(p) {
		t := intendedTable(p)
		v.Intended = &t
	}
	if f, ok := timelineFigure(p); ok {
		v.Timeline = &f
	}
	if t, ok := integrityTable(p); ok {
		v.Integrity = &t
	}
	return v
}

// phaseSummary describes a phase in a sentence.
func phaseSummary(p *phase) string {
	var workloads []string
	for _, r := range p.runs {
		if w := orDash(r.Run.Workload); !slices.Contains(workloads, w) {
			workloads = append(workloads, w)
		}
	}
	n := strconv.Itoa(len(p.runs)) + " runs"
	if len(p.runs) == 1 {
		n = "1 run"
	}
	s := n + " of " + strings.Join(workloads, ", ")
	var vary []string
	for _, d := range varying(inputsOf(p)) {
		if d.key != "workload" {
			vary = append(vary, strings.ToLower(d.title))
		}
	}
	if len(vary) > 0 {
		s += ", varying " + strings.Join(vary, ", ")
	}
	return s + "."
}

func inputsOf(p *phase) []Input {
	out := make([]Input, len(p.runs))
	for i, r := range p.runs {
		out[i] = r.Input
	}
	return out
}

// facts lists the header's run facts: versions, targets, machines, dates.
func facts(runs []*result.Run, phases []*phase) []fact {
	distinct := func(f func(r *result.Run) string) string {
		var vs []string
		for _, r := range runs {
			if v := f(r); v != "" && !slices.Contains(vs, v) {
				vs = append(vs, v)
			}
		}
		slices.Sort(vs)
		return orDash(strings.Join(vs, "; "))
	}
	var first, last time.Time
	for _, r := range runs {
		if r.Started.IsZero() {
			continue
		}
		end := r.Started.Add(time.Duration(r.RuntimeMs) * time.Millisecond)
		if first.IsZero() || r.Started.Before(first) {
			first = r.Started
		}
		if end.After(last) {
			last = end
		}
	}
	dates := "—"
	switch {
	case first.IsZero():
	case first.UTC().Format(time.DateOnly) == last.UTC().Format(time.DateOnly):
		dates = first.UTC().Format("2006-01-02 15:04") + "–" + last.UTC().Format("15:04 UTC")
	default:
		dates = first.UTC().Format("2006-01-02 15:04") + " – " + last.UTC().Format("2006-01-02 15:04 UTC")
	}
	var counts []string
	for _, p := range phases {
		n := strconv.Itoa(len(p.runs)) + " runs"
		if len(p.runs) == 1 {
			n = "1 run"
		}
		counts = append(counts, orDash(p.name)+" ("+n+")")
	}
	return []fact{
		{Name: "Cairn version", Value: distinct(func(r *result.Run) string { return r.CairnVersion })},
		{Name: "Database", Value: distinct(func(r *result.Run) string { return r.DB })},
		{Name: "Phases", Value: strings.Join(counts, ", ")},
		{Name: "Dates", Value: dates},
		{Name: "Machine", Value: distinct(machine), Wide: true},
		{Name: "Go", Value: distinct(func(r *result.Run) string { return r.Machine.GoVersion })},
	}
}

// machine describes r's machine in one line.
func machine(r *result.Run) string {
	m := r.Machine
	var parts []string
	add := func(s string) {
		if s != "" {
			parts = append(parts, s)
		}
	}
	add(m.Hostname)
	add(m.CPUModel)
	if m.CPUs > 0 {
		add(strconv.Itoa(m.CPUs) + " CPUs")
	}
	if m.MemBytes > 0 {
		add(fmtBytes(m.MemBytes) + " RAM")
	}
	if m.OS != "" || m.Arch != "" {
		add(m.OS + "/" + m.Arch)
	}
	return strings.Join(parts, " · ")
}

// commonProperties returns the properties set to one value in every run,
// sorted by name.
func commonProperties(runs []*result.Run) []fact {
	var out []fact
	for _, k := range slices.Sorted(maps.Keys(runs[0].Properties)) {
		v := runs[0].Properties[k]
		same := true
		for _, r := range runs[1:] {
			if w, ok := r.Properties[k]; !ok || w != v {
				same = false
				break
			}
		}
		if same {
			out = append(out, fact{Name: k, Value: v})
		}
	}
	return out
}

// inputsTable lists every input file with its run's label and the
// properties that set it apart from the other runs of its phase (beyond the
// columns of the phase's tables).
func inputsTable(phases []*phase) table {
	t := table{ID: "inputs-table", Caption: "Input files",
		Head: []cell{textCell("Phase"), textCell("Run"), textCell("File"), textCell("Started"),
			numCell("Run time"), numCell("Threads"), textCell("Other differences")}}
	for _, p := range phases {
		for _, r := range p.runs {
			t.Rows = append(t.Rows, tableRow{First: true, Cells: []cell{
				textCell(orDash(p.name)), {Text: r.label, Swatch: r.color}, textCell(r.Path),
				textCell(fmtTime(r.Run.Started)), numCell(fmtDuration(r.Run.RuntimeMs)),
				numCell(strconv.Itoa(r.Run.Threads)), {Text: otherDifferences(p, r), Wrap: true},
			}})
		}
	}
	// Drop the last column when no run differs in anything else.
	for _, row := range t.Rows {
		if row.Cells[len(row.Cells)-1].Text != "—" {
			return t
		}
	}
	t.Head = t.Head[:len(t.Head)-1]
	for i := range t.Rows {
		t.Rows[i].Cells = t.Rows[i].Cells[:len(t.Rows[i].Cells)-1]
	}
	return t
}

// otherDifferences lists r's properties that differ within its phase and
// are not table columns: "insertorder=ordered, ...".
func otherDifferences(p *phase, r *run) string {
	keys := map[string]bool{}
	for _, o := range p.runs {
		for k := range o.Run.Properties {
			keys[k] = true
		}
	}
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(keys)) {
		if slices.ContainsFunc(dims, func(d dim) bool { return d.key == k }) || k == "exportfile" {
			continue
		}
		v, ok := r.Run.Properties[k]
		for _, o := range p.runs {
			if w, wok := o.Run.Properties[k]; wok != ok || w != v {
				parts = append(parts, k+"="+orDash(v))
				break
			}
		}
	}
	return orDash(strings.Join(parts, ", "))
}
