// Package report turns benchmark result documents (package result, written
// by `cairn bench load|run -p exportfile=FILE`) into one self-contained HTML
// page: `cairn bench report results/*.json -o report.html`.
//
// # The page
//
// A header gives the run facts (Cairn version, database, machine, dates).
// Then, per phase (load, then run), in the manner of the YCSB papers:
//
//   - throughput: a bar per run, grouped by workload and coloured by request
//     distribution (by db and distribution when the db varies), and a table;
//   - latency: per operation (but CLEANUP), latency by percentile from the
//     full HDR histogram, one line per run, the x axis at log10(1/(1-q)) so
//     each step is one more nine (50%, 90%, 99%, 99.9%...), the y axis
//     logarithmic when the values span a factor of 20 or more; and a table
//     of count, average, p50, p95, p99, p99.9 and max per run and
//     operation (with any non-OK returns, failures in red);
//   - intended versus actual latency, when the runs had a target rate: a
//     table, and dashed lines in the percentile charts;
//   - throughput over time from the status samples, one line per run;
//   - data-integrity checks, mismatches in red (and a header badge).
//
// A run is named by the settings that vary across its phase: workload,
// db, request distribution, record count, thread count, field count and
// length, target rate, operation count (see dims). Tables always show the
// workload and distribution, and the others as columns when they vary.
// Inputs lists every file with any other property that differs; the
// properties shared by every run are listed once.
//
// # Colour
//
// Bars are coloured by colour key: the distribution, or db and
// distribution when the db varies. Each run has a line style of its own,
// shown as a dot beside it in the tables: the first run of each key takes
// the key's colour, the others the palette colours no key took, then the
// palette again dashed (colorRuns).
//
// # Invariants
//
//   - Self-contained: no scripts, no external resources. Charts are inline
//     SVG drawn by this package (svg.go, scale.go, chart.go) and scale to
//     the page width.
//   - Escaped: every string from the inputs reaches the page through
//     html/template or through the SVG element tree (node), which escapes
//     all text and attribute values.
//   - Deterministic: runs are ordered by compareRuns (phase, settings,
//     start time, file), maps are walked in sorted order, and the page holds
//     no time of its own, so the same inputs in any order give the same
//     bytes.
//
// # Concurrency
//
// Everything is a function of its arguments; Render and WriteFile may run
// concurrently. Inputs are only read.
//
// # Example
//
//	inputs, err := report.LoadFiles([]string{"a.json", "b.json"})
//	if err != nil {
//		return err
//	}
//	return report.WriteFile("report.html", inputs, report.Options{Title: "Nightly"})
//
// # Tests
//
// TestReportRendersInChromium renders a report in headless Chromium and
// checks the screenshot. Test artifacts (the HTML page and the PNG) go to
// $CAIRN_ARTIFACTS/<test name>/ when that variable is set, else to the
// test's temporary directory; the test logs the path either way.
package report
