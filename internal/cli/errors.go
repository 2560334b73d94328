package cli

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"google.golang.org/grpc/codes"

	"github.com/cairndb/cairn/client"
)

// Exit codes of cairn kv.
const (
	ExitOK          = 0 // success
	ExitNotFound    = 1 // the key was not found, or a conditional write was not done
	ExitBadInput    = 2 // usage error, malformed key, invalid argument
	ExitUnavailable = 3 // unavailable, timed out, or another retryable failure
	ExitOther       = 4 // anything else
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

// Usagef returns a *UsageError with a formatted message.
func Usagef(format string, args ...any) error {
	return &UsageError{Err: fmt.Errorf(format, args...)}
}

// ExitCode maps an error from a kv command to the process exit code.
func ExitCode(err error) int {
	if err == nil {
		return ExitOK
	}
	if errors.Is(err, ErrNotFound) || errors.Is(err, ErrNotDone) {
		return ExitNotFound
	}
	var ue *UsageError
	if errors.As(err, &ue) {
		return ExitBadInput
	}
	var ce *client.Error
	if errors.As(err, &ce) {
		switch {
		case ce.Code == codes.InvalidArgument || ce.Action == client.ActionFixInput:
			return ExitBadInput
		case ce.Code == codes.Unavailable || ce.Code == codes.DeadlineExceeded ||
			ce.Action == client.ActionRetry || ce.Action == client.ActionRefresh:
			return ExitUnavailable
		}
	}
	return ExitOther
}

// Report writes err to w as cairn kv reports errors and returns the exit
// code. "not found" and "not done" are printed bare; everything else as
// "cairn kv: MESSAGE".
func Report(w io.Writer, err error) int {
	code := ExitCode(err)
	switch {
	case err == nil:
	case code == ExitNotFound:
		fmt.Fprintln(w, err)
	default:
		fmt.Fprintf(w, "cairn kv: %s\n", Message(err))
	}
	return code
}

// Message is err's text for a person: a client error without its Go-level
// decoration, but with the limit sizes, what the kind means when that helps,
// and whether a write may have been applied.
func Message(err error) string {
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
		b.WriteString(" (check --store)")
	case ce.Code == codes.Unavailable && ce.Kind == "":
		b.WriteString(" (is the store running? check --hosts)")
	}
	return b.String()
}
