package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/url"
	"path/filepath"
	"slices"
	"testing"

	"github.com/cairndb/cairn/internal/semcases"
)

// TestHTTPSharedCases runs the semantics table (api/testdata/cases.json)
// over HTTP/JSON against a real cairn lite process, as curl would: the
// same outcomes, versions and error kinds as the Go, Python and Java
// clients.
func TestHTTPSharedCases(t *testing.T) {
	t.Parallel()
	cases, err := semcases.Load(filepath.Join("..", "..", "api", "testdata", "cases.json"))
	if err != nil {
		t.Fatal(err)
	}
	l := startLite(t, filepath.Join(t.TempDir(), "lite"))
	base := "http://" + l.addr
	code, info := httpDo(t, "GET", base+"/v1/store", nil)
	limits, _ := info["limits"].(map[string]any)
	maxValue, _ := limits["max_value_bytes"].(float64)
	if code != 200 || maxValue == 0 {
		t.Fatalf("GET /v1/store: %d %v", code, info)
	}
	for i, sc := range cases {
		t.Run(sc.Name, func(t *testing.T) {
			r := &httpCase{t: t, base: base, tag: fmt.Sprintf("http%d_", i), versions: map[string]string{}, maxValue: int64(maxValue)}
			for j, st := range sc.Steps {
				r.step = j
				r.run(st)
			}
		})
	}
}

type httpCase struct {
	t        *testing.T
	base     string
	tag      string
	step     int
	versions map[string]string // saved versions, in hex as the API prints them
	maxValue int64
}

func (r *httpCase) fail(st semcases.Step, format string, args ...any) {
	r.t.Helper()
	r.t.Errorf("step %d (%s %s%s): %s", r.step, st.Op, st.Key, st.Parent, fmt.Sprintf(format, args...))
}

func (r *httpCase) run(st semcases.Step) {
	r.t.Helper()
	var code int
	var body map[string]any
	switch st.Op {
	case "put":
		v, err := semcases.ValueOf(st, r.maxValue)
		if err != nil {
			r.t.Fatal(err)
		}
		code, body = httpDo(r.t, "PUT", r.url("/v1/kv", st.Key, r.cond(st)), v)
	case "get":
		if _, err := url.Parse(r.url("/v1/kv", st.Key, nil)); err != nil {
			// Not a URL (a bad %-escape): HTTP itself refuses it before
			// Cairn sees it, as the clients' parsers do.
			code, body = 400, map[string]any{"error": map[string]any{"kind": "malformed_key", "message": err.Error()}}
			break
		}
		code, body = httpDo(r.t, "GET", r.url("/v1/kv", st.Key, nil), nil)
	case "delete":
		code, body = httpDo(r.t, "DELETE", r.url("/v1/kv", st.Key, r.cond(st)), nil)
	case "multi_get":
		code, body = httpDo(r.t, "GET", r.url("/v1/multi", st.Parent, r.selection(st)), nil)
	case "multi_delete":
		code, body = httpDo(r.t, "DELETE", r.url("/v1/multi", st.Parent, r.selection(st)), nil)
	case "execute":
		code, body = httpDo(r.t, "POST", r.base+"/v1/execute", r.executeBody(st))
	default:
		r.t.Fatalf("step %d: unknown op %q", r.step, st.Op)
	}
	if r.checkError(st, body) {
		return
	}
	r.check(st, code, body)
}

// url builds base+prefix+key (the key's string form is the path, escapes
// and all) with the query q.
func (r *httpCase) url(prefix, key string, q url.Values) string {
	u := r.base + prefix + semcases.Tagged(r.tag, key)
	if len(q) > 0 {
		u += "?" + q.Encode()
	}
	return u
}

func (r *httpCase) ifParam(st semcases.Step) string {
	if st.If == "version" {
		v, ok := r.versions[st.Version]
		if !ok {
			r.t.Fatalf("step %d: version %q was not saved", r.step, st.Version)
		}
		return "version=" + v
	}
	return st.If
}

func (r *httpCase) cond(st semcases.Step) url.Values {
	if st.If == "" {
		return nil
	}
	return url.Values{"if": {r.ifParam(st)}}
}

func (r *httpCase) selection(st semcases.Step) url.Values {
	q := url.Values{}
	if st.Depth != "" {
		q.Set("depth", st.Depth)
	}
	if sr := st.Range; sr != nil {
		for name, v := range map[string]*string{"start": sr.Start, "end": sr.End, "prefix": sr.Prefix} {
			if v != nil {
				q.Set(name, *v)
			}
		}
		if sr.StartExclusive {
			q.Set("start_exclusive", "true")
		}
		if sr.EndExclusive {
			q.Set("end_exclusive", "true")
		}
	}
	return q
}

func (r *httpCase) executeBody(st semcases.Step) []byte {
	var ops []map[string]any
	for _, o := range st.Ops {
		op := map[string]any{"op": o.Op, "key": semcases.Tagged(r.tag, o.Key)}
		if o.Value != nil {
			op["value"] = *o.Value
		}
		if o.If != "" {
			op["if"] = r.ifParam(o)
		}
		if o.Abort {
			op["abort_if_unsuccessful"] = true
		}
		ops = append(ops, op)
	}
	b, _ := json.Marshal(map[string]any{"operations": ops})
	return b
}

// checkError checks the error kind against the expectation, and reports
// whether the answer was an error (a 404 for a get is "missing", not one).
func (r *httpCase) checkError(st semcases.Step, body map[string]any) bool {
	r.t.Helper()
	e, isErr := body["error"].(map[string]any)
	kind, _ := e["kind"].(string)
	if isErr && st.Op == "get" && kind == "not_found" {
		return false
	}
	if isErr && st.Op == "execute" && kind == "execute_aborted" {
		return false
	}
	switch {
	case st.Expect.Error == "" && isErr:
		r.fail(st, "unexpected error: %v", e)
	case st.Expect.Error != "" && !isErr:
		r.fail(st, "succeeded (%v), want error %s", body, st.Expect.Error)
	case st.Expect.Error != "" && kind != st.Expect.Error:
		r.fail(st, "error kind %q (%v), want %q", kind, e, st.Expect.Error)
	}
	return isErr
}

func (r *httpCase) check(st semcases.Step, code int, body map[string]any) {
	r.t.Helper()
	switch st.Op {
	case "put", "delete":
		want, err := st.Expect.DoneBool()
		if err != nil {
			r.t.Fatalf("step %d: expect.done: %v", r.step, err)
		}
		if done, _ := body["done"].(bool); done != want {
			r.fail(st, "done = %v (status %d), want %v", done, code, want)
		}
		if st.Save != "" {
			r.versions[st.Save], _ = body["version"].(string)
		}
	case "get":
		r.checkGet(st, code, body)
	case "multi_get":
		r.checkRecords(st, body)
	case "multi_delete":
		if n, _ := body["deleted"].(float64); st.Expect.Deleted != nil && int(n) != *st.Expect.Deleted {
			r.fail(st, "deleted %v, want %d", body["deleted"], *st.Expect.Deleted)
		}
	case "execute":
		r.checkExecute(st, body)
	}
}

func (r *httpCase) checkGet(st semcases.Step, code int, body map[string]any) {
	r.t.Helper()
	switch {
	case st.Expect.Missing && code != 404:
		r.fail(st, "status %d %v, want 404 (missing)", code, body)
	case !st.Expect.Missing && code != 200:
		r.fail(st, "status %d %v, want 200", code, body)
	case st.Expect.Value != nil && body["value"] != *st.Expect.Value:
		r.fail(st, "value %v, want %q", body["value"], *st.Expect.Value)
	case st.Expect.Version != "" && body["version"] != r.versions[st.Expect.Version]:
		r.fail(st, "version %v, want %s (%s)", body["version"], r.versions[st.Expect.Version], st.Expect.Version)
	}
}

func (r *httpCase) checkRecords(st semcases.Step, body map[string]any) {
	r.t.Helper()
	recs, _ := body["records"].([]any)
	gotKeys, gotValues := []string{}, []string{}
	for _, x := range recs {
		rec, _ := x.(map[string]any)
		k, _ := rec["key"].(string)
		v, _ := rec["value"].(string)
		gotKeys, gotValues = append(gotKeys, k), append(gotValues, v)
	}
	wantKeys := []string{}
	for _, k := range st.Expect.Keys {
		wantKeys = append(wantKeys, semcases.Tagged(r.tag, k))
	}
	if !slices.Equal(gotKeys, wantKeys) {
		r.fail(st, "keys %q, want %q", gotKeys, wantKeys)
	}
	if st.Expect.Values != nil && !slices.Equal(gotValues, st.Expect.Values) {
		r.fail(st, "values %q, want %q", gotValues, st.Expect.Values)
	}
}

func (r *httpCase) checkExecute(st semcases.Step, body map[string]any) {
	r.t.Helper()
	if e, ok := body["error"].(map[string]any); ok {
		idx, _ := e["index"].(float64)
		if st.Expect.AbortedAt == nil || int(idx) != *st.Expect.AbortedAt {
			r.fail(st, "aborted: %v, want %s", e, bytes.TrimSpace(st.Expect.Done))
		}
		return
	}
	if st.Expect.AbortedAt != nil {
		r.fail(st, "done (%v), want aborted at %d", body, *st.Expect.AbortedAt)
		return
	}
	want, err := st.Expect.DoneList()
	if err != nil {
		r.t.Fatalf("step %d: expect.done: %v", r.step, err)
	}
	results, _ := body["results"].([]any)
	got := []bool{}
	for _, x := range results {
		res, _ := x.(map[string]any)
		d, _ := res["done"].(bool)
		got = append(got, d)
	}
	if !slices.Equal(got, want) {
		r.fail(st, "done %v, want %v", got, want)
	}
}
