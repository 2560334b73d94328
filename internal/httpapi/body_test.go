package httpapi

import (
	"bufio"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"
)

// rawRequest writes text on a new connection to srv and reads one answer.
func rawRequest(t *testing.T, srv *httptest.Server, text string) (*http.Response, map[string]map[string]any) {
	t.Helper()
	conn, err := net.Dial("tcp", srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if err := conn.SetDeadline(time.Now().Add(20 * time.Second)); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Write([]byte(text)); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("no answer to %q: %v", text[:min(len(text), 60)], err)
	}
	defer resp.Body.Close()
	var body map[string]map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		t.Fatalf("answer %d is not JSON: %v", resp.StatusCode, err)
	}
	return resp, body
}

// TestBodies: what the handler refuses while it reads a body, before it
// calls the store (so no store is needed): a body that does not arrive, a
// second JSON value after an execute request, a value over the limit.
func TestBodies(t *testing.T) {
	h := New(nil, 1000)
	h.bodyTimeout = 200 * time.Millisecond
	srv := httptest.NewServer(h)
	defer srv.Close()

	// Content-Length 100, 3 bytes sent: answered once the wait runs out.
	start := time.Now()
	resp, body := rawRequest(t, srv, "PUT /v1/kv/slow/-/a HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\nabc")
	if resp.StatusCode != 400 || !strings.Contains(body["error"]["message"].(string), "did not arrive within 200ms") {
		t.Errorf("a body that never arrives: %d %v", resp.StatusCode, body)
	}
	if took := time.Since(start); took > 10*time.Second {
		t.Errorf("a body that never arrives was answered after %v", took)
	}
	resp, body = rawRequest(t, srv, "POST /v1/execute HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{\"operations\": [")
	if resp.StatusCode != 400 || !strings.Contains(body["error"]["message"].(string), "did not arrive") {
		t.Errorf("an execute body that never arrives: %d %v", resp.StatusCode, body)
	}

	two := `{"operations":[{"op":"put","key":"/x/-/a","value":"1"}]}{"operations":[{"op":"put","key":"/y/-/a","value":"2"}]}`
	resp, body = rawRequest(t, srv, "POST /v1/execute HTTP/1.1\r\nHost: x\r\nContent-Length: "+strconv.Itoa(len(two))+"\r\n\r\n"+two)
	if resp.StatusCode != 400 || !strings.Contains(body["error"]["message"].(string), "more follows") {
		t.Errorf("two execute requests in one body: %d %v", resp.StatusCode, body)
	}
	resp, body = rawRequest(t, srv, "POST /v1/execute HTTP/1.1\r\nHost: x\r\nContent-Length: 7\r\n\r\n{} junk")
	if resp.StatusCode != 400 {
		t.Errorf("an execute request with junk after it: %d %v", resp.StatusCode, body)
	}

	big := strings.Repeat("v", 5000)
	resp, body = rawRequest(t, srv, "PUT /v1/kv/big/-/a HTTP/1.1\r\nHost: x\r\nContent-Length: 5000\r\n\r\n"+big)
	if e := body["error"]; resp.StatusCode != 413 || e["seen"] != 5000.0 || e["max"] != 1000.0 || !strings.Contains(e["message"].(string), "5000 bytes") {
		t.Errorf("a value over the limit: %d %v", resp.StatusCode, body)
	}
}
