package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cairndb/cairn/client"
	"github.com/cairndb/cairn/test/clustertest"
)

// openClient opens a Go client on one node of store kvstore.
func openClient(t *testing.T, addr string) *client.Client {
	t.Helper()
	c, err := client.Open(context.Background(), client.Config{Hosts: []string{addr}, Store: "kvstore", Timeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// storeRecords reads every record of the store, by key.
func storeRecords(t *testing.T, c *client.Client) map[string]client.Record {
	t.Helper()
	out := map[string]client.Record{}
	for r, err := range c.StoreIterator(context.Background(), 500, nil, nil, 0) {
		if err != nil {
			t.Fatal(err)
		}
		out[r.Key.String()] = r
	}
	return out
}

// TestExportImport: cairn kv export writes a store's records to a file
// that exists only once whole, and cairn kv import writes them into
// another store with their values and times to live; a cut or corrupt
// file is refused with nothing written, and export | import works
// through a pipe.
func TestExportImport(t *testing.T) {
	dir := t.TempDir()
	a, b, c := startLite(t, filepath.Join(dir, "a")), startLite(t, filepath.Join(dir, "b")), startLite(t, filepath.Join(dir, "c"))
	src := openClient(t, a.addr)
	var entries []client.Entry
	for m := range 60 {
		for i := range 25 {
			k := client.MustParseKey(fmt.Sprintf("/exp/m%02d/-/r%02d", m, i))
			e := client.Entry{Key: k, Value: []byte(k.String())}
			switch i {
			case 0:
				e.Value = []byte{0, 0xff, '\n', '"'} // not UTF-8: base64 in the file
			case 1:
				e.TTL = time.Hour
			}
			entries = append(entries, e)
		}
	}
	entries = append(entries, client.Entry{Key: client.MustParseKey("/exp/short/-/ttl"), Value: []byte("soon gone"), TTL: 2 * time.Second})
	for i, r := range src.PutMany(context.Background(), entries, 0) {
		if r.Err != nil {
			t.Fatalf("put %s: %v", entries[i].Key, r.Err)
		}
	}
	want := storeRecords(t, src)
	if len(want) != len(entries) {
		t.Fatalf("the source store holds %d records, want %d", len(want), len(entries))
	}
	short := want["/exp/short/-/ttl"].Expiration

	file := filepath.Join(dir, "store.jsonl")
	_, _, errOut := mustCairnAll(t, "kv", "--hosts", a.addr, "export", "--file", file)
	if !strings.Contains(errOut, fmt.Sprintf("%d records exported to %s", len(entries), file)) {
		t.Errorf("export's summary: %q", errOut)
	}
	checkExportFile(t, file, len(entries))
	if _, err := os.Stat(file + ".partial"); !os.IsNotExist(err) {
		t.Errorf("%s.partial is left after the export: %v", file, err)
	}
	if code, _, errOut := runCairn(t, "kv", "--hosts", a.addr, "export", "--file", file); code != 2 || !strings.Contains(errOut, "exists") {
		t.Errorf("export over an existing file: exit %d, %q; want 2 saying it exists", code, errOut)
	}

	// The short-lived record expires before the import, which skips it.
	waitFor(t, 10*time.Second, "the short-lived record's expiration", func() bool { return time.Now().After(short) })
	_, _, errOut = mustCairnAll(t, "kv", "--hosts", b.addr, "import", "--file", file)
	if !strings.Contains(errOut, fmt.Sprintf("%d records imported from %s (1 had expired and were skipped)", len(entries)-1, file)) {
		t.Errorf("import's summary: %q", errOut)
	}
	got := storeRecords(t, openClient(t, b.addr))
	delete(want, "/exp/short/-/ttl")
	if len(got) != len(want) {
		t.Fatalf("the imported store holds %d records, want %d", len(got), len(want))
	}
	for k, w := range want {
		g, ok := got[k]
		if !ok || !bytes.Equal(g.Value, w.Value) {
			t.Fatalf("%s: imported %q (found %v), want %q", k, g.Value, ok, w.Value)
		}
		if w.Expiration.IsZero() != g.Expiration.IsZero() || g.Expiration.Sub(w.Expiration).Abs() > 2*time.Second {
			t.Fatalf("%s: expires at %v after the import, at %v before", k, g.Expiration, w.Expiration)
		}
	}

	// A file cut short, and one with a corrupt line: refused, nothing written.
	lines := strings.SplitAfter(readFile(t, file), "\n")
	cut := filepath.Join(dir, "cut.jsonl")
	writeFile(t, cut, strings.Join(lines[:len(lines)-3], ""))
	if code, _, errOut := runCairn(t, "kv", "--hosts", c.addr, "import", "--file", cut); code != 2 || !strings.Contains(errOut, "without its end line") {
		t.Errorf("import of a cut file: exit %d, %q; want 2 naming the missing end line", code, errOut)
	}
	bad := filepath.Join(dir, "bad.jsonl")
	lines[700] = `{"key":"/exp/m27/-/r00","value_base64":"not base64"}` + "\n"
	writeFile(t, bad, strings.Join(lines, ""))
	if code, _, errOut := runCairn(t, "kv", "--hosts", c.addr, "import", "--file", bad); code != 2 || !strings.Contains(errOut, "line 701") {
		t.Errorf("import of a corrupt file: exit %d, %q; want 2 naming line 701", code, errOut)
	}
	if n := len(storeRecords(t, openClient(t, c.addr))); n != 0 {
		t.Fatalf("a refused import wrote %d records", n)
	}

	// A record the store refuses stops the import, naming its line and
	// what was written before it.
	small := startLiteOpts(t, filepath.Join(dir, "small"), liteOpts{extra: []string{"--max-value-bytes", "12"}})
	code, _, errOut := runCairn(t, "kv", "--hosts", small.addr, "import", "--file", file, "--quiet")
	if code != 2 || !strings.Contains(errOut, file+" line ") || !strings.Contains(errOut, "max_value_bytes") || !strings.Contains(errOut, "records were written before the import stopped") {
		t.Errorf("import into a store with smaller values: exit %d, %q; want 2 naming the line and the limit", code, errOut)
	}

	// export | import, of one major path's subtree.
	bin := clustertest.Binary(t)
	pipe := exec.Command("bash", "-c", fmt.Sprintf("set -o pipefail; %q kv --hosts %s export /exp/m07 | %q kv --hosts %s import", bin, a.addr, bin, c.addr))
	if out, err := pipe.CombinedOutput(); err != nil {
		t.Fatalf("export | import: %v\n%s", err, out)
	}
	if got := storeRecords(t, openClient(t, c.addr)); len(got) != 25 || !bytes.Equal(got["/exp/m07/-/r05"].Value, []byte("/exp/m07/-/r05")) {
		t.Fatalf("export /exp/m07 | import wrote %d records (%v), want the 25 of /exp/m07", len(got), got["/exp/m07/-/r05"])
	}
}

// mustCairnAll is mustCairn that also returns stderr.
func mustCairnAll(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	code, out, errOut := runCairn(t, args...)
	if code != 0 {
		t.Fatalf("cairn %s: exit %d\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), code, out, errOut)
	}
	return code, out, errOut
}

// checkExportFile checks the file's frame: the header, records lines, and
// the end line that counts them.
func checkExportFile(t *testing.T, file string, records int) {
	t.Helper()
	lines := strings.Split(strings.TrimSuffix(readFile(t, file), "\n"), "\n")
	if len(lines) != records+2 {
		t.Fatalf("%s has %d lines, want %d records between a header and an end line", file, len(lines), records)
	}
	var head struct {
		Format string `json:"format"`
		Store  string `json:"store"`
	}
	var end struct {
		End     bool `json:"end"`
		Records int  `json:"records"`
	}
	if json.Unmarshal([]byte(lines[0]), &head) != nil || head.Format != "cairn-export" || head.Store != "kvstore" {
		t.Errorf("header %s", lines[0])
	}
	if json.Unmarshal([]byte(lines[len(lines)-1]), &end) != nil || !end.End || end.Records != records {
		t.Errorf("end line %s, want records %d", lines[len(lines)-1], records)
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func writeFile(t *testing.T, path, s string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}
