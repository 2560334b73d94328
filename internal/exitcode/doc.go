// Package exitcode is the one table of process exit codes that every cairn
// subcommand (lite, sn, kv, bench, cluster, admin) exits with, and the
// mapping of errors to it. Package main and the command packages (cli,
// shell) return Of(err); Help is the table for help texts.
//
//	0  OK           the command did what was asked
//	1  Failed       it ran but did not succeed: a key not found, a
//	                conditional write not done, problems found (verify,
//	                ping, cluster status), a plan that failed, a failed
//	                bench run, a node that could not start
//	2  Usage        usage or bad input the user must fix: an unknown
//	                command, flag or option, a bad value, a missing file,
//	                a malformed key, a wrong store name, a request the
//	                server rejected as invalid
//	3  Unavailable  no node answered, or the node that did cannot serve
//	                the request now (no leader or admin yet, timed out):
//	                retrying later may succeed
//
// Of is a pure function, safe from any goroutine. Example, in a command:
//
//	if err := run(); err != nil {
//		fmt.Fprintf(os.Stderr, "cairn: %v\n", err)
//		os.Exit(exitcode.Of(err))
//	}
package exitcode
