package main

import (
	"context"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/cairndb/cairn/internal/cli"
)

func kvExportCmd(g *cli.Globals) *cobra.Command {
	var a cli.ExportArgs
	var quiet bool
	cmd := &cobra.Command{
		Use:   "export [PARENT]",
		Short: "Write the store's records, or those under a major path, to an export file",
		Long: `Write every record of the store, or those whose major path starts with PARENT,
to an export file: JSON Lines, a header line first, then one line per record
({"key", "value" or "value_base64", "expiration" if it expires}), then an end
line that counts the records. Versions are not written. cairn kv import reads
the file into this store or another.

With --file F the export is written to F.partial, synced, and renamed to F
once it is whole; an F that exists is refused. Without --file (or with
--file -) it goes to stdout. The export pages through the store as scan does
(--batch, --consistency), so it is not a snapshot: a write made while it runs
may or may not be in it. Progress goes to stderr every 2 seconds.`,
		Example: `  cairn kv export --file store.jsonl
  cairn kv export /users --file users.jsonl
  cairn kv --hosts 10.0.0.1:5000 export | cairn kv --hosts 10.0.9.1:5000 import`,
		Args: nArgs(0, 1, "[PARENT]"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				a.Parent = args[0]
			}
			a.Store = g.Store
			return longRun(cmd, g, quiet, func(ctx context.Context, kv *cli.KV) error { return kv.Export(ctx, a) })
		},
	}
	f := cmd.Flags()
	f.StringVar(&a.File, "file", "", "write to this file, which must not exist ('-' or none: stdout)")
	f.IntVar(&a.Batch, "batch", 1000, "records per scan request")
	f.BoolVar(&quiet, "quiet", false, "print no progress (errors still go to stderr)")
	return cmd
}

func kvImportCmd(g *cli.Globals) *cobra.Command {
	var a cli.ImportArgs
	var quiet bool
	cmd := &cobra.Command{
		Use:   "import",
		Short: "Write the records of an export file into the store",
		Long: `Write the records of an export file (cairn kv export) into the store. Records
that exist are overwritten; each record gets a new version, and the time it
had left to live (a record whose expiration has passed is skipped, and
counted). Writes use --durability and --ack, many records per request.

With --file F the whole file is checked first: a malformed line, a missing
end line (an export that did not finish) or a record count that does not
match is refused with its line number and exit code 2, and nothing is
written. From stdin (no --file, or --file -) lines are checked as they are
written, and a bad line stops the import after the records before it.

A record the store refuses stops the import, naming its line and how many
records were written; importing the file again completes it. Progress goes
to stderr every 2 seconds.`,
		Example: `  cairn kv import --file store.jsonl
  cairn kv --durability sync import --file users.jsonl
  cairn kv --hosts 10.0.0.1:5000 export | cairn kv --hosts 10.0.9.1:5000 import`,
		Args: nArgs(0, 0, "no arguments (the file is --file)"),
		RunE: func(cmd *cobra.Command, args []string) error {
			return longRun(cmd, g, quiet, func(ctx context.Context, kv *cli.KV) error { return kv.Import(ctx, a) })
		},
	}
	f := cmd.Flags()
	f.StringVar(&a.File, "file", "", "read this export file ('-' or none: stdin)")
	f.BoolVar(&quiet, "quiet", false, "print no progress (errors still go to stderr)")
	return cmd
}

// longRun is session for a long command: its progress goes to stderr
// unless quiet, and SIGINT or SIGTERM cancels its context, so that it
// stops cleanly (an export removes its .partial file) and says how far it
// got.
func longRun(cmd *cobra.Command, g *cli.Globals, quiet bool, run func(context.Context, *cli.KV) error) error {
	ctx, stop := signal.NotifyContext(cmd.Context(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	return session(cmd, g, func(kv *cli.KV) error {
		if !quiet {
			kv.Progress = cmd.ErrOrStderr()
		}
		return run(ctx, kv)
	})
}
