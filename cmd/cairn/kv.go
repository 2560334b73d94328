package main

import (
	"errors"
	"os"

	"github.com/spf13/cobra"

	"github.com/cairndb/cairn/internal/cli"
)

// newKVCmd returns "cairn kv" and its subcommands. Flag values are parsed and
// the commands run by package cli; every error is printed here, as
// "cairn kv: ...", and returned as an *exitError with an empty message.
func newKVCmd() *cobra.Command {
	g := cli.DefaultGlobals()
	kv := &cobra.Command{
		Use:   "kv COMMAND",
		Short: "Read and write records of a running store",
		Long: `Read and write the records of a running Cairn store.

A key is written /major1/major2/-/minor1/minor2: the major path decides the
partition, the minor path (after "-") orders records within it. Escape '%'
and '/' inside a component as %25 and %2F.

With --json every command prints one JSON document (scan and multi-get: one
array) on stdout, also when the key is missing or a condition did not hold:
get prints {"key", "found"} and, when found, "value" or "value_base64",
"version" and "expiration"; put prints {"key", "done"} and "version" when
done; delete prints {"key", "deleted"}; multi-delete {"parent", "deleted"}
(a count). A value that is valid UTF-8 is given as the string "value"; any
other value as "value_base64" (standard base64).

Exit codes: 0 ok; 1 not found, not done, or another failure; 2 bad input
(including a wrong --store); 3 unavailable: no node answered, timed out, or
retryable. See 'cairn --help'.`,
		Example: `  cairn kv put /users/alice/-/email alice@example.com
  cairn kv get /users/alice/-/email
  cairn kv --hosts 10.0.0.1:5000,10.0.0.2:5000 --json multi-get /users/alice`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return cli.Usagef("missing command (want put, get, delete, multi-get, multi-delete, scan, count, export or import; see 'cairn kv --help')")
			}
			if args[0] == "help" {
				return nil
			}
			return cli.Usagef("%s", unknownCommand(cmd, args[0], "want put, get, delete, multi-get, multi-delete, scan, count, export or import"))
		},
		RunE: func(cmd *cobra.Command, args []string) error { return cmd.Help() },
	}
	pf := kv.PersistentFlags()
	pf.StringSliceVar(&g.Hosts, "hosts", g.Hosts, "host:port of one or more nodes, comma-separated")
	pf.StringVar(&g.Store, "store", g.Store, "store name; must match the store the nodes serve")
	pf.DurationVar(&g.Timeout, "timeout", g.Timeout, "timeout per operation (per page for scans)")
	pf.BoolVar(&g.JSON, "json", false, "print JSON")
	pf.StringVar(&g.Durability, "durability", "", "write durability MASTER[,REPLICA]: the leader's and the replicas' sync policy, each sync, write_no_sync or no_sync (default write_no_sync,no_sync); how many replicas must acknowledge is --ack")
	pf.StringVar(&g.Ack, "ack", "", "replica acks: all, simple_majority or none (default simple_majority)")
	pf.StringVar(&g.Security, "security", "", "login file of a secure store (cairn.ssl.ca=..., as 'cairn security init' or 'cairn lite --secure' write it)")
	pf.StringVar(&g.Consistency, "consistency", "", "read consistency: absolute, none_required, time_lag=LAG or version=HEX (default none_required)")

	kv.AddCommand(kvPutCmd(&g), kvGetCmd(&g), kvDeleteCmd(&g), kvMultiGetCmd(&g), kvScanCmd(&g, false), kvScanCmd(&g, true),
		kvMultiDeleteCmd(&g), kvExportCmd(&g), kvImportCmd(&g))
	kv.SetFlagErrorFunc(func(cmd *cobra.Command, err error) error {
		return kvFail(cmd, &cli.UsageError{Err: err})
	})
	wrapKV(kv)
	return kv
}

// wrapKV makes every command of the tree print its own errors and return
// them as exit codes, and keeps cobra from printing errors or usage.
func wrapKV(c *cobra.Command) {
	c.SilenceErrors, c.SilenceUsage = true, true
	if args := c.Args; args != nil {
		c.Args = func(cmd *cobra.Command, a []string) error {
			if err := args(cmd, a); err != nil {
				return kvFail(cmd, err)
			}
			return nil
		}
	}
	if run := c.RunE; run != nil {
		c.RunE = func(cmd *cobra.Command, a []string) error {
			if err := run(cmd, a); err != nil {
				return kvFail(cmd, err)
			}
			return nil
		}
	}
	for _, sub := range c.Commands() {
		wrapKV(sub)
	}
}

// kvFail prints err and turns it into an exit code for main.
func kvFail(cmd *cobra.Command, err error) error {
	var ee *exitError
	if errors.As(err, &ee) {
		return err // already reported
	}
	code := cli.Report(cmd.ErrOrStderr(), err)
	return &exitError{code: code, err: reported{}}
}

// nArgs checks the number of positional arguments, naming them.
func nArgs(min, max int, names string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) < min || len(args) > max {
			return cli.Usagef("%s: want %s, got %d argument(s)", cmd.Name(), names, len(args))
		}
		return nil
	}
}

// session opens a client and a cli.KV writing to the command's stdout.
func session(cmd *cobra.Command, g *cli.Globals, run func(*cli.KV) error) error {
	c, err := g.Open(cmd.Context())
	if err != nil {
		return err
	}
	defer c.Close()
	kv := &cli.KV{Client: c, In: cmd.InOrStdin(), Out: cmd.OutOrStdout(), JSON: g.JSON, Terminal: stdoutIsTerminal(cmd)}
	return run(kv)
}

func stdoutIsTerminal(cmd *cobra.Command) bool {
	if cmd.OutOrStdout() != os.Stdout {
		return false
	}
	fi, err := os.Stdout.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

func kvPutCmd(g *cli.Globals) *cobra.Command {
	var a cli.PutArgs
	cmd := &cobra.Command{
		Use:   "put KEY [VALUE]",
		Short: "Write a record and print its new version",
		Long: `Write VALUE (or the contents of --file) under KEY and print the new version.

With --if-absent, --if-present or --if-version the write is conditional; if
the condition does not hold nothing is written, "not done" is printed to
stderr (with --json also {"key": KEY, "done": false} on stdout) and the exit
code is 1. --ttl makes the record expire.`,
		Example: `  cairn kv put /users/alice/-/email alice@example.com
  cairn kv put /users/alice/-/photo --file photo.jpg --ttl 24h
  echo -n hi | cairn kv put /greeting --file - --if-absent
  cairn kv put /counter 2 --if-version 0000000000000001000000000000002a`,
		Args: nArgs(1, 2, "KEY [VALUE]"),
		RunE: func(cmd *cobra.Command, args []string) error {
			a.Key = args[0]
			if len(args) == 2 {
				a.Value, a.HasValue = args[1], true
			}
			a.HasIfVersion = cmd.Flags().Changed("if-version")
			return session(cmd, g, func(kv *cli.KV) error { return kv.Put(cmd.Context(), a) })
		},
	}
	f := cmd.Flags()
	f.StringVar(&a.File, "file", "", "read the value from this file ('-' for stdin)")
	f.DurationVar(&a.TTL, "ttl", 0, "expire the record after this long (0: never)")
	f.BoolVar(&a.IfAbsent, "if-absent", false, "write only if the key has no record")
	f.BoolVar(&a.IfPresent, "if-present", false, "write only if the key has a record")
	f.StringVar(&a.IfVersion, "if-version", "", "write only if the record has this version (hex)")
	return cmd
}

func kvGetCmd(g *cli.Globals) *cobra.Command {
	return &cobra.Command{
		Use:   "get KEY",
		Short: "Print a record's value",
		Long: `Print the value stored under KEY, byte for byte (a newline is added only when
stdout is a terminal). With --json print {"key", "value" (UTF-8) or
"value_base64" (any other bytes), "version", "expiration", "found": true}. A
missing key prints "not found" to stderr (with --json also {"key": KEY,
"found": false} on stdout) and exits 1.`,
		Example: `  cairn kv get /users/alice/-/email
  cairn kv get /users/alice/-/photo > photo.jpg
  cairn kv --json --consistency absolute get /users/alice/-/email`,
		Args: nArgs(1, 1, "KEY"),
		RunE: func(cmd *cobra.Command, args []string) error {
			return session(cmd, g, func(kv *cli.KV) error { return kv.Get(cmd.Context(), args[0]) })
		},
	}
}

func kvDeleteCmd(g *cli.Globals) *cobra.Command {
	var ifVersion string
	cmd := &cobra.Command{
		Use:   "delete KEY",
		Short: "Delete a record",
		Long: `Delete the record under KEY. If there is none, print "not found" to stderr and
exit 1. With --if-version delete only the record at that version; a record at
another version is left alone, "not done" is printed and the exit code is 1.`,
		Example: `  cairn kv delete /users/alice/-/email
  cairn kv delete /counter --if-version 0000000000000001000000000000002a`,
		Args: nArgs(1, 1, "KEY"),
		RunE: func(cmd *cobra.Command, args []string) error {
			var match *string // nil: no condition; an empty --if-version is refused
			if cmd.Flags().Changed("if-version") {
				match = &ifVersion
			}
			return session(cmd, g, func(kv *cli.KV) error { return kv.Delete(cmd.Context(), args[0], match) })
		},
	}
	cmd.Flags().StringVar(&ifVersion, "if-version", "", "delete only if the record has this version (hex)")
	return cmd
}

// selectionFlags adds the flags of cli.Selection and returns a function that
// reads them once the flags are parsed.
func selectionFlags(cmd *cobra.Command, s *cli.Selection, keysOnlyFlag bool) func() {
	read := rangeFlags(cmd, s)
	f := cmd.Flags()
	f.IntVar(&s.Batch, "batch", 100, "records per request")
	if keysOnlyFlag {
		f.BoolVar(&s.KeysOnly, "keys-only", false, "print keys only")
	}
	return read
}

// rangeFlags declares the flags that choose records under a parent
// (--depth, --start, --end, --prefix...); the func it returns records
// which of them were given, once the flags are parsed.
func rangeFlags(cmd *cobra.Command, s *cli.Selection) func() {
	f := cmd.Flags()
	f.StringVar(&s.Depth, "depth", "", "children_only, parent_and_children, descendants_only or parent_and_descendants (default)")
	f.StringVar(&s.Range.Start, "start", "", "first component right after the parent (inclusive)")
	f.StringVar(&s.Range.End, "end", "", "last component right after the parent (inclusive)")
	f.StringVar(&s.Range.Prefix, "prefix", "", "only components right after the parent that start with this")
	f.BoolVar(&s.Range.StartExclusive, "start-exclusive", false, "exclude --start itself")
	f.BoolVar(&s.Range.EndExclusive, "end-exclusive", false, "exclude --end itself")
	return func() {
		s.Range.HasStart = f.Changed("start")
		s.Range.HasEnd = f.Changed("end")
		s.Range.HasPrefix = f.Changed("prefix")
	}
}

func kvMultiDeleteCmd(g *cli.Globals) *cobra.Command {
	var s cli.Selection
	cmd := &cobra.Command{
		Use:   "multi-delete PARENT",
		Short: "Delete the records under a key, atomically, and print how many",
		Long: `Delete the records under PARENT, which has a complete major path and may have a
minor path, in one atomic operation (Oracle NoSQL's multiDelete), and print
how many were deleted (with --json {"parent", "deleted"}). The flags choose
records as for multi-get: --depth the levels, --start/--end or --prefix the
component right after PARENT. Deleting nothing is not an error.`,
		Example: `  cairn kv multi-delete /users/alice
  cairn kv multi-delete /users/alice/-/photos --prefix 2023
  cairn kv multi-delete /users/alice --depth children_only --start a --end m`,
		Args: nArgs(1, 1, "PARENT"),
	}
	read := rangeFlags(cmd, &s)
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		read()
		return session(cmd, g, func(kv *cli.KV) error { return kv.MultiDelete(cmd.Context(), args[0], s) })
	}
	return cmd
}

func kvMultiGetCmd(g *cli.Globals) *cobra.Command {
	var s cli.Selection
	var reverse bool
	cmd := &cobra.Command{
		Use:   "multi-get PARENT",
		Short: "Print the records under a key, in key order",
		Long: `Print the records under PARENT, which has a complete major path and may have a
minor path, one "KEY<TAB>VALUE" line each (a value that is not printable text
is shown Go-quoted), or a JSON array with --json. --depth chooses the levels,
--start/--end or --prefix restrict the component right after PARENT.`,
		Example: `  cairn kv multi-get /users/alice
  cairn kv multi-get /users/alice --depth children_only --start a --end m --end-exclusive
  cairn kv multi-get /users/alice/-/photos --prefix 2024 --reverse --keys-only`,
		Args: nArgs(1, 1, "PARENT"),
	}
	read := selectionFlags(cmd, &s, true)
	cmd.Flags().BoolVar(&reverse, "reverse", false, "descending key order")
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		read()
		return session(cmd, g, func(kv *cli.KV) error { return kv.MultiGet(cmd.Context(), args[0], s, reverse) })
	}
	return cmd
}

func kvScanCmd(g *cli.Globals, count bool) *cobra.Command {
	var s cli.Selection
	cmd := &cobra.Command{
		Use:   "scan [PARENT]",
		Short: "Print the records of the whole store or under a major path",
		Long: `Print every record of the store, or those whose major path starts with PARENT
(a possibly partial major path such as /users), in no particular order. Output
is as for multi-get. Scanning pages through the store --batch records at a
time, so it is not a snapshot.`,
		Example: `  cairn kv scan
  cairn kv scan /users --keys-only
  cairn kv --json scan /users --batch 500`,
		Args: nArgs(0, 1, "[PARENT]"),
	}
	if count {
		cmd.Use = "count [PARENT]"
		cmd.Short = "Print the number of records in the store or under a major path"
		cmd.Long = `Print how many records the store has, or how many have a major path starting
with PARENT. It pages through the keys, so it is not a snapshot; it takes the
same selection flags as scan.`
		cmd.Example = `  cairn kv count
  cairn kv count /users --depth parent_and_children`
	}
	read := selectionFlags(cmd, &s, !count)
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		read()
		parent := ""
		if len(args) == 1 {
			parent = args[0]
		}
		return session(cmd, g, func(kv *cli.KV) error {
			if count {
				return kv.Count(cmd.Context(), parent, s)
			}
			return kv.Scan(cmd.Context(), parent, s)
		})
	}
	return cmd
}
