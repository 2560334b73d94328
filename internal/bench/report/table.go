package report

import (
	"maps"
	"slices"
	"strings"

	"github.com/cairndb/cairn/internal/bench/result"
)

// table is an HTML table of the report, built from the runs of one phase.
type table struct {
	ID      string
	Caption string
	Head    []cell
	Rows    []tableRow
}

// tableRow is one row; First marks the first row of a run's group of rows.
type tableRow struct {
	Cells []cell
	First bool
	Bad   bool // the row reports a failure (integrity mismatches)
}

// cell is one table cell. Num right-aligns it in tabular figures; Wrap
// lets long text wrap; Swatch, when set, is the colour of the run's lines
// in the charts.
type cell struct {
	Text   string
	Num    bool
	Bad    bool
	Wrap   bool
	Swatch string
}

func textCell(s string) cell { return cell{Text: s} }
func numCell(s string) cell  { return cell{Text: s, Num: true} }

// dimHead returns heading cells for the dim columns.
func dimHead(cols []dim) []cell {
	var out []cell
	for _, d := range cols {
		c := textCell(d.title)
		c.Num = d.numeric
		out = append(out, c)
	}
	return out
}

// dimCells returns r's dim column cells, the first with r's colour swatch.
// blank gives empty cells, for the second and later rows of a run's group.
func dimCells(cols []dim, r *run, blank bool) []cell {
	var out []cell
	for i, d := range cols {
		c := cell{Num: d.numeric}
		if !blank {
			c.Text = dimValue(d, r.Run)
			if d.numeric {
				c.Text = groupNumeric(c.Text)
			}
			if i == 0 {
				c.Swatch = r.color
			}
		}
		out = append(out, c)
	}
	return out
}

// groupNumeric adds thousands separators to an integer setting, leaving
// anything else as it is.
func groupNumeric(s string) string {
	var n int64
	for _, c := range s {
		if c < '0' || c > '9' || n > 1e15 {
			return s
		}
		n = n*10 + int64(c-'0')
	}
	if s == "" {
		return s
	}
	return groupInt(n)
}

// throughputTable has one row per run: its settings, operations, run time
// and throughput.
func throughputTable(p *phase) table {
	t := table{ID: p.name + "-throughput-table", Caption: "Throughput per run"}
	t.Head = append(dimHead(p.cols), numCell("Operations"), numCell("Run time"), numCell("Throughput (ops/s)"))
	for _, r := range p.runs {
		cells := append(dimCells(p.cols, r, false),
			numCell(groupInt(r.Run.Operations)),
			numCell(fmtDuration(r.Run.RuntimeMs)),
			numCell(fmtRate(r.Run.ThroughputOpsSec)))
		t.Rows = append(t.Rows, tableRow{Cells: cells, First: true})
	}
	return t
}

// latencyTable has one row per run and operation, grouped by run.
func latencyTable(p *phase) table {
	t := table{ID: p.name + "-latency-table", Caption: "Latency per operation, in microseconds"}
	t.Head = append(dimHead(p.cols), textCell("Operation"), numCell("Count"),
		numCell("Avg (µs)"), numCell("p50 (µs)"), numCell("p95 (µs)"), numCell("p99 (µs)"),
		numCell("p99.9 (µs)"), numCell("Max (µs)"))
	returns := anyNonOK(p)
	if returns {
		t.Head = append(t.Head, textCell("Other returns"))
	}
	for _, r := range p.runs {
		for i, o := range r.ops {
			l := o.Latency
			cells := append(dimCells(p.cols, r, i > 0), textCell(o.Name), numCell(groupInt(o.Count)),
				numCell(fmtRate(l.AvgUs)), numCell(groupInt(l.P50Us)), numCell(groupInt(l.P95Us)),
				numCell(groupInt(l.P99Us)), numCell(groupInt(l.P999Us)), numCell(groupInt(l.MaxUs)))
			if returns {
				text, bad := nonOK(o.Returns)
				cells = append(cells, cell{Text: text, Bad: bad})
			}
			t.Rows = append(t.Rows, tableRow{Cells: cells, First: i == 0})
		}
	}
	return t
}

// anyNonOK reports whether any operation in p returned something but OK.
func anyNonOK(p *phase) bool {
	for _, r := range p.runs {
		for _, o := range r.ops {
			if s, _ := nonOK(o.Returns); s != "" {
				return true
			}
		}
	}
	return false
}

// nonOK lists the non-OK return codes with their counts ("ERROR 3,
// NOT_FOUND 12"), and whether any is a failure (anything but NOT_FOUND).
func nonOK(returns map[string]int64) (string, bool) {
	var parts []string
	bad := false
	for _, k := range slices.Sorted(maps.Keys(returns)) {
		n := returns[k]
		if k == "OK" || n == 0 {
			continue
		}
		parts = append(parts, k+" "+groupInt(n))
		bad = bad || k != "NOT_FOUND"
	}
	return strings.Join(parts, ", "), bad
}

// hasIntended reports whether any operation in p has intended latencies.
func hasIntended(p *phase) bool {
	for _, r := range p.runs {
		for _, o := range r.ops {
			if o.Intended != nil {
				return true
			}
		}
	}
	return false
}

// intendedTable compares latency measured from the actual start of each
// operation with latency from its intended start (which includes the time
// an operation waited behind a slow one), per run and operation.
func intendedTable(p *phase) table {
	t := table{ID: p.name + "-intended-table", Caption: "Actual versus intended latency, in microseconds"}
	// The target rate matters here; show it unless it is a column already.
	showTarget := !slices.ContainsFunc(p.cols, func(d dim) bool { return d.key == "target" })
	t.Head = dimHead(p.cols)
	if showTarget {
		t.Head = append(t.Head, numCell("Target (ops/s)"))
	}
	t.Head = append(t.Head, textCell("Operation"),
		numCell("Avg"), numCell("Intended avg"), numCell("p99"), numCell("Intended p99"),
		numCell("p99.9"), numCell("Intended p99.9"))
	for _, r := range p.runs {
		first := true
		for _, o := range r.ops {
			if o.Intended == nil {
				continue
			}
			a, in := o.Latency, *o.Intended
			cells := dimCells(p.cols, r, !first)
			if showTarget {
				target := "—"
				if r.Run.TargetOpsSec > 0 && first {
					target = fmtRate(r.Run.TargetOpsSec)
				}
				cells = append(cells, numCell(target))
			}
			cells = append(cells, textCell(o.Name),
				numCell(fmtRate(a.AvgUs)), numCell(fmtRate(in.AvgUs)),
				numCell(groupInt(a.P99Us)), numCell(groupInt(in.P99Us)),
				numCell(groupInt(a.P999Us)), numCell(groupInt(in.P999Us)))
			t.Rows = append(t.Rows, tableRow{Cells: cells, First: first})
			first = false
		}
	}
	return t
}

// integrityTable lists the data-integrity checks of the runs that made
// them; rows with mismatches are marked bad.
func integrityTable(p *phase) (table, bool) {
	t := table{ID: p.name + "-integrity-table", Caption: "Data integrity checks"}
	t.Head = append(dimHead(p.cols), numCell("Checked"), numCell("Mismatches"))
	for _, r := range p.runs {
		in := r.Run.Integrity
		if in == nil {
			continue
		}
		bad := in.Mismatches > 0
		cells := append(dimCells(p.cols, r, false), numCell(groupInt(in.Checked)),
			cell{Text: groupInt(in.Mismatches), Num: true, Bad: bad})
		t.Rows = append(t.Rows, tableRow{Cells: cells, First: true, Bad: bad})
	}
	return t, len(t.Rows) > 0
}

// integrityTotals sums the integrity checks over all runs; ok is false when
// no run checked integrity.
func integrityTotals(runs []*result.Run) (checked, mismatches int64, ok bool) {
	for _, r := range runs {
		if r.Integrity != nil {
			checked += r.Integrity.Checked
			mismatches += r.Integrity.Mismatches
			ok = true
		}
	}
	return checked, mismatches, ok
}
