package httpapi

import (
	"bufio"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
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

// TestMalformedEscapes: a malformed escape in the query, or a ';' between
// parameters, is a JSON 400 of kind bad_request naming it, on every route
// and before anything else (url.Values would drop that parameter: PUT
// ?if=absent%zz would write unconditionally). One in the path is refused
// by net/http before the handler runs, with its plain-text 400, as the
// package doc says.
func TestMalformedEscapes(t *testing.T) {
	h := New(nil, 1<<20) // no client: each request must be refused before it is used
	for _, tc := range []struct{ method, target, want string }{
		{"PUT", "/v1/kv/a?if=absent%zz", `the query holds a malformed escape "%zz"`},
		{"GET", "/v1/kv/a?consistency=absolute&timeout=1s%", `malformed escape "%"`},
		{"DELETE", "/v1/multi/a?prefix=%2", `malformed escape "%2"`},
		{"POST", "/v1/execute?timeout=%G0", `malformed escape "%G0"`},
		{"GET", "/v1/scan?parent=/a;limit=1", `the query "parent=/a;limit=1" cannot be read: invalid semicolon separator in query (separate parameters with '&')`},
		{"GET", "/v1/store?%zz", `malformed escape "%zz"`},
	} {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(tc.method, tc.target, strings.NewReader("v")))
		var body struct{ Error errorJSON }
		err := json.Unmarshal(rec.Body.Bytes(), &body)
		if rec.Code != http.StatusBadRequest || err != nil || body.Error.Kind != "bad_request" ||
			body.Error.Action != "FIX_INPUT" || !strings.Contains(body.Error.Message, tc.want) {
			t.Errorf("%s %s: %d %s, want 400 bad_request with %q", tc.method, tc.target, rec.Code, rec.Body, tc.want)
		}
	}

	srv := httptest.NewServer(h)
	defer srv.Close()
	conn, err := net.Dial("tcp", srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_, _ = io.WriteString(conn, "GET /v1/kv/a%zz HTTP/1.1\r\nHost: x\r\n\r\n")
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusBadRequest || resp.Header.Get("Content-Type") != "text/plain; charset=utf-8" || string(b) != "400 Bad Request" {
		t.Errorf("GET /v1/kv/a%%zz: %d %q %q; the package doc says net/http answers it with a plain-text 400 (update it if this changed)",
			resp.StatusCode, resp.Header.Get("Content-Type"), b)
	}
}
