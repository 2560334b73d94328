package node

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cairndb/cairn/internal/storage/files"
	"github.com/cairndb/cairn/internal/topology"
)

// memNode lays out a one-node store in root on fs and returns its config.
func memNode(t *testing.T, fs files.FS, root string) SNConfig {
	t.Helper()
	port := freePort(t)
	topo, err := topology.Build("kvstore", 4, []topology.Node{{ID: 1, Addr: "127.0.0.1:" + strconv.Itoa(port)}}, 1, 1)
	if err != nil {
		t.Fatal(err)
	}
	if err := fs.MkdirAll(root, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := files.WriteJSON(fs, filepath.Join(root, topology.FileName), topo); err != nil {
		t.Fatal(err)
	}
	cfg := DefaultSNConfig(root)
	cfg.Port, cfg.FS = port, fs
	cfg.MinFreeBytes, cfg.CacheBytes, cfg.TickInterval = 0, 8<<20, 20*time.Millisecond
	cfg.Logger = slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelWarn}))
	return cfg
}

// TestNodeFilesGoThroughFS: a storage node given a MemFS keeps all its
// files there (topology.json, node.json, the engine) and none on disk, and
// restarts from them.
func TestNodeFilesGoThroughFS(t *testing.T) {
	mem := files.NewMem()
	root := filepath.Join(t.TempDir(), "sn1") // must never appear on disk
	cfg := memNode(t, mem, root)
	for run := range 2 {
		sn, err := StartSN(context.Background(), cfg)
		if err != nil {
			t.Fatalf("run %d: %v", run, err)
		}
		putKeys(t, []*SN{sn}, 3)
		if err := sn.Close(); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := os.Stat(root); !os.IsNotExist(err) {
		t.Errorf("the node wrote to the disk: stat %s: %v", root, err)
	}
	names, err := mem.List(root)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{topology.FileName, markerFile, "data"} {
		if !slices.Contains(names, want) {
			t.Errorf("the MemFS root holds %v, no %s", names, want)
		}
	}
	var m marker
	if err := files.ReadJSON(mem, filepath.Join(root, markerFile), &m); err != nil || m != (marker{Node: 1, Store: "kvstore"}) {
		t.Errorf("node.json: %+v, %v", m, err)
	}
}

// TestCorruptRootFileRefused: a node whose own file fails its checksum
// does not start, and says which file and what to do.
func TestCorruptRootFileRefused(t *testing.T) {
	for _, tc := range []struct {
		file  string
		write func(fs files.FS, path string) error // nil: the file memNode wrote
	}{
		{file: topology.FileName},
		{file: membershipFile, write: func(fs files.FS, path string) error {
			return files.WriteJSON(fs, path, membership{Store: "kvstore", SN: 1})
		}},
		{file: markerFile, write: func(fs files.FS, path string) error {
			return files.WriteJSON(fs, path, marker{Node: 1, Store: "kvstore"})
		}},
	} {
		t.Run(tc.file, func(t *testing.T) {
			mem := files.NewMem()
			cfg := memNode(t, mem, "/sn1")
			path := filepath.Join(cfg.Root, tc.file)
			if tc.write != nil {
				if err := tc.write(mem, path); err != nil {
					t.Fatal(err)
				}
			}
			flipMiddleByte(t, mem, path)
			sn, err := StartSN(context.Background(), cfg)
			if err == nil {
				sn.Close()
				t.Fatal("the node started")
			}
			if !errors.Is(err, files.ErrCorrupt) || !strings.Contains(err.Error(), path+" is corrupt: ") ||
				!strings.Contains(err.Error(), "restore it from a backup or re-deploy the node") {
				t.Fatalf("got %v, want ErrCorrupt naming %s and what to do", err, path)
			}
		})
	}
	t.Run(InitFile, func(t *testing.T) {
		mem := files.NewMem()
		if _, _, err := WriteInit(mem, "/sn1", InitConfig{Host: "127.0.0.1", Port: 5000, Capacity: 2}); err != nil {
			t.Fatal(err)
		}
		if _, err := LoadInit(mem, "/sn1"); err != nil {
			t.Fatal(err)
		}
		flipMiddleByte(t, mem, "/sn1/"+InitFile)
		_, err := LoadInit(mem, "/sn1")
		if !errors.Is(err, files.ErrCorrupt) || !strings.Contains(err.Error(), "/sn1/config.json is corrupt: ") {
			t.Fatalf("LoadInit: %v, want ErrCorrupt naming the file", err)
		}
		if _, _, err := WriteInit(mem, "/sn1", InitConfig{Host: "127.0.0.1", Port: 5000, Capacity: 2}); !errors.Is(err, files.ErrCorrupt) {
			t.Fatalf("WriteInit over a corrupt config: %v, want ErrCorrupt (never overwritten)", err)
		}
		if _, err := LoadInit(mem, "/sn2"); !files.IsNotExist(err) {
			t.Fatalf("LoadInit of a root without a config: %v, want not-exist", err)
		}
	})
}

// flipMiddleByte changes the byte in the middle of the file at path (in
// the "data" of a checked file).
func flipMiddleByte(t *testing.T, fs files.FS, path string) {
	t.Helper()
	b, err := files.ReadFile(fs, path)
	if err != nil {
		t.Fatal(err)
	}
	b[len(b)/2] ^= 0x01
	if err := files.WriteAtomic(fs, path, b); err != nil {
		t.Fatal(err)
	}
}
