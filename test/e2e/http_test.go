package e2e

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cairndb/cairn/api/cairnpb"
)

// httpDo sends one request and decodes the JSON answer into a map.
func httpDo(t *testing.T, method, url string, body []byte) (int, map[string]any) {
	t.Helper()
	req, err := http.NewRequest(method, url, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var out map[string]any
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatalf("%s %s: status %d, body is not JSON: %v\n%s", method, url, resp.StatusCode, err, raw)
	}
	return resp.StatusCode, out
}

// wantHTTP checks an answer's status and, for each path "a.b" in fields, its value.
func wantHTTP(t *testing.T, what string, code int, body map[string]any, wantCode int, fields map[string]any) {
	t.Helper()
	if code != wantCode {
		t.Errorf("%s: status %d, want %d: %v", what, code, wantCode, body)
		return
	}
	for path, w := range fields {
		var v any = body
		for _, p := range strings.Split(path, ".") {
			m, _ := v.(map[string]any)
			v = m[p]
		}
		if s, ok := w.(string); ok && strings.HasPrefix(s, "~") {
			if got, _ := v.(string); !strings.Contains(got, s[1:]) {
				t.Errorf("%s: %s = %v, want it to contain %q", what, path, v, s[1:])
			}
		} else if fmt.Sprint(v) != fmt.Sprint(w) {
			t.Errorf("%s: %s = %v, want %v (%v)", what, path, v, w, body)
		}
	}
}

// scanAll pages through GET /v1/scan (the query q, limit per page) and
// returns the keys it saw, failing on a repeated key.
func scanAll(t *testing.T, base, q string, limit int) map[string]bool {
	t.Helper()
	seen := map[string]bool{}
	cursor := ""
	for pages := 0; ; pages++ {
		if pages > 10000 {
			t.Fatal("scan: more than 10,000 pages")
		}
		url := fmt.Sprintf("%s/v1/scan?%s&limit=%d", base, q, limit)
		if cursor != "" {
			url += "&cursor=" + cursor
		}
		code, body := httpDo(t, "GET", url, nil)
		if code != 200 {
			t.Fatalf("scan page %d: %d %v", pages, code, body)
		}
		recs, _ := body["records"].([]any)
		if len(recs) > limit {
			t.Fatalf("scan page %d: %d records, limit %d", pages, len(recs), limit)
		}
		for _, r := range recs {
			k, _ := r.(map[string]any)["key"].(string)
			if seen[k] {
				t.Fatalf("scan returned %s twice", k)
			}
			seen[k] = true
		}
		next, _ := body["cursor"].(string)
		if next == "" {
			return seen
		}
		cursor = next
	}
}

// TestHTTPLite drives the HTTP/JSON API of a cairn lite process on its one
// port: every KV operation, conditions, TTL, durability, the errors of bad
// input and of limits, and gRPC still served beside it.
func TestHTTPLite(t *testing.T) {
	l := startLite(t, filepath.Join(t.TempDir(), "lite"))
	base := "http://" + l.addr
	kv := base + "/v1/kv"

	// The smallest use, with curl where there is one.
	users := 4 // records under /users when the scan below runs
	if curl, err := exec.LookPath("curl"); err == nil {
		users++
		out, err := exec.Command(curl, "-sf", "-X", "PUT", "--data-binary", "alice@example.com", kv+"/users/alice/-/email").CombinedOutput()
		if err != nil {
			t.Fatalf("curl put: %v\n%s", err, out)
		}
		out, err = exec.Command(curl, "-sf", kv+"/users/alice/-/email").CombinedOutput()
		if err != nil || !strings.Contains(string(out), `"value": "alice@example.com"`) || !strings.Contains(string(out), `"version": "`) {
			t.Fatalf("curl get: %v\n%s", err, out)
		}
		t.Logf("curl get:\n%s", out)
	}

	code, put := httpDo(t, "PUT", kv+"/users/bob/-/email?durability=sync", []byte("bob@example.com"))
	wantHTTP(t, "put", code, put, 200, map[string]any{"done": true, "key": "/users/bob/-/email"})
	ver, _ := put["version"].(string)
	code, got := httpDo(t, "GET", kv+"/users/bob/-/email?consistency=absolute", nil)
	wantHTTP(t, "get", code, got, 200, map[string]any{"value": "bob@example.com", "version": ver})

	// Conditions: a failed one is 412 and writes nothing.
	code, body := httpDo(t, "PUT", kv+"/users/bob/-/email?if=absent", []byte("x"))
	wantHTTP(t, "put if absent over a record", code, body, 412, map[string]any{"done": false})
	other := ver[:len(ver)-1] + "0" // a well-formed version that is not the record's
	if strings.HasSuffix(ver, "0") {
		other = ver[:len(ver)-1] + "1"
	}
	code, body = httpDo(t, "PUT", kv+"/users/bob/-/email?if=version="+other, []byte("x"))
	wantHTTP(t, "put if another version", code, body, 412, map[string]any{"done": false})
	code, body = httpDo(t, "PUT", kv+"/users/bob/-/email?if=version="+ver, []byte("bob@new.example.com"))
	wantHTTP(t, "put if its version", code, body, 200, map[string]any{"done": true})
	code, body = httpDo(t, "PUT", kv+"/users/carol/-/email?if=present", []byte("x"))
	wantHTTP(t, "put if present, absent", code, body, 412, map[string]any{"done": false})

	// A binary value comes back in base64; a TTL gives an expiration.
	code, body = httpDo(t, "PUT", kv+"/users/bob/-/photo?ttl=1h", []byte{0xff, 0x00, 0x01})
	wantHTTP(t, "put binary with ttl", code, body, 200, map[string]any{"done": true})
	code, body = httpDo(t, "GET", kv+"/users/bob/-/photo", nil)
	wantHTTP(t, "get binary", code, body, 200, map[string]any{"value_base64": "/wAB"})
	if exp, _ := body["expiration"].(string); exp == "" {
		t.Errorf("a record put with ttl=1h has no expiration: %v", body)
	}

	// Multi-get and multi-delete under one major path.
	code, body = httpDo(t, "GET", base+"/v1/multi/users/bob?keys_only", nil)
	if recs, _ := body["records"].([]any); code != 200 || len(recs) != 2 {
		t.Errorf("multi-get keys of /users/bob: status %d, %v; want 2 keys", code, body)
	}
	code, body = httpDo(t, "GET", base+"/v1/multi/users/bob?prefix=ph&depth=descendants_only", nil)
	if recs, _ := body["records"].([]any); code != 200 || len(recs) != 1 {
		t.Errorf("multi-get of /users/bob with prefix ph: status %d, %v; want the photo", code, body)
	}

	// Execute: atomic, all or nothing.
	ops := `{"operations": [
	  {"op": "put", "key": "/users/dave/-/email", "value": "dave@example.com"},
	  {"op": "put", "key": "/users/dave/-/name", "value_base64": "RGF2ZQ==", "if": "absent"}]}`
	code, body = httpDo(t, "POST", base+"/v1/execute", []byte(ops))
	if res, _ := body["results"].([]any); code != 200 || len(res) != 2 {
		t.Errorf("execute: status %d, %v; want 2 results", code, body)
	}
	abort := `{"operations": [
	  {"op": "put", "key": "/users/dave/-/phone", "value": "555"},
	  {"op": "put", "key": "/users/dave/-/name", "value": "D", "if": "absent", "abort_if_unsuccessful": true}]}`
	code, body = httpDo(t, "POST", base+"/v1/execute", []byte(abort))
	wantHTTP(t, "execute aborted", code, body, 409, map[string]any{"error.kind": "execute_aborted", "error.index": 1})
	code, body = httpDo(t, "GET", kv+"/users/dave/-/phone", nil)
	wantHTTP(t, "the aborted batch wrote nothing", code, body, 404, map[string]any{"error.kind": "not_found"})
	two := `{"operations": [{"op": "put", "key": "/a/-/x", "value": "1"}, {"op": "put", "key": "/b/-/x", "value": "2"}]}`
	code, body = httpDo(t, "POST", base+"/v1/execute", []byte(two))
	wantHTTP(t, "execute over two major paths", code, body, 400, map[string]any{"error.kind": "multiple_major_paths", "error.action": "FIX_INPUT"})

	// A store scan in pages of 1 sees each of the records under /users once.
	if keys := scanAll(t, base, "parent=/users&keys_only", 1); len(keys) != users {
		t.Errorf("scan of /users in pages of 1: %v, want %d records", keys, users)
	}
	code, body = httpDo(t, "GET", base+"/v1/scan?cursor=AAA", nil)
	wantHTTP(t, "a forged cursor", code, body, 400, map[string]any{"error.kind": "malformed_cursor"})
	code, body = httpDo(t, "GET", base+"/v1/scan?limit=0", nil)
	wantHTTP(t, "a zero limit", code, body, 400, map[string]any{"error.message": "~limit"})

	code, body = httpDo(t, "DELETE", base+"/v1/multi/users/bob", nil)
	wantHTTP(t, "multi-delete", code, body, 200, map[string]any{"deleted": 2})
	code, body = httpDo(t, "DELETE", kv+"/users/dave/-/email", nil)
	wantHTTP(t, "delete", code, body, 200, map[string]any{"done": true})
	code, body = httpDo(t, "DELETE", kv+"/users/dave/-/email", nil)
	wantHTTP(t, "delete of nothing", code, body, 200, map[string]any{"done": false})

	// Bad input: clear errors, the kind and what to do.
	code, body = httpDo(t, "PUT", kv+"/users/bob/-/email?durability=fast", []byte("x"))
	wantHTTP(t, "bad durability", code, body, 400, map[string]any{"error.kind": "bad_request", "error.message": "~durability"})
	code, body = httpDo(t, "GET", kv+"/users/bob/-/email?consistency=eventual", nil)
	wantHTTP(t, "bad consistency", code, body, 400, map[string]any{"error.kind": "bad_request", "error.message": "~consistency"})
	code, body = httpDo(t, "PUT", kv+"/big/-/v", bytes.Repeat([]byte("v"), 4<<20+1))
	wantHTTP(t, "a value over the limit", code, body, 413, map[string]any{"error.kind": "limit_exceeded", "error.limit": "max_value_bytes"})
	code, body = httpDo(t, "PUT", kv+"/"+strings.Repeat("k", 11<<10), []byte("x"))
	wantHTTP(t, "a key over the limit", code, body, 413, map[string]any{"error.kind": "limit_exceeded"})
	code, body = httpDo(t, "GET", kv+"/-/x", nil)
	wantHTTP(t, "a malformed key", code, body, 400, map[string]any{"error.kind": "malformed_key", "error.action": "FIX_INPUT"})
	code, body = httpDo(t, "POST", base+"/v1/execute", []byte(`{"operations": [{"op": "upsert"}]}`))
	wantHTTP(t, "an unknown op", code, body, 400, map[string]any{"error.message": "~upsert"})
	code, body = httpDo(t, "GET", base+"/v2/kv/a", nil)
	wantHTTP(t, "an unknown path", code, body, 404, map[string]any{"error.kind": "no_such_endpoint"})

	code, body = httpDo(t, "GET", base+"/v1/store", nil)
	wantHTTP(t, "store", code, body, 200, map[string]any{"store": l.store, "partitions": l.partitions})
	httpEdges(t, l.addr)

	// gRPC on the same port still answers.
	kvc := cairnpb.NewKVClient(dialConn(t, l.addr))
	resp, err := kvc.StoreInfo(t.Context(), &cairnpb.StoreInfoRequest{})
	if err != nil || resp.GetStore() != l.store {
		t.Fatalf("gRPC StoreInfo on the HTTP port: %v, %v", resp, err)
	}
}

// TestHTTPAnyNodeForwards: on a replicated store, any node's HTTP API
// takes any request and reaches the key's shard leader.
func TestHTTPAnyNodeForwards(t *testing.T) {
	t.Parallel()
	nodes := deployWhitePaper(t)
	for i := range 20 {
		key := fmt.Sprintf("/fwd/k%02d/-/v", i)
		put := nodes[i%3]
		code, body := httpDo(t, "PUT", fmt.Sprintf("http://127.0.0.1:%d/v1/kv%s", put.port, key), []byte(key))
		wantHTTP(t, "put through sn"+fmt.Sprint(i%3+1), code, body, 200, map[string]any{"done": true})
		for j, sn := range nodes {
			code, body = httpDo(t, "GET", fmt.Sprintf("http://127.0.0.1:%d/v1/kv%s?consistency=absolute", sn.port, key), nil)
			wantHTTP(t, fmt.Sprintf("absolute get of %s through sn%d", key, j+1), code, body, 200, map[string]any{"value": key})
		}
	}
	// A scan through sn2 in pages of 3 crosses both shards.
	if keys := scanAll(t, fmt.Sprintf("http://127.0.0.1:%d", nodes[1].port), "parent=/fwd", 3); len(keys) != 20 {
		t.Errorf("scan of /fwd through sn2: %d keys, want 20: %v", len(keys), keys)
	}
	code, body := httpDo(t, "GET", fmt.Sprintf("http://127.0.0.1:%d/v1/store", nodes[2].port), nil)
	wantHTTP(t, "store through sn3", code, body, 200, map[string]any{"partitions": 100, "store": "kvstore"})
}

// rawHTTP sends one request as written (the request line is not re-encoded,
// as Go's client would) and decodes the JSON answer.
func rawHTTP(t *testing.T, addr, method, target string, body string) (int, map[string]any) {
	t.Helper()
	conn, err := net.DialTimeout("tcp", addr, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(30 * time.Second))
	fmt.Fprintf(conn, "%s %s HTTP/1.1\r\nHost: %s\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s", method, target, addr, len(body), body)
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("%s %s: %v", method, target, err)
	}
	defer resp.Body.Close()
	var out map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		t.Fatalf("%s %s: status %d, body is not JSON: %v", method, target, resp.StatusCode, err)
	}
	return resp.StatusCode, out
}

// httpEdges: what careless or hostile HTTP callers send (an independent
// probe's findings): escapes next to characters a URL library would
// re-encode, a malformed escape in the query, a second JSON value, parameters of the other kind of
// operation, a version wait that runs out, another method, a login to a
// store without users.
func httpEdges(t *testing.T, addr string) {
	code, body := rawHTTP(t, addr, "PUT", "/v1/kv/rt/a%2Fb/-/x|y", "real")
	wantHTTP(t, "put with %2F beside '|'", code, body, 200, map[string]any{"key": "/rt/a%2Fb/-/x|y"})
	code, body = rawHTTP(t, addr, "PUT", "/v1/kv/rt/a/b/-/x|y", "other")
	wantHTTP(t, "put of the key with a '/'", code, body, 200, map[string]any{"key": "/rt/a/b/-/x|y"})
	code, body = rawHTTP(t, addr, "GET", "/v1/kv/rt/a%2Fb/-/x|y", "")
	wantHTTP(t, "get with %2F beside '|'", code, body, 200, map[string]any{"key": "/rt/a%2Fb/-/x|y", "value": "real"})
	ver, _ := body["version"].(string)

	// A malformed escape in the query is refused, not dropped with its
	// parameter: this conditional put would overwrite the record.
	code, body = rawHTTP(t, addr, "PUT", "/v1/kv/rt/a%2Fb/-/x|y?if=absent%zz", "clobbered")
	wantHTTP(t, "a put whose ?if= holds a malformed escape", code, body, 400, map[string]any{"error.kind": "bad_request", "error.message": `~malformed escape "%zz"`})
	code, body = rawHTTP(t, addr, "GET", "/v1/kv/rt/a%2Fb/-/x|y", "")
	wantHTTP(t, "the refused put wrote nothing", code, body, 200, map[string]any{"value": "real"})

	two := `{"operations":[{"op":"put","key":"/x/-/a","value":"1"}]}{"operations":[{"op":"put","key":"/y/-/a","value":"2"}]}`
	code, body = rawHTTP(t, addr, "POST", "/v1/execute", two)
	wantHTTP(t, "two execute requests in one body", code, body, 400, map[string]any{"error.message": "~more follows"})
	code, body = rawHTTP(t, addr, "GET", "/v1/kv/x/-/a", "")
	wantHTTP(t, "the refused execute wrote nothing", code, body, 404, map[string]any{"error.kind": "not_found"})
	code, body = rawHTTP(t, addr, "POST", "/v1/execute", `{"operations":[{"op":"put","key":"x/-/a","value":"1"}]}`)
	wantHTTP(t, "a malformed key in execute", code, body, 400, map[string]any{"error.kind": "malformed_key", "error.message": "~operations[0]"})

	code, body = rawHTTP(t, addr, "DELETE", "/v1/kv/rt/a%2Fb/-/x|y?ttl=1h", "")
	wantHTTP(t, "a delete with a ttl", code, body, 400, map[string]any{"error.message": "~a delete takes no ttl"})
	code, body = rawHTTP(t, addr, "PUT", "/v1/kv/rt/c?consistency=absolute", "v")
	wantHTTP(t, "a put with a consistency", code, body, 400, map[string]any{"error.message": "~a write takes no consistency"})
	code, body = rawHTTP(t, addr, "PUT", "/v1/kv/rt/c?durability=sync,sync,sync", "v")
	wantHTTP(t, "three sync policies", code, body, 400, map[string]any{"error.message": "~more than two policies"})
	code, body = rawHTTP(t, addr, "GET", "/v1/multi/rt?start=b&end=a", "")
	wantHTTP(t, "a range backwards", code, body, 400, map[string]any{"error.message": "~is after end"})

	// A version the store has not reached: the wait ends before the
	// call's deadline with consistency_timeout, not the call's timeout.
	future := ver[:16] + "00000000ffffffff"
	code, body = rawHTTP(t, addr, "GET", "/v1/kv/rt/a%2Fb/-/x%7Cy?consistency=version="+future+"&timeout=300ms", "")
	wantHTTP(t, "a version wait that runs out", code, body, 503, map[string]any{"error.kind": "consistency_timeout", "error.action": "RETRY"})

	code, body = rawHTTP(t, addr, "GET", "/v1/execute", "")
	wantHTTP(t, "GET on execute", code, body, 405, map[string]any{"error.kind": "method_not_allowed", "error.message": "~use POST"})
	code, body = rawHTTP(t, addr, "GET", "/v1/scan?cursor=_____________________________w", "")
	wantHTTP(t, "a cursor naming no shard", code, body, 400, map[string]any{"error.kind": "malformed_cursor"})
	code, body = rawHTTP(t, addr, "POST", "/v1/login", `{"user": "a", "password": "b"}`)
	wantHTTP(t, "a login to a store without users", code, body, 400, map[string]any{"error.kind": "not_secure"})
}
