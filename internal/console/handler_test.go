package console

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/cairndb/cairn/api/cairnpb"
)

// fakeSource answers the console's commands from canned JSON (a fake is
// fine inside this package's unit tests; the e2e test runs real nodes).
type fakeSource struct {
	mu      sync.Mutex
	replies map[string]string // command -> its JSON
	errs    map[string]error
	block   map[string]bool // commands that wait for their context to end
	calls   int
}

func (f *fakeSource) Command(ctx context.Context, command string, args map[string]string) (*cairnpb.AdminReply, error) {
	f.mu.Lock()
	f.calls++
	j, ok := f.replies[command]
	err, block := f.errs[command], f.block[command]
	f.mu.Unlock()
	if block {
		<-ctx.Done()
		return nil, status.FromContextError(ctx.Err()).Err()
	}
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, status.Errorf(codes.InvalidArgument, "unknown command %q", command)
	}
	if command == "show events" && args["last"] != lastEvents {
		return nil, status.Errorf(codes.InvalidArgument, "show events without -last %s", lastEvents)
	}
	return &cairnpb.AdminReply{Json: []byte(j), Problems: strings.Contains(j, `"problems": true`)}, nil
}

func (f *fakeSource) Self() string { return "sn1 (127.0.0.1:5000)" }

func (f *fakeSource) set(command, j string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.replies[command] = j
}

// whitePaper is the white paper store's answers, with a sn3 that does not
// answer and store strings that try to be markup.
func whitePaper() *fakeSource {
	return &fakeSource{replies: map[string]string{
		"ping": `{"store": "kvstore", "topology_seq": 1,
			"shard_status": {"healthy": 0, "writable_degraded": 2, "read_only": 0, "offline": 0, "total": 2},
			"admin_status": "healthy",
			"shards": [{"shard": "rg1", "status": "writable-degraded", "up": 2, "total": 3, "stuck": ["rg1-rn2"]},
			           {"shard": "rg2", "status": "writable-degraded", "up": 2, "total": 3}],
			"storage_nodes": [
			  {"sn": 1, "addr": "127.0.0.1:5000", "zone": "MyZone", "status": "RUNNING", "version": "v1",
			   "admin": {"service": "admin on sn1", "status": "RUNNING,MASTER", "applied": 63},
			   "replicas": [{"service": "rg1-rn1", "status": "RUNNING,MASTER", "applied": 70},
			                {"service": "rg2-rn1", "status": "RUNNING,REPLICA", "applied": 40}],
			   "storage": {"state": "ok", "text": "", "aside_dirs": [], "avail_bytes": 13207024435, "min_free_bytes": 1073741824}},
			  {"sn": 2, "addr": "127.0.0.1:6000", "zone": "MyZone", "status": "RUNNING", "version": "v1", "admin": null,
			   "replicas": [{"service": "rg1-rn2", "status": "RUNNING,REPLICA", "applied": 68},
			                {"service": "rg2-rn2", "status": "RUNNING,MASTER", "applied": 41}],
			   "storage": {"state": "ok", "text": "", "aside_dirs": []}},
			  {"sn": 3, "addr": "127.0.0.1:7000", "zone": "MyZone", "status": "UNREACHABLE", "admin": null, "replicas": []}],
			"problems": true}`,
		"verify configuration": `{"violations": [{"rule": "reachable", "subject": "sn3", "message": "storage node at 127.0.0.1:7000 does not answer"}],
			"warnings": [{"rule": "admin-count", "subject": "admin", "message": "1 admin under replication factor 3"}]}`,
		"show topology": `{"store": "kvstore", "topology_seq": 1, "partitions": 4, "partition_shard": [1, 1, 2, 2],
			"nodes": [{"id": 1, "addr": "127.0.0.1:5000", "capacity": 2, "zone": "MyZone"},
			          {"id": 2, "addr": "127.0.0.1:6000", "capacity": 2, "zone": "MyZone"},
			          {"id": 3, "addr": "127.0.0.1:7000", "capacity": 2, "zone": "MyZone"}],
			"shards": [{"id": 1, "replicas": [1, 2, 3]}, {"id": 2, "replicas": [1, 2, 3]}]}`,
		"show plans": plansJSON(3, "SUCCEEDED"),
		"show events": `[{"seq": 1, "time": "2026-11-29T06:32:22Z", "text": "store kvstore configured"},
			{"seq": 2, "time": "2026-11-29T06:32:23Z", "text": "<img src=x id=pwned onerror=\"document.body.dataset.pwned=1\"></script><script>document.body.dataset.pwned=2</script>"}]`,
	}}
}

// plansJSON is a show plans list of n plans in id order, all in state st.
func plansJSON(n int, st string) string {
	var ps []string
	for i := 1; i <= n; i++ {
		ps = append(ps, fmt.Sprintf(`{"id": %d, "name": "deploy-sn", "args": {"host": "h<b>%d</b>", "wait": "true"}, "state": %q,
			"tasks": [{"desc": "register", "state": "SUCCEEDED"}, {"desc": "start", "state": "RUNNING"}],
			"created": "2026-11-29T06:32:22Z"}`, i, i, st))
	}
	return "[" + strings.Join(ps, ",") + "]"
}

func get(t *testing.T, h http.Handler, method, path string, hdr ...string) (*http.Response, string) {
	t.Helper()
	req := httptest.NewRequest(method, path, nil)
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	res := rec.Result()
	b, _ := io.ReadAll(res.Body)
	return res, string(b)
}

func TestStateHoldsEachCommandsJSON(t *testing.T) {
	h := New(whitePaper(), nil)
	res, body := get(t, h, "GET", "/console/state.json")
	if res.StatusCode != 200 || res.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("state.json: %d %s: %s", res.StatusCode, res.Header.Get("Content-Type"), body)
	}
	var st State
	if err := json.Unmarshal([]byte(body), &st); err != nil {
		t.Fatalf("state.json is not a State: %v\n%s", err, body)
	}
	if st.Node != "sn1 (127.0.0.1:5000)" || st.Time.IsZero() {
		t.Errorf("node %q, time %v", st.Node, st.Time)
	}
	for name, sec := range map[string]Section{"ping": st.Ping, "verify": st.Verify, "topology": st.Topology, "plans": st.Plans, "events": st.Events} {
		if sec.Error != "" || !json.Valid(sec.Data) || len(sec.Data) == 0 {
			t.Errorf("section %s: error %q, data %s", name, sec.Error, sec.Data)
		}
	}
	if !st.Ping.Problems || st.Topology.Problems {
		t.Errorf("problems: ping %v (want true), topology %v (want false)", st.Ping.Problems, st.Topology.Problems)
	}
	var ping struct{ Store string }
	if err := json.Unmarshal(st.Ping.Data, &ping); err != nil || ping.Store != "kvstore" {
		t.Errorf("ping section: %v %q", err, ping.Store)
	}
}

func TestRecentPlansKeepsUnendedAndNewest(t *testing.T) {
	// 20 ended plans, with plan 2 RUNNING and plan 3 PENDING among the oldest.
	var list []map[string]any
	for i := 1; i <= 20; i++ {
		st := "SUCCEEDED"
		switch i {
		case 2:
			st = "RUNNING"
		case 3:
			st = "PENDING"
		case 19:
			st = "ERROR"
		}
		list = append(list, map[string]any{"id": i, "state": st})
	}
	raw, _ := json.Marshal(list)
	out, err := recentPlans(raw)
	if err != nil {
		t.Fatal(err)
	}
	var got []struct{ ID int }
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatal(err)
	}
	var ids []int
	for _, p := range got {
		ids = append(ids, p.ID)
	}
	want := []int{20, 19, 18, 17, 16, 15, 14, 13, 12, 11, 10, 9, 3, 2}
	if fmt.Sprint(ids) != fmt.Sprint(want) {
		t.Fatalf("plans kept %v, want %v (the newest %d ended, and every one not ended)", ids, want, keepPlans)
	}
	if _, err := recentPlans(json.RawMessage(`{"id": 1}`)); err == nil {
		t.Error("an object instead of a plan list was taken")
	}
	if _, err := recentPlans(json.RawMessage(`[1]`)); err == nil {
		t.Error("a number instead of a plan was taken")
	}
}

func TestSectionsSayWhyTheyHaveNoData(t *testing.T) {
	src := whitePaper()
	src.errs = map[string]error{"show plans": status.Error(codes.Unavailable, "admin: no admin leader is elected yet")}
	src.block = map[string]bool{"show events": true}
	src.set("show topology", `{"not": json`)
	h := New(src, nil)
	h.timeout = 200 * time.Millisecond
	start := time.Now()
	_, body := get(t, h, "GET", "/console/state.json")
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("state took %v with a command that never answers; its timeout is %v", took, h.timeout)
	}
	var st State
	if err := json.Unmarshal([]byte(body), &st); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		sec  Section
		want string
	}{
		{"plans", st.Plans, "admin: no admin leader is elected yet"},
		{"events", st.Events, "show events: no answer within 200ms"},
		{"topology", st.Topology, "show topology: the admin's reply is not JSON"},
	} {
		if !strings.Contains(c.sec.Error, c.want) || c.sec.Data != nil {
			t.Errorf("section %s: error %q, data %s; want the error %q and no data", c.name, c.sec.Error, c.sec.Data, c.want)
		}
	}
	if st.Ping.Error != "" || st.Verify.Error != "" {
		t.Errorf("sections that answered carry errors: ping %q verify %q", st.Ping.Error, st.Verify.Error)
	}
}

func TestGateRefusals(t *testing.T) {
	for _, c := range []struct {
		err       error
		code      int
		challenge bool
	}{
		{status.Error(codes.Unauthenticated, "this store requires a login"), 401, true},
		{status.Error(codes.PermissionDenied, `user "u" has role none`), 403, false},
		{status.Error(codes.Unavailable, "shutting down"), 503, false},
	} {
		src := whitePaper()
		h := New(src, func(*http.Request) (context.Context, error) { return nil, c.err })
		for _, path := range []string{"/console", "/console/state.json"} {
			res, body := get(t, h, "GET", path)
			if res.StatusCode != c.code || !strings.Contains(body, status.Convert(c.err).Message()) {
				t.Errorf("%s refused with %v: %d %q, want %d with the message", path, c.err, res.StatusCode, body, c.code)
			}
			if got := res.Header.Get("WWW-Authenticate"); (got != "") != c.challenge || (c.challenge && !strings.HasPrefix(got, `Basic realm="cairn"`)) {
				t.Errorf("%s refused with %v: WWW-Authenticate %q", path, c.err, got)
			}
		}
		if src.calls != 0 {
			t.Errorf("a refused caller ran %d commands", src.calls)
		}
	}
	type key struct{}
	var seen any
	src := &recordingSource{fakeSource: whitePaper(), ctxValue: func(ctx context.Context) { seen = ctx.Value(key{}) }}
	h := New(src, func(r *http.Request) (context.Context, error) {
		return context.WithValue(r.Context(), key{}, "alice"), nil
	})
	if res, body := get(t, h, "GET", "/console/state.json"); res.StatusCode != 200 {
		t.Fatalf("an admitted caller: %d %s", res.StatusCode, body)
	}
	if seen != "alice" {
		t.Errorf("the commands ran with %v, not the context the gate returned", seen)
	}
}

// recordingSource hands each command's context to ctxValue.
type recordingSource struct {
	*fakeSource
	ctxValue func(context.Context)
}

func (r *recordingSource) Command(ctx context.Context, command string, args map[string]string) (*cairnpb.AdminReply, error) {
	r.ctxValue(ctx)
	return r.fakeSource.Command(ctx, command, args)
}

func TestReadOnlyRoutes(t *testing.T) {
	src := whitePaper()
	h := New(src, nil)
	for _, m := range []string{"POST", "PUT", "DELETE", "PATCH"} {
		for _, path := range []string{"/console", "/console/state.json"} {
			res, body := get(t, h, m, path)
			if res.StatusCode != 405 || res.Header.Get("Allow") != "GET, HEAD" || !strings.Contains(body, "read-only") {
				t.Errorf("%s %s: %d Allow=%q %q, want 405 naming GET", m, path, res.StatusCode, res.Header.Get("Allow"), body)
			}
		}
	}
	if res, body := get(t, h, "GET", "/console/admin"); res.StatusCode != 404 || !strings.Contains(body, "/console/state.json") {
		t.Errorf("GET /console/admin: %d %q, want 404 naming the console's paths", res.StatusCode, body)
	}
	if src.calls != 0 {
		t.Errorf("refused requests ran %d commands", src.calls)
	}
	for _, p := range []string{"/console", "/console/", "/console/state.json", "/console/x"} {
		if !Owns(p) {
			t.Errorf("Owns(%q) = false", p)
		}
	}
	for _, p := range []string{"/consoles", "/v1/kv/console", "/"} {
		if Owns(p) {
			t.Errorf("Owns(%q) = true", p)
		}
	}
}

func TestConcurrentRequestsShareOneCollect(t *testing.T) {
	src := whitePaper()
	src.block = map[string]bool{"show events": true} // holds each collect until its timeout
	h := New(src, nil)
	h.timeout = 300 * time.Millisecond
	h.reuse = time.Hour
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			if res, body := get(t, h, "GET", "/console/state.json"); res.StatusCode != 200 {
				t.Errorf("state.json: %d %s", res.StatusCode, body)
			}
		})
	}
	wg.Wait()
	get(t, h, "GET", "/console")
	if src.calls != len(queries) {
		t.Errorf("9 requests within the reuse window ran %d commands, want one round of %d", src.calls, len(queries))
	}
	h.reuse = 0
	get(t, h, "GET", "/console/state.json")
	if src.calls != 2*len(queries) {
		t.Errorf("a request after the reuse window: %d commands in all, want %d", src.calls, 2*len(queries))
	}
}
