// Command cairn is the single Cairn binary. Each subcommand parses its flags
// and wires internal packages together; the logic lives in internal/.
//
// Every subcommand exits with package exitcode's codes: 0 ok, 1 failed,
// 2 usage or bad input, 3 unavailable.
package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/cairndb/cairn/internal/exitcode"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

// exitError carries a process exit code out of a command. An error whose
// text is empty (reported) has been printed already.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }

// Unwrap returns the error itself.
func (e *exitError) Unwrap() error { return e.err }

// usageErr is a command-line mistake: exit status 2.
func usageErr(format string, args ...any) error {
	return &exitError{code: exitcode.Usage, err: fmt.Errorf(format, args...)}
}

// reported is an error that a command has already printed.
type reported struct{}

func (reported) Error() string { return "" }

func main() {
	os.Exit(run(os.Args[1:], os.Stderr))
}

// run executes the command line args and returns the exit code, printing
// an error not yet printed as "cairn: ..." on stderr.
func run(args []string, stderr io.Writer) int {
	root := newRootCmd()
	root.SetArgs(args)
	err := root.Execute()
	if err == nil {
		return exitcode.OK
	}
	code := exitcode.Usage // cobra's own: an unknown command or flag, bad arguments
	var ee *exitError
	if errors.As(err, &ee) {
		code = ee.code
	}
	if ee == nil || ee.err.Error() != "" {
		fmt.Fprintf(stderr, "cairn: %v\n", err)
	}
	return code
}

func newRootCmd() *cobra.Command {
	root := &cobra.Command{
		Use:   "cairn",
		Short: "Cairn: a distributed key-value store",
		Long: `Cairn is a distributed key-value store in the mould of Oracle NoSQL Database.

Start a one-process store and use it:
  cairn lite --root /tmp/cairn
  cairn kv put /users/alice/-/email alice@example.com
  cairn kv get /users/alice/-/email

` + exitcode.Help,
		SilenceUsage:  true,
		SilenceErrors: true,
		Version:       version,
	}
	root.AddCommand(newLiteCmd(), newKVCmd(), newSNCmd(), newBenchCmd(), newClusterCmd(), newAdminCmd(), newSecurityCmd(), newVersionCmd())
	codeRunErrors(root)
	return root
}

// newVersionCmd returns "cairn version", which prints what --version does.
func newVersionCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version (as cairn --version does)",
		Args:  noSubcommand,
		RunE: func(cmd *cobra.Command, _ []string) error {
			_, err := fmt.Fprintf(cmd.OutOrStdout(), "cairn version %s\n", version)
			return err
		},
	}
}

// noSubcommand is cobra.NoArgs for a command that has subcommands (or is
// one): an unknown word is reported with cobra's "did you mean" suggestions
// (SuggestionsFor: names within two edits, or with the word as prefix).
func noSubcommand(cmd *cobra.Command, args []string) error {
	if len(args) == 0 {
		return nil
	}
	return &exitError{code: exitcode.Usage, err: errors.New(unknownCommand(cmd, args[0], ""))}
}

// unknownCommand is the message for word given where cmd wants one of its
// subcommands: `unknown command "gte" for "cairn kv"`, then want (if not
// empty) and cobra's suggestions, e.g. "; did you mean get?".
func unknownCommand(cmd *cobra.Command, word, want string) string {
	msg := fmt.Sprintf("unknown command %q for %q", word, cmd.CommandPath())
	if want != "" {
		msg += " (" + want + ")"
	}
	if cmd.SuggestionsMinimumDistance <= 0 {
		cmd.SuggestionsMinimumDistance = 2 // cobra's default, which SuggestionsFor does not apply itself
	}
	if sugg := cmd.SuggestionsFor(word); len(sugg) > 0 {
		msg += "; did you mean " + strings.Join(sugg, " or ") + "?"
	}
	return msg
}

// codeRunErrors gives every error that a command's RunE returns without an
// exit code the code exitcode.Of finds (1 unless it says otherwise), so
// that the errors left without one at the top are cobra's own usage errors.
func codeRunErrors(c *cobra.Command) {
	if run := c.RunE; run != nil {
		c.RunE = func(cmd *cobra.Command, args []string) error {
			err := run(cmd, args)
			var ee *exitError
			if err == nil || errors.As(err, &ee) {
				return err
			}
			return &exitError{code: exitcode.Of(err), err: err}
		}
	}
	for _, sub := range c.Commands() {
		codeRunErrors(sub)
	}
}
