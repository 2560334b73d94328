// Command cairn is the single Cairn binary. Each subcommand parses its flags
// and wires internal packages together; the logic lives in internal/.
package main

import (
	"errors"
	"fmt"
	"os"

	"github.com/spf13/cobra"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

// exitError carries a process exit code out of a command.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }

func main() {
	root := &cobra.Command{
		Use:   "cairn",
		Short: "Cairn: a distributed key-value store",
		Long: `Cairn is a distributed key-value store in the mould of Oracle NoSQL Database.

Start a one-process store and use it:
  cairn lite --root /tmp/cairn
  cairn kv put /users/alice/-/email alice@example.com
  cairn kv get /users/alice/-/email`,
		SilenceUsage:  true,
		SilenceErrors: true,
		Version:       version,
	}
	root.AddCommand(newLiteCmd(), newKVCmd(), newSNCmd(), newBenchCmd(), newClusterCmd(), newAdminCmd())
	if err := root.Execute(); err != nil {
		code := 2
		var ee *exitError
		if errors.As(err, &ee) {
			code = ee.code
		}
		if ee == nil || ee.err.Error() != "" {
			fmt.Fprintf(os.Stderr, "cairn: %v\n", err)
		}
		os.Exit(code)
	}
}
