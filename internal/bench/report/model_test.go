package report

import (
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/cairndb/cairn/internal/bench/result"
)

// plain makes a run without histograms, for grouping tests.
func plain(phase, workload, dist string, records, threads int, ops ...string) Input {
	r := &result.Run{
		Format: result.Format, Phase: phase, DB: "cairn", Workload: workload, Threads: threads,
		Started: time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC),
		Properties: map[string]string{
			"requestdistribution": dist, "recordcount": strconv.Itoa(records),
		},
	}
	for _, o := range ops {
		r.Ops = append(r.Ops, result.Op{Name: o, Count: 1})
	}
	return Input{Path: phase + "-" + workload + "-" + dist + "-" + strconv.Itoa(records) + "-" + strconv.Itoa(threads) + ".json", Run: r}
}

func keysOf(ds []dim) []string {
	var out []string
	for _, d := range ds {
		out = append(out, d.key)
	}
	return out
}

func TestColumnsShowWhatVaries(t *testing.T) {
	for _, tc := range []struct {
		name   string
		inputs []Input
		want   []string
	}{
		{"nothing varies", []Input{plain("run", "a", "zipfian", 1000, 4)},
			[]string{"workload", "requestdistribution"}},
		{"record count varies", []Input{plain("run", "a", "zipfian", 1000, 4), plain("run", "a", "zipfian", 5000, 4)},
			[]string{"workload", "requestdistribution", "recordcount"}},
		{"thread count varies", []Input{plain("run", "a", "zipfian", 1000, 4), plain("run", "a", "uniform", 1000, 16)},
			[]string{"workload", "requestdistribution", "threadcount"}},
		{"both vary", []Input{plain("run", "a", "zipfian", 1000, 4), plain("run", "b", "zipfian", 2000, 8)},
			[]string{"workload", "requestdistribution", "recordcount", "threadcount"}},
	} {
		if got := keysOf(columns(tc.inputs)); !slices.Equal(got, tc.want) {
			t.Errorf("%s: columns = %q, want %q", tc.name, got, tc.want)
		}
	}
}

func TestCompareRunsOrder(t *testing.T) {
	inputs := []Input{
		plain("run", "b", "zipfian", 1000, 4),
		plain("run", "a", "zipfian", 10000, 4),
		plain("run", "a", "zipfian", 200, 4),
		plain("run", "a", "zipfian", 1000, 4),
		plain("load", "b", "zipfian", 1000, 4),
		plain("run", "a", "latest", 1000, 4),
		plain("warmup", "a", "zipfian", 1000, 4),
	}
	slices.SortFunc(inputs, compareRuns)
	var got []string
	for _, in := range inputs {
		got = append(got, in.Path)
	}
	// Phases load, run, then others; then workload, distribution, and
	// record count by number (200 < 1000 < 10000), not by text.
	want := []string{
		"load-b-zipfian-1000-4.json",
		"run-a-latest-1000-4.json",
		"run-a-zipfian-200-4.json",
		"run-a-zipfian-1000-4.json",
		"run-a-zipfian-10000-4.json",
		"run-b-zipfian-1000-4.json",
		"warmup-a-zipfian-1000-4.json",
	}
	if !slices.Equal(got, want) {
		t.Errorf("order =\n%q\nwant\n%q", got, want)
	}
}

func TestPrepareLabelsAndColors(t *testing.T) {
	phases, err := prepare([]Input{
		plain("run", "a", "zipfian", 1000, 4, "UPDATE", "READ"),
		plain("run", "a", "zipfian", 5000, 4, "READ", "UPDATE"),
		plain("run", "a", "uniform", 1000, 4, "SCAN", "READ", "CUSTOM"),
		plain("load", "a", "zipfian", 1000, 4, "INSERT"),
		plain("load", "a", "zipfian", 1000, 4, "INSERT"), // a repeat
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(phases) != 2 || phases[0].name != "load" || phases[1].name != "run" {
		t.Fatalf("phases = %v, want load then run", phases)
	}
	load, run := phases[0], phases[1]

	// Identical runs are told apart by number; with one colour key, colour
	// only tells runs apart.
	if got := []string{load.runs[0].label, load.runs[1].label}; !slices.Equal(got, []string{"a #1", "a #2"}) {
		t.Errorf("repeat labels = %q", got)
	}
	if load.runs[0].color != palette[0] || load.runs[1].color != palette[1] {
		t.Errorf("load colours %s %s, want the first two of the palette", load.runs[0].color, load.runs[1].color)
	}

	// Sorted: uniform before zipfian, 1000 before 5000.
	var labels, shorts []string
	for _, r := range run.runs {
		labels, shorts = append(labels, r.label), append(shorts, r.short)
	}
	want := []string{"uniform · 1,000 records", "zipfian · 1,000 records", "zipfian · 5,000 records"}
	if !slices.Equal(labels, want) || !slices.Equal(shorts, want) {
		t.Errorf("run labels = %q, shorts %q, want %q", labels, shorts, want)
	}
	// The first run of each distribution has the distribution's (bar)
	// colour; the second zipfian run the first colour no distribution has.
	if c := []string{run.runs[0].color, run.runs[1].color, run.runs[2].color}; !slices.Equal(c, palette[:3]) {
		t.Errorf("run colours = %q, want %q", c, palette[:3])
	}
	if keys := keyColors(run.runs); keys["uniform"] != palette[0] || keys["zipfian"] != palette[1] || len(keys) != 2 {
		t.Errorf("key colours = %v, want uniform %s, zipfian %s", keys, palette[0], palette[1])
	}
	// Operations in the usual order, unknown ones last.
	if want := []string{"READ", "UPDATE", "SCAN", "CUSTOM"}; !slices.Equal(run.ops, want) {
		t.Errorf("run ops = %q, want %q", run.ops, want)
	}
	if got := run.runs[1].ops[0].Name; got != "READ" {
		t.Errorf("a run's first operation is %s, want READ", got)
	}
}

func TestKeyColorsWhenKeysAreUnique(t *testing.T) {
	phases, err := prepare([]Input{
		plain("run", "a", "zipfian", 1000, 4), plain("run", "a", "uniform", 1000, 4), plain("run", "a", "latest", 1000, 4),
	})
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range phases[0].runs {
		if r.color != palette[i] || r.dash != "" {
			t.Errorf("%s: colour %s dash %q, want %s solid", r.label, r.color, r.dash, palette[i])
		}
	}
}

func TestColorsCycleWithDashes(t *testing.T) {
	var inputs []Input
	for n := range len(palette) + 2 {
		inputs = append(inputs, plain("run", "a", "zipfian", 1000*(n+1), 4))
	}
	phases, err := prepare(inputs)
	if err != nil {
		t.Fatal(err)
	}
	type style struct{ color, dash string }
	seen := map[style]string{}
	for _, r := range phases[0].runs {
		s := style{r.color, r.dash}
		if other, ok := seen[s]; ok {
			t.Errorf("%s and %s look the same: %v", other, r.label, s)
		}
		seen[s] = r.label
	}
}
