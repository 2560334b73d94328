package bench

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestParseProperties(t *testing.T) {
	p, err := parseProperties([]byte(`# comment
! also a comment
recordcount=1000
   operationcount : 2000
table usertable
fieldlength = 10 \
   0
label=a\tb\u0041
empty=
`), "f")
	if err != nil {
		t.Fatal(err)
	}
	for k, want := range map[string]string{
		"recordcount": "1000", "operationcount": "2000", "table": "usertable",
		"fieldlength": "10 0", "label": "a\tbA", "empty": "",
	} {
		if got, ok := p.Get(k); !ok || got != want {
			t.Errorf("%s = %q (set %v), want %q", k, got, ok, want)
		}
	}
	if src := p.Source("operationcount"); src != "f:4" {
		t.Errorf("source of operationcount = %q, want f:4", src)
	}
}

// TestPrecedence: later -P files win over earlier ones, and the command
// line (-p, -threads, ...) wins over every file wherever it appears.
func TestPrecedence(t *testing.T) {
	a := writeFile(t, "a", "recordcount=1\noperationcount=1\nfieldcount=3\n")
	b := writeFile(t, "b", "recordcount=2\nthreadcount=8\n")
	args, err := ParseArgs(PhaseRun, []string{"-p", "operationcount=5", "-P", a, "--threads=4", "-P", b, "-db", "null"})
	if err != nil {
		t.Fatal(err)
	}
	for k, want := range map[string]string{"recordcount": "2", "operationcount": "5", "fieldcount": "3", "threadcount": "4", "db": "null"} {
		if got, _ := args.Props.Get(k); got != want {
			t.Errorf("%s = %q, want %q", k, got, want)
		}
	}
	if got := args.WorkloadName(); got != "a+b" {
		t.Errorf("workload name %q, want a+b", got)
	}
}

func TestParseArgsErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-x"}, "unknown option -x"},
		{[]string{"--bogus=1"}, "unknown option --bogus=1"},
		{[]string{"-p"}, "option -p needs a value"},
		{[]string{"-p", "novalue"}, `want name=value`},
		{[]string{"stray"}, `unexpected argument "stray"`},
		{[]string{"-s=yes"}, "takes no value"},
		{[]string{"-P", "/does/not/exist"}, "/does/not/exist"},
		{[]string{"-load"}, "the phase is the subcommand"},
	} {
		_, err := ParseArgs(PhaseRun, tc.args)
		if err == nil || !IsUsage(err) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("ParseArgs(%q) = %v, want a usage error containing %q", tc.args, err, tc.want)
		}
	}
	a, err := ParseArgs(PhaseRun, []string{"-p", "x=1", "--help", "-bogus"})
	if err != nil || !a.Help {
		t.Errorf("--help: %v, help %v", err, a != nil && a.Help)
	}
}

func config(t *testing.T, phase Phase, args ...string) (*Config, error) {
	t.Helper()
	a, err := ParseArgs(phase, args)
	if err != nil {
		t.Fatalf("ParseArgs(%q): %v", args, err)
	}
	return NewConfig(phase, a.WorkloadName(), a.Props)
}

func TestConfigErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"-p", "recordcount=10", "-p", "recordcout=5"},
			[]string{`unknown property "recordcout" (-p); did you mean "recordcount"?`}},
		{[]string{"-p", "recordcount=10", "-p", "insertionretrylimt=5"},
			[]string{`did you mean "core_workload_insertion_retry_limit"?`}},
		{[]string{"-p", "recordcount=10", "-p", "zzzzzzzzzzzz=1"},
			[]string{`unknown property "zzzzzzzzzzzz" (-p)`}},
		{[]string{"-p", "recordcount=10", "-p", "readproportion=0.5", "-p", "insertproportion=0.5"},
			[]string{"operation proportions sum to 1.05, not 1", "updateproportion=0.05 (default)"}},
		{[]string{"-p", "recordcount=ten"}, []string{"recordcount=ten (-p): not an integer"}},
		{[]string{"-p", "recordcount=10", "-threads", "0"}, []string{"threadcount=0 (-threads): must be at least 1"}},
		{[]string{"-p", "recordcount=10", "-p", "readproportion=abc"}, []string{"readproportion=abc (-p): not a number"}},
		{[]string{"-p", "recordcount=10", "-p", "requestdistribution=gaussian"}, []string{"want one of uniform, zipfian"}},
		{[]string{}, []string{"recordcount=0 (default): is 0 or unset"}},
		{[]string{"-p", "recordcount=10", "-p", "insertstart=5", "-p", "insertcount=6"}, []string{"is beyond recordcount 10"}},
		{[]string{"-p", "recordcount=10", "-p", "insertstart=10"}, []string{"leaves this client no records: insertstart 10, recordcount 10"}},
		{[]string{"-p", "recordcount=10", "-p", "insertstart=12"}, []string{"leaves this client no records"}},
		{[]string{"-p", "recordcount=10", "-p", "insertstart=4", "-p", "insertcount=0"}, []string{"leaves this client no records"}},
		{[]string{"-p", "recordcount=10", "-p", "dataintegrity=true", "-p", "fieldlengthdistribution=uniform"}, []string{"needs fieldlengthdistribution=constant"}},
		{[]string{"-p", "recordcount=10", "-db", "embedded"}, []string{"cairn.root= (default): is required with -db embedded"}},
		{[]string{"-p", "recordcount=10", "-p", "cairn.timeout=5"}, []string{"cairn.timeout=5 (-p): want a positive Go duration"}},
		{[]string{"-p", "recordcount=10", "-p", "cairn.giveup=-1s"}, []string{"cairn.giveup=-1s (-p): want 0 (never) or a positive Go duration"}},
		{[]string{"-p", "recordcount=10", "-p", "workload=site.ycsb.workloads.TimeSeriesWorkload"}, []string{"only the core workload"}},
		{[]string{"-p", "recordcount=x", "-p", "fieldcount=y"}, []string{"recordcount=x", "fieldcount=y"}},
	} {
		_, err := config(t, PhaseRun, tc.args...)
		if err == nil || !IsUsage(err) {
			t.Errorf("%q: error %v, want a usage error", tc.args, err)
			continue
		}
		for _, w := range tc.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%q: error\n%v\nwant it to contain %q", tc.args, err, w)
			}
		}
	}
}

func TestConfigDefaults(t *testing.T) {
	c, err := config(t, PhaseRun, "-P", "../../workloads/workloada", "-p", "recordcount=100", "-p", "insertstart=10")
	if err != nil {
		t.Fatal(err)
	}
	if c.InsertCount != 90 || c.Properties["insertcount"] != "90" {
		t.Errorf("insertcount %d (%q), want recordcount - insertstart = 90", c.InsertCount, c.Properties["insertcount"])
	}
	if c.Measure != MeasureOp || c.Threads != 1 || c.FieldCount != 10 || c.FieldLength != 100 || c.RequestDist != "zipfian" {
		t.Errorf("defaults: %+v", c)
	}
	if c.Properties["cairn.layout"] != "value" || c.Properties["readproportion"] != "0.5" {
		t.Errorf("properties in force: %v", c.Properties)
	}
	c, err = config(t, PhaseRun, "-p", "recordcount=100", "-target", "100")
	if err != nil {
		t.Fatal(err)
	}
	if c.Measure != MeasureBoth {
		t.Errorf("with -target measurement.interval defaults to both, got %v", c.Measure)
	}
}

// Every shipped workload file is accepted as is.
func TestWorkloadFiles(t *testing.T) {
	files, _ := filepath.Glob("../../workloads/workload?")
	if len(files) != 6 {
		t.Fatalf("found %d workload files, want workloada..f", len(files))
	}
	for _, f := range files {
		if _, err := config(t, PhaseRun, "-P", f); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
}

// TestConfigPropertiesForDB: the recorded properties (exported with the
// results) leave out those of another -db, such as cairn.partitions, which
// only -db embedded uses.
func TestConfigPropertiesForDB(t *testing.T) {
	for _, tc := range []struct {
		db       string
		has, not []string
	}{
		{"cairn", []string{"cairn.hosts", "cairn.conns", "cairn.store"}, []string{"cairn.partitions", "cairn.root"}},
		{"embedded", []string{"cairn.partitions", "cairn.root", "cairn.store"}, []string{"cairn.hosts", "cairn.conns"}},
	} {
		c, err := config(t, PhaseRun, "-db", tc.db, "-p", "cairn.root=/tmp/x", "-p", "recordcount=10")
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range tc.has {
			if _, ok := c.Properties[n]; !ok {
				t.Errorf("-db %s: %s not recorded", tc.db, n)
			}
		}
		for _, n := range tc.not {
			if v, ok := c.Properties[n]; ok {
				t.Errorf("-db %s: %s=%s recorded; it does not apply", tc.db, n, v)
			}
		}
	}
}

// Enum-like property values are read in any case, as Oracle's binding does.
func TestEnumValuesIgnoreCase(t *testing.T) {
	cfg, err := config(t, PhaseRun, "-p", "recordcount=10", "-p", "cairn.consistency=ABSOLUTE",
		"-p", "cairn.durability=Write_No_Sync", "-p", "requestdistribution=Zipfian")
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Cairn.Consistency != "absolute" || cfg.Cairn.Durability != "write_no_sync" || cfg.RequestDist != "zipfian" {
		t.Errorf("read %q, %q, %q; want absolute, write_no_sync, zipfian", cfg.Cairn.Consistency, cfg.Cairn.Durability, cfg.RequestDist)
	}
}
