package exitcode

import (
	"context"
	"errors"
	"fmt"
	"os"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/cairndb/cairn/client"
)

func TestOf(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  error
		want int
	}{
		{"nil", nil, OK},
		{"plain", errors.New("disk on fire"), Failed},
		{"missing file", &os.PathError{Op: "open", Path: "x", Err: os.ErrNotExist}, Failed},
		{"usage", Usagef("bad flag %s", "-x"), Usage},
		{"wrapped usage", fmt.Errorf("ctx: %w", Usagef("bad")), Usage},
		{"explicit code", &Error{Code: Unavailable, Err: errors.New("x")}, Unavailable},
		{"store mismatch", &client.Error{Code: codes.FailedPrecondition, Kind: client.KindStoreMismatch, Action: client.ActionFixInput}, Usage},
		{"wrapped store mismatch", fmt.Errorf("bench: -db cairn: %w", &client.Error{Code: codes.FailedPrecondition, Action: client.ActionFixInput}), Usage},
		{"invalid key", &client.Error{Code: codes.InvalidArgument}, Usage},
		{"client unavailable", &client.Error{Code: codes.Unavailable, Action: client.ActionRetry}, Unavailable},
		{"client timeout", &client.Error{Code: codes.DeadlineExceeded}, Unavailable},
		{"disk full", &client.Error{Code: codes.ResourceExhausted, Action: client.ActionRetry}, Unavailable},
		{"no topology yet", &client.Error{Code: codes.FailedPrecondition}, Failed},
		{"client internal", &client.Error{Code: codes.Internal, Action: client.ActionNone}, Failed},
		{"status invalid", status.Error(codes.InvalidArgument, "x"), Usage},
		{"status permission denied", status.Error(codes.PermissionDenied, "x"), Usage},
		{"status unauthenticated", status.Error(codes.Unauthenticated, "x"), Usage},
		{"status unavailable", status.Error(codes.Unavailable, "no leader"), Unavailable},
		{"status deadline", status.Error(codes.DeadlineExceeded, "slow"), Unavailable},
		{"status precondition", status.Error(codes.FailedPrecondition, "not in a store"), Failed},
		{"context deadline", fmt.Errorf("wait: %w", context.DeadlineExceeded), Unavailable},
		{"context canceled", context.Canceled, Failed},
	} {
		if got := Of(tc.err); got != tc.want {
			t.Errorf("%s: Of(%v) = %d, want %d", tc.name, tc.err, got, tc.want)
		}
	}
}
