package files

import (
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/cockroachdb/pebble/v2/vfs/errorfs"
)

var seedFlag = flag.Uint64("files.seed", 0, "seed for the randomized crash clones (0: from the clock)")

func testSeed(t *testing.T) uint64 {
	seed := *seedFlag
	if seed == 0 {
		seed = uint64(time.Now().UnixNano())
	}
	t.Logf("seed %d (rerun: go test ./internal/storage/files/ -run '^%s$' -files.seed=%d)", seed, t.Name(), seed)
	return seed
}

// newDir returns a crashable MemFS holding a durable, empty /d.
func newDir(t *testing.T) *vfs.MemFS {
	t.Helper()
	fs := vfs.NewCrashableMem()
	if err := fs.MkdirAll("/d", 0o755); err != nil {
		t.Fatal(err)
	}
	if err := syncDir(fs, "/"); err != nil {
		t.Fatal(err)
	}
	return fs
}

func readString(t *testing.T, fs FS, path string) string {
	t.Helper()
	b, err := ReadFile(fs, path)
	if IsNotExist(err) {
		return "<none>"
	} else if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// tempFiles lists the temporary files left in /d.
func tempFiles(t *testing.T, fs FS) []string {
	t.Helper()
	names, err := fs.List("/d")
	if err != nil {
		t.Fatal(err)
	}
	return slices.DeleteFunc(names, func(n string) bool { return !strings.HasSuffix(n, ".tmp") })
}

// TestWriteAtomicCrash: a power loss at any point of WriteAtomic (a crash
// clone taken before each of its operations, keeping none, some or all of
// the unsynced changes) shows the old content or the new one, never a
// torn file; once it returns, the new content survives a power loss.
func TestWriteAtomicCrash(t *testing.T) {
	rng := rand.New(rand.NewPCG(testSeed(t), 0))
	for _, old := range []string{"", "the old content\n"} {
		const newContent = "the new content, longer than the old one\n"
		mem := newDir(t)
		if old != "" {
			if err := WriteAtomic(mem, "/d/f", []byte(old)); err != nil {
				t.Fatal(err)
			}
		} else {
			old = "<none>"
		}
		var clones []*vfs.MemFS
		var ops []string
		hook := errorfs.Wrap(mem, errorfs.InjectorFunc(func(op errorfs.Op) error {
			for _, pct := range []int{0, 50, 100} {
				clones = append(clones, mem.CrashClone(vfs.CrashCloneCfg{UnsyncedDataPercent: pct, RNG: rng}))
				ops = append(ops, fmt.Sprintf("before %s %s (%d%% of unsynced changes kept)", opNames[op.Kind], op.Path, pct))
			}
			return nil
		}))
		if err := WriteAtomic(hook, "/d/f", []byte(newContent)); err != nil {
			t.Fatal(err)
		}
		for i, c := range clones {
			if got := readString(t, c, "/d/f"); got != old && got != newContent {
				t.Errorf("power loss %s: the file holds %q, want %q or %q", ops[i], got, old, newContent)
			}
		}
		if got := readString(t, mem.CrashClone(vfs.CrashCloneCfg{}), "/d/f"); got != newContent {
			t.Errorf("power loss after WriteAtomic returned: the file holds %q, want %q", got, newContent)
		}
	}
}

// TestWriteAtomicFailures fails each operation of WriteAtomic in turn:
// before the rename, the old file is intact; after it (the directory
// sync), the new content is in place. Either way the error says what
// failed and no temporary file remains.
func TestWriteAtomicFailures(t *testing.T) {
	const oldContent, newContent = "old\n", "new\n"
	// A dry run lists the operations.
	var ops []errorfs.Op
	count := errorfs.Wrap(newDir(t), errorfs.InjectorFunc(func(op errorfs.Op) error { ops = append(ops, op); return nil }))
	if err := WriteAtomic(count, "/d/f", []byte(newContent)); err != nil {
		t.Fatal(err)
	}
	var kinds []errorfs.OpKind
	for _, op := range ops {
		kinds = append(kinds, op.Kind)
	}
	wantKinds := []errorfs.OpKind{errorfs.OpCreate, errorfs.OpFileWrite, errorfs.OpFileSync, errorfs.OpRename, errorfs.OpOpenDir, errorfs.OpFileSync}
	if !slices.Equal(kinds, wantKinds) {
		t.Fatalf("WriteAtomic's operations: %v, want %v", kinds, wantKinds)
	}
	for i, op := range ops {
		t.Run(fmt.Sprintf("%d %s %s", i, opNames[op.Kind], op.Path), func(t *testing.T) {
			mem := newDir(t)
			if err := WriteAtomic(mem, "/d/f", []byte(oldContent)); err != nil {
				t.Fatal(err)
			}
			n := 0
			fs := errorfs.Wrap(mem, errorfs.InjectorFunc(func(errorfs.Op) error {
				n++
				if n == i+1 {
					return errorfs.ErrInjected
				}
				return nil
			}))
			err := WriteAtomic(fs, "/d/f", []byte(newContent))
			if !errors.Is(err, errorfs.ErrInjected) || !strings.Contains(err.Error(), "/d") {
				t.Fatalf("got %v, want the injected error naming the file or directory", err)
			}
			wantContent := oldContent
			if op.Kind == errorfs.OpOpenDir || i == len(ops)-1 {
				wantContent = newContent
			}
			if got := readString(t, mem, "/d/f"); got != wantContent {
				t.Errorf("the file holds %q, want %q", got, wantContent)
			}
			if tmps := tempFiles(t, mem); len(tmps) > 0 {
				t.Errorf("temporary files left: %v", tmps)
			}
		})
	}
}

// TestWriteAtomicConcurrent: writers of one path do not share a temporary
// file; the file ends as one of the writes, whole.
func TestWriteAtomicConcurrent(t *testing.T) {
	fs := newDir(t)
	const writers = 8
	errs := make(chan error, writers)
	for w := range writers {
		go func() { errs <- WriteAtomic(fs, "/d/f", []byte(strings.Repeat(string(rune('a'+w)), 1000))) }()
	}
	for range writers {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	got := readString(t, fs, "/d/f")
	if len(got) != 1000 || strings.Count(got, got[:1]) != 1000 {
		t.Fatalf("the file holds a mix: %q", got)
	}
	if tmps := tempFiles(t, fs); len(tmps) > 0 {
		t.Errorf("temporary files left: %v", tmps)
	}
}
