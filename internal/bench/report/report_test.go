package report

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"golang.org/x/net/html"

	"github.com/cairndb/cairn/internal/bench/result"
	"github.com/cairndb/cairn/internal/chromiumtest"
)

// fixtureCharts is the number of charts the fixture's report has: per phase
// a throughput chart, one latency chart per operation and a throughput-over-
// time chart: load 1+1+1, run 1+2+1.
const fixtureCharts = 7

func parseHTML(t *testing.T, b []byte) *html.Node { return chromiumtest.Parse(t, b) }

// The DOM helpers, from chromiumtest.
var (
	findAll  = chromiumtest.FindAll
	attrOf   = chromiumtest.Attr
	hasClass = chromiumtest.HasClass
	isElem   = chromiumtest.IsElem
	text     = chromiumtest.Text
)

func isChart(n *html.Node) bool { return isElem("svg")(n) && hasClass(n, "chart") }

// isMark matches what a chart draws its data with: a path with a non-empty
// d, or a bar.
func isMark(n *html.Node) bool {
	if n.Type != html.ElementNode {
		return false
	}
	d, _ := attrOf(n, "d")
	return (n.Data == "path" && strings.TrimSpace(d) != "") || n.Data == "rect"
}

// title is a chart's <title>.
func title(svg *html.Node) string {
	if ts := findAll(svg, isElem("title")); len(ts) > 0 {
		return text(ts[0])
	}
	return ""
}

func byID(t *testing.T, doc *html.Node, id string) *html.Node { return chromiumtest.ByID(t, doc, id) }

func render(t *testing.T, inputs []Input, opts Options) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := Render(&b, inputs, opts); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func TestReportStructure(t *testing.T) {
	const hostile = `Nightly <script>alert("x")</script> & friends`
	out := render(t, fixture(t), Options{Title: hostile})
	doc := parseHTML(t, out)

	// Titles are escaped: they come back as text, never as elements.
	if got := text(findAll(doc, isElem("title"))[0]); got != hostile {
		t.Errorf("<title> = %q, want %q", got, hostile)
	}
	if got := text(findAll(doc, isElem("h1"))[0]); got != hostile {
		t.Errorf("<h1> = %q, want %q", got, hostile)
	}
	// Self-contained: no scripts, no links out, nothing loaded.
	for _, tag := range []string{"script", "link", "img", "iframe", "object"} {
		if n := len(findAll(doc, isElem(tag))); n != 0 {
			t.Errorf("report has %d <%s> elements, want none", n, tag)
		}
	}
	for _, n := range findAll(doc, func(n *html.Node) bool { return n.Type == html.ElementNode }) {
		for _, a := range n.Attr {
			if (a.Key == "src" || a.Key == "href") && !strings.HasPrefix(a.Val, "#") {
				t.Errorf("<%s %s=%q> refers outside the page", n.Data, a.Key, a.Val)
			}
		}
	}

	charts := findAll(doc, isChart)
	if len(charts) != fixtureCharts {
		t.Fatalf("%d charts, want %d", len(charts), fixtureCharts)
	}
	// Lines per chart: one per run with the operation, plus one per run
	// with intended latencies (run phase, 10k records).
	wantMarks := map[string]int{
		"Load phase: throughput per run":           2, // bars
		"Load phase: INSERT latency by percentile": 2,
		"Load phase: throughput over time":         2,
		"Run phase: throughput per run":            4,
		"Run phase: READ latency by percentile":    5,
		"Run phase: UPDATE latency by percentile":  5,
		"Run phase: throughput over time":          4,
	}
	for _, c := range charts {
		name := title(c)
		want, ok := wantMarks[name]
		if !ok {
			t.Errorf("unexpected chart %q", name)
			continue
		}
		if v, _ := attrOf(c, "viewBox"); v == "" {
			t.Errorf("chart %q has no viewBox, so it cannot scale", name)
		}
		if got := len(findAll(c, isMark)); got != want {
			t.Errorf("chart %q draws %d marks, want %d", name, got, want)
		}
		for _, p := range findAll(c, isElem("path")) {
			if d, _ := attrOf(p, "d"); !strings.HasPrefix(d, "M") || !strings.Contains(d, " L") {
				t.Errorf("chart %q has a path with d=%.40q, want a polyline", name, d)
			}
		}
	}

	rows := func(id string) []*html.Node {
		tb := findAll(byID(t, doc, id), isElem("tbody"))
		return findAll(tb[0], isElem("tr"))
	}
	for id, want := range map[string]int{
		"load-throughput-table": 2, "load-latency-table": 2,
		"run-throughput-table": 4, "run-latency-table": 8, "run-intended-table": 2,
		"run-integrity-table": 2, "inputs-table": 6,
	} {
		if got := len(rows(id)); got != want {
			t.Errorf("table %s has %d rows, want %d", id, got, want)
		}
	}
	for _, id := range []string{"load-intended-table", "load-integrity-table"} {
		if bytes.Contains(out, []byte(`id="`+id+`"`)) {
			t.Errorf("report has %s, but no load run has that data", id)
		}
	}
	// The run with mismatches is the one row marked bad.
	var bad []string
	for _, r := range rows("run-integrity-table") {
		if hasClass(r, "bad") {
			bad = append(bad, text(r))
		}
	}
	if len(bad) != 1 || !strings.Contains(bad[0], "10,000") || !strings.Contains(bad[0], "25,000") {
		t.Errorf("bad integrity rows = %q, want the 10,000-record run's", bad)
	}
	// Records vary in both phases, so both have a Records column; threads
	// do not, so neither has one.
	head := text(findAll(byID(t, doc, "run-latency-table"), isElem("thead"))[0])
	if !strings.Contains(head, "Records") || strings.Contains(head, "Threads") {
		t.Errorf("run latency table heading %q: want a Records column and no Threads column", head)
	}
}

// TestReportEscapesInputText puts markup in every string a run carries into
// the page, and checks none of it becomes markup.
func TestReportEscapesInputText(t *testing.T) {
	const evil = `</text></svg><script>alert(1)</script><img src=x onerror=alert(2)>`
	inputs := fixture(t)
	for _, in := range inputs {
		in.Run.Workload = evil
		in.Run.DB = evil + "db"
		in.Run.CairnVersion = evil
		in.Run.Machine.CPUModel = evil
		in.Run.Properties["requestdistribution"] = evil + in.Run.Properties["requestdistribution"]
		in.Run.Properties["insertorder"] = evil
		for i := range in.Run.Ops {
			in.Run.Ops[i].Name = evil + in.Run.Ops[i].Name
		}
	}
	out := render(t, inputs, Options{Title: evil})
	doc := parseHTML(t, out)
	for _, tag := range []string{"script", "img"} {
		if n := len(findAll(doc, isElem(tag))); n != 0 {
			t.Errorf("input text became %d <%s> elements", n, tag)
		}
	}
	if n := len(findAll(doc, isChart)); n != fixtureCharts {
		t.Errorf("%d charts, want %d: input text broke out of an svg", n, fixtureCharts)
	}
	if !strings.Contains(text(doc), evil) {
		t.Error("the input text is not shown as text")
	}
}

func TestReportIsDeterministic(t *testing.T) {
	inputs := fixture(t)
	want := render(t, inputs, Options{})
	rev := slices.Clone(inputs)
	slices.Reverse(rev)
	if got := render(t, rev, Options{}); !bytes.Equal(got, want) {
		t.Error("reversing the inputs changed the report")
	}
	rot := append(slices.Clone(inputs[3:]), inputs[:3]...)
	if got := render(t, rot, Options{}); !bytes.Equal(got, want) {
		t.Error("rotating the inputs changed the report")
	}
}

func TestLoadFilesNamesBadFile(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.json")
	if err := result.Save(good, fixture(t)[0].Run); err != nil {
		t.Fatal(err)
	}
	corrupt := filepath.Join(dir, "corrupt.json")
	if err := os.WriteFile(corrupt, []byte(`{"format": 1, "ops": [`), 0o644); err != nil {
		t.Fatal(err)
	}
	wrongFormat := filepath.Join(dir, "v9.json")
	if err := os.WriteFile(wrongFormat, []byte(`{"format": 9}`), 0o644); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(dir, "missing.json")
	for _, bad := range []string{corrupt, wrongFormat, missing} {
		_, err := LoadFiles([]string{good, bad})
		if err == nil || !strings.Contains(err.Error(), bad) {
			t.Errorf("LoadFiles(%s) = %v, want an error naming the file", filepath.Base(bad), err)
		}
	}
	inputs, err := LoadFiles([]string{good})
	if err != nil || len(inputs) != 1 || inputs[0].Path != good {
		t.Fatalf("LoadFiles(good) = %v, %v", inputs, err)
	}
}

func TestRenderRejectsBadHistogram(t *testing.T) {
	inputs := fixture(t)[:1]
	inputs[0].Run.Ops[0].Latency.Histogram = "bm90IGEgaGlzdG9ncmFt" // base64, not a histogram
	err := Render(&bytes.Buffer{}, inputs, Options{})
	if err == nil || !strings.Contains(err.Error(), inputs[0].Path) || !strings.Contains(err.Error(), "INSERT") {
		t.Errorf("Render = %v, want an error naming the file and operation", err)
	}
}

func TestRenderNoInputs(t *testing.T) {
	if err := Render(&bytes.Buffer{}, nil, Options{}); !errors.Is(err, ErrNoInputs) {
		t.Errorf("Render(nil) = %v, want ErrNoInputs", err)
	}
}

func TestWriteFile(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "r.html")
	if err := WriteFile(out, fixture(t)[:2], Options{}); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(out)
	if err != nil || !bytes.HasPrefix(b, []byte("<!DOCTYPE html>")) {
		t.Fatalf("read back: %v, %.40q", err, b)
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 1 {
		t.Errorf("WriteFile left %d files, want just the report", len(ents))
	}
	noDir := filepath.Join(dir, "no", "such", "dir", "r.html")
	if err := WriteFile(noDir, fixture(t)[:1], Options{}); err == nil || !strings.Contains(err.Error(), noDir) {
		t.Errorf("WriteFile into a missing directory = %v, want an error naming the path", err)
	}
}
