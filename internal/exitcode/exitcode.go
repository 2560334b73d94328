package exitcode

import (
	"context"
	"errors"
	"fmt"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/cairndb/cairn/client"
)

// The exit codes.
const (
	OK          = 0
	Failed      = 1
	Usage       = 2
	Unavailable = 3
)

// Help is the table for a command's help text.
const Help = `Exit codes (the same for every cairn command):
  0  ok
  1  failed: the command ran but did not succeed (not found, not done,
     problems found, a plan or bench run that failed, a node that could
     not start)
  2  usage or bad input to fix: unknown command, flag or option, bad value,
     missing file, malformed key, wrong store name, an invalid request,
     a secure store's refusal (log in; a wrong password; too small a role)
  3  unavailable: no node answered, or the one that did cannot serve the
     request now (no leader or admin yet, timed out); retry later`

// Coder is an error that knows its exit code.
type Coder interface {
	error
	ExitCode() int
}

// Error is an error with an exit code.
type Error struct {
	Code int
	Err  error
}

func (e *Error) Error() string { return e.Err.Error() }

// Unwrap returns the error itself.
func (e *Error) Unwrap() error { return e.Err }

// ExitCode returns e.Code.
func (e *Error) ExitCode() int { return e.Code }

// Usagef returns an *Error with code Usage and a formatted message.
func Usagef(format string, args ...any) error {
	return &Error{Code: Usage, Err: fmt.Errorf(format, args...)}
}

// Of returns err's exit code: OK for nil; a Coder's own code; for an error
// of package client or a gRPC status, Usage if it is to be fixed by the
// caller, Unavailable if retrying may help; Unavailable for a timeout;
// Failed for anything else.
func Of(err error) int {
	if err == nil {
		return OK
	}
	var c Coder
	if errors.As(err, &c) {
		return c.ExitCode()
	}
	var ce *client.Error
	if errors.As(err, &ce) {
		return ofClient(ce)
	}
	if st, ok := status.FromError(err); ok {
		return ofStatus(st.Code())
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return Unavailable
	}
	return Failed
}

// ofClient maps an error of the Go client by its code and advice.
func ofClient(e *client.Error) int {
	switch {
	case e.Code == codes.InvalidArgument || e.Action == client.ActionFixInput:
		return Usage
	case e.Code == codes.Unavailable || e.Code == codes.DeadlineExceeded ||
		e.Action == client.ActionRetry || e.Action == client.ActionRefresh:
		return Unavailable
	}
	return Failed
}

// ofStatus maps a gRPC status code.
func ofStatus(c codes.Code) int {
	switch c {
	case codes.OK:
		return OK
	case codes.InvalidArgument, codes.Unauthenticated, codes.PermissionDenied:
		return Usage // fix the request or the credentials; no retry helps
	case codes.Unavailable, codes.DeadlineExceeded:
		return Unavailable
	}
	return Failed
}
