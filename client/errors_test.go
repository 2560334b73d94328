package client

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/cairndb/cairn/api/cairnpb"
)

// withDetail builds a server-style status error carrying an ErrorDetail.
func withDetail(t *testing.T, c codes.Code, msg string, d *cairnpb.ErrorDetail) error {
	t.Helper()
	st, err := status.New(c, msg).WithDetails(d)
	if err != nil {
		t.Fatal(err)
	}
	return st.Err()
}

func TestConvertErrorWithDetail(t *testing.T) {
	err := withDetail(t, codes.InvalidArgument, "value is 5000000 bytes", &cairnpb.ErrorDetail{
		Kind: "limit_exceeded", Action: cairnpb.ErrorDetail_ACTION_FIX_INPUT,
		Limit: "max_value_bytes", Max: 4 << 20, Seen: 5000000,
	})
	e := convertError(err, true, true)
	want := Error{Code: codes.InvalidArgument, Kind: KindLimitExceeded, Action: ActionFixInput,
		Limit: "max_value_bytes", Max: 4 << 20, Seen: 5000000, Msg: "value is 5000000 bytes"}
	if *e != want {
		t.Fatalf("convertError = %+v, want %+v", *e, want)
	}
	for _, s := range []string{"value is 5000000 bytes", "InvalidArgument", "limit_exceeded", "max_value_bytes", "4194304", "FIX_INPUT"} {
		if !strings.Contains(e.Error(), s) {
			t.Errorf("Error() = %q lacks %q", e.Error(), s)
		}
	}
	var wrapped error = fmt.Errorf("put: %w", e)
	if !errors.Is(wrapped, ErrLimitExceeded) || !errors.Is(wrapped, ErrInvalidArgument) {
		t.Errorf("wrapped %v does not match ErrLimitExceeded and ErrInvalidArgument", wrapped)
	}
	if errors.Is(wrapped, ErrUnavailable) || errors.Is(wrapped, ErrDiskFull) {
		t.Errorf("wrapped %v matches an unrelated sentinel", wrapped)
	}

	// maybe_applied comes from the server when it says so.
	err = withDetail(t, codes.Unavailable, "leader lost", &cairnpb.ErrorDetail{
		Kind: "leader_lost", Action: cairnpb.ErrorDetail_ACTION_RETRY, MaybeApplied: true})
	e = convertError(err, true, true)
	if !e.MaybeApplied || e.Action != ActionRetry || !strings.Contains(e.Error(), "may have been applied") {
		t.Errorf("convertError = %+v (%v), want MaybeApplied RETRY", *e, e)
	}
}

func TestErrorIs(t *testing.T) {
	sentinels := []error{ErrInvalidArgument, ErrLimitExceeded, ErrDiskFull, ErrConsistency,
		ErrTimeout, ErrUnavailable, ErrStoreMismatch, context.DeadlineExceeded, context.Canceled}
	for _, tc := range []struct {
		e    Error
		want []error
	}{
		{Error{Code: codes.InvalidArgument, Kind: "key_too_large"}, []error{ErrInvalidArgument}},
		{Error{Code: codes.InvalidArgument, Kind: KindLimitExceeded}, []error{ErrInvalidArgument, ErrLimitExceeded}},
		{Error{Code: codes.ResourceExhausted, Kind: KindDiskFull}, []error{ErrDiskFull}},
		{Error{Code: codes.DeadlineExceeded, Kind: KindConsistencyTimeout}, []error{ErrConsistency, ErrTimeout, context.DeadlineExceeded}},
		{Error{Code: codes.DeadlineExceeded}, []error{ErrTimeout, context.DeadlineExceeded}},
		{Error{Code: codes.Unavailable}, []error{ErrUnavailable}},
		{Error{Code: codes.FailedPrecondition, Kind: KindStoreMismatch}, []error{ErrStoreMismatch}},
		{Error{Code: codes.Canceled}, []error{context.Canceled}},
		{Error{Code: codes.Internal}, nil},
	} {
		for _, s := range sentinels {
			want := false
			for _, w := range tc.want {
				want = want || w == s
			}
			if got := errors.Is(&tc.e, s); got != want {
				t.Errorf("errors.Is(%+v, %v) = %v, want %v", tc.e, s, got, want)
			}
		}
	}
}

func TestConvertErrorWithoutDetail(t *testing.T) {
	for _, tc := range []struct {
		name        string
		err         error
		write, sent bool
		code        codes.Code
		action      Action
		maybe       bool
	}{
		{"refused read", status.Error(codes.Unavailable, "connection refused"), false, false, codes.Unavailable, ActionRetry, false},
		{"refused write", status.Error(codes.Unavailable, "connection refused"), true, false, codes.Unavailable, ActionRetry, false},
		{"broken write", status.Error(codes.Unavailable, "error reading from server: EOF"), true, true, codes.Unavailable, ActionRetry, true},
		{"broken read", status.Error(codes.Unavailable, "error reading from server: EOF"), false, true, codes.Unavailable, ActionRetry, false},
		{"deadline after send", status.Error(codes.DeadlineExceeded, "deadline"), true, true, codes.DeadlineExceeded, ActionRetry, true},
		{"unimplemented write", status.Error(codes.Unimplemented, "no such method"), true, true, codes.Unimplemented, ActionNone, false},
		{"grpc invalid argument", status.Error(codes.InvalidArgument, "bad"), true, true, codes.InvalidArgument, ActionFixInput, false},
		{"context error", context.DeadlineExceeded, false, false, codes.DeadlineExceeded, ActionRetry, false},
		{"canceled", context.Canceled, true, true, codes.Canceled, ActionNone, true},
	} {
		e := convertError(tc.err, tc.write, tc.sent)
		if e.Code != tc.code || e.Action != tc.action || e.MaybeApplied != tc.maybe || e.Kind != "" {
			t.Errorf("%s: convertError = %+v, want code %v action %v maybe %v", tc.name, *e, tc.code, tc.action, tc.maybe)
		}
	}
	// An *Error passes through unchanged.
	orig := &Error{Code: codes.InvalidArgument, Kind: KindMultipleMajorPaths}
	if got := convertError(fmt.Errorf("x: %w", orig), true, true); got != orig {
		t.Errorf("convertError re-wrapped an *Error: %v", got)
	}
}

func TestRetryable(t *testing.T) {
	for _, tc := range []struct {
		e     Error
		write bool
		want  bool
	}{
		{Error{Code: codes.Unavailable, Action: ActionRetry}, false, true},
		{Error{Code: codes.Unavailable, Action: ActionRetry}, true, true},
		{Error{Code: codes.Unavailable, Action: ActionRetry, MaybeApplied: true}, true, false},
		{Error{Code: codes.Unavailable, Action: ActionNone}, false, true},
		{Error{Code: codes.Unavailable, Action: ActionNone}, true, false},
		{Error{Code: codes.FailedPrecondition, Action: ActionRefresh}, true, true},
		{Error{Code: codes.FailedPrecondition, Action: ActionRefresh}, false, true},
		{Error{Code: codes.InvalidArgument, Action: ActionFixInput}, false, false},
		{Error{Code: codes.DeadlineExceeded, Action: ActionRetry}, false, false},
		{Error{Code: codes.Canceled, Action: ActionRetry}, false, false},
		{Error{Code: codes.Internal, Action: ActionNone}, false, false},
	} {
		if got := retryable(&tc.e, tc.write); got != tc.want {
			t.Errorf("retryable(%+v, write=%v) = %v, want %v", tc.e, tc.write, got, tc.want)
		}
	}
}
