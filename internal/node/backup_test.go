package node

import (
	"bytes"
	"errors"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairndb/cairn/internal/storage/files"
	"github.com/cairndb/cairn/internal/topology"
)

func crc32Of(b []byte) uint32 { return crc32.Checksum(b, castagnoli) }

// writeTestBackup writes a shard's snapshot files into dir as the leader
// would, and returns their shard-S.json.
func writeTestBackup(t *testing.T, dir string, shard uint64, data []byte, seq uint64) shardBackup {
	t.Helper()
	meta := shardBackup{Store: "kvstore", Shard: shard, Index: 42, TopologySeq: seq}
	topo := &topology.Topology{Store: "kvstore", Seq: seq}
	err := writeShardFiles(files.Default, dir, &meta, topo, func(w io.Writer) error { _, err := w.Write(data); return err }, false)
	if err != nil {
		t.Fatal(err)
	}
	if meta.Bytes != uint64(len(data)) || meta.CRC32C != crcHex(crc32Of(data)) {
		t.Fatalf("the leader's write recorded %d bytes, crc32c %s; want %d, %s", meta.Bytes, meta.CRC32C, len(data), crcHex(crc32Of(data)))
	}
	return meta
}

// corrupt flips one byte in the middle of the file at path.
func corrupt(t *testing.T, path string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	b[len(b)/2] ^= 0x01
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestFindShardBackup: restore takes the node's own copy, passes over a
// corrupt or foreign one to a good --from copy, and refuses when no good
// copy is left, naming the file and the expected and actual checksum.
func TestFindShardBackup(t *testing.T) {
	topo := &topology.Topology{Store: "kvstore", Seq: 1}
	data := bytes.Repeat([]byte("record"), 1000)
	type layout struct{ root, from string }
	setup := func(t *testing.T) layout {
		l := layout{root: t.TempDir(), from: t.TempDir()}
		writeTestBackup(t, filepath.Join(l.root, snapshotsDir, "s1"), 1, data, 1)
		writeTestBackup(t, filepath.Join(l.from, snapshotsDir, "s1"), 1, data, 1)
		return l
	}
	own := func(l layout) string { return filepath.Join(l.root, snapshotsDir, "s1") }
	other := func(l layout) string { return filepath.Join(l.from, snapshotsDir, "s1") }
	for _, tc := range []struct {
		name    string
		edit    func(*testing.T, layout)
		noFrom  bool
		wantDir func(layout) string // "" : an error
		wantErr []string            // in the error (%s: the own copy's data file)
		corrupt bool                // the error is ErrCorruptSnapshot
		wantOut []string
	}{
		{name: "own copy", wantDir: own},
		{name: "own copy, no --from", noFrom: true, wantDir: own},
		{name: "own copy missing", edit: func(t *testing.T, l layout) { os.RemoveAll(own(l)) }, wantDir: other},
		{name: "own copy corrupt, --from good", edit: func(t *testing.T, l layout) { corrupt(t, filepath.Join(own(l), "shard-1.data")) },
			wantDir: other, wantOut: []string{"passed over a bad copy of rg1", "shard-1.data: crc32c"}},
		{name: "own copy corrupt, no --from", noFrom: true, edit: func(t *testing.T, l layout) { corrupt(t, filepath.Join(own(l), "shard-1.data")) },
			wantErr: []string{"restore: shard 1: no good copy of snapshot s1", "%s: crc32c ", ", expected " + crcHex(crc32Of(data)) + " (shard-1.json)", "--from"}, corrupt: true},
		{name: "own copy truncated, no --from", noFrom: true, edit: func(t *testing.T, l layout) {
			os.Truncate(filepath.Join(own(l), "shard-1.data"), 10)
		}, wantErr: []string{"%s: 10 bytes, expected 6000"}, corrupt: true},
		{name: "both corrupt", edit: func(t *testing.T, l layout) {
			corrupt(t, filepath.Join(own(l), "shard-1.data"))
			corrupt(t, filepath.Join(other(l), "shard-1.data"))
		}, wantErr: []string{"%s: crc32c", filepath.Join("snapshots", "s1", "shard-1.data") + ": crc32c"}, corrupt: true},
		{name: "json does not parse", noFrom: true, edit: func(t *testing.T, l layout) {
			os.WriteFile(filepath.Join(own(l), "shard-1.json"), []byte("{"), 0o644)
		}, wantErr: []string{"shard-1.json is corrupt"}, corrupt: true},
		{name: "json corrupt, --from good", edit: func(t *testing.T, l layout) { corrupt(t, filepath.Join(own(l), "shard-1.json")) },
			wantDir: other, wantOut: []string{"passed over a bad copy of rg1", "shard-1.json is corrupt"}},
		{name: "json corrupt, no --from", noFrom: true, edit: func(t *testing.T, l layout) { corrupt(t, filepath.Join(own(l), "shard-1.json")) },
			wantErr: []string{"shard-1.json is corrupt: ", "--from"}, corrupt: true},
		{name: "another topology", noFrom: true, edit: func(t *testing.T, l layout) {
			writeTestBackup(t, own(l), 1, data, 2)
		}, wantErr: []string{`topology #2; this node runs "kvstore" topology #1`}},
		{name: "no copy anywhere", noFrom: true, edit: func(t *testing.T, l layout) { os.RemoveAll(own(l)) },
			wantErr: []string{"snapshot s1 has no file for shard 1", "pass the root of a node that holds it with --from"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := setup(t)
			if tc.edit != nil {
				tc.edit(t, l)
			}
			var out strings.Builder
			cfg := RestoreConfig{Root: l.root, Name: "s1", From: []string{l.from}, Out: &out}
			if tc.noFrom {
				cfg.From = nil
			}
			got, err := findShardBackup(cfg, topo, 1)
			if tc.wantDir != nil {
				if err != nil || got.dir != tc.wantDir(l) {
					t.Fatalf("got %q, %v; want %s", got.dir, err, tc.wantDir(l))
				}
			} else if err == nil {
				t.Fatalf("got %q, want an error", got.dir)
			}
			for _, w := range tc.wantErr {
				w = strings.ReplaceAll(w, "%s", filepath.Join(own(l), "shard-1.data"))
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
			if err != nil && errors.Is(err, ErrCorruptSnapshot) != tc.corrupt {
				t.Errorf("errors.Is(%v, ErrCorruptSnapshot) = %v, want %v", err, !tc.corrupt, tc.corrupt)
			}
			if err != nil && strings.Contains(err.Error(), ".json is corrupt") && !errors.Is(err, files.ErrCorrupt) {
				t.Errorf("errors.Is(%v, files.ErrCorrupt) = false for a corrupt .json", err)
			}
			for _, w := range tc.wantOut {
				if !strings.Contains(out.String(), w) {
					t.Errorf("output %q lacks %q", out.String(), w)
				}
			}
		})
	}
}

// TestWriteShardFilesRefusesBadData: data that does not match its
// shard-S.json never goes into place, and an older copy stays whole.
func TestWriteShardFilesRefusesBadData(t *testing.T) {
	dir := t.TempDir()
	data := []byte("the good data")
	meta := writeTestBackup(t, dir, 3, data, 1)
	err := writeShardFiles(files.Default, dir, &meta, &topology.Topology{Store: "kvstore", Seq: 1}, func(w io.Writer) error { _, err := w.Write([]byte("the bad data!")); return err }, true)
	if !errors.Is(err, ErrCorruptSnapshot) || !strings.Contains(err.Error(), "expected "+meta.CRC32C) {
		t.Fatalf("got %v, want ErrCorruptSnapshot expecting crc32c %s", err, meta.CRC32C)
	}
	if got, err := readShardBackup(files.Default, dir, 3); err != nil || got.CRC32C != meta.CRC32C {
		t.Errorf("shard-3.json after the refused write: %+v, %v", got, err)
	}
	if err := meta.verifyData(files.Default, filepath.Join(dir, "shard-3.data")); err != nil {
		t.Errorf("the older copy was damaged: %v", err)
	}
	if tmps, _ := filepath.Glob(filepath.Join(dir, "*.tmp")); len(tmps) > 0 {
		t.Errorf("temporary files left behind: %v", tmps)
	}
}

// TestRestoreInput: a missing root, a root that is no deployed node's and
// a malformed snapshot name are input to fix (ErrRestoreInput), each
// saying which, before any engine is opened.
func TestRestoreInput(t *testing.T) {
	empty := t.TempDir()
	for _, tc := range []struct {
		root, name, want string
	}{
		{filepath.Join(empty, "nonexistent"), "s1", "the root " + filepath.Join(empty, "nonexistent") + " does not exist"},
		{empty, "s1", empty + " has no topology.json: restore needs the node's topology"},
		{empty, "no such", `"no such" is not a snapshot name`},
	} {
		err := Restore(RestoreConfig{Root: tc.root, Name: tc.name, Out: io.Discard})
		if !errors.Is(err, ErrRestoreInput) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("restore --root %s --snapshot %q: %v, want ErrRestoreInput with %q", tc.root, tc.name, err, tc.want)
		}
	}
	if _, err := os.Stat(filepath.Join(empty, "data")); !os.IsNotExist(err) {
		t.Errorf("a refused restore made %s/data (%v)", empty, err)
	}
}
