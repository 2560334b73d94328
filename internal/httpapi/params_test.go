package httpapi

import (
	"errors"
	"net/http"
	"net/url"
	"testing"

	"google.golang.org/grpc/codes"

	"github.com/cairndb/cairn/client"
)

func TestCondition(t *testing.T) {
	for _, tc := range []struct {
		q         string
		forDelete bool
		cond      string
		bad       bool
	}{
		{"", false, "", false},
		{"if=absent", false, "absent", false},
		{"if=present", false, "present", false},
		{"if=version=0a0b", false, "version", false},
		{"if=version=0a0b", true, "version", false},
		{"if=absent", true, "", true},
		{"if=version=zz", false, "", true},
		{"if=maybe", false, "", true},
	} {
		q, _ := url.ParseQuery(tc.q)
		cond, _, err := params{q}.condition(tc.forDelete)
		var br *badRequest
		if tc.bad != errors.As(err, &br) || cond != tc.cond {
			t.Errorf("%q (delete %v): %q, %v; want %q, bad request %v", tc.q, tc.forDelete, cond, err, tc.cond, tc.bad)
		}
	}
}

func TestOptionsRefuseBadInput(t *testing.T) {
	for _, tc := range []struct {
		q     string
		write bool
	}{
		{"timeout=soon", false}, {"timeout=-1s", true}, {"consistency=eventual", false},
		{"durability=fast", true}, {"ack=some", true}, {"ttl=forever", true},
	} {
		q, _ := url.ParseQuery(tc.q)
		var br *badRequest
		if _, err := (params{q}).options(tc.write); !errors.As(err, &br) {
			t.Errorf("%q: %v, want a bad request", tc.q, err)
		}
	}
}

func TestStatusOf(t *testing.T) {
	for _, tc := range []struct {
		e    client.Error
		want int
	}{
		{client.Error{Code: codes.InvalidArgument, Kind: client.KindLimitExceeded}, http.StatusRequestEntityTooLarge},
		{client.Error{Code: codes.ResourceExhausted, Kind: client.KindDiskFull}, http.StatusInsufficientStorage},
		{client.Error{Code: codes.InvalidArgument, Kind: client.KindMalformedKey}, http.StatusBadRequest},
		{client.Error{Code: codes.Unavailable}, http.StatusServiceUnavailable},
		{client.Error{Code: codes.DeadlineExceeded}, http.StatusGatewayTimeout},
		{client.Error{Code: codes.DataLoss}, http.StatusInternalServerError},
	} {
		if got := statusOf(&tc.e); got != tc.want {
			t.Errorf("%v %s: %d, want %d", tc.e.Code, tc.e.Kind, got, tc.want)
		}
	}
}
