package cli_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cairndb/cairn/client"
	"github.com/cairndb/cairn/internal/cli"
	"github.com/cairndb/cairn/internal/node"
)

// startKV runs a lite node and returns a cli.KV on it writing to out.
func startKV(t *testing.T) (*cli.KV, *bytes.Buffer) {
	t.Helper()
	cfg := node.DefaultLiteConfig(t.TempDir())
	cfg.Port, cfg.Partitions = 0, 3
	cfg.Logger = slog.New(slog.DiscardHandler)
	n, err := node.StartLite(context.Background(), cfg)
	if err != nil {
		t.Fatalf("StartLite: %v", err)
	}
	t.Cleanup(func() { n.Close() })
	g := cli.DefaultGlobals()
	g.Hosts = []string{n.Addr()}
	c, err := g.Open(context.Background())
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { c.Close() })
	var out bytes.Buffer
	return &cli.KV{Client: c, Out: &out}, &out
}

func TestPutGetCommands(t *testing.T) {
	kv, out := startKV(t)
	ctx := context.Background()

	if err := kv.Put(ctx, cli.PutArgs{Key: "/u/-/a", Value: "hello", HasValue: true}); err != nil {
		t.Fatal(err)
	}
	version := strings.TrimSpace(out.String())
	if _, err := client.ParseVersion(version); err != nil {
		t.Fatalf("put printed %q, not a version", out.String())
	}

	out.Reset()
	if err := kv.Get(ctx, "/u/-/a"); err != nil || out.String() != "hello" {
		t.Fatalf("get printed %q, %v; want the exact value", out.String(), err)
	}
	out.Reset()
	kv.Terminal = true
	if err := kv.Get(ctx, "/u/-/a"); err != nil || out.String() != "hello\n" {
		t.Fatalf("get on a terminal printed %q, %v; want a trailing newline", out.String(), err)
	}
	kv.Terminal = false

	// Binary values from a file and from stdin come back byte for byte.
	bin := []byte{0, 1, 2, 0xff, '\n'}
	path := filepath.Join(t.TempDir(), "v")
	if err := os.WriteFile(path, bin, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := kv.Put(ctx, cli.PutArgs{Key: "/u/-/file", File: path}); err != nil {
		t.Fatal(err)
	}
	kv.In = bytes.NewReader(bin[1:])
	if err := kv.Put(ctx, cli.PutArgs{Key: "/u/-/stdin", File: "-"}); err != nil {
		t.Fatal(err)
	}
	for k, want := range map[string][]byte{"/u/-/file": bin, "/u/-/stdin": bin[1:]} {
		out.Reset()
		if err := kv.Get(ctx, k); err != nil || !bytes.Equal(out.Bytes(), want) {
			t.Errorf("get %s = %q, %v; want %q", k, out.Bytes(), err, want)
		}
	}

	out.Reset()
	kv.JSON = true
	if err := kv.Get(ctx, "/u/-/file"); err != nil {
		t.Fatal(err)
	}
	var j cli.RecordJSON
	if err := json.Unmarshal(out.Bytes(), &j); err != nil || j.Key != "/u/-/file" || j.ValueBase64 == nil || j.Value != nil || j.Version == "" {
		t.Errorf("get --json printed %s (%v)", out.String(), err)
	}
	kv.JSON = false

	out.Reset()
	if err := kv.Get(ctx, "/u/-/missing"); !errors.Is(err, cli.ErrNotFound) || out.Len() != 0 {
		t.Errorf("get of a missing key = %v, printed %q; want cli.ErrNotFound and nothing", err, out.String())
	}
	if err := kv.Get(ctx, "u"); cli.ExitCode(err) != cli.ExitBadInput || !strings.Contains(cli.Message(err), "does not start with '/'") {
		t.Errorf("get of a malformed key = %v", err)
	}
}

func TestConditionalPutCommands(t *testing.T) {
	kv, out := startKV(t)
	ctx := context.Background()
	put := func(a cli.PutArgs) error {
		out.Reset()
		a.Key = "/c"
		return kv.Put(ctx, a)
	}
	if err := put(cli.PutArgs{HasValue: true, Value: "1", IfPresent: true}); !errors.Is(err, cli.ErrNotDone) {
		t.Errorf("--if-present on a missing key = %v, want cli.ErrNotDone", err)
	}
	if err := put(cli.PutArgs{HasValue: true, Value: "1", IfAbsent: true}); err != nil {
		t.Fatal(err)
	}
	v1 := strings.TrimSpace(out.String())
	if err := put(cli.PutArgs{HasValue: true, Value: "2", IfAbsent: true}); !errors.Is(err, cli.ErrNotDone) || out.Len() != 0 {
		t.Errorf("--if-absent on a present key = %v, printed %q", err, out.String())
	}
	if err := put(cli.PutArgs{HasValue: true, Value: "2", IfVersion: v1}); err != nil {
		t.Fatal(err)
	}
	if err := put(cli.PutArgs{HasValue: true, Value: "3", IfVersion: v1}); !errors.Is(err, cli.ErrNotDone) {
		t.Errorf("--if-version with a stale version = %v, want cli.ErrNotDone", err)
	}
	for name, a := range map[string]cli.PutArgs{
		"two conditions":           {Value: "x", IfAbsent: true, IfPresent: true},
		"bad version":              {Value: "x", IfVersion: "nothex"},
		"empty version":            {Value: "x", IfVersion: "", HasIfVersion: true},
		"absent and empty version": {Value: "x", IfAbsent: true, HasIfVersion: true},
		"negative ttl":             {Value: "x", TTL: -time.Second},
		"value and file":           {Value: "x", File: "f"},
		"missing file":             {File: filepath.Join(t.TempDir(), "nope")},
	} {
		if name == "missing file" {
			a.Key = "/c"
			if err := kv.Put(ctx, a); cli.ExitCode(err) != cli.ExitBadInput {
				t.Errorf("%s: %v, want bad input", name, err)
			}
			continue
		}
		if err := put(a); cli.ExitCode(err) != cli.ExitBadInput {
			t.Errorf("%s: %v, want bad input", name, err)
		}
	}
	if err := kv.Put(ctx, cli.PutArgs{Key: "/c"}); cli.ExitCode(err) != cli.ExitBadInput {
		t.Errorf("put without a value: %v, want bad input", err)
	}
	// The server's limit comes back as bad input naming the limit.
	err := kv.Put(ctx, cli.PutArgs{Key: "/big", Value: strings.Repeat("x", 4<<20+1), HasValue: true})
	if cli.ExitCode(err) != cli.ExitBadInput || !strings.Contains(cli.Message(err), "max_value_bytes") {
		t.Errorf("oversized put: %v", err)
	}
}

func TestDeleteCommand(t *testing.T) {
	kv, out := startKV(t)
	ctx := context.Background()
	if err := kv.Put(ctx, cli.PutArgs{Key: "/d", Value: "v", HasValue: true}); err != nil {
		t.Fatal(err)
	}
	v := strings.TrimSpace(out.String())
	// An empty --if-version (a script's unset variable) is bad input, not
	// an unconditional delete.
	if err := kv.Delete(ctx, "/d", ptr("")); cli.ExitCode(err) != cli.ExitBadInput {
		t.Errorf("delete --if-version '' = %v, want bad input", err)
	}
	if err := kv.Delete(ctx, "/d", ptr("00000000000000000000000000000001")); !errors.Is(err, cli.ErrNotDone) {
		t.Errorf("delete --if-version with another version = %v, want cli.ErrNotDone", err)
	}
	if err := kv.Delete(ctx, "/d", &v); err != nil {
		t.Errorf("delete --if-version with the version = %v", err)
	}
	if err := kv.Delete(ctx, "/d", nil); !errors.Is(err, cli.ErrNotFound) {
		t.Errorf("delete of a missing key = %v, want cli.ErrNotFound", err)
	}
	if err := kv.Delete(ctx, "/d", &v); !errors.Is(err, cli.ErrNotFound) {
		t.Errorf("delete --if-version of a missing key = %v, want cli.ErrNotFound", err)
	}
}

func TestMultiGetScanCount(t *testing.T) {
	kv, out := startKV(t)
	ctx := context.Background()
	for _, k := range []string{"/m", "/m/-/a", "/m/-/b", "/m/-/b/x", "/m/-/c", "/n/-/a", "/n2"} {
		if err := kv.Put(ctx, cli.PutArgs{Key: k, Value: "v" + k, HasValue: true}); err != nil {
			t.Fatal(err)
		}
	}
	if err := kv.Put(ctx, cli.PutArgs{Key: "/m/-/tab", Value: "a\tb", HasValue: true}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name    string
		run     func() error
		want    string
		sortOut bool // scan order is unspecified
	}{
		{"multi-get", func() error { return kv.MultiGet(ctx, "/m", cli.Selection{Batch: 2}, false) },
			"/m\tv/m\n/m/-/a\tv/m/-/a\n/m/-/b\tv/m/-/b\n/m/-/b/x\tv/m/-/b/x\n/m/-/c\tv/m/-/c\n/m/-/tab\t\"a\\tb\"\n", false},
		{"multi-get range reverse keys", func() error {
			s := cli.Selection{Depth: "children_only", KeysOnly: true, Range: cli.RangeFlags{Start: "a", HasStart: true, StartExclusive: true, End: "c", HasEnd: true}}
			return kv.MultiGet(ctx, "/m", s, true)
		}, "/m/-/c\n/m/-/b\n", false},
		{"multi-get prefix", func() error {
			return kv.MultiGet(ctx, "/m", cli.Selection{Depth: "descendants_only", KeysOnly: true, Range: cli.RangeFlags{Prefix: "b", HasPrefix: true}}, false)
		}, "/m/-/b\n/m/-/b/x\n", false},
		{"scan all keys", func() error { return kv.Scan(ctx, "", cli.Selection{KeysOnly: true, Batch: 3}) },
			"/m\n/m/-/a\n/m/-/b\n/m/-/b/x\n/m/-/c\n/m/-/tab\n/n/-/a\n/n2\n", true},
		{"scan under /n", func() error { return kv.Scan(ctx, "/n", cli.Selection{}) }, "/n/-/a\tv/n/-/a\n", true},
		{"count", func() error { return kv.Count(ctx, "/", cli.Selection{Batch: 2}) }, "8\n", false},
		{"count children", func() error { return kv.Count(ctx, "/m", cli.Selection{Depth: "parent_and_children"}) }, "5\n", false},
	} {
		out.Reset()
		if err := tc.run(); err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		got := out.String()
		if tc.sortOut {
			got = sortLines(got)
		}
		if got != tc.want {
			t.Errorf("%s printed\n%s\nwant\n%s", tc.name, got, tc.want)
		}
	}

	out.Reset()
	kv.JSON = true
	if err := kv.MultiGet(ctx, "/m", cli.Selection{Depth: "children_only"}, false); err != nil {
		t.Fatal(err)
	}
	var recs []cli.RecordJSON
	if err := json.Unmarshal(out.Bytes(), &recs); err != nil || len(recs) != 4 || *recs[3].Value != "a\tb" {
		t.Errorf("multi-get --json printed %s (%v)", out.String(), err)
	}
	out.Reset()
	if err := kv.Count(ctx, "", cli.Selection{}); err != nil || strings.TrimSpace(out.String()) != `{"count":8}` {
		t.Errorf("count --json printed %q, %v", out.String(), err)
	}
	if err := kv.Scan(ctx, "/m/-/a", cli.Selection{}); cli.ExitCode(err) != cli.ExitBadInput {
		t.Errorf("scan with a minor path: %v, want bad input", err)
	}
	if err := kv.MultiGet(ctx, "/m", cli.Selection{Depth: "deep"}, false); cli.ExitCode(err) != cli.ExitBadInput {
		t.Errorf("multi-get with a bad depth: %v, want bad input", err)
	}
}

// TestMultiDeleteCommand: multi-delete removes the records its flags
// choose under one major path, prints how many, and leaves the others.
func TestMultiDeleteCommand(t *testing.T) {
	kv, out := startKV(t)
	ctx := context.Background()
	for _, k := range []string{"/m", "/m/-/a", "/m/-/b", "/m/-/b/x", "/m/-/c", "/n/-/a"} {
		if err := kv.Put(ctx, cli.PutArgs{Key: k, Value: "v", HasValue: true}); err != nil {
			t.Fatal(err)
		}
	}
	out.Reset()
	s := cli.Selection{Depth: "descendants_only", Range: cli.RangeFlags{Prefix: "b", HasPrefix: true}}
	if err := kv.MultiDelete(ctx, "/m", s); err != nil || out.String() != "2\n" {
		t.Fatalf("multi-delete /m --prefix b printed %q, %v; want 2", out.String(), err)
	}
	out.Reset()
	kv.JSON = true
	if err := kv.MultiDelete(ctx, "/m", cli.Selection{}); err != nil || strings.TrimSpace(out.String()) != `{"parent":"/m","deleted":3}` {
		t.Fatalf("multi-delete --json /m printed %q, %v", out.String(), err)
	}
	kv.JSON = false
	out.Reset()
	if err := kv.Count(ctx, "", cli.Selection{}); err != nil || out.String() != "1\n" {
		t.Fatalf("after the deletes the store counts %q (%v), want 1: /n/-/a", out.String(), err)
	}
	if err := kv.MultiDelete(ctx, "/m", cli.Selection{Depth: "deep"}); cli.ExitCode(err) != cli.ExitBadInput {
		t.Errorf("multi-delete with a bad depth: %v, want bad input", err)
	}
	if err := kv.MultiDelete(ctx, "m", cli.Selection{}); cli.ExitCode(err) != cli.ExitBadInput {
		t.Errorf("multi-delete of a malformed key: %v, want bad input", err)
	}
}

func sortLines(s string) string {
	lines := strings.Split(strings.TrimSuffix(s, "\n"), "\n")
	slices.Sort(lines)
	return strings.Join(lines, "\n") + "\n"
}

func TestUnavailable(t *testing.T) {
	g := cli.DefaultGlobals()
	g.Hosts = []string{"127.0.0.1:1"}
	_, err := g.Open(context.Background())
	if cli.ExitCode(err) != cli.ExitUnavailable || !strings.Contains(cli.Message(err), "check --hosts") {
		t.Errorf("Open of a dead host: %v (exit %d)", err, cli.ExitCode(err))
	}
}

// TestJSONWhenNotFoundOrNotDone: with --json every command prints one JSON
// document, also when the key is missing or the condition did not hold;
// the error (exit code 1) stays.
func TestJSONWhenNotFoundOrNotDone(t *testing.T) {
	kv, out := startKV(t)
	kv.JSON = true
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		run  func() error
		want error
		doc  string
	}{
		{"put", func() error { return kv.Put(ctx, cli.PutArgs{Key: "/j", Value: "v", HasValue: true, IfAbsent: true}) }, nil, `"done":true`},
		{"put not done", func() error { return kv.Put(ctx, cli.PutArgs{Key: "/j", Value: "v", HasValue: true, IfAbsent: true}) },
			cli.ErrNotDone, `{"key":"/j","done":false}`},
		{"get", func() error { return kv.Get(ctx, "/j") }, nil, `"value":"v",`},
		{"get missing", func() error { return kv.Get(ctx, "/nope") }, cli.ErrNotFound, `{"key":"/nope","found":false}`},
		{"delete wrong version", func() error { return kv.Delete(ctx, "/j", ptr("00000000000000000000000000000001")) }, cli.ErrNotDone, `{"key":"/j","deleted":false}`},
		{"delete", func() error { return kv.Delete(ctx, "/j", nil) }, nil, `{"key":"/j","deleted":true}`},
		{"delete missing", func() error { return kv.Delete(ctx, "/j", nil) }, cli.ErrNotFound, `{"key":"/j","deleted":false}`},
	} {
		out.Reset()
		err := tc.run()
		var doc map[string]any
		if !errors.Is(err, tc.want) || (tc.want == nil && err != nil) {
			t.Errorf("%s: %v, want %v", tc.name, err, tc.want)
		}
		if jerr := json.Unmarshal(out.Bytes(), &doc); jerr != nil || !strings.Contains(out.String(), tc.doc) {
			t.Errorf("%s printed %q (%v); want one JSON document with %s", tc.name, out.String(), jerr, tc.doc)
		}
	}
}

func ptr(s string) *string { return &s }
