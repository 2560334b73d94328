// Package cli implements the cairn kv commands: it parses their flag values,
// runs them with package client, formats their output, and maps their
// errors to exit codes. Package main (cmd/cairn/kv.go) only declares the
// cobra commands and flags and calls in here.
//
// # Contract
//
// Results go to KV.Out (stdout); nothing else is written there, so output
// can be piped. Every failure is returned as an error; Report prints it to
// stderr ("not found" and "not done" bare, everything else as
// "cairn kv: MESSAGE") and returns the exit code, from the table of
// package exitcode that every cairn command shares:
//
//	0  ok
//	1  not found (get, delete), not done (a conditional put or delete), or
//	   any other failure
//	2  bad input: usage error, bad flag value, malformed key or version,
//	   a request the server rejects as invalid, store mismatch
//	3  unavailable: no node answered, timed out, or another error the
//	   server marks retryable
//
// # Output
//
// get prints the value's bytes exactly, adding a newline only when stdout
// is a terminal. multi-get and scan print "KEY\tVALUE" per record, the value
// %q-quoted unless it is printable UTF-8; with --keys-only just KEY. With
// --json, get prints one object and multi-get and scan stream an array of
//
//	{"key": "/a/-/b", "value": "text", "version": "hex", "expiration": "RFC 3339"}
//
// where a value that is not UTF-8 is in "value_base64" instead and
// "expiration" is omitted for a record that never expires.
//
// # Export and import
//
// export writes an export file (exportfile.go draws it: JSON Lines, a
// header, the records, an end line that counts them) to stdout or to
// FILE.partial, renamed to FILE once synced whole. import reads one: a
// named file is checked whole before anything is written (a *FileError
// names the bad line, exit 2); stdin is checked as it is written. Records
// go in PutMany chunks with the time they have left to live. Progress
// lines go to KV.Progress (stderr) every 2 s
// (docs/design/20261129_export_import.md).
//
// # Example
//
//	kv := &cli.KV{Client: c, In: os.Stdin, Out: os.Stdout}
//	err := kv.Get(ctx, "/users/alice/-/email")
//	os.Exit(cli.Report(os.Stderr, err))
//
// # Concurrency
//
// The parse and format functions are pure. A KV runs one command at a time.
package cli
