package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/cairndb/cairn/client"
	"github.com/cairndb/cairn/internal/bench"
	"github.com/cairndb/cairn/internal/cli"
	"github.com/cairndb/cairn/internal/exitcode"
)

// newBenchCmd returns "cairn bench": YCSB's client with YCSB's single-dash
// options, so the arguments are parsed by package bench, not by cobra.
// "cairn bench report ..." is handed to runReport.
func newBenchCmd() *cobra.Command {
	return &cobra.Command{
		Use:                "bench load|run|report [options]",
		Short:              "Run YCSB workloads against a store (YCSB-compatible output)",
		Long:               bench.Usage,
		DisableFlagParsing: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runBench(cmd.Context(), args)
		},
	}
}

// runBench runs one phase. Its errors are printed here, as "cairn bench:
// ...", and exit 2 for bad options or input (a wrong cairn.store included),
// 3 when no node answered, 1 otherwise.
func runBench(ctx context.Context, args []string) error {
	if len(args) == 0 {
		fmt.Fprintln(os.Stderr, "cairn bench: missing phase: load, run or report (see 'cairn bench --help')")
		return &exitError{code: exitcode.Usage, err: reported{}}
	}
	switch args[0] {
	case "-h", "--help", "-help", "help":
		_, err := os.Stdout.WriteString(bench.Usage)
		return err
	case "report":
		return runReport(args[1:])
	}
	if ctx == nil {
		ctx = context.Background()
	}
	// The first SIGINT or SIGTERM stops the run as maxexecutiontime does
	// (results are still printed); a second one kills the process.
	ctx, stop := signal.NotifyContext(ctx, syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	go func() {
		<-ctx.Done()
		stop()
	}()
	env := bench.Env{Stdout: os.Stdout, Stderr: os.Stderr, Version: version, Terminal: isTerminal(os.Stderr)}
	_, err := bench.Execute(ctx, args[0], args[1:], env)
	if err == nil {
		return nil
	}
	code := exitcode.Of(err)
	if bench.IsUsage(err) {
		code = exitcode.Usage
	}
	fmt.Fprintf(os.Stderr, "cairn bench: %s\n", benchMessage(err))
	return &exitError{code: code, err: reported{}}
}

// benchMessage is err's text without its "bench: " prefix, and with a
// client error's text replaced by its message for a person, whose hints
// name bench's properties (cli.Explain).
func benchMessage(err error) string {
	msg := err.Error()
	var ce *client.Error
	if errors.As(err, &ce) {
		msg = strings.Replace(msg, ce.Error(), cli.Explain(ce, "-p cairn.store", "-p cairn.hosts"), 1)
	}
	return strings.TrimPrefix(msg, "bench: ")
}

// isTerminal reports whether f is a character device (a terminal).
func isTerminal(f *os.File) bool {
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}
