package cli

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"google.golang.org/grpc/codes"

	"github.com/cairndb/cairn/client"
	"github.com/cairndb/cairn/internal/exitcode"
)

// Exit codes of cairn kv: package exitcode's table, which every cairn
// command shares.
const (
	ExitOK          = exitcode.OK          // success
	ExitNotFound    = exitcode.Failed      // the key was not found, or a conditional write was not done
	ExitFailed      = exitcode.Failed      // any other failure
	ExitBadInput    = exitcode.Usage       // usage error, malformed key, invalid argument, wrong store name
	ExitUnavailable = exitcode.Unavailable // no node answered, timed out, or another retryable failure
)

var (
	// ErrNotFound is returned by Get and Delete when there is no record.
	ErrNotFound = errors.New("not found")
	// ErrNotDone is returned by a conditional Put or Delete whose condition
	// did not hold.
	ErrNotDone = errors.New("not done")
)

// UsageError is a command line that cannot be run: a bad flag value, a
// missing or extra argument, an unknown command.
type UsageError struct{ Err error }

func (e *UsageError) Error() string { return e.Err.Error() }
func (e *UsageError) Unwrap() error { return e.Err }

// ExitCode is ExitBadInput.
func (e *UsageError) ExitCode() int { return ExitBadInput }

// Usagef returns a *UsageError with a formatted message.
func Usagef(format string, args ...any) error {
	return &UsageError{Err: fmt.Errorf(format, args...)}
}

// ExitCode maps an error from a kv command to the process exit code, as
// exitcode.Of does.
func ExitCode(err error) int {
	if errors.Is(err, ErrNotFound) || errors.Is(err, ErrNotDone) {
		return ExitNotFound
	}
	return exitcode.Of(err)
}

// Report writes err to w as cairn kv reports errors and returns the exit
// code. "not found" and "not done" are printed bare; everything else as
// "cairn kv: MESSAGE".
func Report(w io.Writer, err error) int {
	code := ExitCode(err)
	switch {
	case err == nil:
	case errors.Is(err, ErrNotFound) || errors.Is(err, ErrNotDone):
		fmt.Fprintln(w, err)
	default:
		fmt.Fprintf(w, "cairn kv: %s\n", Message(err))
	}
	return code
}

// Message is err's text for a person: a client error without its Go-level
// decoration, but with the limit sizes, what the kind means when that helps,
// and whether a write may have been applied. Its hints name cairn kv's
// flags; see Explain.
func Message(err error) string { return Explain(err, "--store", "--hosts") }

// Explain is Message with hints that name storeFlag and hostsFlag, the
// settings of the store's name and of its hosts (cairn bench names them
// -p cairn.store and -p cairn.hosts).
func Explain(err error, storeFlag, hostsFlag string) string {
	var ce *client.Error
	if !errors.As(err, &ce) {
		return err.Error()
	}
	var b strings.Builder
	b.WriteString(ce.Msg)
	if ce.Limit != "" && !strings.Contains(ce.Msg, ce.Limit) {
		fmt.Fprintf(&b, " (%s is %d, saw %d)", ce.Limit, ce.Max, ce.Seen)
	}
	switch {
	case ce.MaybeApplied:
		b.WriteString("; the write may or may not have been applied (read the key to find out)")
	case ce.Kind == client.KindStoreMismatch:
		b.WriteString(" (check " + storeFlag + ")")
	case ce.Code == codes.Unavailable && ce.Kind == "" && ce.Shard == "":
		b.WriteString(" (is the store running? check " + hostsFlag + ")")
	}
	return b.String()
}
