package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/cairndb/cairn/internal/bench/report"
	"github.com/cairndb/cairn/internal/exitcode"
)

const benchReportUsage = `Usage: cairn bench report FILE.json... [-o report.html] [--title TITLE]

Reads the result files written by 'cairn bench load|run -p exportfile=FILE'
and writes one self-contained HTML page (no scripts, no external resources)
with the runs' facts, throughput and latency tables per operation, and
charts: throughput per run, latency by percentile from the HDR histograms,
and throughput over time. Load and run phases are shown separately.

Options may be spelled -x or --x, with their value as "-x v" or "-x=v",
before or after the files. A FILE may be a glob pattern ('results/*.json')
when the shell does not expand it.

Options:
  -o, -out FILE    where to write the page (default report.html)
  -title TEXT      the page's title (default "` + report.DefaultTitle + `")
  -h, -help        show this help
`

// reportArgs is a parsed `cairn bench report` command line.
type reportArgs struct {
	files []string
	out   string
	title string
	help  bool
}

// reportUsageErr is a command-line mistake: exit status 2.
func reportUsageErr(format string, args ...any) error {
	return usageErr("bench report: "+format+" (see 'cairn bench report --help')", args...)
}

// parseReportArgs parses the arguments after "cairn bench report".
func parseReportArgs(args []string) (reportArgs, error) {
	a := reportArgs{out: "report.html"}
	for i := 0; i < len(args); i++ {
		arg := args[i]
		if arg == "--" {
			a.files = append(a.files, args[i+1:]...)
			break
		}
		if !strings.HasPrefix(arg, "-") || arg == "-" {
			a.files = append(a.files, arg)
			continue
		}
		name := strings.TrimPrefix(strings.TrimPrefix(arg, "-"), "-")
		val, hasVal := "", false
		if j := strings.IndexByte(name, '='); j >= 0 {
			name, val, hasVal = name[:j], name[j+1:], true
		}
		value := func() (string, error) {
			if hasVal {
				return val, nil
			}
			if i+1 >= len(args) {
				return "", reportUsageErr("option -%s needs a value", name)
			}
			i++
			return args[i], nil
		}
		var err error
		switch name {
		case "h", "help":
			a.help = true
			return a, nil
		case "o", "out":
			if a.out, err = value(); err == nil && a.out == "" {
				err = reportUsageErr("option -%s needs a file name", name)
			}
		case "title":
			a.title, err = value()
		default:
			err = reportUsageErr("unknown option %q", arg)
		}
		if err != nil {
			return a, err
		}
	}
	return a, nil
}

// expandFiles expands glob patterns the shell left alone, keeping names
// that exist as given, and leaves out the output file (so a second run
// over results/* does not read its own report).
func expandFiles(files []string, out string) ([]string, error) {
	var paths []string
	for _, f := range files {
		if _, err := os.Stat(f); err == nil || !strings.ContainsAny(f, "*?[") {
			paths = append(paths, f)
			continue
		}
		m, err := filepath.Glob(f)
		if err != nil {
			return nil, reportUsageErr("bad pattern %q: %v", f, err)
		}
		if len(m) == 0 {
			return nil, reportUsageErr("no files match %q", f)
		}
		paths = append(paths, m...)
	}
	outAbs, _ := filepath.Abs(out)
	kept := paths[:0]
	for _, p := range paths {
		if abs, _ := filepath.Abs(p); abs != outAbs {
			kept = append(kept, p)
		}
	}
	return kept, nil
}

// runReport runs `cairn bench report ARGS`. Like the rest of cairn bench, it
// exits with status 2 on a usage error or an input file that cannot be read
// as a result, and 1 when the page cannot be written.
func runReport(args []string) error {
	return benchReport(args, os.Stdout)
}

func benchReport(args []string, stdout io.Writer) error {
	a, err := parseReportArgs(args)
	if err != nil {
		return err
	}
	if a.help {
		_, err := io.WriteString(stdout, benchReportUsage)
		return err
	}
	files, err := expandFiles(a.files, a.out)
	if err != nil {
		return err
	}
	if len(files) == 0 {
		return reportUsageErr("no result files given")
	}
	inputs, err := report.LoadFiles(files)
	if err != nil {
		return &exitError{code: exitcode.Usage, err: err}
	}
	if err := report.WriteFile(a.out, inputs, report.Options{Title: a.title}); err != nil {
		return &exitError{code: exitcode.Failed, err: err}
	}
	noun := "result files"
	if len(inputs) == 1 {
		noun = "result file"
	}
	_, err = fmt.Fprintf(stdout, "wrote %s from %d %s\n", a.out, len(inputs), noun)
	return err
}
