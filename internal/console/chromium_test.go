//go:build linux

package console

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"

	"golang.org/x/net/html"

	"github.com/cairndb/cairn/api/cairnpb"
	"github.com/cairndb/cairn/internal/chromiumtest"
)

// countingSource numbers its show events answers, so a test sees which
// answer the page drew: the page's own (1) or a poll's (2 and on); and
// its ping says sn1 served 1,000 more requests, 10 of them failed, at
// each answer (100 reads of at most 50µs, 98 writes of at most 1ms and 2 of
// at most 20ms among them), and sn2 none.
type countingSource struct {
	*fakeSource
	events, pings atomic.Int64
}

func (c *countingSource) Command(ctx context.Context, command string, args map[string]string) (*cairnpb.AdminReply, error) {
	if command == "ping" {
		r, err := c.fakeSource.Command(ctx, command, args)
		if err != nil {
			return nil, err
		}
		var doc map[string]any
		if err := json.Unmarshal(r.Json, &doc); err != nil {
			return nil, err
		}
		n := c.pings.Add(1)
		sn1 := doc["storage_nodes"].([]any)[0].(map[string]any)
		sn1["requests"], sn1["request_errors"] = 1000*n, 10*n
		bounds := []int64{20, 50, 100, 200, 500, 1000, 2000, 5000, 10000, 20000, 50000, 100000, 200000, 500000, 1000000, 2000000, 5000000, 10000000}
		reads, writes := make([]int64, len(bounds)+1), make([]int64, len(bounds)+1)
		reads[1], writes[5], writes[9] = 100*n, 98*n, 2*n
		sn1["read_latency"] = map[string]any{"bounds_us": bounds, "counts": reads}
		sn1["write_latency"] = map[string]any{"bounds_us": bounds, "counts": writes}
		r.Json, err = json.Marshal(doc)
		return r, err
	}
	if command != "show events" {
		return c.fakeSource.Command(ctx, command, args)
	}
	n := c.events.Add(1)
	return &cairnpb.AdminReply{Json: fmt.Appendf(nil, `[{"seq": 1, "time": "2026-11-29T06:32:22Z", "text": "answer %d"},
		{"seq": 2, "time": "2026-11-29T06:32:23Z", "text": "<img src=x id=pwned onerror=\"document.body.dataset.pwned=1\">"}]`, n)}, nil
}

// rows returns the text of each cell of each body row of table id, and
// each row's attribute attr.
func rows(t *testing.T, doc *html.Node, id, attr string) (cells [][]string, keys []string) {
	t.Helper()
	table := chromiumtest.ByID(t, doc, id)
	for _, tb := range chromiumtest.FindAll(table, chromiumtest.IsElem("tbody")) {
		for _, tr := range chromiumtest.FindAll(tb, chromiumtest.IsElem("tr")) {
			var row []string
			for _, td := range chromiumtest.FindAll(tr, chromiumtest.IsElem("td")) {
				row = append(row, chromiumtest.Text(td))
			}
			k, _ := chromiumtest.Attr(tr, attr)
			cells, keys = append(cells, row), append(keys, k)
		}
	}
	return cells, keys
}

func TestConsoleRendersInChromium(t *testing.T) {
	chromiumtest.Require(t)
	src := &countingSource{fakeSource: whitePaper()}
	h := New(src, nil)
	h.reuse = 0 // each poll collects anew, so the test sees which answer was drawn
	srv := httptest.NewServer(h)
	defer srv.Close()
	u, _ := url.Parse(srv.URL)
	// --virtual-time-budget lets the page's timers run for 5 s of virtual
	// time before the DOM is dumped: its first polls of state.json.
	dom := chromiumtest.Run(t, "--explicitly-allowed-ports="+u.Port(), "--virtual-time-budget=5000", "--dump-dom", srv.URL+"/console#plan-3")
	doc := chromiumtest.Parse(t, dom)

	if got := chromiumtest.Text(chromiumtest.ByID(t, doc, "store")); got != "kvstore" {
		t.Errorf("store name %q, want kvstore", got)
	}
	nodes, sns := rows(t, doc, "nodes", "data-sn")
	if fmt.Sprint(sns) != "[1 2 3]" {
		t.Fatalf("node rows %v, want sn1, sn2 and sn3: %q", sns, nodes)
	}
	if nodes[2][4] != "UNREACHABLE" || nodes[0][4] != "RUNNING" || nodes[0][3] != "2" || nodes[0][7] != "RUNNING,MASTER" {
		t.Errorf("node rows %q: want sn1 RUNNING with capacity 2 and the admin leader, sn3 UNREACHABLE", nodes)
	}
	shards, _ := rows(t, doc, "shards", "data-shard")
	if fmt.Sprint(shards) != "[[rg1 writable-degraded 2 of 3 2 sn1] [rg2 writable-degraded 2 of 3 2 sn2]]" {
		t.Errorf("shard rows %q", shards)
	}
	reps, names := rows(t, doc, "replicas", "data-replica")
	if fmt.Sprint(names) != "[rg1-rn1 rg1-rn2 rg1-rn3 rg2-rn1 rg2-rn2 rg2-rn3]" {
		t.Fatalf("replica rows %v: want sn3's from the topology too", names)
	}
	if reps[1][4] != "2" || reps[2][2] != "UNREACHABLE" || !strings.Contains(reps[1][2], "cannot follow its leader") || reps[0][2] != "RUNNING,MASTER" {
		t.Errorf("replica rows %q: want rg1-rn2 2 behind and stuck, rg1-rn3 UNREACHABLE", reps)
	}
	if nodes[0][8] != "ok · 12.3 GiB free" || nodes[1][8] != "ok" {
		t.Errorf("storage cells %q and %q: want sn1's free space, none for sn2 (not reported)", nodes[0][8], nodes[1][8])
	}
	plans, ids := rows(t, doc, "plans", "data-plan")
	if fmt.Sprint(ids) != "[3 2 1]" || !strings.HasPrefix(plans[0][1], "plan deploy-sn -host h<b>3</b>") || plans[0][3] != "1 of 2" || plans[0][4] != "start" {
		t.Errorf("plan rows %v %q", ids, plans)
	}
	// The address named plan 3: its tasks are open, the others' closed.
	details := chromiumtest.FindAll(chromiumtest.ByID(t, doc, "plans"), chromiumtest.IsElem("details"))
	if len(details) != 3 {
		t.Fatalf("%d plans open to their tasks, want 3", len(details))
	}
	for i, d := range details {
		_, open := chromiumtest.Attr(d, "open")
		if open != (i == 0) {
			t.Errorf("plan %s's tasks open: %v, want %v (the address names plan 3)", ids[i], open, i == 0)
		}
	}
	tasks := chromiumtest.FindAll(details[0], chromiumtest.IsElem("li"))
	if len(tasks) != 2 || chromiumtest.Text(tasks[0]) != "register · SUCCEEDED" || chromiumtest.Text(tasks[1]) != "start · RUNNING" {
		t.Errorf("plan 3's tasks: %d, %q", len(tasks), chromiumtest.Text(details[0]))
	}
	verify := chromiumtest.Text(chromiumtest.ByID(t, doc, "verify"))
	if !strings.Contains(verify, "violation · sn3: storage node at 127.0.0.1:7000 does not answer") || !strings.Contains(verify, "warning · admin") {
		t.Errorf("verify list %q", verify)
	}

	// Requests per second, from the counts of two states: sn1's, with its
	// failures; sn2 served none; sn3 does not answer.
	if !regexp.MustCompile(`^[\d,.]+/s \([\d,.]+/s failed\)$`).MatchString(nodes[0][5]) || nodes[1][5] != "0.0/s" || nodes[2][5] != "—" {
		t.Errorf("request rates %q, %q, %q: want sn1's with its failures, 0.0/s for sn2, none for sn3", nodes[0][5], nodes[1][5], nodes[2][5])
	}
	// Latency, from the histograms of the same two states: the bound of
	// the bucket that holds the 99th percentile of the calls between them.
	if nodes[0][6] != "reads ≤ 50 µs · writes ≤ 20 ms" || nodes[1][6] != "—" || nodes[2][6] != "—" {
		t.Errorf("latency cells %q, %q, %q: want sn1's p99 for reads and writes, none for sn2 (no calls) and sn3", nodes[0][6], nodes[1][6], nodes[2][6])
	}

	// The store's strings are text, not markup: no element came of them,
	// and their handlers never ran.
	events, _ := rows(t, doc, "events", "data-seq")
	if len(events) != 2 || !strings.HasPrefix(events[0][1], "<img src=x id=pwned") {
		t.Fatalf("event rows %q: want the newest first, its text as sent", events)
	}
	if imgs := chromiumtest.FindAll(doc, chromiumtest.IsElem("img")); len(imgs) != 0 {
		t.Errorf("the DOM has %d img elements: a store string became markup", len(imgs))
	}
	body := chromiumtest.FindAll(doc, chromiumtest.IsElem("body"))[0]
	if v, ok := chromiumtest.Attr(body, "data-pwned"); ok {
		t.Errorf("a store string's script ran (data-pwned=%s)", v)
	}
	// The page polled: it drew a later answer than the one it came with.
	if n := src.events.Load(); n < 2 || events[1][1] == "answer 1" {
		t.Errorf("show events answered %d times and the page shows %q: it did not poll state.json", n, events[1][1])
	}
	t.Logf("show events answered %d times; the page drew %q", src.events.Load(), events[1][1])
}
