package bench

import (
	"fmt"
	"strings"
)

// Usage is the help of cairn bench.
var Usage = func() string {
	var b strings.Builder
	b.WriteString(`Usage: cairn bench load|run [options]
       cairn bench report ...

Run the YCSB core workload against a Cairn store, YCSB-style: "load" inserts
the records, "run" performs the operation mix. The summary on stdout is in
YCSB's text format ([OVERALL], RunTime(ms), ...), so scripts written for
YCSB read it unchanged.

Options (each also as --name; valued ones also as -name=value):
  -P file          load properties from a file (repeatable; later files win)
  -p name=value    set a property (wins over every -P file)
  -threads n       client threads (property threadcount; default 1)
  -target n        total target ops/s, spread over the threads (property target)
  -s               print a status line to stderr every status.interval seconds
  -db name         cairn (a running store, via the Go client), embedded (a store
                   opened in this process under cairn.root) or null (no store:
                   measures the benchmark itself); property db, default cairn
  -l label         prefix of the status lines (property label)
  -h, --help       this help

Examples:
  cairn bench load -P workloads/workloada -p recordcount=1000000 -threads 16
  cairn bench run  -P workloads/workloada -p recordcount=1000000 \
      -p operationcount=1000000 -threads 16 -s -p exportfile=a.json
  cairn bench run -db embedded -p cairn.root=/tmp/b -P workloads/workloadc -p recordcount=1000

Exit status: 0 done (operation errors are reported in the summary, as in
YCSB); 1 the run failed, or dataintegrity=true found a record that did not
verify; 2 bad options or properties (a wrong cairn.store included); 3 no
node answered. See 'cairn --help'.

Properties (default in brackets):
`)
	for _, p := range knownProps {
		def := p.def
		if def == "" {
			def = "-"
		}
		fmt.Fprintf(&b, "  %-40s %s [%s]\n", p.name, p.help, def)
	}
	return b.String()
}()
