package node

import (
	"bufio"
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cairndb/cairn/api/cairnpb"
	"github.com/cairndb/cairn/client"
	"github.com/cairndb/cairn/internal/server"
)

// scrape GETs url and returns its samples without labels, by name, and
// with labels, by name{labels}.
func scrape(t *testing.T, url string) map[string]float64 {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s", url, resp.Status)
	}
	out := map[string]float64{}
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		v, err := strconv.ParseFloat(line[i+1:], 64)
		if err != nil {
			t.Fatalf("bad sample line %q", line)
		}
		out[line[:i]] = v
	}
	return out
}

// startMetricsLite starts a lite node with a debug listener and returns it
// and the URL of its /metrics.
func startMetricsLite(t *testing.T) (*Lite, string) {
	t.Helper()
	cfg := DefaultLiteConfig(t.TempDir())
	cfg.Port, cfg.CacheBytes, cfg.MinFreeBytes, cfg.PprofAddr = 0, 8<<20, 0, "127.0.0.1:0"
	cfg.Logger = slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelWarn}))
	n, err := StartLite(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = n.Close() })
	url := "http://" + n.PprofAddr() + "/metrics"
	return n, url
}

// TestLiteServesMetrics: cairn lite with a debug listener serves /metrics
// there, and its counters follow 30 puts and a get that fails.
func TestLiteServesMetrics(t *testing.T) {
	n, url := startMetricsLite(t)
	before := scrape(t, url)
	kv := dial(t, n.Addr())
	for i := range 30 {
		key := &cairnpb.Key{Major: []string{"m", strconv.Itoa(i)}}
		if _, err := kv.Put(context.Background(), &cairnpb.PutRequest{Op: &cairnpb.PutOp{Key: key, Value: []byte("v")}}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := kv.Get(context.Background(), &cairnpb.GetRequest{Key: &cairnpb.Key{}}); err == nil {
		t.Fatal("a get of an empty key succeeded")
	}
	after := scrape(t, url)
	for name, want := range map[string]float64{
		"cairn_apply_commands_total":           30,
		`cairn_applied_index{shard="0"}`:       30,
		"cairn_storage_commit_keys_total":      60, // each put's record and at least one applied index per commit
		`cairn_requests_total{op="put"}`:       30,
		`cairn_requests_total{op="get"}`:       1,
		`cairn_request_errors_total{op="get"}`: 1,
		// The histograms count the same calls, failed ones included.
		`cairn_request_duration_seconds_count{op="put"}`:            30,
		`cairn_request_duration_seconds_bucket{op="put",le="+Inf"}`: 30,
		`cairn_request_duration_seconds_count{op="get"}`:            1,
	} {
		if got := after[name] - before[name]; got < want {
			t.Errorf("%s grew by %v over 30 puts and a bad get, want at least %v", name, got, want)
		}
	}
	if d := after[`cairn_request_duration_seconds_sum{op="put"}`] - before[`cairn_request_duration_seconds_sum{op="put"}`]; d <= 0 {
		t.Errorf("30 puts took %vs in all, as the histogram's sum has it", d)
	}
	if e := after[`cairn_request_errors_total{op="put"}`]; e != 0 {
		t.Errorf("%v failed puts, want none", e)
	}
	if g := after["cairn_apply_groups_total"] - before["cairn_apply_groups_total"]; g < 1 || g > 30 {
		t.Errorf("30 sequential puts in %v group commits", g)
	}
	// A call socket, open past its preface, is counted while it stays open.
	c, err := net.Dial("tcp", n.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := io.WriteString(c, server.Preface); err != nil {
		t.Fatal(err)
	}
	if _, err := io.ReadFull(c, make([]byte, len(server.Preface))); err != nil {
		t.Fatalf("the call socket's preface: %v", err)
	}
	open := scrape(t, url)
	if got := open[`cairn_call_streams_open{transport="socket"}`]; got != 1 {
		t.Errorf("%v call sockets open, want 1", got)
	}
	if got := open["cairn_call_sockets_total"] - after["cairn_call_sockets_total"]; got != 1 {
		t.Errorf("call sockets accepted grew by %v, want 1", got)
	}
	if after["process_cpu_seconds_total"] <= 0 || after["go_goroutines"] <= 0 {
		t.Errorf("no process or Go runtime metrics: %v %v", after["process_cpu_seconds_total"], after["go_goroutines"])
	}
}

// TestSNMetricsSnapshot: each node of a 3-node, 2-shard, RF 3 store
// reports its engine, its KV methods and both its replicas, and each shard
// has one leader among them.
func TestSNMetricsSnapshot(t *testing.T) {
	sns, _ := startCluster(t, 3, 2, 3)
	deadline := time.Now().Add(10 * time.Second)
	for {
		leaders := map[uint64]int{}
		for _, sn := range sns {
			s := sn.metrics()
			if s.Storage == nil || len(s.Shards) != 2 || len(s.Requests) != 8 {
				t.Fatalf("node %d reports storage %v, %d shards and %d KV methods, want 2 and 8", sn.ID(), s.Storage, len(s.Shards), len(s.Requests))
			}
			for _, r := range s.Shards {
				if r.Leader {
					leaders[r.Shard]++
				}
			}
		}
		if len(leaders) == 2 && leaders[1] == 1 && leaders[2] == 1 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("leaders per shard: %v, want one for each of shards 1 and 2", leaders)
		}
		<-time.After(20 * time.Millisecond) // elections under way: poll with a deadline
	}
}

// TestGoClientCallsOnTheSocket: the Go client calls a node on its call
// socket by default (the node counts the socket), and on the gRPC call
// stream with NoCallSocket (it counts no new socket).
func TestGoClientCallsOnTheSocket(t *testing.T) {
	n, url := startMetricsLite(t)
	calls := func(noSocket bool) {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		c, err := client.Open(ctx, client.Config{Hosts: []string{n.Addr()}, Store: n.Store().Name, NoCallSocket: noSocket})
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		for i := range 10 {
			k := client.Key{Major: []string{"sock", strconv.Itoa(i)}}
			if _, err := c.Put(ctx, k, []byte("v")); err != nil {
				t.Fatalf("put %d (NoCallSocket %v): %v", i, noSocket, err)
			}
			if r, found, err := c.Get(ctx, k); err != nil || !found || string(r.Value) != "v" {
				t.Fatalf("get %d (NoCallSocket %v): %v %v %v", i, noSocket, r, found, err)
			}
		}
	}
	before := scrape(t, url)
	calls(false)
	mid := scrape(t, url)
	calls(true)
	after := scrape(t, url)
	if got := mid["cairn_call_sockets_total"] - before["cairn_call_sockets_total"]; got < 1 {
		t.Errorf("the Go client's 20 calls opened %v call sockets, want at least 1", got)
	}
	if got := mid[`cairn_requests_total{op="put"}`] - before[`cairn_requests_total{op="put"}`]; got != 10 {
		t.Errorf("the node counted %v puts on the socket, want 10", got)
	}
	if got := after["cairn_call_sockets_total"] - mid["cairn_call_sockets_total"]; got != 0 {
		t.Errorf("with NoCallSocket the Go client opened %v call sockets, want 0", got)
	}
	if got := after[`cairn_requests_total{op="put"}`] - mid[`cairn_requests_total{op="put"}`]; got != 10 {
		t.Errorf("the node counted %v puts on the stream, want 10", got)
	}
}
