package httpapi

import (
	"bufio"
	"errors"
	"net/http"
	"net/url"
	"strings"
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

// TestKeyOfReadsTheRequestLine: the key is the path as the request line
// sent it, so an escaped '/' or '-' stays inside its component whatever
// else the path holds (net/url rebuilds a path holding '|' from its decoded
// form, where %2F is a separator).
func TestKeyOfReadsTheRequestLine(t *testing.T) {
	for _, c := range []struct{ line, want, err string }{
		{"GET /v1/kv/rt/a%2Fb/-/x|y HTTP/1.1", "/rt/a%2Fb/-/x|y", ""},
		{"GET /v1/kv/rt/a%2Fb/-/x%7Cy?timeout=1s HTTP/1.1", "/rt/a%2Fb/-/x|y", ""},
		{"GET /v1/kv/esc/%2D/-/x^y HTTP/1.1", "/esc/%2D/-/x^y", ""},
		{"GET http://127.0.0.1:5000/v1/kv/a%2Fb/-/{c} HTTP/1.1", "/a%2Fb/-/{c}", ""},
		{"GET /v1/%6Bv/a HTTP/1.1", "", "does not start with /v1/kv/"},
		{"GET /v1/kv/ HTTP/1.1", "", "names no key"},
		{"GET /v1/kv//a HTTP/1.1", "", "empty"},
	} {
		r, err := http.ReadRequest(bufio.NewReader(strings.NewReader(c.line + "\r\nHost: x\r\n\r\n")))
		if err != nil {
			t.Fatalf("%s: %v", c.line, err)
		}
		k, err := keyOf(r, "/v1/kv")
		switch {
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
			t.Errorf("%s: got %v, %v; want an error with %q", c.line, k, err, c.err)
		case c.err == "" && (err != nil || k.String() != c.want):
			t.Errorf("%s: got %v, %v; want %s", c.line, k, err, c.want)
		}
	}
}
