package main

import (
	"context"
	"errors"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/cairndb/cairn/internal/bench"
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

func runBench(ctx context.Context, args []string) error {
	if len(args) == 0 {
		return &exitError{code: 2, err: errors.New("bench: missing phase: load, run or report (see 'cairn bench --help')")}
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
	switch {
	case err == nil:
		return nil
	case bench.IsUsage(err):
		return &exitError{code: 2, err: err}
	}
	return &exitError{code: 1, err: err}
}

// isTerminal reports whether f is a character device (a terminal).
func isTerminal(f *os.File) bool {
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}
